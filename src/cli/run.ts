import { Command, Option } from "commander";
import { createAgent } from "../agents/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { answerAndScore, type LlmMatchMode } from "../eval/index.js";
import { resolveModel } from "../models/index.js";
import { formatAnswerSummary, formatScoreSummary } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { addAgentOptions, agentSetupFromFlags, type AgentFlags } from "./agent-options.js";
import { addModelCallOptions, modelCallSettings, nonNegativeInteger, oneOf, openModelRuntime, type ModelCallFlags } from "./options.js";
import { createProgress } from "./progress.js";

interface RunFlags extends AgentFlags, ModelCallFlags {
  judge?: string;
  judgeBaseUrl?: string;
  mode: LlmMatchMode;
  bootstrapSeed: number;
}

export function runCommand(): Command {
  const command = new Command("run").description("answer with an agent, then score with LLM-Match, in one run directory (resumable)");
  addAgentOptions(command)
    .addOption(new Option("--judge <provider/model>", "the judge model, e.g. openai/gpt-4o").env("EQA_JUDGE"))
    .option("--judge-base-url <url>", "the judge's endpoint")
    .addOption(new Option("--mode <mode>", "LLM-Match mode: robust or compat").argParser(oneOf(["robust", "compat"] as const)).default("robust"))
    .option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
  addModelCallOptions(command);
  return command.action(async (flags: RunFlags) => {
    const setup = agentSetupFromFlags(flags);
    const judgeSpec = resolveModel(flags.judge, { flag: "--judge", ...(flags.judgeBaseUrl ? { baseURL: flags.judgeBaseUrl } : {}) });
    const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
    const opened = await openModelRuntime(flags);
    const answering = createProgress("answering");
    const judging = createProgress("judging");
    try {
      const { agent, models } = createAgent(setup, opened.runtime);
      const outDir = flags.out ?? defaultRunPath("run");
      const summary = await answerAndScore({
        selection,
        agent,
        ...(flags.frames ? { framesRoot: flags.frames } : {}),
        benchmarkFile: selection.benchmark.path,
        outDir,
        concurrency: flags.concurrency,
        models: [...models, judgeSpec],
        usage: opened.runtime.usage,
        settings: { benchmark: { path: selection.benchmark.path, sha256: selection.benchmark.sha256 }, subset: flags.subset ?? null, ...modelCallSettings(flags, opened.cachePath) },
        onProgress: (p) => answering.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : ""),
        judge: opened.runtime.model(judgeSpec),
        judgeSpec,
        mode: flags.mode,
        bootstrap: { seed: flags.bootstrapSeed },
        onScoreProgress: (done, total, failed) => {
          answering.stop();
          judging.update(done, total, failed > 0 ? `(${failed} failed)` : "");
        },
      });
      answering.stop();
      judging.stop();
      console.log(formatAnswerSummary(summary.answer));
      console.log("");
      console.log(formatScoreSummary(summary.score));
      console.log(`\nwrote ${outDir}/{traces.jsonl,predictions.json,judgements.jsonl,metrics.json,summary.json}`);
      process.exitCode = summary.answer.counts.failed + summary.score.counts.failed > 0 ? 1 : 0;
    } finally {
      answering.stop();
      judging.stop();
      opened.close();
    }
  });
}
