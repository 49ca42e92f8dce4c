import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { z } from "zod";
import { UserError, type Question } from "../core/index.js";
import { loadOpenEqaBenchmark, loadPredictions } from "../data/index.js";
import type { AnswerSummary, TracedCall } from "../agents/index.js";
import { llmMatchPoints, loadPredictionsWithoutGuess, type MeanEstimate, type ScoreSummary } from "../eval/index.js";
import type { RunCost, UsageTotals } from "../models/index.js";
import { meanEstimate, readJson, readLines, usageTotals } from "./files.js";
import { loadTagPart, type TagRunPart } from "./tag-runs.js";
import { modelCallNotes } from "./text.js";
import { COMMANDS_FILE, runInputPath } from "../store/index.js";

/**
 * A run directory as the report and the viewer read it: whatever `eqa score`, `eqa answer`
 * and `eqa run` wrote, and, for other kinds of runs, the numbers of their summary. A part
 * that is missing or unreadable is left out and named in `notes`.
 */
export interface LoadedRun {
  dir: string;
  label: string;
  /** The summary's kind ("llm-match", "answer", "run", "tag-structured", or any other a run writes), or "unknown". */
  kind: string;
  score?: ScoreSummary;
  answer?: AnswerSummary;
  /** Numbers of a summary of another kind (reward-model benchmarks, exploration), flattened by path. */
  otherMetrics: [string, number][];
  /** A summary of another kind: its version, date and configuration, as written. */
  otherSummary?: { eqakitVersion?: string; createdAt?: string; wallTimeMs?: number; config?: Record<string, unknown> };
  /** Usage by stage of a summary of another kind (`usage.<stage>` with call counts). */
  otherUsage: [string, UsageTotals][];
  /** Tokens and dollars per role, by stage (answer, judge, or the kind of another summary), where the summary has them. */
  costs: { stage: string; cost: RunCost }[];
  /** Figures the run drew itself (PNG files at its top level, e.g. reward-model scaling curves). */
  figures: string[];
  /** Per question, in the run's order (LLM-Match and answer runs). */
  questions: RunQuestion[];
  /** A TAG-EQA structured-judge run (`eqa score-tag`, kind "tag-structured"). */
  tag?: TagRunPart;
  /** Where the episode histories of the run's answers are (the answer run's --frames). */
  framesRoot?: string;
  /** The commands that ran in the run's directory to their end, oldest first (`commands.jsonl`). */
  commands: string[];
  notes: string[];
}

export interface RunQuestion {
  questionId: string;
  /** The question's place in the benchmark (0-based), when it could be read. */
  position?: number;
  /** From the benchmark, when it could be read. */
  category?: string;
  question?: string;
  groundTruth?: string;
  extraAnswers?: string[];
  episode?: string;
  /** The answer submitted (after force-a-guess); undefined when the run has no answer for it. */
  answer?: string | null;
  /** The agent's own answer when force-a-guess replaced it. */
  agentAnswer?: string | null;
  forceGuess?: "guess" | "keep" | "unreadable";
  /** LLM-Match's mark σ (1-5, 0 for no answer), null when judging failed, undefined when not judged. */
  score?: number | null;
  /** 100·(clip(σ,1,5)−1)/4. */
  points?: number;
  judgeReplies: (string | null)[];
  /** The answer as the judge was sent it (after the reference's cut, or neutralised). */
  judgePrediction?: string | null;
  /** Robust LLM-Match changed text in the answer that addressed the judge: `judgePrediction` is what it read. */
  neutralised?: boolean;
  /** Why a reply was not an answer or a mark (truncated, filtered, refused), when that failed the item. */
  status?: string;
  /** The stage whose failure `error` reports. */
  failedStage?: "answer" | "judge";
  error?: string;
  /** Frame indices the agent used. */
  frames: number[];
  calls: TracedCall[];
  usage?: UsageTotals;
}

