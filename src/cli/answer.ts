import { Command } from "commander";
import { answerQuestions, createAgent } from "../agents/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { formatAnswerSummary } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { addAgentOptions, agentSetupFromFlags, type AgentFlags } from "./agent-options.js";
import { addModelCallOptions, modelCallSettings, openModelRuntime, type ModelCallFlags } from "./options.js";
import { createProgress } from "./progress.js";

export function answerCommand(): Command {
  const command = new Command("answer").description("answer benchmark questions with an EM-EQA agent (resumable)");
  addAgentOptions(command);
  addModelCallOptions(command);
  return command.action(async (flags: AgentFlags & ModelCallFlags) => {
    const setup = agentSetupFromFlags(flags);
    const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
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
