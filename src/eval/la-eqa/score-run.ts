/**
 * `eqa score` on LA-EQA's questions: every prediction judged with LA-EQA's judge (a 1-5 mark) and
 * its SPL computed from the distance walked, per category and overall, with bootstrap intervals.
 *
 * Files in the run folder (kind `la-eqa`): `judgements.jsonl` (one judgement per question,
 * appended as it finishes), `results.json` (the reference's per-question result fields, by
 * question id: `answer_accuracy`, `distance_traveled`, `SPL`, …) and `summary.json`. A resumed run
 * reuses every judgement whose inputs (judge, prompt text, parameters) are unchanged and judges the
 * rest; SPL needs no model and is computed anew. A failed call or an unreadable reply fails its
 * question alone; an unusable judge (unreachable, refused key) stops the run.
 *
 * Aggregates: the mark as read (`score`, 1-5 scale, not clipped, as the reference reports
 * `answer_accuracy`), the same mark as LLM-Match's points 100·(clip(σ,1,5)−1)/4 (`llmMatch`), and
 * SPL over the questions with a distance (`spl`); the judge's cost from the run's ledger.
 */
import { resolve } from "node:path";
import { UserError, judgeUnreadable, type JudgeUnreadable } from "../../core/index.js";
import { LA_EQA_CATEGORIES, firstItems, type LaEqaBenchmark, type LaEqaPlaces, type LaEqaPrediction, type LaEqaQuestion } from "../../data/index.js";
import { countReplyStatuses, describeModel, emptyUsage, ledgerCost, readCallLedger, replyStatusOf, sumUsage, withCallContext, JUDGE_ROLE, type CallPlan, type ChatModel, type FailedReplyStatus, type ModelRef, type RunCost, type UsageLedger, type UsageTotals } from "../../models/index.js";
import { openRun, resultSettings, resumeItems, summaryHead, type ResumeRule, type RunContract, type RunSummaryHead, RUN_KIND } from "../../store/index.js";
import { llmMatchPoints } from "../openeqa/index.js";
import { markOutcome, runJudging, type JudgingProgress, type MarkCounts, type MarkSummaryTail, type ScoreInputs } from "../judging.js";
import { bootstrapMean, DEFAULT_BOOTSTRAP, type BootstrapOptions, type MeanEstimate } from "../stats.js";
import { LA_EQA_JUDGE_PARAMS, judgeLaEqa, laEqaPromptHashes, pendingLaEqaJudgement, prepareLaEqaJudgeTask, type LaEqaJudgeTask, type LaEqaJudgement, laEqaJudgementSchema } from "./judge.js";
import { laEqaBestPathLength, laEqaSpl } from "./spl.js";

export const LA_EQA_JUDGEMENTS_FILE = "judgements.jsonl";
export const LA_EQA_RESULTS_FILE = "results.json";
export const LA_EQA_SUMMARY_FILE = "summary.json";

export type LaEqaScoreProgress = JudgingProgress;

export interface LaEqaScoreOptions extends ScoreInputs<LaEqaBenchmark, LaEqaQuestion, LaEqaPrediction> {
  /** Place positions of the world "now" by scene (`--places`): needed for SPL on questions with a best path. */
  places?: LaEqaPlaces;
  placesPath?: string;
  /** LA-EQA's judge; its spec names it in the summary and the input keys. */
  judge: ChatModel;
  usage?: UsageLedger;
  /** Score a question without a prediction as no answer (mark 1, no SPL) instead of refusing the file. */
  allowMissing?: boolean;
  outDir: string;
  concurrency?: number;
  bootstrap?: BootstrapOptions;
  /** Extra configuration to record (cache path, retries, prompts original, …). */
  settings?: Record<string, unknown>;
  onProgress?: (progress: LaEqaScoreProgress) => void;
}

/** One question's SPL and what it was computed from. */
export interface LaEqaPathResult {
  questionId: string;
  /** Metres walked, as predicted; null when the prediction gave none. */
  distanceTraveled: number | null;
  /** L: the best path's length (m); null when the best path is empty. */
  bestPathLength: number | null;
  /** null when no distance was given. */
  spl: number | null;
}