const scoreSummarySchema = z.looseObject({
  kind: z.literal("llm-match"),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ questions: z.number(), scored: z.number(), failed: z.number() }),
  llmMatch: z.object({ overall: meanEstimate, byCategory: z.record(z.string(), meanEstimate), bySource: z.record(z.string(), meanEstimate) }),
  failures: z.array(z.looseObject({ questionId: z.string(), error: z.string() })),
  usage: z.looseObject({ judgements: usageTotals }),
});
const answerSummarySchema = z.looseObject({
  kind: z.literal("answer"),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ questions: z.number(), answered: z.number(), failed: z.number(), forceGuessChecked: z.number(), abstained: z.number() }),
  abstentionRate: z.number().nullable(),
  failures: z.array(z.looseObject({ questionId: z.string(), error: z.string() })),
  usage: z.looseObject({ answers: usageTotals }),
});
const runSummarySchema = z.looseObject({ kind: z.literal("run"), answer: z.unknown(), score: z.unknown() });
const kindSchema = z.looseObject({ kind: z.string() });
const otherSummarySchema = z.object({ eqakitVersion: z.string().optional().catch(undefined), createdAt: z.string().optional().catch(undefined), wallTimeMs: z.number().optional().catch(undefined), config: z.record(z.string(), z.unknown()).optional().catch(undefined) });
const roleCostSchema = z.looseObject({ calls: z.number(), cacheHits: z.number(), promptTokens: z.number(), completionTokens: z.number(), thinkingTokens: z.number().default(0), dollars: z.number().nullable() });
const runCostSchema = z.looseObject({
  roles: z.array(roleCostSchema.extend({ role: z.string(), model: z.string() })),
  total: roleCostSchema,
  unpriced: z.array(z.string()).default([]),
  prices: z.array(z.string()).default([]),
});

/** A summary's cost section, when it has a readable one. */
function costOf(summary: unknown): RunCost | undefined {
  if (typeof summary !== "object" || summary === null || !("cost" in summary)) return undefined;
  return runCostSchema.safeParse(summary.cost).data;
}

const judgementLine = z.looseObject({
  questionId: z.string(),
  score: z.number().nullable(),
  prediction: z.string().nullable().optional(),
  replies: z.array(z.string().nullable()).optional(),
  neutralised: z.boolean().optional(),
  status: z.string().optional(),
  error: z.string().nullable().optional(),
});
const tracedCall = z.looseObject({ role: z.string(), model: z.string(), prompt: z.string(), promptSha256: z.string(), frames: z.array(z.number()).optional(), reply: z.string().nullable(), cached: z.boolean() });
const answerLine = z.looseObject({
  questionId: z.string(),
  answer: z.string().nullable(),
  episode: z.string().nullable().optional(),
  error: z.string().nullable().optional(),
  status: z.string().optional(),
  trace: z
    .looseObject({
      frames: z.array(z.number()).optional(),
      calls: z.array(tracedCall).optional(),
      agentAnswer: z.string().nullable().optional(),
      forceGuess: z.looseObject({ action: z.enum(["guess", "keep", "unreadable"]) }).optional(),
      usage: usageTotals.optional(),
    })
    .nullable()
    .optional(),
});

function parseSummary<T>(schema: z.ZodType, value: unknown, what: string, notes: string[]): T | undefined {
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    notes.push(`the ${what} summary does not have the expected shape (${parsed.error.issues[0]?.path.join(".") ?? "?"}: ${parsed.error.issues[0]?.message ?? ""}); left out`);
    return undefined;
  }
  return parsed.data as T;
}

/** Numbers of an arbitrary summary, by dotted path (at most `limit`). */
function flattenNumbers(value: unknown, prefix = "", out: [string, number][] = [], limit = 80): [string, number][] {
  if (out.length >= limit) return out;
  if (typeof value === "number" && Number.isFinite(value)) out.push([prefix, value]);
  else if (Array.isArray(value)) value.slice(0, 20).forEach((v, i) => flattenNumbers(v, `${prefix}[${i}]`, out, limit));
  else if (typeof value === "object" && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      if (key === "eqakitVersion" || key === "createdAt") continue;
      flattenNumbers(v, prefix ? `${prefix}.${key}` : key, out, limit);
    }
  }
  return out;
}

const benchmarks = new Map<string, Promise<Map<string, Question> | undefined>>();

async function benchmarkQuestions(path: string | undefined, notes: string[]): Promise<Map<string, Question> | undefined> {
  if (!path) return undefined;
  let pending = benchmarks.get(path);
  if (!pending) {
    pending = existsSync(path) ? loadOpenEqaBenchmark(path).then((b) => b.byId, () => undefined) : Promise.resolve(undefined);
    benchmarks.set(path, pending);
  }
  const found = await pending;
  if (!found) notes.push(`the benchmark ${path} could not be read: questions are shown by id only`);
  return found;
}

/** The predictions a score run judged: the run's copy, or the file its summary names (store's runInputPath). */
function predictionsPathOf(dir: string, config: Record<string, unknown> | undefined): string | undefined {
  const predictions = config?.predictions;
  const recorded = typeof predictions === "object" && predictions !== null && "path" in predictions && typeof predictions.path === "string" ? predictions.path : undefined;
  return runInputPath(dir, "predictions", recorded);
}

