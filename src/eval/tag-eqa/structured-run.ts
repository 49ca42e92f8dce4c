/**
 * `eqa score-tag`: TAG-EQA's structured grounded scoring of a run's predictions, with the
 * fine-grained report of the paper's Figs. 4-6 (valid answers, error types, scores per condition
 * category). Each question's judgement is appended to judgements.jsonl as it finishes; run again
 * in the same directory, only what is missing or failed is judged.
 *
 * A prediction is a structured answer (used as it is) or free text (its structure extracted by
 * the judge LLM, structured-extract.ts). An answer is valid when its structure has at least one
 * group with an object or a value (Fig. 4); an empty answer is invalid and scores 1.
 * A judgement fails (no score, retried on resume) when the judge's call fails or free text has no
 * judge to read it. When the judge's replies cannot be read as a structure (asked twice), the
 * judgement is `unreadable`: a failure of the judge, not of the answer, so it is left out of every
 * mean, counted and named apart (`judgeUnreadable`), and asked again on the next run.
 */
import { resolve } from "node:path";
import { z } from "zod";
import { UserError, judgeUnreadable, sha256Hex, type JudgeUnreadable } from "../../core/index.js";
import { parseJsonText, readTextFile, structuredAnswerSchema, validateRecords, type StructuredAnswer, type TagQuestion } from "../../data/index.js";
import { JUDGE_ROLE, describeModel, emptyUsage, usageTotalsSchema, ledgerCost, readCallLedger, sumUsage, type CallPlan, type ChatModel, type ModelRef, type RunCost, type UsageLedger, type UsageTotals, withCallContext, type ModelSpec } from "../../models/index.js";
import { RunDirectory, openRun, resultSettings, resumeItems, type ResumeRule, type RunContract, type RunItems, RUN_KIND, summaryHead, type RunSummaryHead } from "../../store/index.js";
import { JUDGEMENTS_FILE, METRICS_FILE, SUMMARY_FILE } from "../openeqa/index.js";
import { DEFAULT_BOOTSTRAP, bootstrapMean, type BootstrapOptions, type MeanEstimate } from "../stats.js";
import { runJudging, type JudgingProgress } from "../judging.js";
import { extractStructuredAnswer, extractionPromptHashes, structuredPrediction, TAG_EXTRACT_PARAMS, type Extraction } from "./structured-extract.js";
import {
  DEFAULT_STRUCTURED_WEIGHTS,
  TAG_POSITION_SIGMA,
  defaultTextSimilarity,
  matchStructuredAnswers,
  type ErrorCounts,
  type GroupMatch,
  type SimilaritySource,
  type StructuredMatchOptions,
} from "./structured-match.js";

export interface TagPrediction {
  question_id: string;
  answer: string | StructuredAnswer | null;
}

const tagPredictionSchema = z.object({
  question_id: z.string().min(1),
  answer: z.union([z.string(), z.null(), structuredAnswerSchema]),
});

/** The longest answer scored by default, in characters (free text, or a structured answer's JSON). */
export const DEFAULT_MAX_ANSWER_CHARS = 20_000;

export interface LoadTagPredictionsOptions {
  /** Answers longer than this (characters; a structured answer's JSON) are refused. */
  maxAnswerChars?: number;
}

/**
 * Reads `[{"question_id", "answer"}]`, the answer free text, null or a structured answer. An
 * answer longer than `maxAnswerChars` is refused (UserError naming the record) before anything
 * is embedded or matched, so an over-long answer costs no time.
 */
export async function loadTagPredictions(path: string, options: LoadTagPredictionsOptions = {}): Promise<TagPrediction[]> {
  const limit = options.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS;
  const raw = parseJsonText(await readTextFile(path), path);
  if (Array.isArray(raw)) {
    raw.forEach((r: unknown, index) => {
      if (typeof r !== "object" || r === null) return;
      const { question_id: id, answer } = r as { question_id?: unknown; answer?: unknown };
      const length = typeof answer === "string" ? answer.length : answer !== null && typeof answer === "object" ? JSON.stringify(answer).length : 0;
      if (length > limit) {
        throw new UserError(`answer of ${length} characters, over the limit of ${limit}`, { file: path, index, ...(typeof id === "string" ? { id } : {}), field: "answer" }, "shorten it, or raise the limit with --max-answer-chars N");
      }
    });
  }
  const records = validateRecords(raw, tagPredictionSchema, path, "TAG-EQA predictions");
  const seen = new Set<string>();
  records.forEach((r, index) => {
    if (seen.has(r.question_id)) throw new UserError("duplicate prediction for this question id", { file: path, index, id: r.question_id, field: "question_id" });
    seen.add(r.question_id);
  });
  return records;
}

