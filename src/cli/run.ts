import { join } from "node:path";
import { Command, Option } from "commander";
import { PREDICTIONS_FILE, createAgent, planAnswers } from "../agents/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { answerAndScore, planScore, type LlmMatchMode } from "../eval/index.js";
import { JUDGE_ROLE, checkPriceFile } from "../models/index.js";
import { formatAnswerSummary, formatCallPlan, formatRunCost, formatScoreSummary } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { addAgentOptions, agentSetupFromFlags, type AgentFlags } from "./agent-options.js";
import { addModelCallOptions, modelCallSettings, nonNegativeInteger, oneOf, openModelRuntime, type ModelCallFlags, resolveRoleModel } from "./options.js";
import { addDryRunOption, answerPlanNotes, openCallPlan, type DryRunFlags } from "./dry-run.js";
import { createProgress, failureDetail } from "./progress.js";

interface RunFlags extends AgentFlags, ModelCallFlags, DryRunFlags {
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
  addDryRunOption(command);
  return command.action(async (flags: RunFlags) => {
    const setup = agentSetupFromFlags(flags);
    const judgeSpec = resolveRoleModel(flags, "judge");
    const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
    if (flags.dryRun) {
      const plan = await openCallPlan(flags);
      try {
        const outDir = flags.out ?? defaultRunPath("run");
        const answers = await planAnswers({ setup, questions: selection.questions, ...(flags.frames ? { framesRoot: flags.frames } : {}), benchmarkFile: selection.benchmark.path, outDir }, plan.plan);
        // the questions answered (or to be answered) are judged, as answerAndScore does
        const answered = selection.questions.filter((q) => answers.answers.has(q.questionId));
        const scored = await planScore(
          {
            benchmark: selection.benchmark,
            questions: answered,
            ...(selection.subsetPath ? { subsetPath: selection.subsetPath } : {}),
            predictions: answered.map((q) => ({ questionId: q.questionId, answer: answers.answers.get(q.questionId) ?? null })),
            predictionsPath: join(outDir, PREDICTIONS_FILE),
            judge: { spec: judgeSpec },
            mode: flags.mode,
            outDir,
          },
          plan.plan,
        );
        const notes = [...answerPlanNotes(answers, outDir), `${scored.reused} answer(s) already judged, ${scored.pending} to judge (the judge's prompts hold a placeholder for answers not given yet)`];
        console.log(formatCallPlan(plan.plan.roles(), notes));
      } finally {
        plan.close();
      }
      return;
    }
    checkPriceFile();
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
        judge: opened.runtime.model(judgeSpec, { role: JUDGE_ROLE }),
        mode: flags.mode,
        bootstrap: { seed: flags.bootstrapSeed },
        onScoreProgress: (done, total, failed, unreadable) => {
          answering.stop();
          judging.update(done, total, failureDetail(failed, unreadable));
        },
      });
      answering.stop();
      judging.stop();
      console.log(formatAnswerSummary(summary.answer, { cost: false }));
      console.log("");
      console.log(formatScoreSummary(summary.score, { cost: false }));
      console.log(`\n${formatRunCost(summary.cost)}`);
      console.log(`\nwrote ${outDir}/{traces.jsonl,predictions.json,judgements.jsonl,metrics.json,summary.json}`);
      process.exitCode = summary.answer.counts.failed + summary.score.counts.failed > 0 || summary.score.judgeUnreadable.overLimit ? 1 : 0;
    } finally {
      answering.stop();
      judging.stop();
      opened.close();
    }
  });
}
