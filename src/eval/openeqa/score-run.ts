import { resolve } from "node:path";
import { z } from "zod";
import { OPENEQA_CATEGORIES, judgeUnreadable, type JudgeUnreadable, loadPromptFile, selectShard, sha256Hex, type Prediction, type Question, type Shard } from "../../core/index.js";
import { pairPredictions, type OpenEqaBenchmark } from "../../data/index.js";
import { adaptRequest, countReplyStatuses, describeModel, emptyUsage, replyStatusOf, type FailedReplyStatus, sumUsage, usageTotalsSchema, type ChatModel, type ModelRef, type UsageLedger, type UsageTotals, ledgerCost, mergeCallLedgers, readCallLedger, type CallPlan, type CallEntry, type RunCost, JUDGE_ROLE, withCallContext, type ModelSpec } from "../../models/index.js";
import { RunDirectory, mergeOutput, mergedRecords, openRun, questionItems, readShardSet, recordParser, resultSettings, resumeItems, shardContext, shardSetting, shardWallTime, sumShardCounts, writeMergeNote, writeRecords, writeShardManifest, type RunContract, RUN_KIND, summaryHead, type RunSummaryHead } from "../../store/index.js";
import type { ResumeRule } from "../../store/index.js";
import { aggregateLlmMatch, type LlmMatchAggregates } from "./aggregate.js";
import {
  LLM_MATCH_PARAMS,
  LLM_MATCH_PROMPTS,
  ROBUST_REASKS,
  formatLlmMatchVariant,
  judgeLlmMatch,
  llmMatchParams,
  llmMatchPromptName,
  llmMatchJudgementSchema,
  pendingJudgement,
  type LlmMatchJudgeOptions,
  prepareLlmMatchTask,
  type LlmMatchJudgement,
  type LlmMatchMode,
  type LlmMatchTask,
} from "./llm-match.js";
import { DEFAULT_BOOTSTRAP, storedMeanEstimateSchema, type BootstrapOptions } from "../stats.js";
import { markOutcome, runJudging, type JudgingProgress, type MarkCounts, type MarkSummaryTail, type ScoreInputs } from "../judging.js";

export const JUDGEMENTS_FILE = "judgements.jsonl";
export const METRICS_FILE = "metrics.json";
export const SUMMARY_FILE = "summary.json";

export type ScoreProgress = JudgingProgress;

export interface ScoreOptions extends ScoreInputs<OpenEqaBenchmark, Question, Prediction> {
  /** The LLM-Match judge; its spec names it in the summary and the input keys. */
  judge: ChatModel;
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
  /** The run folder when an enclosing run (`eqa run`) has opened it; else `outDir` is opened as an llm-match run (`scoreRunContract`). */
  run?: RunDirectory;
  /** Judge only this shard of the questions (`--shard`), and write `shard.json` for `eqa merge`. */
  shard?: Shard;
  onProgress?: (progress: ScoreProgress) => void;
}

/** What a score run's contract, configuration and dry run read: its options with the judge known by its spec alone. */
export type ScoreSetup = Omit<ScoreOptions, "judge" | "usage" | "onProgress"> & { judge: ModelRef };

export type { ScoreFailure } from "../judging.js";

export interface ScoreSummary extends RunSummaryHead<typeof RUN_KIND["llm-match"]>, MarkSummaryTail {
  counts: MarkCounts & {
    neutralised: number;
  };
  llmMatch: LlmMatchAggregates;
}

const isObject = (v: unknown): boolean => typeof v === "object" && v !== null && !Array.isArray(v);
const storedAggregates = z.object({ overall: storedMeanEstimateSchema, byCategory: z.record(z.string(), storedMeanEstimateSchema), bySource: z.record(z.string(), storedMeanEstimateSchema) });

/**
 * `summary.json` of an LLM-Match run as `scorePredictions` writes it and every reader reads it
 * back (the report, the viewer): an undefined figure (NaN) is null, and the fields older versions
 * did not write yet are optional, so that their folders still open.
 */