/** Categorical queries: their values (states, colours, materials) are right only when equal. */
export function categoricalQuery(query: TagQuestion["program"]["query"]): boolean {
  if (query.type === "getState") return true;
  return query.type === "getProperty" && (query.modifier === "colour" || query.modifier === "color" || query.modifier === "material");
}

export interface TagJudgement {
  questionId: string;
  inputKey: string;
  /** "unreadable": the judge's replies could not be read as a structure (no score; asked again on resume). */
  status: "scored" | "failed" | "unreadable";
  /** Fig. 4: the answer had some content (not empty, readable). */
  valid: boolean;
  source: Extraction["source"] | null;
  score: number | null;
  groundedScore: number | null;
  ungroundedScore: number | null;
  errors: (ErrorCounts & { truthObjects: number; predictedObjects: number; truthPredicates: number; predictedPredicates: number }) | null;
  predicted: StructuredAnswer | null;
  groups: GroupMatch[];
  replies: (string | null)[];
  error: string | null;
  usage: UsageTotals;
  finishedAt: string;
}

/** One line of a TAG score run's judgements.jsonl, as `scoreTagRun` writes it (usage totals an older version lacks are 0). */
export const tagJudgementSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  status: z.enum(["scored", "failed", "unreadable"]),
  valid: z.boolean(),
  source: z.enum(["judge", "empty", "structured"]).nullable(),
  score: z.number().nullable(),
  groundedScore: z.number().nullable(),
  ungroundedScore: z.number().nullable(),
  errors: z.custom<TagJudgement["errors"]>((v) => v === null || ((v) => typeof v === "object" && v !== null && !Array.isArray(v))(v)),
  predicted: z.custom<StructuredAnswer | null>((v) => v === null || Array.isArray(v)),
  groups: z.custom<GroupMatch[]>(Array.isArray),
  replies: z.array(z.string().nullable()),
  error: z.string().nullable(),
  usage: usageTotalsSchema,
  finishedAt: z.string(),
}) satisfies z.ZodType<TagJudgement>;

export interface TagScoreOptions {
  questions: TagQuestion[];
  questionsPath?: string;
  predictions: TagPrediction[];
  predictionsPath?: string;
  /** The LLM that extracts the structure of free-text answers (it carries its spec); without it free text fails. */
  judge?: ChatModel;
  /** Score against the grounded form of each question (its `grounded` answer) where it has one. */
  grounded?: boolean;
  /** Score questions without a prediction as empty answers instead of refusing. */
  allowMissing?: boolean;
  /** Leave out predictions for question ids not among the questions (reported) instead of refusing. */
  allowUnknown?: boolean;
  match?: StructuredMatchOptions;
  outDir: string;
  /** The run folder when an enclosing run (`eqa demo`) has opened it; else `outDir` is opened as a tag-structured run (`tagScoreRunContract`). */
  run?: RunDirectory;
  concurrency?: number;
  bootstrap?: BootstrapOptions;
  settings?: Record<string, unknown>;
  /** The runtime's usage ledger: the judge's calls are appended to the run's ledger of model calls. */
  usage?: UsageLedger;
  onProgress?: (progress: JudgingProgress) => void;
}

/** What a TAG score run's contract, configuration and dry run read: its options with the judge known by its spec alone. */
export type TagScoreSetup = Omit<TagScoreOptions, "judge" | "onProgress" | "usage"> & { judge?: ModelRef };

export interface ErrorRate {
  /** Share of scored answers with at least one such error (Fig. 5). */
  answers: number;
  /** Mean count per scored answer. */
  perAnswer: number;
  /** Errors over the objects or predicates they could occur among (predicted for false positives, true for false negatives). */
  rate: number;
}

export interface ScorePair {
  grounded: MeanEstimate;
  ungrounded: MeanEstimate;
}

