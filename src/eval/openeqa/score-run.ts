import { eqakitVersion, loadPromptFile, sha256Hex, type Prediction, type Question } from "../../core/index.js";
import { pairPredictions, type OpenEqaBenchmark } from "../../data/index.js";
import { adaptRequest, countReplyStatuses, describeModel, emptyUsage, replyStatusOf, type FailedReplyStatus, sumUsage, runModelBatch, type ChatModel, type ModelSpec, type UsageLedger, type UsageTotals, runCost, type CallPlan, type RunCost } from "../../models/index.js";
import { RunDirectory, reusableRecords } from "../../store/index.js";
import { peekReusableRecords } from "../../store/index.js";
import { aggregateLlmMatch, type LlmMatchAggregates } from "./aggregate.js";
import {
  LLM_MATCH_PARAMS,
  LLM_MATCH_PROMPTS,
  ROBUST_REASKS,
  formatLlmMatchVariant,
  judgeLlmMatch,
  llmMatchParams,
  llmMatchPromptName,
  type LlmMatchJudgeOptions,
  prepareLlmMatchTask,
  type LlmMatchJudgement,
  type LlmMatchMode,
  type LlmMatchTask,
} from "./llm-match.js";
import { DEFAULT_BOOTSTRAP, type BootstrapOptions } from "../stats.js";

export const JUDGEMENTS_FILE = "judgements.jsonl";
export const METRICS_FILE = "metrics.json";
export const SUMMARY_FILE = "summary.json";

export interface ScoreProgress {
  done: number;
  total: number;
  failed: number;
  /** Judgements taken from an earlier, interrupted run in the same directory. */
  reused: number;
}

export interface ScoreOptions {
  benchmark: OpenEqaBenchmark;
  /** The questions to score (the benchmark's, or a subset's). */
  questions: Question[];
  subsetPath?: string;
  predictions: Prediction[];
  predictionsPath: string;
  judge: ChatModel;
  judgeSpec: ModelSpec;
  /** Usage of this process's calls, for the summary. */
  usage?: UsageLedger;
  mode?: LlmMatchMode;
  /** A prompt variant or temperature of OpenEQA's robustness study; the reference's prompt and parameters when absent. */
  judgeOptions?: LlmMatchJudgeOptions;
  allowMissing?: boolean;
  outDir: string;
  /** Questions judged at once; the endpoint's scheduler limits calls in flight. */
  concurrency?: number;
  bootstrap?: BootstrapOptions;
  /** Extra configuration to record in the summary (cache path, retries, …). */
  settings?: Record<string, unknown>;
  /** The summary's file name in the run directory (`summary.json`). */
  summaryFile?: string;
  onProgress?: (progress: ScoreProgress) => void;
}

export interface ScoreFailure {
  questionId: string;
  error: string;
  /** Set when the judge's reply was cut, filtered or refused. */
  status?: FailedReplyStatus;
  replies: (string | null)[];
}

export interface ScoreSummary {
  kind: "llm-match";
  eqakitVersion: string;
  createdAt: string;
  wallTimeMs: number;
  config: Record<string, unknown>;
  counts: {
    questions: number;
    scored: number;
    failed: number;
    missingPredictions: number;
    noAnswer: number;
    neutralised: number;
    reused: number;
    predictionsOutsideSubset: number;
  };
  llmMatch: LlmMatchAggregates;
  /** Judge replies that were not marks, by status (truncated, filtered, refused). */
  replyStatuses: Partial<Record<FailedReplyStatus, number>>;
  failures: ScoreFailure[];
  usage: { judgements: UsageTotals; thisProcess: ReturnType<UsageLedger["snapshot"]> | null };
  /** Tokens and dollars of the judge, from every judgement the run directory holds. */
  cost: RunCost;
}

export interface ScoreResult {
  summary: ScoreSummary;
  runDir: string;
  /** question id → score, OpenEQA's metrics format. */
  metrics: Record<string, number>;
}

/**
 * `eqa score`: judges every prediction with LLM-Match, appending each judgement as it
 * finishes, then writes metrics.json (OpenEQA's format) and summary.json. Run again in the
 * same directory, it judges only what is missing.
 */
