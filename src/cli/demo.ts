import { join, resolve } from "node:path";
import { AGENT_NAMES, type AgentName, type ExternalAgentSpec } from "../agents/index.js";
import { formatJudgeUnreadable, writeFileAtomically } from "../core/index.js";
import { demoRunCalls, runDemo } from "../generate/index.js";
import { ledgerCost, type ModelSpec } from "../models/index.js";
import { buildHtmlReport, formatRunCost, loadRuns, reportDefaults } from "../report/index.js";
import { externalAgentArgument } from "./agent-options.js";
import { choiceList, nonNegativeIntegerList, outputDirectory, positiveInteger, positiveSeconds } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { defineRunCommand, type RunSession } from "./lifecycle.js";

interface DemoFlags extends ModelCallFlags {
  out: string;
  seeds: number[];
  perTrajectory: number;
  model?: string;
  modelBaseUrl?: string;
  agents: AgentName[];
  agent?: ExternalAgentSpec;
  agentTimeout?: number;
}

export function demoCommand() {
  return defineRunCommand<DemoFlags, ModelSpec | undefined>({
    name: "demo",
    description: "the whole pipeline offline: simulated homes, recorded tasks, TAG-EQA questions, 3-D memory, the program agent, the structured judge, the HTML report",
    roles: [{ role: "model", help: "also run the language-model agents (and the judge's extraction of their answers) with this model", baseUrlHelp: "the model's endpoint" }],
    out: "own",
    options: (command, place) => {
      command
        .option("--out <dir>", "the demo's directory (run again to go on where it stopped)", outputDirectory, "eqakit-demo")
        .option("--seeds <list>", "the homes' seeds", nonNegativeIntegerList, [1, 2, 3])
        .option("--per-trajectory <n>", "questions asked per recording", positiveInteger, 16);
      place.role("model");
      command
        .option("--agents <list>", "the language-model agents run with --model", choiceList("agent", AGENT_NAMES), ["blind", "vlm"] as AgentName[])
        .option("--agent <exec:COMMAND|module>", "also run an agent of your own on the questions (agent protocol, task tag: frames, grounding frame, action history)", externalAgentArgument)
        .option("--agent-timeout <seconds>", "your own agent: seconds to wait for each of its replies (default 120)", positiveSeconds);
    },
    // the language-model agents' model, when given: its name checked before the homes are recorded
    prepare: async (session) => session.optionalRole("model"),
    run: (model, session) => demo(session, model),
  });
}

async function demo(session: RunSession<DemoFlags>, model: ModelSpec | undefined): Promise<number> {
  const { flags } = session;
  const started = performance.now();
  const opened = model ? await session.runtime() : undefined;
  const result = await runDemo({
    out: flags.out,
    seeds: flags.seeds,
    perTrajectory: flags.perTrajectory,
    ...(model && opened ? { model, runtime: opened.runtime, agents: flags.agents } : {}),
    ...(flags.agent ? { agent: flags.agent } : {}),
    ...(flags.agentTimeout !== undefined ? { agentTimeoutMs: flags.agentTimeout * 1000 } : {}),
    onStage: (message) => console.log(message),
  });
  // the report eqa report of the folder gives: each recording's plan and four of its frames, so that one sees what the agents saw
  const { title, recordings } = reportDefaults([flags.out]);
  const { html } = await buildHtmlReport(await loadRuns([flags.out]), { ...(title ? { title } : {}), recordings: recordings ?? result.recordings });
  const report = resolve(join(flags.out, "report.html"));
  await writeFileAtomically(report, html);
  for (const run of result.runs) {
    const s = run.summary.scores;
    const c = run.summary.counts;
    const mean = (x: number): string => (s.grounded.n === 0 ? "n/a" : x.toFixed(2));
    const valid = Number.isFinite(run.summary.validAnswerRate) ? `${(100 * run.summary.validAnswerRate).toFixed(0)}%` : "n/a";
    console.log(`${run.agent}: structured score ${mean(s.grounded.mean)} of 5 (ungrounded ${mean(s.ungrounded.mean)}), valid answers ${valid}, ${c.scored} of ${c.questions} scored, ${c.failed} failed, ${c.judgeUnreadable} unreadable by the judge`);
    const unreadable = formatJudgeUnreadable(run.summary.judgeUnreadable, `${run.agent}: the judge's replies`);
    if (unreadable) console.log(`${unreadable}; left out of the scores`);
    for (const line of failureReasons(run.summary.failures, model !== undefined)) console.log(`  ${line}`);
  }
  // the model's calls of every run: its agents' answers and the judge's readings of them
  if (opened) console.log(`\n${formatRunCost(ledgerCost(result.runs.flatMap(demoRunCalls)))}\n`);
  console.log(`${result.questions} questions in ${result.dataset}; done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  console.log(`recorded frames: ${join(resolve(result.recordings), "home-N", "frames")} for N = ${flags.seeds.join(", ")} (each home's plan.png beside its frames/)`);
  console.log(`report: ${report}`);
  return result.runs.some((r) => r.summary.counts.failed > 0 || r.summary.judgeUnreadable.overLimit) ? 1 : 0;
}

/**
 * Why a run's questions failed, each reason once with how many it failed. The judge that reads
 * free-text answers is eqa demo's --model: a reason asking for --judge names --model here.
 */
function failureReasons(failures: readonly { questionId: string; error: string }[], withModel: boolean): string[] {
  const reasons = new Map<string, number>();
  for (const f of failures) {
    const reason = withModel ? f.error : f.error.replace(/give --judge PROVIDER\/MODEL/, "give eqa demo --model PROVIDER/MODEL (its judge reads free-text answers)");
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  return [...reasons].map(([reason, n]) => `${n} failed: ${reason}`);
}