export interface TagScoreSummary extends RunSummaryHead<typeof RUN_KIND["tag-structured"]> {
  /** scored + failed + judgeUnreadable = questions. */
  counts: { questions: number; scored: number; failed: number; judgeUnreadable: number; invalid: number; missingPredictions: number; unknownPredictions: number; structured: number; extracted: number; reused: number };
  /** Question ids of predictions that answer no question (left out with --allow-unknown). */
  unknownPredictionIds: string[];
  scores: ScorePair;
  validAnswerRate: number;
  errors: Record<keyof ErrorCounts, ErrorRate>;
  /** Fig. 6: scores per category of question. */
  categories: {
    predicateType: Record<string, ScorePair>;
    queryType: Record<string, ScorePair>;
    conditions: Record<string, ScorePair>;
    ambiguous: Record<string, ScorePair>;
    /** Fig. 6's combined categories: spatiotemporal (a location or position condition with a moment), visual-functional (a visual property with a use). */
    combined: Record<string, ScorePair>;
  };
  failures: { questionId: string; error: string }[];
  /** Answers whose structure the judge's replies did not give (left out of every mean). */
  judgeUnreadable: JudgeUnreadable;
  usage: UsageTotals;
  /** The judge's calls, tokens and dollars, from the run's ledger of model calls (calls.jsonl). */
  cost: RunCost;
}

export interface TagScoreResult {
  summary: TagScoreSummary;
  judgements: TagJudgement[];
  runDir: string;
  metrics: Record<string, number>;
}

const NO_JUDGE_HINT = "this answer is free text: give --judge PROVIDER/MODEL to extract its structure, or write the prediction as a structured answer (a JSON array of groups)";

interface TagTask {
  question: TagQuestion;
  truth: StructuredAnswer;
  questionText: string;
  answer: string | StructuredAnswer | null;
  structured: StructuredAnswer | undefined;
  missing: boolean;
  categorical: boolean;
  inputKey: string;
}

/** Part of every input key: a judgement made by an earlier matcher is judged again. */
const MATCHER_VERSION = "tag-match/2";

function prepareTasks(options: Omit<TagScoreSetup, "run">, similarityName: string): { tasks: TagTask[]; missing: number; unknown: string[] } {
  const byId = new Map(options.predictions.map((p) => [p.question_id, p]));
  const questionIds = new Set(options.questions.map((q) => q.question_id));
  const unknown = options.predictions.map((p) => p.question_id).filter((id) => !questionIds.has(id));
  if (unknown.length > 0 && !options.allowUnknown) {
    throw new UserError(
      `${unknown.length} prediction(s) answer no question in the questions file (first: ${unknown[0]})`,
      { ...(options.predictionsPath ? { file: options.predictionsPath } : {}), id: unknown[0]!, field: "question_id" },
      "check that the predictions belong to these questions, or pass --allow-unknown to leave them out",
    );
  }
  const missingIds = options.questions.filter((q) => !byId.has(q.question_id)).map((q) => q.question_id);
  if (missingIds.length > 0 && !options.allowMissing) {
    throw new UserError(`${missingIds.length} question(s) have no prediction (first: ${missingIds[0]})`, { ...(options.predictionsPath ? { file: options.predictionsPath } : {}) }, "add them, or pass --allow-missing to score them as empty answers");
  }
  const config = [MATCHER_VERSION, options.judge?.spec.name ?? null, similarityName, options.match?.sigma ?? TAG_POSITION_SIGMA, options.match?.weights ?? null, options.match?.matchThreshold ?? null, extractionPromptHashes()];
  const tasks = options.questions.map((question) => {
    const useGrounded = options.grounded === true && question.grounded !== null;
    const truth = useGrounded ? question.grounded!.structured_answer : question.structured_answer;
    const questionText = useGrounded ? question.grounded!.question : question.question;
    const prediction = byId.get(question.question_id);
    const answer = prediction?.answer ?? null;
    const structured = answer === null ? undefined : structuredPrediction(answer);
    const categorical = categoricalQuery(question.program.query);
    const inputKey = sha256Hex(JSON.stringify([...config, question.question_id, truth, questionText, structured ?? answer, categorical]));
    return { question, truth, questionText, answer, structured, missing: prediction === undefined, categorical, inputKey };
  });
  return { tasks, missing: missingIds.length, unknown };
}

/** An answer the judge reads: free text (a structured answer is used as it is, an empty one scores without a call). */
function needsJudge(task: TagTask): task is TagTask & { answer: string | StructuredAnswer } {
  return task.structured === undefined && task.answer !== null && !(typeof task.answer === "string" && task.answer.trim() === "");
}

/** The text of a free-text answer as the judge is given it. */
const answerText = (answer: string | StructuredAnswer): string => (typeof answer === "string" ? answer : JSON.stringify(answer));

/** What `planTagScore` counts. */
export interface TagScorePlan {
  questions: number;
  /** Judgements the run folder already holds. */
  reused: number;
  /** Questions that would be scored now. */
  pending: number;
  /** Of those, the free-text answers the judge would read. */
  toJudge: number;
}