export const scoreSummarySchema = z.looseObject({
  kind: z.literal("llm-match"),
  eqakitVersion: z.string().optional(),
  createdAt: z.string().optional(),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({
    questions: z.number(),
    scored: z.number(),
    failed: z.number(),
    judgeUnreadable: z.number().optional(),
    missingPredictions: z.number().optional(),
    noAnswer: z.number().optional(),
    neutralised: z.number().optional(),
    reused: z.number().optional(),
    predictionsOutsideSubset: z.number().optional(),
  }),
  llmMatch: storedAggregates,
  replyStatuses: z.record(z.string(), z.number()).optional(),
  failures: z.array(z.looseObject({ questionId: z.string(), error: z.string(), status: z.string().optional(), replies: z.array(z.string().nullable()).optional() })),
  judgeUnreadable: z.custom<JudgeUnreadable>(isObject).optional(),
  usage: z.looseObject({ judgements: usageTotalsSchema, thisProcess: z.looseObject({ deviations: z.record(z.string(), z.array(z.string())).optional() }).nullable().optional() }),
  cost: z.custom<RunCost>(isObject).optional(),
});
/** `T` without the index signatures of loose objects (what a written interface is compared with). */
type KnownFields<T> = T extends readonly (infer U)[] ? KnownFields<U>[] : T extends object ? { [K in keyof T as string extends K ? never : K]: KnownFields<T[K]> } : T;
/** Checked by the compiler: every summary `scorePredictions` writes is one `scoreSummarySchema` reads. */
type ScoreSummaryIsRead = ScoreSummary extends KnownFields<z.input<typeof scoreSummarySchema>> ? true : never;
const scoreSummaryIsRead: ScoreSummaryIsRead = true;
void scoreSummaryIsRead;

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
  const run = options.run ?? (await openRun(scoreRunContract(options)));
  options.usage?.attach(run.path);
  const { judgements: ordered, reused } = await runJudging({
    run,
    resume: judgementResumeRule(tasks),
    judge: (task) => judgeLlmMatch(task, options.judge, mode),
    failed: (task, error) => ({ ...failedJudgement(task, options.judge.name, mode, error.message), replies: error.reply ? [error.reply.text] : [], ...replyStatusOf(error) }),
    outcome: markOutcome,
    models: [options.judge.spec],
    concurrency: options.concurrency,
    onProgress: options.onProgress,
  });
  const context: ScoreContext = { judgeModel: options.judge.spec.name, bootstrap: { ...DEFAULT_BOOTSTRAP, ...options.bootstrap }, missingPredictions: pairs.filter((p) => p.missing).length, predictionsOutsideSubset: outsideSubset, questions: tasks.map((t) => t.question) };
  const summary = scoreSummary(tasks.map((t, i) => ({ question: t.question, judgement: ordered[i]! })), {
    config: { ...scoreConfiguration(options, mode), ...shardSetting(options.shard) },
    ...context,
    reused,
    wallTimeMs: performance.now() - started,
    usage: options.usage?.snapshot() ?? null,
    calls: readCallLedger(run.path),
  });
  if (options.shard) {
    await writeShardManifest(run, { kind: RUN_KIND["llm-match"], ...options.shard, items: options.questions.map((q) => q.questionId), keys: Object.fromEntries(wanted), context: { ...context } });
  }
  await run.writeJson(METRICS_FILE, metricsOf(ordered));
  await run.writeJson(options.summaryFile ?? SUMMARY_FILE, summary);
  return { summary, runDir: run.path, metrics: metricsOf(ordered) };
}

/** OpenEQA's metrics format: question id → score, for the judgements that have one. */
function metricsOf(judgements: readonly LlmMatchJudgement[]): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const j of judgements) if (j.score !== null) metrics[j.questionId] = j.score;
  return metrics;
}

/** What a score run's summary is built from beside its judgements, as shard.json keeps it. */
const scoreContextSchema = z.object({
  judgeModel: z.string(),
  bootstrap: z.object({ resamples: z.number().int().positive(), seed: z.number().int(), confidence: z.number().gt(0).lt(1) }),
  missingPredictions: z.number().int().nonnegative(),
  predictionsOutsideSubset: z.number().int().nonnegative(),
  questions: z.array(z.object({ questionId: z.string(), question: z.string(), answer: z.string(), category: z.enum(OPENEQA_CATEGORIES), episodeHistory: z.string(), extraAnswers: z.array(z.string()).optional() })),
});

type ScoreContext = z.infer<typeof scoreContextSchema>;

/**
 * `eqa merge` of `eqa score --shard` runs: judgements.jsonl holds every shard's standing
 * judgements in the benchmark's order; metrics.json and summary.json are written as one
 * unsharded run writes them (LLM-Match and its intervals over all the questions; counts of
 * missing predictions, reused judgements and wall times summed over the shards).
 */