export interface LaEqaAggregates {
  overall: MeanEstimate;
  byCategory: Record<string, MeanEstimate>;
}

export interface LaEqaScoreSummary extends RunSummaryHead<typeof RUN_KIND["la-eqa"]>, MarkSummaryTail {
  counts: MarkCounts & {
    /** Marks the judge gave outside 1-5, kept as the reference keeps them. */
    outOfRange: number;
    /** Questions whose prediction gave no distance: no SPL. */
    withoutDistance: number;
  };
  /** The judge's mark as read (1-5), LA-EQA's answer accuracy. */
  score: LaEqaAggregates;
  /** The same marks as LLM-Match points, 100·(clip(σ,1,5)−1)/4. */
  llmMatch: LaEqaAggregates;
  /** LA-EQA's SPL, over the questions with a distance. */
  spl: LaEqaAggregates;
}

/** What a score run is before its judge is called: its judge known by its spec alone. */
export type LaEqaScoreSetup = Omit<LaEqaScoreOptions, "judge" | "usage" | "onProgress"> & { judge: ModelRef };

/** The benchmark a run scored, as its configuration names it. */
const LA_EQA_BENCHMARK = "la-eqa";

export interface LaEqaScoreResult {
  summary: LaEqaScoreSummary;
  runDir: string;
}

/** `eqa score` on LA-EQA questions: judges what the run folder has not judged yet, then writes results.json and summary.json. */
export async function scoreLaEqaPredictions(options: LaEqaScoreOptions): Promise<LaEqaScoreResult> {
  const started = performance.now();
  const plan = planLaEqaTasks(options);
  const run = await openRun(laEqaScoreRunContract(options));
  options.usage?.attach(run.path);
  const { judgements: ordered, reused } = await runJudging({
    run,
    resume: judgementResumeRule(plan.tasks),
    judge: (task) => judgeLaEqa(task, options.judge),
    failed: (task, error) => ({ ...pendingLaEqaJudgement(task, options.judge.name), error: error.message, replies: error.reply ? [error.reply.text] : [], ...replyStatusOf(error), finishedAt: new Date().toISOString() }),
    outcome: markOutcome,
    models: [options.judge.spec],
    concurrency: options.concurrency,
    onProgress: options.onProgress,
  });
  const summary = laEqaSummary(plan, ordered, {
    config: laEqaScoreConfiguration(options),
    bootstrap: { ...DEFAULT_BOOTSTRAP, ...options.bootstrap },
    reused,
    wallTimeMs: performance.now() - started,
    usage: options.usage?.snapshot() ?? null,
    cost: ledgerCost(readCallLedger(run.path).filter((call) => call.role === JUDGE_ROLE)),
  });
  await run.writeJson(LA_EQA_RESULTS_FILE, laEqaResults(plan, ordered));
  await run.writeJson(LA_EQA_SUMMARY_FILE, summary);
  return { summary, runDir: run.path };
}

/** The judge's tasks and the SPL of every question, from the questions, predictions and places. */
interface LaEqaPlan {
  tasks: LaEqaJudgeTask[];
  paths: LaEqaPathResult[];
  missingPredictions: number;
  outsideSubset: number;
}