/**
 * What `scoreTagRun` would ask its judge, recorded in `plan`: the first request for every
 * free-text answer the run folder has not scored yet, built as the run builds it (each reply
 * taken as read at the first try; a re-ask is made by the run itself). The batch of `eqa
 * score-tag --batch` is made of these requests. Calls no model and writes nothing.
 */
export async function planTagScore(options: Omit<TagScoreSetup, "run">, plan: CallPlan): Promise<TagScorePlan> {
  const similarity = options.match?.similarity ?? (await defaultTextSimilarity());
  const judge = options.judge ? plan.model(options.judge.spec, JUDGE_ROLE, "[]") : undefined;
  const { tasks } = prepareTasks({ ...options, ...(judge ? { judge } : {}) }, similarity.name);
  const { reusable: earlier, pending } = resumeItems(options.outDir, tagResumeRule(tasks));
  let toJudge = 0;
  for (const task of pending) {
    if (!judge || !needsJudge(task)) continue;
    await withCallContext({ item: task.question.question_id }, () => extractStructuredAnswer(judge, task.questionText, answerText(task.answer)));
    toJudge++;
  }
  return { questions: tasks.length, reused: earlier.size, pending: pending.length, toJudge };
}

function isValid(answer: StructuredAnswer | null): boolean {
  return answer !== null && answer.some((g) => g.objects.length > 0 || (g.value !== null && !(Array.isArray(g.value) && g.value.length === 0)));
}

async function judgeTask(task: TagTask, options: TagScoreOptions, similarity: SimilaritySource): Promise<TagJudgement> {
  let extraction: Extraction;
  if (task.structured) extraction = { source: "structured", answer: task.structured, replies: [], error: null, usage: emptyUsage() };
  else if (!needsJudge(task)) extraction = { source: "empty", answer: [], replies: [], error: null, usage: emptyUsage() };
  else if (!options.judge) return failedJudgement(task, NO_JUDGE_HINT);
  else extraction = await extractStructuredAnswer(options.judge, task.questionText, answerText(task.answer));
  if (extraction.source === "judge" && extraction.answer === null) {
    return { ...failedJudgement(task, extraction.error ?? "the judge's replies could not be read"), status: "unreadable", source: "judge", replies: extraction.replies, usage: extraction.usage };
  }
  const predicted = extraction.answer ?? [];
  const match = await matchStructuredAnswers(task.truth, predicted, { ...options.match, categorical: task.categorical, similarity });
  return {
    questionId: task.question.question_id,
    inputKey: task.inputKey,
    status: "scored",
    valid: isValid(extraction.answer),
    source: extraction.source,
    score: match.score,
    groundedScore: match.groundedScore,
    ungroundedScore: match.ungroundedScore,
    errors: {
      objectFalsePositives: match.objectFalsePositives,
      objectFalseNegatives: match.objectFalseNegatives,
      predicateFalsePositives: match.predicateFalsePositives,
      predicateFalseNegatives: match.predicateFalseNegatives,
      truthObjects: match.truthObjects,
      predictedObjects: match.predictedObjects,
      truthPredicates: match.truthPredicates,
      predictedPredicates: match.predictedPredicates,
    },
    predicted: extraction.answer,
    groups: match.groups,
    replies: extraction.replies,
    error: extraction.error,
    usage: extraction.usage,
    finishedAt: new Date().toISOString(),
  };
}

function failedJudgement(task: TagTask, error: string): TagJudgement {
  return {
    questionId: task.question.question_id,
    inputKey: task.inputKey,
    status: "failed",
    valid: false,
    source: null,
    score: null,
    groundedScore: null,
    ungroundedScore: null,
    errors: null,
    predicted: null,
    groups: [],
    replies: [],
    error,
    usage: emptyUsage(),
    finishedAt: new Date().toISOString(),
  };
}

/** How a TAG score run resumes: a question's judgement stands when it was scored, from the same answer, judge and matching. */
function tagResumeRule(tasks: readonly TagTask[]): ResumeRule<TagTask, TagJudgement> {
  return { file: JUDGEMENTS_FILE, schema: tagJudgementSchema, items: tasks, id: (t) => t.question.question_id, inputKey: (t) => t.inputKey, succeeded: (j) => j.status === "scored" };
}