export async function mergeScoreRuns(dirs: readonly string[], outDir: string): Promise<ScoreResult> {
  const set = await readShardSet(dirs, RUN_KIND["llm-match"]);
  const contexts = set.shards.map((shard) => shardContext(shard, set.kind, scoreContextSchema));
  const questions = new Map(contexts.flatMap((c) => c.questions.map((q) => [q.questionId, q] as const)));
  const judgements = mergedRecords(set, JUDGEMENTS_FILE, recordParser(llmMatchJudgementSchema));
  const run = mergeOutput(outDir, set);
  await writeRecords(run, JUDGEMENTS_FILE, judgements);
  const calls = await mergeCallLedgers(dirs, run.path);
  const summary = scoreSummary(
    judgements.map((judgement) => ({ question: questions.get(judgement.questionId)!, judgement })),
    {
      config: set.config,
      judgeModel: contexts[0]!.judgeModel,
      bootstrap: contexts[0]!.bootstrap,
      missingPredictions: contexts.reduce((sum, c) => sum + c.missingPredictions, 0),
      predictionsOutsideSubset: contexts[0]!.predictionsOutsideSubset,
      reused: sumShardCounts(set, "reused"),
      wallTimeMs: shardWallTime(set),
      usage: null,
      calls,
    },
  );
  await writeMergeNote(run, set);
  await run.writeJson(METRICS_FILE, metricsOf(judgements));
  await run.writeJson(SUMMARY_FILE, summary);
  return { summary, runDir: run.path, metrics: metricsOf(judgements) };
}

