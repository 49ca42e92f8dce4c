import { Command, CommanderError } from "commander";
import { OutputError, eqakitVersion, isUserError } from "../core/index.js";
import { cacheCommand } from "./cache.js";
import { dataCommand } from "./data.js";
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
import { exploreCommand } from "./explore.js";
import { demoCommand } from "./demo.js";

/** Exit code for errors the user can fix (bad input, bad flags, unusable endpoint). */
const USAGE_ERROR = 2;
/** Exit code when results cannot be written (a full disk, a read-only folder): the run resumes once fixed. */
const OUTPUT_ERROR = 3;

function buildProgram(): Command {
  const program = new Command("eqa")
    .description("eqakit: run, score and study Embodied Question Answering agents")
    .version(eqakitVersion)
    .showHelpAfterError("(run with --help for usage)");
  for (const command of [scoreCommand(), answerCommand(), runCommand(), dataCommand(), framesCommand(), memoryCommand(), cacheCommand(), rmCommand(), reportCommand(), viewCommand(), judgeAgreementCommand(), demoCommand(), simCommand(), exploreCommand(), scoreTagCommand()]) program.addCommand(command);
  program.addCommand(generateCommand());
  program.commands.forEach(exitOverrideDeep);
  program.exitOverride();
  return program;
}

function exitOverrideDeep(command: Command): void {
  command.exitOverride();
  command.commands.forEach(exitOverrideDeep);
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and --version exit 0; every other commander error is a usage error it already printed
      process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
      return;
    }
    if (isUserError(error)) {
      process.stderr.write(`eqa: ${error.message}\n`);
      process.exitCode = error instanceof OutputError ? OUTPUT_ERROR : USAGE_ERROR;
      return;
    }
    throw error;
  }
}

await main();