export async function scorePredictions(options: ScoreOptions): Promise<ScoreResult> {
  const started = performance.now();
  const mode = options.mode ?? "robust";
  const { pairs, outsideSubset, tasks, wanted } = judgeTasks(options, mode);
  const run = new RunDirectory(options.outDir);
  const earlier = reusableRecords(run, JUDGEMENTS_FILE, asJudgement, wanted, (j) => j.score !== null);
  const judgements = new Map<string, LlmMatchJudgement>(earlier);
  const pending = tasks.filter((t) => !earlier.has(t.question.questionId));
  const progress: ScoreProgress = { done: earlier.size, total: tasks.length, failed: 0, reused: earlier.size };
  options.onProgress?.({ ...progress });

  const appender = run.appender(JUDGEMENTS_FILE);
  try {
    await runModelBatch({
      items: pending,
      concurrency: options.concurrency ?? 8,
      work: (task) => judgeLlmMatch(task, options.judge, mode),
      failed: (task, error) => ({ ...failedJudgement(task, options.judge.name, mode, error.message), replies: error.reply ? [error.reply.text] : [], ...replyStatusOf(error) }),
      finished: (task, judgement) => {
        appender.append(judgement);
        judgements.set(task.question.questionId, judgement);
        progress.done++;
        if (judgement.score === null) progress.failed++;
        options.onProgress?.({ ...progress });
      },
      models: [options.judgeSpec],
    });
  } finally {
    appender.close();
  }

  const ordered = tasks.map((t) => judgements.get(t.question.questionId)!);
  const metrics: Record<string, number> = {};
  for (const j of ordered) if (j.score !== null) metrics[j.questionId] = j.score;
  const summary = buildSummary(options, mode, tasks, ordered, {
    missing: pairs.filter((p) => p.missing).length,
    outsideSubset,
    reused: earlier.size,
    wallTimeMs: performance.now() - started,
  });
  await run.writeJson(METRICS_FILE, metrics);
  await run.writeJson(options.summaryFile ?? SUMMARY_FILE, summary);
  return { summary, runDir: run.path, metrics };
}

/** The questions paired with their predictions, and the judge's task for each (with its input key, what resuming matches). */
function judgeTasks(options: Omit<ScoreOptions, "judge">, mode: LlmMatchMode): { pairs: ReturnType<typeof pairPredictions>["pairs"]; outsideSubset: number; tasks: LlmMatchTask[]; wanted: Map<string, string> } {
  const { pairs, outsideSubset } = pairPredictions(options.questions, options.predictions, {
    benchmark: options.benchmark,
    predictionsPath: options.predictionsPath,
    ...(options.allowMissing !== undefined ? { allowMissing: options.allowMissing } : {}),
  });
  const tasks = pairs.map((p) => prepareLlmMatchTask(p.question, p.answer, mode, options.judgeSpec.name, options.judgeOptions));
  return { pairs, outsideSubset, tasks, wanted: new Map(tasks.map((t) => [t.question.questionId, t.inputKey])) };
}

/** A reply both LLM-Match parsers read at the first try: the plan counts no re-asks. */
const PLANNED_MARK = "5";

/** What `eqa score --dry-run` counts. */
export interface ScorePlan {
  questions: number;
  /** Judgements the run directory already holds. */
  reused: number;
  /** Questions that would be judged now (those without an answer score 0 without a call). */
  pending: number;
}

/**
 * `eqa score --dry-run`: records, in `plan`, the judge's request for every question the run
 * directory has not judged yet, built as scorePredictions builds it, each reply read at the
 * first try. Calls no model and writes nothing.
 */
export async function planScore(options: Omit<ScoreOptions, "judge" | "usage" | "onProgress">, plan: CallPlan): Promise<ScorePlan> {
  const mode = options.mode ?? "robust";
  const { tasks, wanted } = judgeTasks(options, mode);
  const earlier = peekReusableRecords(options.outDir, JUDGEMENTS_FILE, asJudgement, wanted, (j) => j.score !== null);
  const pending = tasks.filter((t) => !earlier.has(t.question.questionId));
  const judge = plan.model(options.judgeSpec, "judge", PLANNED_MARK);
  for (const task of pending) await judgeLlmMatch(task, judge, mode);
  return { questions: tasks.length, reused: earlier.size, pending: pending.length };
}

