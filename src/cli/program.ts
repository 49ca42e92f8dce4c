import { Command, type Option } from "commander";
import { eqakitVersion } from "../core/index.js";
import { recordCommand, runFolderOf } from "../store/index.js";
import { cacheCommand } from "./cache.js";
import { dataCommand } from "./data.js";
import { envCommand } from "./env.js";
import { framesCommand } from "./frames.js";
import { scoreCommand } from "./score.js";
import { answerCommand } from "./answer.js";
import { runCommand } from "./run.js";
import { memoryCommand } from "./memory.js";
import { reportCommand } from "./report.js";
import { viewCommand } from "./view.js";
import { judgeAgreementCommand } from "./judge-agreement.js";
import { rmCommand } from "./rm.js";
import { simCommand } from "./sim.js";
import { generateCommand } from "./generate.js";
import { scoreTagCommand } from "./score-tag.js";
import { answerTagCommand } from "./answer-tag.js";
import { exploreCommand } from "./explore.js";
import { demoCommand } from "./demo.js";
import { mergeCommand } from "./merge.js";
import { agentCommand } from "./agent.js";
import { reproduceCommand } from "./reproduce.js";
import { addModelOptionFlags } from "./model-options.js";

const EXIT_CODES = `
Exit codes:
  0  all went well
  1  some items failed: each failure is recorded in the run directory, the other results are kept;
     run the same command again to retry only the failed items
  2  usage error: a bad flag or input file, an unusable model endpoint (the message names it)
  3  the results could not be written (disk full, read-only folder, permissions; the message names
     the file): finished work is kept, fix the cause and run the same command again to resume`;

/**
 * The `eqa` command with every subcommand, parsing nothing and running nothing until asked
 * (`main.ts` runs it; tools that read the commands and their flags import it).
 * Commander errors are thrown as CommanderError instead of exiting the process.
 */
export function buildProgram(): Command {
  const program = new Command("eqa")
    .description("eqakit: run, score and study Embodied Question Answering agents")
    .version(eqakitVersion)
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXIT_CODES);
  for (const command of [scoreCommand(), answerCommand(), runCommand(), dataCommand(), framesCommand(), memoryCommand(), cacheCommand(), rmCommand(), reportCommand(), viewCommand(), judgeAgreementCommand(), demoCommand(), simCommand(), envCommand(), exploreCommand(), mergeCommand(), scoreTagCommand(), answerTagCommand()]) program.addCommand(command);
  program.addCommand(generateCommand());
  program.addCommand(agentCommand());
  program.addCommand(reproduceCommand());
  program.commands.forEach(addModelOptionFlags);
  program.commands.forEach(exitOverrideDeep);
  program.commands.forEach(suggestMistypedRequiredOptions);
  program.exitOverride();
  program.hook("preAction", (_, action) => {
    // a run command's default --out is made here, once, so that the folder it writes is the one its commands.jsonl goes to
    const flags = action.opts<Record<string, unknown>>();
    const out = flags.out === undefined ? runFolderOf(commandPath(action), flags) : undefined;
    if (out !== undefined) action.setOptionValue("out", out);
  });
  // a run directory keeps the commands that ran in it to the end, for its report's panel
  program.hook("postAction", (_, action) => {
    const flags = action.opts<Record<string, unknown>>();
    const out = runFolderOf(commandPath(action), flags);
    if (out === undefined || flags.dryRun === true) return;
    recordCommand(out, process.argv.slice(2), Number(process.exitCode ?? 0));
  });
  return program;
}

/** A subcommand's name with its parents' ("memory build"). */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** Commander's own methods behind its messages: public in its code, left out of its typings. */
interface CommanderMessages {
  missingMandatoryOptionValue(option: Option): void;
  unknownOption(flag: string): void;
}

/**
 * Commander checks required options before unknown ones, so a mistyped required option
 * (`--prediction x.json`) was reported only as `--predictions` missing. An unknown option, when
 * there is one, is reported first, with commander's "Did you mean --predictions?".
 */
function suggestMistypedRequiredOptions(command: Command): void {
  // a cast at commander's boundary: these methods exist on every Command but are not in its typings
  const messages = command as unknown as CommanderMessages;
  const missing = messages.missingMandatoryOptionValue.bind(command);
  messages.missingMandatoryOptionValue = (option) => {
    const unknown = command.args.find((arg) => arg.startsWith("--") && arg !== "--");
    if (unknown !== undefined) messages.unknownOption.call(command, unknown.split("=")[0]!);
    missing(option);
  };
  command.commands.forEach(suggestMistypedRequiredOptions);
}

function exitOverrideDeep(command: Command): void {
  command.exitOverride();
  command.commands.forEach(exitOverrideDeep);
}
