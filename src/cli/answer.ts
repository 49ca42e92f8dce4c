import { Command } from "commander";
import { answerQuestions, createAgent, planAnswers } from "../agents/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { checkPriceFile } from "../models/index.js";
import { formatAnswerSummary, formatCallPlan } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { addAgentOptions, agentSetupFromFlags, type AgentFlags } from "./agent-options.js";
import { addModelCallOptions, addShardOption, modelCallSettings, openModelRuntime, shardFromFlags, type ModelCallFlags, type ShardFlags } from "./options.js";
import { addDryRunOption, answerPlanNotes, openCallPlan, type DryRunFlags } from "./dry-run.js";
import { createProgress } from "./progress.js";

export function answerCommand(): Command {
  const command = new Command("answer").description("answer benchmark questions with an EM-EQA agent (resumable)");
  addAgentOptions(command);
  addModelCallOptions(command);
  addDryRunOption(command);
  addShardOption(command, "questions");
  return command.action(async (flags: AgentFlags & ModelCallFlags & DryRunFlags & ShardFlags) => {
    const setup = agentSetupFromFlags(flags);
    const shard = shardFromFlags(flags);
    const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
    if (flags.dryRun) {
      const plan = await openCallPlan(flags);
      try {
        const outDir = flags.out ?? defaultRunPath("answer");
        const planned = await planAnswers({ setup, questions: selection.questions, ...(flags.frames ? { framesRoot: flags.frames } : {}), benchmarkFile: selection.benchmark.path, outDir, ...(shard ? { shard } : {}) }, plan.plan);
        console.log(formatCallPlan(plan.plan.roles(), answerPlanNotes(planned, outDir)));
      } finally {
        plan.close();
      }
      return;
    }
    checkPriceFile();
    const opened = await openModelRuntime(flags);
    const progress = createProgress("answering");
    try {
      const { agent, models } = createAgent(setup, opened.runtime);
      const result = await answerQuestions({
        questions: selection.questions,
        agent,
        ...(flags.frames ? { framesRoot: flags.frames } : {}),
        benchmarkFile: selection.benchmark.path,
        outDir: flags.out ?? defaultRunPath("answer"),
        concurrency: flags.concurrency,
        models,
        ...(shard ? { shard } : {}),
        usage: opened.runtime.usage,
        settings: { benchmark: { path: selection.benchmark.path, sha256: selection.benchmark.sha256 }, subset: flags.subset ?? null, ...modelCallSettings(flags, opened.cachePath) },
        onProgress: (p) => progress.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : ""),
      });
      progress.stop();
      console.log(formatAnswerSummary(result.summary));
      console.log(`\nwrote ${result.runDir}/{traces.jsonl,predictions.json,summary.json}`);
      process.exitCode = result.summary.counts.failed > 0 ? 1 : 0;
    } finally {
      progress.stop();
      opened.close();
    }
  });
}