/** Pairs questions and predictions (refusing what does not fit, before any call) and computes each SPL. */
function planLaEqaTasks(options: LaEqaScoreSetup): LaEqaPlan {
  const byId = new Map(options.predictions.map((p) => [p.questionId, p]));
  const unknown = options.predictions.filter((p) => !options.benchmark.byId.has(p.questionId)).map((p) => p.questionId);
  if (unknown.length > 0) throw new UserError(`predictions for questions the LA-EQA file does not have: ${firstItems(unknown)}`, { file: options.predictionsPath }, "check that the predictions answer this question file");
  const selected = new Set(options.questions.map((q) => q.questionId));
  const missing = options.questions.filter((q) => !byId.has(q.questionId)).map((q) => q.questionId);
  if (missing.length > 0 && !options.allowMissing) throw new UserError(`no prediction for ${missing.length} question(s): ${firstItems(missing)}`, { file: options.predictionsPath }, "add them, or pass --allow-missing to mark them as not answered");
  const paths = options.questions.map((question): LaEqaPathResult => {
    const distance = byId.get(question.questionId)?.distanceTraveled;
    if (distance === undefined) return { questionId: question.questionId, distanceTraveled: null, bestPathLength: null, spl: null };
    const places = question.bestPath.length === 0 ? [] : options.places?.get(question.sceneName);
    if (!places) {
      throw new UserError(`SPL needs the positions of scene ${question.sceneName}'s places`, { ...(options.placesPath ? { file: options.placesPath } : {}), id: question.questionId, field: "best_path" }, 'pass --places FILE: {"<scene_name>": [{"id": 54, "position": [x, y, z]}, …]} from the scene graph of the world "now"');
    }
    const bestPathLength = laEqaBestPathLength(question, places, options.placesPath);
    return { questionId: question.questionId, distanceTraveled: distance, bestPathLength, spl: laEqaSpl(bestPathLength, distance) };
  });
  const tasks = options.questions.map((q) => prepareLaEqaJudgeTask(q, byId.get(q.questionId)?.answer ?? null, options.judge.spec.name));
  return {
    tasks,
    paths,
    missingPredictions: missing.length,
    outsideSubset: options.predictions.filter((p) => !selected.has(p.questionId)).length,
  };
}

/** How a score run resumes: a question's judgement stands when it gave a mark, for the same question, answer, judge and prompt. */
function judgementResumeRule(tasks: readonly LaEqaJudgeTask[]): ResumeRule<LaEqaJudgeTask, LaEqaJudgement> {
  return { file: LA_EQA_JUDGEMENTS_FILE, schema: laEqaJudgementSchema, items: tasks, id: (t) => t.question.questionId, inputKey: (t) => t.inputKey, succeeded: (j) => j.score !== null };
}

/** The run's configuration: judge, parameters, the prompt's hash, inputs. */
function laEqaScoreConfiguration(options: LaEqaScoreSetup): Record<string, unknown> {
  return {
    benchmarkKind: LA_EQA_BENCHMARK,
    judge: describeModel(options.judge.spec),
    parameters: LA_EQA_JUDGE_PARAMS,
    prompts: laEqaPromptHashes(),
    benchmark: { path: options.benchmark.path, sha256: options.benchmark.sha256, questions: options.benchmark.questions.length },
    subset: options.subsetPath ?? null,
    predictions: { path: resolve(options.predictionsPath), count: options.predictions.length },
    places: options.placesPath ? resolve(options.placesPath) : null,
    allowMissing: options.allowMissing ?? false,
    concurrency: options.concurrency ?? 8,
    bootstrap: { ...DEFAULT_BOOTSTRAP, ...options.bootstrap },
    ...options.settings,
  };
}

/** The run folder of `eqa score` on LA-EQA questions: kind la-eqa, the settings that decide the figures, the inputs (predictions and places copied in). */
export function laEqaScoreRunContract(options: LaEqaScoreSetup): RunContract {
  return {
    dir: options.outDir,
    kind: RUN_KIND["la-eqa"],
    settings: resultSettings(laEqaScoreConfiguration(options)),
    items: { noun: "question", input: "benchmark", flag: "--benchmark", file: options.benchmark.path, list: options.questions.map((q) => ({ id: q.questionId, content: q })) },
    inputs: [
      { name: "benchmark", path: options.benchmark.path },
      { name: "predictions", path: options.predictionsPath, copy: true },
      ...(options.placesPath ? [{ name: "places", path: options.placesPath, copy: true }] : []),
      ...(options.subsetPath ? [{ name: "subset", path: options.subsetPath, copy: true }] : []),
    ],
  };
}

/** Means per category (LA-EQA's order) and overall, each with its bootstrap interval. */
function aggregate(entries: readonly { category: string; value: number }[], bootstrap: BootstrapOptions): LaEqaAggregates {
  const byCategory: Record<string, MeanEstimate> = {};
  for (const category of LA_EQA_CATEGORIES) {
    const values = entries.filter((e) => e.category === category).map((e) => e.value);
    if (values.length > 0) byCategory[category] = bootstrapMean(values, bootstrap);
  }
  return { overall: bootstrapMean(entries.map((e) => e.value), bootstrap), byCategory };
}