function benchmarkPath(dir: string, config: Record<string, unknown> | undefined): string | undefined {
  const benchmark = config?.benchmark;
  if (typeof benchmark === "object" && benchmark !== null && "path" in benchmark && typeof benchmark.path === "string") return runInputPath(dir, "benchmark", benchmark.path) ?? benchmark.path;
  return undefined;
}

const TAG_KIND = "tag-structured";

function looksLikeTagJudgements(path: string): boolean {
  if (!existsSync(path)) return false;
  const first = readLines(path, (v) => (typeof v === "object" && v !== null ? v : undefined)).records[0];
  return first !== undefined && "groundedScore" in first && "inputKey" in first;
}

/** Reads a run directory; throws a UserError only when the path is not a directory. */
const commandRecord = z.looseObject({ command: z.string().max(100_000) });

export async function loadRun(dir: string, label?: string): Promise<LoadedRun> {
  const path = resolve(dir);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new UserError("not a run directory", { file: dir }, "pass directories written by eqa score, eqa score-tag, eqa answer or eqa run");
  const notes: string[] = [];
  const run: LoadedRun = { dir: path, label: label ?? basename(path), kind: "unknown", otherMetrics: [], otherUsage: [], costs: [], figures: [], questions: [], commands: [], notes };
  const commandsFile = join(path, COMMANDS_FILE);
  if (existsSync(commandsFile)) run.commands = readLines(commandsFile, (value) => commandRecord.safeParse(value).data?.command).records;
  // other kinds of runs name their summary differently (`eqa rm bench` writes bench.json)
  const summaryName = ["summary.json", "bench.json"].find((name) => existsSync(join(path, name))) ?? "summary.json";
  const summary = readJson(join(path, summaryName), notes);
  const kind = kindSchema.safeParse(summary);
  if (summary === undefined) notes.push("no summary.json: the run may still be going, or was stopped; shown from its records");
  if (kind.success) {
    run.kind = kind.data.kind;
    if (kind.data.kind === "llm-match") run.score = parseSummary<ScoreSummary>(scoreSummarySchema, summary, "score", notes);
    else if (kind.data.kind === TAG_KIND) run.tag = await loadTagPart(path, summary, notes);
    else if (kind.data.kind === "answer") run.answer = parseSummary<AnswerSummary>(answerSummarySchema, summary, "answer", notes);
    else if (kind.data.kind === "run") {
      const both = runSummarySchema.safeParse(summary);
      if (both.success) {
        run.answer = parseSummary<AnswerSummary>(answerSummarySchema, both.data.answer, "answer", notes);
        run.score = parseSummary<ScoreSummary>(scoreSummarySchema, both.data.score, "score", notes);
      }
    } else {
      const { usage, cost: _cost, ...rest } = kind.data;
      const cost = costOf(kind.data);
      if (cost) run.costs.push({ stage: kind.data.kind, cost });
      run.otherMetrics = flattenNumbers(rest);
      run.otherSummary = otherSummarySchema.safeParse(kind.data).data ?? {};
      if (typeof usage === "object" && usage !== null) {
        for (const [stage, totals] of Object.entries(usage)) {
          const parsed = usageTotals.safeParse(totals);
          if (parsed.success) run.otherUsage.push([stage, parsed.data as UsageTotals]);
        }
      }
    }
  }
  // an unfinished `eqa run` still has its stages' summaries
  if (!run.score && existsSync(join(path, "summary.score.json"))) run.score = parseSummary<ScoreSummary>(scoreSummarySchema, readJson(join(path, "summary.score.json"), notes), "score", notes);
  if (!run.answer && existsSync(join(path, "summary.answer.json"))) run.answer = parseSummary<AnswerSummary>(answerSummarySchema, readJson(join(path, "summary.answer.json"), notes), "answer", notes);
  if (run.kind === "unknown" && (run.score || run.answer)) run.kind = run.score && run.answer ? "run" : run.score ? "llm-match" : "answer";
  for (const [stage, part] of [["answer", run.answer], ["judge", run.score]] as const) {
    const cost = costOf(part);
    if (cost) run.costs.push({ stage, cost });
    if (part) notes.push(...modelCallNotes(part).map((n) => `${stage}: ${n}`));
  }
  // a TAG run still scoring has judgements but no summary yet
  if (run.kind === "unknown" && looksLikeTagJudgements(join(path, "judgements.jsonl"))) {
    run.kind = TAG_KIND;
    run.tag = await loadTagPart(path, undefined, notes);
  }
  if (run.tag) {
    run.figures = [];
    return run;
  }

  const byId = new Map<string, RunQuestion>();
  const entry = (id: string): RunQuestion => {
    let q = byId.get(id);
    if (!q) {
      q = { questionId: id, judgeReplies: [], frames: [], calls: [] };
      byId.set(id, q);
    }
    return q;
  };
  const traces = join(path, "traces.jsonl");
  if (existsSync(traces)) {
    const contents = readLines(traces, (v) => answerLine.safeParse(v).data);
    if (contents.skipped > 0) notes.push(`${contents.skipped} line(s) of traces.jsonl unreadable, skipped`);
    for (const record of contents.records) {
      const q = entry(record.questionId);
      q.answer = record.answer;
      if (record.episode) q.episode = record.episode;
      if (record.error) Object.assign(q, { error: record.error, failedStage: "answer" }, record.status ? { status: record.status } : {});
      else {
        delete q.error;
        delete q.failedStage;
        delete q.status;
      }
      q.frames = record.trace?.frames ?? [];
      q.calls = (record.trace?.calls ?? []) as TracedCall[];
      if (record.trace?.usage) q.usage = record.trace.usage as UsageTotals;
      const action = record.trace?.forceGuess?.action;
      if (action) q.forceGuess = action;
      if (action === "guess") q.agentAnswer = record.trace?.agentAnswer ?? null;
    }
  }
  const judgements = join(path, "judgements.jsonl");
  if (existsSync(judgements)) {
    const contents = readLines(judgements, (v) => judgementLine.safeParse(v).data);
    if (contents.skipped > 0) notes.push(`${contents.skipped} line(s) of judgements.jsonl unreadable, skipped`);
    for (const j of contents.records) {
      const q = entry(j.questionId);
      q.score = j.score;
      if (j.score !== null) q.points = llmMatchPoints(j.score);
      else delete q.points;
      q.judgeReplies = j.replies ?? [];
      q.judgePrediction = j.prediction ?? null;
      if (j.neutralised) q.neutralised = true;
      else delete q.neutralised;
      if (j.error) Object.assign(q, { error: j.error, failedStage: "judge" }, j.status ? { status: j.status } : {});
    }
  } else if (run.score) notes.push("no judgements.jsonl: per-question scores are not shown");

  // a score run of predictions made elsewhere: the answers it judged, from its predictions file
  const predictionsPath = predictionsPathOf(path, run.score?.config);
  if (!existsSync(traces) && predictionsPath) {
    try {
      const predictions = run.score?.config.withoutGuess === true ? (await loadPredictionsWithoutGuess(predictionsPath)).predictions : await loadPredictions(predictionsPath);
      for (const p of predictions) {
        const q = byId.get(p.questionId);
        if (q) q.answer = p.answer;
      }
    } catch {
      notes.push(`the predictions ${predictionsPath} could not be read: answers are not shown`);
    }
  }

  const config = run.answer?.config ?? run.score?.config;
  const framesRoot = run.answer?.config.framesRoot;
  if (typeof framesRoot === "string") run.framesRoot = resolve(framesRoot);
  const questions = await benchmarkQuestions(benchmarkPath(path, run.answer?.config) ?? benchmarkPath(path, run.score?.config) ?? benchmarkPath(path, config), notes);
  for (const q of byId.values()) {
    const known = questions?.get(q.questionId);
    if (!known) continue;
    q.category = known.category;
    q.question = known.question;
    q.groundTruth = known.answer;
    if (known.extraAnswers) q.extraAnswers = known.extraAnswers;
    q.episode ??= known.episodeHistory;
  }
  // the benchmark's order, whatever order the answers finished in; questions it lacks come last
  const position = new Map([...(questions?.keys() ?? [])].map((id, i) => [id, i]));
  for (const q of byId.values()) {
    const at = position.get(q.questionId);
    if (at !== undefined) q.position = at;
  }
  run.questions = [...byId.values()].sort((a, b) => (a.position ?? position.size) - (b.position ?? position.size));
  run.figures = readdirSync(path).filter((name) => /\.png$/i.test(name) && statSync(join(path, name)).size < 4_000_000).sort().slice(0, 6).map((name) => join(path, name));
  return run;
}

/** A mean's display, or an empty string for an empty group. */
export function meanOrNull(estimate: MeanEstimate | undefined): number | null {
  return estimate && estimate.n > 0 && Number.isFinite(estimate.mean) ? estimate.mean : null;
}
