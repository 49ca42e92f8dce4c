import { Command, Option } from "commander";
import { checkAgentKinds, describeExternalAgent, type ExternalAgentSpec } from "../agents/index.js";
import { checkMixedAgent } from "../generate/index.js";
import { externalAgentArgument } from "./agent-options.js";
import { positiveSeconds } from "./options.js";

interface CheckFlags {
  agent: ExternalAgentSpec;
  agentTimeout: number;
}

/** `eqa agent`: tools for agents of the user's own (docs/agent-protocol.md). */
export function agentCommand(): Command {
  const check = new Command("check")
    .description("check that an agent of your own speaks the agent protocol, for each kind it supports: handshake; em-eqa: answers with and without an episode; active: an episode in the built-in simulator and a spent step budget; tag: a question with frames, the grounding frame and an action history; mixed: an episode of a tiny generated Mixed EQA set, its reset carrying the history; malformed input, unknown methods, invalid params, shutdown (each process is sent initialize once, with a run's settings)")
    .addOption(new Option("--agent <agent>", 'the agent: exec:"python3 my_agent.py --flag x" or ./my-agent.mjs').argParser(externalAgentArgument).makeOptionMandatory())
    .option("--agent-timeout <seconds>", "seconds to wait for each reply (default 30)", positiveSeconds, 30)
    .action(async (flags: CheckFlags) => {
      const { kinds, checks } = await checkAgentKinds(flags.agent, { timeoutMs: flags.agentTimeout * 1000 }, { mixed: checkMixedAgent });
      console.log(`eqa agent check ${describeExternalAgent(flags.agent)} (${kinds.join(", ")})`);
      for (const c of checks) console.log(`  ${c.passed ? "pass" : "FAIL"}  ${c.name}: ${c.detail.replace(/\n/g, "\n        ")}`);
      const failed = checks.filter((c) => !c.passed).length;
      console.log(failed === 0 ? `\nall ${checks.length} checks passed` : `\n${failed} of ${checks.length} checks failed`);
      process.exitCode = failed === 0 ? 0 : 1;
    });
  return new Command("agent").description("agents of your own: check one against the agent protocol").addCommand(check);
}
