import { join } from "node:path";
import { eqakitVersion } from "../../core/index.js";
import type { QuestionSelection } from "../../data/index.js";
import { PREDICTIONS_FILE, answerQuestions, answerRunContract, checkEpisodePaths, type AnswerOptions, type AnswerSummary } from "../../agents/index.js";
import { ledgerCost, readCallLedger, type ChatModel, type RunCost, type ModelSpec } from "../../models/index.js";
import { openRun, RUN_KIND } from "../../store/index.js";
import type { LlmMatchMode } from "./llm-match.js";
import { SUMMARY_FILE, scorePredictions, scoreRunContract, type ScoreSummary } from "./score-run.js";
import type { BootstrapOptions } from "../stats.js";

export interface AnswerAndScoreOptions extends Omit<AnswerOptions, "questions" | "summaryFile"> {
  selection: QuestionSelection;
  /** The LLM-Match judge (it carries its spec). */
  judge: ChatModel;
  mode?: LlmMatchMode;
  bootstrap?: BootstrapOptions;
  onScoreProgress?: (done: number, total: number, failed: number, unreadable: number) => void;
}

export interface RunSummary {
  kind: typeof RUN_KIND.run;
  eqakitVersion: string;
  createdAt: string;
  answer: AnswerSummary;
  score: ScoreSummary;
  /** Both stages' calls (the agent's, the captioner's, the judge's), from the run's ledger: the stages' own costs add up to it. */
  cost: RunCost;
}

/**
 * `eqa run`: answers, then scores the answers, in one run directory with one summary. The
 * stages keep their own summaries beside it (summary.answer.json, summary.score.json), and
 * each resumes on its own. Questions that could not be answered are not scored; they are
 * listed in the answer stage's failures. The folder's manifest is of kind run, its settings
 * those of both stages (`answer`, `score`), checked before either writes anything.
 */
export async function answerAndScore(options: AnswerAndScoreOptions): Promise<RunSummary> {
  const { selection, judge, mode, bootstrap, onScoreProgress, ...answerOptions } = options;
  const answerContract = answerRunContract({ ...answerOptions, questions: selection.questions });
  const scoreContract = scoreRunContract({
    benchmark: selection.benchmark,
    questions: selection.questions,
    predictions: [],
    predictionsPath: join(options.outDir, PREDICTIONS_FILE),
    judge,
    ...(mode ? { mode } : {}),
    outDir: options.outDir,
    ...(bootstrap ? { bootstrap } : {}),
    ...(options.settings ? { settings: options.settings } : {}),
  });
  // a benchmark whose episode paths leave --frames is refused before the run folder is made
  if (answerOptions.agent.needsEpisode && answerOptions.framesRoot) checkEpisodePaths(answerOptions.framesRoot, selection.questions, answerOptions.benchmarkFile);
  const run = await openRun({ dir: options.outDir, kind: RUN_KIND.run, settings: { answer: answerContract.settings, score: scoreContract.settings }, inputs: answerContract.inputs ?? [], ...(answerContract.items ? { items: answerContract.items } : {}) });
  const answered = await answerQuestions({ ...answerOptions, questions: selection.questions, summaryFile: "summary.answer.json", run });
  const ok = answered.records.filter((r) => r.error === null);
  const okIds = new Set(ok.map((r) => r.questionId));
  const scored = await scorePredictions({
    benchmark: selection.benchmark,
    questions: selection.questions.filter((q) => okIds.has(q.questionId)),
    ...(selection.subsetPath ? { subsetPath: selection.subsetPath } : {}),
    predictions: ok.map((r) => ({ questionId: r.questionId, answer: r.answer })),
    predictionsPath: join(answered.runDir, PREDICTIONS_FILE),
    judge,
    ...(options.usage ? { usage: options.usage } : {}),
    ...(mode ? { mode } : {}),
    outDir: options.outDir,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(bootstrap ? { bootstrap } : {}),
    ...(options.settings ? { settings: options.settings } : {}),
    summaryFile: "summary.score.json",
    run,
    ...(onScoreProgress ? { onProgress: (p) => onScoreProgress(p.done, p.total, p.failed, p.unreadable) } : {}),
  });
  const summary: RunSummary = { kind: RUN_KIND.run, eqakitVersion, createdAt: new Date().toISOString(), answer: answered.summary, score: scored.summary, cost: ledgerCost(readCallLedger(run.path)) };
  await run.writeJson(SUMMARY_FILE, summary);
  return summary;
}