/** The questions paired with their predictions, and the judge's task for each (with its input key, what resuming matches). */
function judgeTasks(options: ScoreSetup, mode: LlmMatchMode): { pairs: ReturnType<typeof pairPredictions>["pairs"]; outsideSubset: number; tasks: LlmMatchTask[]; wanted: Map<string, string> } {
  // paired over all the questions, so that every shard counts the predictions outside them alike
  const paired = pairPredictions(options.questions, options.predictions, {
    benchmark: options.benchmark,
    predictionsPath: options.predictionsPath,
    ...(options.allowMissing !== undefined ? { allowMissing: options.allowMissing } : {}),
  });
  const pairs = selectShard(paired.pairs, (p) => p.question.questionId, options.shard);
  const outsideSubset = paired.outsideSubset;
  const tasks = pairs.map((p) => prepareLlmMatchTask(p.question, p.answer, mode, options.judge.spec.name, options.judgeOptions));
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
export async function planScore(options: ScoreSetup, plan: CallPlan): Promise<ScorePlan> {
  const mode = options.mode ?? "robust";
  const { tasks } = judgeTasks(options, mode);
  const { reusable: earlier, pending } = resumeItems(options.outDir, judgementResumeRule(tasks));
  const judge = plan.model(options.judge.spec, "judge", PLANNED_MARK);
  for (const task of pending) await withCallContext({ item: task.question.questionId }, () => judgeLlmMatch(task, judge, mode));
  return { questions: tasks.length, reused: earlier.size, pending: pending.length };
}

/** How a score run resumes: a question's judgement stands when it gave a score, for the same question, answer, judge and prompt. */
function judgementResumeRule(tasks: readonly LlmMatchTask[]): ResumeRule<LlmMatchTask, LlmMatchJudgement> {
  return { file: JUDGEMENTS_FILE, schema: llmMatchJudgementSchema, items: tasks, id: (t) => t.question.questionId, inputKey: (t) => t.inputKey, succeeded: (j) => j.score !== null };
}

function failedJudgement(task: LlmMatchTask, judge: string, mode: LlmMatchMode, error: string): LlmMatchJudgement {
  return { ...pendingJudgement(task, judge, mode), error, finishedAt: new Date().toISOString() };
}

/** A score run's configuration, as its summary records it (judge, mode, parameters, prompts' hashes, inputs). */
function scoreConfiguration(options: ScoreSetup, mode: LlmMatchMode): Record<string, unknown> {
  const bootstrap = { ...DEFAULT_BOOTSTRAP, ...options.bootstrap };
  const prompts: Record<string, string> = {};
  const variant = options.judgeOptions?.variant;
  for (const name of [llmMatchPromptName(LLM_MATCH_PROMPTS.plain, variant), llmMatchPromptName(LLM_MATCH_PROMPTS.extra, variant), ...(mode === "robust" ? [LLM_MATCH_PROMPTS.reask] : [])]) {
    prompts[name] = loadPromptFile(name).sha256;
  }
  const parameters = options.judgeOptions ? llmMatchParams(options.judgeOptions) : LLM_MATCH_PARAMS;
  // the reference's parameters as this judge really gets them (a reasoning model takes no temperature)
  const sentDifferently = adaptRequest(options.judge.spec.profile, { messages: [], ...parameters }).deviations;
  return {
      judge: describeModel(options.judge.spec),
      mode,
      parameters: { ...parameters, ...(mode === "robust" ? { reasks: ROBUST_REASKS } : {}) },
      ...(sentDifferently.length > 0 ? { parametersSentDifferently: sentDifferently } : {}),
      ...(variant ? { promptVariant: formatLlmMatchVariant(variant) } : {}),
      prompts,
      benchmark: { path: options.benchmark.path, sha256: options.benchmark.sha256, questions: options.benchmark.questions.length },
      subset: options.subsetPath ?? null,
      predictions: { path: resolve(options.predictionsPath), count: options.predictions.length },
      allowMissing: options.allowMissing ?? false,
      concurrency: options.concurrency ?? 8,
      bootstrap,
      ...options.settings,
  };
}

/**
 * The run folder of `eqa score` as its manifest declares it: kind llm-match; the settings that
 * decide the scores (the judge, mode, parameters, prompt variant and prompts' hashes, missing
 * predictions allowed, bootstrap, without-guess); the benchmark, the predictions and the subset
 * as inputs, the predictions and the subset copied in.
 */
export function scoreRunContract(options: ScoreSetup): RunContract {
  return {
    dir: options.outDir,
    kind: RUN_KIND["llm-match"],
    settings: resultSettings(scoreConfiguration(options, options.mode ?? "robust")),
    items: questionItems(options.questions, options.benchmark.path),
    inputs: [
      { name: "benchmark", path: options.benchmark.path },
      { name: "predictions", path: options.predictionsPath, copy: true },
      ...(options.subsetPath ? [{ name: "subset", path: options.subsetPath, copy: true }] : []),
    ],
  };
}

/** What a score run's summary is built from beside its judgements. */
interface ScoreSummaryInputs extends Omit<ScoreContext, "questions"> {
  config: Record<string, unknown>;
  reused: number;
  wallTimeMs: number;
  usage: ReturnType<UsageLedger["snapshot"]> | null;
  /** The run's ledger of model calls. */
  calls: readonly CallEntry[];
}

/** A score run's summary from its judgements (those of one run, or of merged shards), each with its question. */
function scoreSummary(entries: readonly { question: Question; judgement: LlmMatchJudgement }[], inputs: ScoreSummaryInputs): ScoreSummary {
  const judgements = entries.map((e) => e.judgement);
  const scored = entries.flatMap((e) => (e.judgement.score === null ? [] : [{ question: e.question, score: e.judgement.score }]));
  const judgementUsage = sumUsage(judgements.map((j) => j.usage));
  return {
    ...summaryHead(RUN_KIND["llm-match"], inputs.wallTimeMs, inputs.config),
    counts: {
      questions: entries.length,
      scored: scored.length,
      failed: judgements.filter((j) => j.score === null && !j.unreadable).length,
      judgeUnreadable: judgements.filter((j) => j.score === null && j.unreadable).length,
      missingPredictions: inputs.missingPredictions,
      noAnswer: judgements.filter((j) => j.prediction === null).length,
      neutralised: judgements.filter((j) => j.neutralised).length,
      reused: inputs.reused,
      predictionsOutsideSubset: inputs.predictionsOutsideSubset,
    },
    llmMatch: aggregateLlmMatch(scored, inputs.bootstrap),
    replyStatuses: countReplyStatuses(judgements.filter((j) => j.score === null)),
    failures: judgements
      .filter((j) => j.score === null && !j.unreadable)
      .map((j) => ({ questionId: j.questionId, error: j.error ?? "failed", ...(j.status ? { status: j.status } : {}), replies: j.replies })),
    judgeUnreadable: judgeUnreadable(
      judgements.filter((j) => j.score === null && j.unreadable).map((j) => ({ questionId: j.questionId, judge: "llm-match", error: j.error ?? "unreadable", replies: j.replies })),
      judgements.length,
    ),
    usage: { judgements: judgementUsage, thisProcess: inputs.usage },
    // the judge's calls (in `eqa run`'s folder the agent's are its answers' cost)
    cost: ledgerCost(inputs.calls.filter((call) => call.role === JUDGE_ROLE)),
  };
}