/** Scores TAG-EQA predictions (see the module comment); writes judgements.jsonl, metrics.json and summary.json. */
export async function scoreTagRun(options: TagScoreOptions): Promise<TagScoreResult> {
  const started = performance.now();
  const similarity = options.match?.similarity ?? (await defaultTextSimilarity());
  const { tasks, missing, unknown } = prepareTasks(options, similarity.name);
  const run = options.run ?? (await openRun(tagScoreRunContract(options, similarity.name)));
  options.usage?.attach(run.path);
  const { judgements: ordered, reused } = await runJudging({
    run,
    resume: tagResumeRule(tasks),
    judge: (task) => judgeTask(task, options, similarity),
    failed: (task, error) => failedJudgement(task, error.message),
    outcome: (judgement) => judgement.status,
    models: options.judge ? [options.judge.spec] : [],
    concurrency: options.concurrency,
    onProgress: options.onProgress,
  });
  const metrics: Record<string, number> = {};
  for (const j of ordered) if (j.score !== null) metrics[j.questionId] = j.score;
  const summary = summariseTagRun(options, tasks, ordered, { missing, unknown, reused, wallTimeMs: performance.now() - started, similarity: similarity.name, cost: ledgerCost(readCallLedger(run.path)) });
  await run.writeJson(METRICS_FILE, metrics);
  await run.writeJson(SUMMARY_FILE, summary);
  return { summary, judgements: ordered, runDir: run.path, metrics };
}

function scorePair(items: readonly TagJudgement[], bootstrap: BootstrapOptions): ScorePair {
  return {
    grounded: bootstrapMean(items.map((j) => j.groundedScore!), bootstrap),
    ungrounded: bootstrapMean(items.map((j) => j.ungroundedScore!), bootstrap),
  };
}

function byCategory(items: readonly { judgement: TagJudgement; keys: string[] }[], bootstrap: BootstrapOptions): Record<string, ScorePair> {
  const groups = new Map<string, TagJudgement[]>();
  for (const { judgement, keys } of items) for (const key of keys) groups.set(key, [...(groups.get(key) ?? []), judgement]);
  return Object.fromEntries([...groups].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true })).map(([key, js]) => [key, scorePair(js, bootstrap)]));
}

const VISUAL_KEYS = new Set(["colour", "color", "material"]);
const FUNCTIONAL_KEYS = new Set(["use", "utility"]);

function combinedCategories(task: TagTask): string[] {
  const types = new Set(task.question.tags.predicate_types);
  const keys = new Set(task.question.program.filters.filter((f) => f.type === "property").map((f) => f.key));
  const combined: string[] = [];
  if ((types.has("location") || types.has("position")) && types.has("moment")) combined.push("spatiotemporal");
  if ([...keys].some((k) => VISUAL_KEYS.has(k)) && [...keys].some((k) => FUNCTIONAL_KEYS.has(k))) combined.push("visual-functional");
  return combined;
}

function errorRate(scored: readonly TagJudgement[], kind: keyof ErrorCounts, among: (j: TagJudgement) => number): ErrorRate {
  const counts = scored.map((j) => j.errors![kind]);
  const total = counts.reduce((a, b) => a + b, 0);
  const possible = scored.reduce((a, j) => a + among(j), 0);
  return {
    answers: scored.length === 0 ? Number.NaN : counts.filter((c) => c > 0).length / scored.length,
    perAnswer: scored.length === 0 ? Number.NaN : total / scored.length,
    rate: possible === 0 ? 0 : total / possible,
  };
}

/** A TAG score run's configuration, as its summary records it (judge, parameters, prompts' hashes, matching, inputs). */
function tagScoreConfiguration(options: TagScoreSetup, similarity: string): Record<string, unknown> {
  return {
    judge: options.judge ? describeModel(options.judge.spec) : null,
    judgeParameters: TAG_EXTRACT_PARAMS,
    prompts: extractionPromptHashes(),
    similarity,
    sigma: options.match?.sigma ?? TAG_POSITION_SIGMA,
    weights: { ...DEFAULT_STRUCTURED_WEIGHTS, ...options.match?.weights },
    matchThreshold: options.match?.matchThreshold ?? 0.5,
    grounded: options.grounded ?? false,
    questions: { path: options.questionsPath ? resolve(options.questionsPath) : null, count: options.questions.length },
    predictions: { path: options.predictionsPath ? resolve(options.predictionsPath) : null, count: options.predictions.length },
    allowMissing: options.allowMissing ?? false,
    allowUnknown: options.allowUnknown ?? false,
    bootstrap: { ...DEFAULT_BOOTSTRAP, ...options.bootstrap },
    ...options.settings,
  };
}

