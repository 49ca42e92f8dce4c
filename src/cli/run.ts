import { join } from "node:path";
import { Option } from "commander";
import { PREDICTIONS_FILE, createAgent, planAnswers, type AgentSetup } from "../agents/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection, type QuestionSelection } from "../data/index.js";
import { answerAndScore, planScore, type LlmMatchMode } from "../eval/index.js";
import { JUDGE_ROLE, type ModelSpec } from "../models/index.js";
import { formatAnswerSummary, formatRunCost, formatScoreSummary } from "../report/index.js";
import { addAgentOptions, agentSetupFromFlags, type AgentFlags } from "./agent-options.js";
import { nonNegativeInteger, oneOf } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { answerPlanNotes, type DryRunFlags } from "./dry-run.js";
import { failureDetail } from "./progress.js";
import { defineRunCommand, wroteLine } from "./lifecycle.js";

interface RunFlags extends AgentFlags, ModelCallFlags, DryRunFlags {
  judge?: string;
  judgeBaseUrl?: string;
  mode: LlmMatchMode;
  bootstrapSeed: number;
}

/** What a dry run and a run of `eqa run` share: the agent's setup, the judge and the questions. */
interface AnswerAndScoreRun {
  setup: AgentSetup;
  judgeSpec: ModelSpec;
  selection: QuestionSelection;
}

export function runCommand() {
  return defineRunCommand<RunFlags, AnswerAndScoreRun>({
    name: "run",
    description: "answer with an agent, then score with LLM-Match, in one run directory (resumable)",
    roles: [{ role: "judge", help: "the judge model, e.g. openai/gpt-4o", env: "EQA_JUDGE", baseUrlHelp: "the judge's endpoint" }],
    out: "own",
    dryRun: true,
    options: (command, place) => {
      addAgentOptions(command);
      place.role("judge");
      command
        .addOption(new Option("--mode <mode>", "LLM-Match mode: robust or compat").argParser(oneOf(["robust", "compat"] as const)).default("robust"))
        .option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
    },
    prepare: async (session) => {
      const setup = agentSetupFromFlags(session.flags);
      const judgeSpec = session.role("judge");
      const selection = await loadQuestionSelection({ ...session.flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      return { setup, judgeSpec, selection };
    },
    plan: async ({ setup, judgeSpec, selection }, plan, { flags, outDir }) => {
      const answers = await planAnswers({ setup, questions: selection.questions, ...(flags.frames ? { framesRoot: flags.frames } : {}), benchmarkFile: selection.benchmark.path, outDir }, plan);
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
        plan,
      );
      return [...answerPlanNotes(answers, outDir), `${scored.reused} answer(s) already judged, ${scored.pending} to judge (the judge's prompts hold a placeholder for answers not given yet)`];
    },
    run: async ({ setup, judgeSpec, selection }, session) => {
      const { flags, outDir } = session;
      const opened = await session.runtime();
      const answering = session.progress("answering");
      const judging = session.progress("judging");
      const { agent, models } = createAgent(setup, opened.runtime);
      const summary = await answerAndScore({
        selection,
        agent,
        ...(flags.frames ? { framesRoot: flags.frames } : {}),
        benchmarkFile: selection.benchmark.path,
        outDir,
        concurrency: flags.concurrency,
        models: [...models, judgeSpec],
        usage: opened.runtime.usage,
        settings: { benchmark: { path: selection.benchmark.path, sha256: selection.benchmark.sha256 }, subset: flags.subset ?? null, ...session.callSettings(opened) },
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
      console.log(wroteLine(outDir, ["traces.jsonl", "predictions.json", "judgements.jsonl", "metrics.json", "summary.json"], { blank: true }));
      return summary.answer.counts.failed + summary.score.counts.failed > 0 || summary.score.judgeUnreadable.overLimit ? 1 : 0;
    },
  });
}