function asJudgement(value: unknown): LlmMatchJudgement | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Partial<LlmMatchJudgement>;
  if (typeof record.questionId !== "string" || typeof record.inputKey !== "string") return undefined;
  if (record.score !== null && typeof record.score !== "number") return undefined;
  return { ...(record as LlmMatchJudgement), usage: { ...emptyUsage(), ...record.usage } };
}

function failedJudgement(task: LlmMatchTask, judge: string, mode: LlmMatchMode, error: string): LlmMatchJudgement {
  return {
    questionId: task.question.questionId,
    score: null,
    mode,
    judge,
    inputKey: task.inputKey,
    promptName: task.promptName,
    promptSha256: task.prompt === null ? null : sha256Hex(task.prompt),
    prediction: task.prediction,
    neutralised: task.neutralised,
    replies: [],
    error,
    usage: emptyUsage(),
    finishedAt: new Date().toISOString(),
  };
}

function buildSummary(
  options: ScoreOptions,
  mode: LlmMatchMode,
  tasks: LlmMatchTask[],
  judgements: LlmMatchJudgement[],
  extra: { missing: number; outsideSubset: number; reused: number; wallTimeMs: number },
): ScoreSummary {
  const scored = tasks.flatMap((t, i) => {
    const score = judgements[i]!.score;
    return score === null ? [] : [{ question: t.question, score }];
  });
  const judgementUsage = sumUsage(judgements.map((j) => j.usage));
  const bootstrap = { ...DEFAULT_BOOTSTRAP, ...options.bootstrap };
  const prompts: Record<string, string> = {};
  const variant = options.judgeOptions?.variant;
  for (const name of [llmMatchPromptName(LLM_MATCH_PROMPTS.plain, variant), llmMatchPromptName(LLM_MATCH_PROMPTS.extra, variant), ...(mode === "robust" ? [LLM_MATCH_PROMPTS.reask] : [])]) {
    prompts[name] = loadPromptFile(name).sha256;
  }
  const parameters = options.judgeOptions ? llmMatchParams(options.judgeOptions) : LLM_MATCH_PARAMS;
  // the reference's parameters as this judge really gets them (a reasoning model takes no temperature)
  const sentDifferently = adaptRequest(options.judgeSpec.profile, { messages: [], ...parameters }).deviations;
  return {
    kind: "llm-match",
    eqakitVersion,
    createdAt: new Date().toISOString(),
    wallTimeMs: Math.round(extra.wallTimeMs),
    config: {
      judge: describeModel(options.judgeSpec),
      mode,
      parameters: { ...parameters, ...(mode === "robust" ? { reasks: ROBUST_REASKS } : {}) },
      ...(sentDifferently.length > 0 ? { parametersSentDifferently: sentDifferently } : {}),
      ...(variant ? { promptVariant: formatLlmMatchVariant(variant) } : {}),
      prompts,
      benchmark: { path: options.benchmark.path, sha256: options.benchmark.sha256, questions: options.benchmark.questions.length },
      subset: options.subsetPath ?? null,
      predictions: { path: options.predictionsPath, count: options.predictions.length },
      allowMissing: options.allowMissing ?? false,
      concurrency: options.concurrency ?? 8,
      bootstrap,
      ...options.settings,
    },
    counts: {
      questions: tasks.length,
      scored: scored.length,
      failed: judgements.filter((j) => j.score === null).length,
      missingPredictions: extra.missing,
      noAnswer: tasks.filter((t) => t.prediction === null).length,
      neutralised: tasks.filter((t) => t.neutralised).length,
      reused: extra.reused,
      predictionsOutsideSubset: extra.outsideSubset,
    },
    llmMatch: aggregateLlmMatch(scored, bootstrap),
    replyStatuses: countReplyStatuses(judgements.filter((j) => j.score === null)),
    failures: judgements
      .filter((j) => j.score === null)
      .map((j) => ({ questionId: j.questionId, error: j.error ?? "failed", ...(j.status ? { status: j.status } : {}), replies: j.replies })),
    usage: { judgements: judgementUsage, thisProcess: options.usage?.snapshot() ?? null },
    cost: runCost([{ role: "judge", model: options.judgeSpec.name, usage: judgementUsage }]),
  };
}
