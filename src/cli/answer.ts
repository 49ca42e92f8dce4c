import { answerQuestions, createAgent, planAnswers, type AgentSetup } from "../agents/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection, type QuestionSelection } from "../data/index.js";
import type { Shard } from "../core/index.js";
import { formatAnswerSummary } from "../report/index.js";
import { addAgentOptions, agentSetupFromFlags, type AgentFlags } from "./agent-options.js";
import { shardFromFlags, type ShardFlags } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { answerPlanNotes, type DryRunFlags } from "./dry-run.js";
import { defineRunCommand, wroteLine } from "./lifecycle.js";

type AnswerFlags = AgentFlags & ModelCallFlags & DryRunFlags & ShardFlags;

/** What a dry run and a run of `eqa answer` share: the agent's setup and the questions to answer. */
interface AnswerRun {
  setup: AgentSetup;
  selection: QuestionSelection;
  shard?: Shard;
}

export function answerCommand() {
  return defineRunCommand<AnswerFlags, AnswerRun>({
    name: "answer",
    description: "answer benchmark questions with an EM-EQA agent (resumable)",
    out: "own",
    dryRun: true,
    shard: "questions",
    options: (command) => addAgentOptions(command),
    prepare: async ({ flags }) => {
      const setup = agentSetupFromFlags(flags);
      const shard = shardFromFlags(flags);
      const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      return { setup, selection, ...(shard ? { shard } : {}) };
    },
    plan: async ({ setup, selection, shard }, plan, { flags, outDir }) => {
      const planned = await planAnswers({ setup, questions: selection.questions, ...(flags.frames ? { framesRoot: flags.frames } : {}), benchmarkFile: selection.benchmark.path, outDir, ...(shard ? { shard } : {}) }, plan);
      return answerPlanNotes(planned, outDir);
    },
    run: async ({ setup, selection, shard }, session) => {
      const { flags } = session;
      const opened = await session.runtime();
      const progress = session.progress("answering");
      const { agent, models } = createAgent(setup, opened.runtime);
      const result = await answerQuestions({
        questions: selection.questions,
        agent,
        ...(flags.frames ? { framesRoot: flags.frames } : {}),
        benchmarkFile: selection.benchmark.path,
        outDir: session.outDir,
        concurrency: flags.concurrency,
        models,
        ...(shard ? { shard } : {}),
        usage: opened.runtime.usage,
        settings: { benchmark: { path: selection.benchmark.path, sha256: selection.benchmark.sha256 }, subset: flags.subset ?? null, ...session.callSettings(opened) },
        onProgress: (p) => progress.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : ""),
      });
      progress.stop();
      console.log(formatAnswerSummary(result.summary));
      console.log(wroteLine(result.runDir, ["traces.jsonl", "predictions.json", "summary.json"], { blank: true }));
      return result.summary.counts.failed > 0 ? 1 : 0;
    },
  });
}