interface LaEqaSummaryInputs {
  config: Record<string, unknown>;
  bootstrap: BootstrapOptions;
  reused: number;
  wallTimeMs: number;
  usage: ReturnType<UsageLedger["snapshot"]> | null;
  cost: RunCost;
}

function laEqaSummary(plan: LaEqaPlan, judgements: readonly LaEqaJudgement[], inputs: LaEqaSummaryInputs): LaEqaScoreSummary {
  const categoryOf = (i: number): string => plan.tasks[i]!.question.category;
  const marks = judgements.flatMap((j, i) => (j.score === null ? [] : [{ category: categoryOf(i), value: j.score }]));
  const spls = plan.paths.flatMap((p, i) => (p.spl === null ? [] : [{ category: categoryOf(i), value: p.spl }]));
  const unreadable = judgements.filter((j) => j.score === null && j.unreadable);
  const failed = judgements.filter((j) => j.score === null && !j.unreadable);
  return {
    ...summaryHead(RUN_KIND["la-eqa"], inputs.wallTimeMs, inputs.config),
    counts: {
      questions: judgements.length,
      scored: marks.length,
      failed: failed.length,
      judgeUnreadable: unreadable.length,
      missingPredictions: plan.missingPredictions,
      noAnswer: judgements.filter((j) => j.prediction === null).length,
      outOfRange: marks.filter((m) => m.value < 1 || m.value > 5).length,
      withoutDistance: plan.paths.filter((p) => p.spl === null).length,
      reused: inputs.reused,
      predictionsOutsideSubset: plan.outsideSubset,
    },
    score: aggregate(marks, inputs.bootstrap),
    llmMatch: aggregate(marks.map((m) => ({ ...m, value: llmMatchPoints(m.value) })), inputs.bootstrap),
    spl: aggregate(spls, inputs.bootstrap),
    replyStatuses: countReplyStatuses(judgements.filter((j) => j.score === null)),
    failures: failed.map((j) => ({ questionId: j.questionId, error: j.error ?? "failed", ...(j.status ? { status: j.status } : {}), replies: j.replies })),
    judgeUnreadable: judgeUnreadable(unreadable.map((j) => ({ questionId: j.questionId, judge: "la-eqa", error: j.error ?? "unreadable", replies: j.replies })), judgements.length),
    usage: { judgements: sumUsage(judgements.map((j) => j.usage)), thisProcess: inputs.usage },
    cost: inputs.cost,
  };
}

/** The reference's per-question result fields (its notebook's `result` dict), by question id. */
function laEqaResults(plan: LaEqaPlan, judgements: readonly LaEqaJudgement[]): Record<string, Record<string, unknown>> {
  const results: Record<string, Record<string, unknown>> = {};
  plan.tasks.forEach((task, i) => {
    const { question } = task;
    const path = plan.paths[i]!;
    results[question.questionId] = {
      question_id: question.questionId,
      question: question.question,
      question_type: question.category,
      GT_A_answer: question.answer,
      GT_best_path: question.bestPath,
      A_answer: task.answer,
      answer_accuracy: judgements[i]!.score,
      distance_traveled: path.distanceTraveled,
      GT_best_path_length: path.bestPathLength,
      SPL: path.spl,
    };
  });
  return results;
}

/** What `eqa score --dry-run` counts on LA-EQA questions. */
export interface LaEqaScorePlan {
  questions: number;
  reused: number;
  pending: number;
}

/** A reply the parser reads at once. */
const PLANNED_REPLY = '{"score": 5, "reasoning": "planned"}';

/** `eqa score --dry-run` (and `--batch`'s collection): records the judge's request for every question not yet judged; calls no model, writes nothing. */
export async function planLaEqaScore(options: LaEqaScoreSetup, plan: CallPlan): Promise<LaEqaScorePlan> {
  const { tasks } = planLaEqaTasks(options);
  const { reusable: earlier, pending } = resumeItems(options.outDir, judgementResumeRule(tasks));
  const judge = plan.model(options.judge.spec, "judge", PLANNED_REPLY);
  for (const task of pending) await withCallContext({ item: task.question.questionId }, () => judgeLaEqa(task, judge));
  return { questions: tasks.length, reused: earlier.size, pending: pending.length };
}