/**
 * The run folder of `eqa score-tag` as its manifest declares it: kind tag-structured; the
 * settings that decide the scores (the judge, its parameters and prompts, the similarity, the
 * matching's sigma, weights and threshold, grounded or not, bootstrap, and the settings of the
 * run it scores); the questions and the predictions as inputs, copied in when small.
 */
export function tagScoreRunContract(options: TagScoreSetup, similarity: string): RunContract {
  return {
    dir: options.outDir,
    kind: RUN_KIND["tag-structured"],
    settings: resultSettings(tagScoreConfiguration(options, similarity)),
    items: tagQuestionItems(options.questions, options.questionsPath),
    inputs: [
      ...(options.questionsPath ? [{ name: "questions", path: options.questionsPath, copy: true }] : []),
      ...(options.predictionsPath ? [{ name: "predictions", path: options.predictionsPath, copy: true }] : []),
    ],
  };
}

/** A TAG-EQA set's questions as the items of a run (`--questions`): each by its id, with the whole record (text, answers, tags, trajectory, episode). */
export function tagQuestionItems(questions: readonly TagQuestion[], file?: string): RunItems {
  return { noun: "question", input: "questions", flag: "--questions", ...(file !== undefined ? { file } : {}), list: questions.map((q) => ({ id: q.question_id, content: q })) };
}

function summariseTagRun(
  options: TagScoreOptions,
  tasks: readonly TagTask[],
  judgements: readonly TagJudgement[],
  extra: { missing: number; unknown: string[]; reused: number; wallTimeMs: number; similarity: string; cost: RunCost },
): TagScoreSummary {
  const bootstrap = { ...DEFAULT_BOOTSTRAP, ...options.bootstrap };
  const scoredItems = tasks.map((task, i) => ({ task, judgement: judgements[i]! })).filter((x) => x.judgement.status === "scored");
  const scored = scoredItems.map((x) => x.judgement);
  const category = (keys: (t: TagTask) => string[]): Record<string, ScorePair> => byCategory(scoredItems.map((x) => ({ judgement: x.judgement, keys: keys(x.task) })), bootstrap);
  return {
    ...summaryHead(RUN_KIND["tag-structured"], extra.wallTimeMs, tagScoreConfiguration(options, extra.similarity)),
    counts: {
      questions: tasks.length,
      scored: scored.length,
      failed: judgements.filter((j) => j.status === "failed").length,
      judgeUnreadable: judgements.filter((j) => j.status === "unreadable").length,
      invalid: scored.filter((j) => !j.valid).length,
      missingPredictions: extra.missing,
      unknownPredictions: extra.unknown.length,
      structured: scored.filter((j) => j.source === "structured").length,
      extracted: scored.filter((j) => j.source === "judge").length,
      reused: extra.reused,
    },
    unknownPredictionIds: extra.unknown,
    scores: scorePair(scored, bootstrap),
    validAnswerRate: scored.length === 0 ? Number.NaN : scored.filter((j) => j.valid).length / scored.length,
    errors: {
      objectFalsePositives: errorRate(scored, "objectFalsePositives", (j) => j.errors!.predictedObjects),
      objectFalseNegatives: errorRate(scored, "objectFalseNegatives", (j) => j.errors!.truthObjects),
      predicateFalsePositives: errorRate(scored, "predicateFalsePositives", (j) => j.errors!.predictedPredicates),
      predicateFalseNegatives: errorRate(scored, "predicateFalseNegatives", (j) => j.errors!.truthPredicates),
    },
    categories: {
      predicateType: category((t) => (t.question.tags.predicate_types.length === 0 ? ["none"] : [...new Set(t.question.tags.predicate_types)])),
      queryType: category((t) => [t.question.tags.query_type]),
      conditions: category((t) => [String(t.question.tags.conditions)]),
      ambiguous: category((t) => [t.question.tags.ambiguous ? "ambiguous" : "unambiguous"]),
      combined: category(combinedCategories),
    },
    failures: judgements.filter((j) => j.status === "failed").map((j) => ({ questionId: j.questionId, error: j.error ?? "failed" })),
    judgeUnreadable: judgeUnreadable(
      judgements.filter((j) => j.status === "unreadable").map((j) => ({ questionId: j.questionId, judge: "tag-structured", error: j.error ?? "unreadable", replies: j.replies })),
      judgements.length,
    ),
    usage: sumUsage(judgements.map((j) => j.usage)),
    cost: extra.cost,
  };
}
