/**
 * What the live viewer reads from a run directory beyond what `loadRun` gives: a question's
 * transcript (every model call with its messages, images, reply, tokens and latency; an
 * exploration's steps, stop checks and top-down plan; an external agent's log lines), the
 * human ratings kept in `ratings.jsonl`, and a
 * stamp that changes whenever a run's records grow.
 */
import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { OutputError, outputFailure, memoByFile } from "../core/index.js";
import { loadTagQuestions, loadTrajectoryLog, type TagQuestion } from "../data/index.js";
import { loadSharp } from "../episodes/index.js";
import { episodeFileName } from "../agents/index.js";
import { costOf, formatDollars } from "../models/index.js";
import { GT_SCORES_FILE, RESPONSES_FILE, REVIEWED_FILE, REWARD_INSTANCES_FILE } from "../reward/index.js";
import { readJson, readLines } from "./files.js";
import { QUESTION_VIEWS } from "./question-views.js";
import { failuresByReason, modelsOf } from "./html-info.js";
import type { LoadedRun } from "./runs.js";

/** The file in a run directory that holds its human ratings, one JSON record a line, appended. */
export const RATINGS_FILE = "ratings.jsonl";
/** Largest `ratings.jsonl` the viewer appends to, bytes (about 10,000 ratings with comments). */
export const RATINGS_FILE_LIMIT = 4_000_000;
/** Longest comment a rating may carry, characters. */
export const RATING_COMMENT_LIMIT = 2000;

/** A reviewer's mark of one answer, as `ratings.jsonl` keeps it. */
export const ratingSchema = z.object({
  questionId: z.string().min(1).max(300),
  /** 1 (wrong) to 5 (right), LLM-Match's scale. */
  score: z.number().int().min(1).max(5),
  comment: z.string().max(RATING_COMMENT_LIMIT).default(""),
  reviewer: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[\p{L}\p{N} ._@+-]+$/u, "letters, digits, spaces and . _ @ + - only"),
});
export interface Rating extends z.output<typeof ratingSchema> {
  ratedAt: string;
}
const storedRating = ratingSchema.extend({ ratedAt: z.string() });

/** The files each kind's questions are read from for their transcripts (the question views' table). */
const TRANSCRIPT_FILES = Object.values(QUESTION_VIEWS).flatMap((v) => (v.transcript === null || v.transcript === "exploration" ? [] : [v.transcript.file, ...(v.transcript.preparations ? [v.transcript.preparations] : [])]));

/** The files whose growth the viewer watches, per run directory. */
const WATCHED = [...new Set(["summary.json", "summary.answer.json", "summary.score.json", "bench.json", "traces.jsonl", "judgements.jsonl", "episodes.jsonl", "evaluations.jsonl", "memories.jsonl", "memory-failures.jsonl", ...TRANSCRIPT_FILES, join("answers", "traces.jsonl"), "questions.json", RESPONSES_FILE, GT_SCORES_FILE, REWARD_INSTANCES_FILE, REVIEWED_FILE, RATINGS_FILE])];

/** Changes whenever one of a run's record files is written (size and modification time). */
export function runStamp(dir: string): string {
  return WATCHED.map((name) => {
    try {
      const s = statSync(join(dir, name));
      return `${s.size}:${Math.round(s.mtimeMs)}`;
    } catch {
      return "-";
    }
  }).join(",");
}

/** The latest JSONL record of a question (named by `idField`), without parsing the lines of other questions. */
function latestRecordOf(path: string, questionId: string, idField = "questionId"): Record<string, unknown> | undefined {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, "utf8");
  const needle = `${JSON.stringify(idField)}:${JSON.stringify(questionId)}`;
  let found: Record<string, unknown> | undefined;
  for (const line of text.slice(0, text.lastIndexOf("\n") + 1).split("\n")) {
    if (!line.includes(needle)) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isObject(value) && value[idField] === questionId) found = value;
    } catch {
      // a torn or foreign line: skipped, as the loaders skip it
    }
  }
  return found;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const traceMessage = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.union([z.looseObject({ type: z.literal("text"), text: z.string() }), z.looseObject({ type: z.literal("image"), sha256: z.string(), frame: z.number().optional() })]))]),
  toolCalls: z.array(z.looseObject({ name: z.string(), arguments: z.unknown() })).optional(),
  toolName: z.string().optional(),
});
const traceCall = z.looseObject({
  role: z.string(),
  model: z.string(),
  prompt: z.string(),
  frames: z.array(z.number()).optional(),
  reply: z.string().nullable(),
  cached: z.boolean(),
  usage: z.looseObject({ promptTokens: z.number(), completionTokens: z.number(), thinkingTokens: z.number().optional() }).optional(),
  latencyMs: z.number().optional(),
  messages: z.array(traceMessage).optional(),
});
const traceSchema = z.looseObject({
  agent: z.string().optional(),
  frames: z.array(z.number()).optional(),
  images: z.array(z.looseObject({ index: z.number(), sha256: z.string() })).optional(),
  captions: z.record(z.string(), z.string()).optional(),
  calls: z.array(traceCall).catch([]).optional(),
  notes: z.array(z.string()).catch([]).optional(),
  toolCalls: z.array(z.looseObject({ round: z.number(), name: z.string(), arguments: z.unknown(), result: z.string() })).catch([]).optional(),
  log: z.array(z.looseObject({ level: z.string(), message: z.string() })).catch([]).optional(),
  stderr: z.string().optional(),
  forceGuess: z.looseObject({ action: z.string(), blindAnswer: z.string().nullable().optional() }).optional(),
  agentAnswer: z.string().nullable().optional(),
});
type TraceCall = z.infer<typeof traceCall>;
const stopCheck = z.looseObject({ frame: z.number(), yes: z.boolean(), confidence: z.number().nullable(), source: z.string().nullable().optional() });
const trajectorySchema = z.looseObject({
  pathLengthM: z.number().optional(),
  pathLengthSteps: z.number().optional(),
  frames: z.number().optional(),
  steps: z.array(z.looseObject({ step: z.number(), action: z.string().nullable(), success: z.boolean(), position: z.array(z.number()), yaw: z.number().optional() })).catch([]),
});

/** An image a call sent, with the addresses of its thumbnail and full-size picture when the viewer can serve them. */
export interface TranscriptImage {
  frame: number | null;
  sha256?: string;
  thumb?: string;
  full?: string;
}

export interface TranscriptMessage {
  role: string;
  parts: ({ type: "text"; text: string } | ({ type: "image" } & TranscriptImage))[];
  toolCalls?: { name: string; arguments: unknown }[];
  toolName?: string;
}

export interface TranscriptCall {
  role: string;
  model: string;
  prompt: string;
  cached: boolean;
  reply: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  thinkingTokens: number | null;
  latencyMs: number | null;
  /** What the call cost at the price table's rates ("$0.0012"; "$0" for a cache hit), null without tokens or a price. */
  cost: string | null;
  /** Absent for traces written before calls kept their messages: the frames sent stand for them. */
  messages?: TranscriptMessage[];
  images: TranscriptImage[];
  /** A Fine-EQA stop check's reading of this call's reply. */
  stopCheck?: { yes: boolean; confidence: number | null; source: string | null };
}

/** Everything the viewer's transcript shows of one question. */
export interface Transcript {
  /** The file it was read from; null when the run has no record for the question. */
  source: string | null;
  /** What answered: the agent's name as its trace gives it, an exploration's explorer. */
  agent: string | null;
  /** The task the simulator recorded while the question's trajectory was made (a TAG-EQA question's). */
  task: string | null;
  calls: TranscriptCall[];
  notes: string[];
  captions: { frame: number; caption: string; thumb?: string }[];
  toolCalls: { round: number; name: string; arguments: unknown; result: string }[];
  log: { level: string; message: string }[];
  stderr: string | null;
  forceGuess: { action: string; blindAnswer: string | null } | null;
  /** An exploration's path: each step's action, whether it succeeded, and where it led. */
  steps: { step: number; action: string | null; success: boolean; position: number[] }[];
  stop: string | null;
  pathLengthM: number | null;
  pathLengthSteps: number | null;
  /** The address of the exploration's top-down plan with its trajectory, when the run drew one. */
  plan: string | null;
  stopChecks: { frame: number; yes: boolean; confidence: number | null; source: string | null; thumb?: string }[];
}

/** How the viewer addresses a question's frames in one run. */
export interface FrameAddresses {
  /** The thumbnail and full-size address of a frame, or undefined when the viewer does not serve it. */
  of(frame: number): { thumb: string; full: string } | undefined;
}

function transcriptCall(call: TraceCall, frames: FrameAddresses, shaToFrame: Map<string, number>): TranscriptCall {
  const picture = (frame: number | null, sha256?: string): TranscriptImage => {
    const at = frame === null ? undefined : frames.of(frame);
    return { frame, ...(sha256 ? { sha256 } : {}), ...(at ?? {}) };
  };
  const messages = call.messages?.map((m): TranscriptMessage => {
    const parts: TranscriptMessage["parts"] =
      typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : m.content.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: "image", ...picture(p.frame ?? shaToFrame.get(p.sha256) ?? null, p.sha256) }));
    return { role: m.role, parts, ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}), ...(m.toolName ? { toolName: m.toolName } : {}) };
  });
  const images = messages ? messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "image" ? [{ frame: p.frame, ...(p.sha256 ? { sha256: p.sha256 } : {}), ...(p.thumb ? { thumb: p.thumb, full: p.full } : {}) }] : []))) : (call.frames ?? []).map((f) => picture(f));
  return {
    role: call.role,
    model: call.model,
    prompt: call.prompt,
    cached: call.cached,
    reply: call.reply,
    promptTokens: call.usage?.promptTokens ?? null,
    completionTokens: call.usage?.completionTokens ?? null,
    thinkingTokens: call.usage?.thinkingTokens ?? null,
    latencyMs: call.latencyMs ?? null,
    cost: call.cached ? formatDollars(0) : call.usage ? nullableDollars(costOf(call.model, call.usage)) : null,
    ...(messages ? { messages } : {}),
    images,
  };
}

const nullableDollars = (dollars: number | null): string | null => (dollars === null ? null : formatDollars(dollars));

function emptyTranscript(): Transcript {
  return { source: null, agent: null, task: null, calls: [], notes: [], captions: [], toolCalls: [], log: [], stderr: null, forceGuess: null, steps: [], stop: null, pathLengthM: null, pathLengthSteps: null, plan: null, stopChecks: [] };
}

/** Fills a transcript from an agent's trace (a line of `traces.jsonl`, or an exploration's answering agent). */
function fromTrace(out: Transcript, raw: unknown, frames: FrameAddresses): void {
  const trace = traceSchema.safeParse(raw).data;
  if (!trace) return;
  const shaToFrame = new Map((trace.images ?? []).map((i) => [i.sha256, i.index]));
  out.agent = trace.agent ?? out.agent;
  out.calls.push(...(trace.calls ?? []).map((c) => transcriptCall(c, frames, shaToFrame)));
  out.notes.push(...(trace.notes ?? []));
  out.captions.push(...Object.entries(trace.captions ?? {}).map(([frame, caption]) => ({ frame: Number(frame), caption, ...(frames.of(Number(frame)) ? { thumb: frames.of(Number(frame))!.thumb } : {}) })));
  out.toolCalls.push(...(trace.toolCalls ?? []));
  out.log.push(...(trace.log ?? []));
  if (trace.stderr) out.stderr = trace.stderr;
  if (trace.forceGuess) out.forceGuess = { action: trace.forceGuess.action, blindAnswer: trace.forceGuess.blindAnswer ?? null };
}

/** A question's transcript from the file of a run's answers that holds each answer's trace (`traces.jsonl` unless `from` names another, as the kind's question view does). */
export function answerTranscript(dir: string, questionId: string, frames: FrameAddresses, from: { file: string; idField: string; preparations?: string } = { file: "traces.jsonl", idField: "questionId" }, trajectory?: string): Transcript {
  const out = emptyTranscript();
  const record = latestRecordOf(join(dir, from.file), questionId, from.idField);
  if (!record) return out;
  out.source = from.file;
  // what was prepared once for the question's trajectory (a baseline's captions, with their calls) comes first, as it was made first
  const prepared = from.preparations !== undefined && trajectory !== undefined ? latestRecordOf(join(dir, from.preparations), trajectory, "trajectory") : undefined;
  if (prepared) fromTrace(out, prepared.trace, frames);
  fromTrace(out, record.trace, frames);
  return out;
}

/** The addresses of an exploration's own frames (`frames/<episode>/NNNNN-rgb.png`) under the viewer's file route. */
function explorationFrames(runIndex: number, dir: string, questionId: string): FrameAddresses {
  const name = episodeFileName(questionId);
  return {
    of(frame) {
      const file = `${String(frame).padStart(5, "0")}-rgb.png`;
      if (!Number.isInteger(frame) || frame < 0 || !existsSync(join(dir, "frames", name, file))) return undefined;
      const url = `/runs/${runIndex}/files/frames/${encodeURIComponent(name)}/${file}`;
      return { thumb: url, full: url };
    },
  };
}

/** An exploration's transcript: its steps, its explorer's calls and stop checks, the answering agent's trace, and its plan. */
export function exploreTranscript(runIndex: number, dir: string, questionId: string): Transcript {
  const out = emptyTranscript();
  // an exploration's records, or a Mixed EQA run's
  const source = existsSync(join(dir, "episodes.jsonl")) ? "episodes.jsonl" : "mixed.jsonl";
  const record = latestRecordOf(join(dir, source), questionId);
  if (!record) return out;
  out.source = source;
  const frames = explorationFrames(runIndex, dir, questionId);
  out.stop = typeof record.stop === "string" ? record.stop : null;
  out.pathLengthM = typeof record.pathLengthM === "number" ? record.pathLengthM : null;
  out.pathLengthSteps = typeof record.pathLengthSteps === "number" ? record.pathLengthSteps : null;
  if (typeof record.explorer === "string") out.agent = record.explorer;
  else if (typeof record.agent === "string") out.agent = record.agent;
  const details = isObject(record.details) ? record.details : {};
  const calls = z.array(traceCall).safeParse(details.calls).data ?? [];
  const checks = z.array(stopCheck).safeParse(details.stopChecks).data ?? [];
  out.stopChecks = checks.map((c) => ({ frame: c.frame, yes: c.yes, confidence: c.confidence, source: c.source ?? null, ...(frames.of(c.frame) ? { thumb: frames.of(c.frame)!.thumb } : {}) }));
  // the stop checks were made in call order, one a call of that role
  let nextCheck = 0;
  out.calls = calls.map((c) => {
    const call = transcriptCall(c, frames, new Map());
    if (/stop/i.test(c.role) && nextCheck < checks.length) {
      const check = checks[nextCheck++]!;
      call.stopCheck = { yes: check.yes, confidence: check.confidence, source: check.source ?? null };
    }
    return call;
  });
  if (details.trace !== undefined) fromTrace(out, details.trace, frames);
  const name = episodeFileName(questionId);
  const trajectory = trajectorySchema.safeParse(readJson(join(dir, "trajectories", `${name}.json`), out.notes)).data;
  if (trajectory) out.steps = trajectory.steps.map((s) => ({ step: s.step, action: s.action, success: s.success, position: s.position }));
  if (existsSync(join(dir, "trajectories", `${name}.png`))) out.plan = `/runs/${runIndex}/files/trajectories/${encodeURIComponent(name)}.png`;
  return out;
}

/** A TAG-EQA question's recording (steps, plan) with the calls of the agent that answered it (`eqa demo --model`'s `answers/traces.jsonl`). */
export function withAnswerCalls(recording: Transcript | null, answers: Transcript): Transcript {
  if (!recording) return answers;
  return { ...recording, source: answers.source ?? recording.source, agent: answers.agent, calls: answers.calls, notes: [...recording.notes, ...answers.notes], captions: answers.captions, toolCalls: answers.toolCalls, log: answers.log, stderr: answers.stderr, forceGuess: answers.forceGuess };
}

/** Every rating of a run, in the order given (a torn or invalid line is skipped). */
export function readRatings(dir: string): Rating[] {
  const path = join(dir, RATINGS_FILE);
  if (!existsSync(path)) return [];
  return readLines(path, (v) => storedRating.safeParse(v).data).records;
}

/** Each reviewer's last rating of each question. */
export function currentRatings(dir: string): Rating[] {
  const latest = new Map<string, Rating>();
  for (const r of readRatings(dir)) latest.set(JSON.stringify([r.reviewer, r.questionId]), r);
  return [...latest.values()];
}

/**
 * Appends a rating to the run's `ratings.jsonl` (one line, one write). The file stops growing
 * at `RATINGS_FILE_LIMIT`: a full file is an OutputError, as a full disk is.
 */
export function appendRating(dir: string, rating: z.output<typeof ratingSchema>, now = new Date()): Rating {
  const path = join(dir, RATINGS_FILE);
  const stored: Rating = { ...rating, ratedAt: now.toISOString() };
  const line = `${JSON.stringify(stored)}\n`;
  const size = existsSync(path) ? statSync(path).size : 0;
  if (size + Buffer.byteLength(line) > RATINGS_FILE_LIMIT) throw new OutputError(`${RATINGS_FILE} is full: it holds ${size} bytes, at most ${RATINGS_FILE_LIMIT}`, path, "EFBIG");
  try {
    appendFileSync(path, line);
  } catch (error) {
    throw outputFailure(path, error);
  }
  return stored;
}

/**
 * The ratings as `eqa judge-agreement` reads them: a JSON array of
 * `{question_id, score, annotator}` (each reviewer an annotator), with the comment and time beside.
 */
export function ratingsExport(dir: string): { question_id: string; score: number; annotator: string; comment: string; rated_at: string }[] {
  return currentRatings(dir).map((r) => ({ question_id: r.questionId, score: r.score, annotator: r.reviewer, comment: r.comment, rated_at: r.ratedAt }));
}

const tagDatasetById = memoByFile((path): Promise<Map<string, TagQuestion> | undefined> => loadTagQuestions(path).then((list) => new Map(list.map((q) => [q.question_id, q])), () => undefined));

/**
 * The built-in simulator's recording a TAG-EQA question was generated from: the folder holding
 * the question's frame folder (`episode_history`, relative to the dataset), its
 * `trajectory.json`, `home.json` and `plan.png`. Undefined when the question has no recording
 * (ALFRED's) or it is not there any more.
 */
export async function tagRecordingDir(named: string | undefined, questionId: string): Promise<string | undefined> {
  if (named === undefined || !existsSync(named)) return undefined;
  const history = (await tagDatasetById(named))?.get(questionId)?.episode_history;
  if (!history) return undefined;
  const dir = dirname(resolve(dirname(named), history));
  return existsSync(join(dir, "trajectory.json")) ? dir : undefined;
}

/** A TAG-EQA question's trajectory: the recording's steps, and its plan with the path when the recording has one. */
export async function tagTranscript(runIndex: number, questionsPath: string | undefined, questionId: string): Promise<Transcript | null> {
  const dir = await tagRecordingDir(questionsPath, questionId);
  if (dir === undefined) return null;
  const out = emptyTranscript();
  out.source = join(dir, "trajectory.json");
  try {
    const log = await loadTrajectoryLog(out.source);
    out.steps = log.steps.map((s) => ({ step: s.step, action: s.action, success: s.success, position: s.agent.position }));
    out.task = log.task?.description ?? null;
  } catch {
    out.notes.push(`${out.source} could not be read`);
    return out;
  }
  if (existsSync(join(dir, "plan.png")) && existsSync(join(dir, "home.json"))) out.plan = `/api/runs/${runIndex}/plans/${encodeURIComponent(questionId)}`;
  return out;
}

const homeBounds = z.looseObject({ bounds: z.object({ min: z.tuple([z.number(), z.number(), z.number()]), max: z.tuple([z.number(), z.number(), z.number()]) }) });

/** Blue → cyan → yellow → red along t in [0, 1], as the exploration pictures colour time. */
function timeColour(t: number): string {
  const stops = [[40, 60, 220], [20, 190, 220], [240, 200, 30], [220, 30, 30]];
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  return `rgb(${[0, 1, 2].map((k) => Math.round(stops[i]![k]! + (stops[i + 1]![k]! - stops[i]![k]!) * f)).join(",")})`;
}

/**
 * A recording's plan (`plan.png`, drawn at 40 pixels a metre with a 0.25 m margin) with the
 * agent's path over it, coloured by time, the start a green square and the end a red one.
 */
export async function tagPlanPicture(dir: string): Promise<Buffer> {
  const home = homeBounds.parse(JSON.parse(readFileSync(join(dir, "home.json"), "utf8")));
  const log = await loadTrajectoryLog(join(dir, "trajectory.json"));
  const sharp = await loadSharp();
  const plan = sharp(join(dir, "plan.png"));
  const { width = 1, height = 1 } = await plan.metadata();
  const margin = 0.25;
  const perMetre = width / (home.bounds.max[0] - home.bounds.min[0] + 2 * margin);
  const point = (p: readonly number[]): [number, number] => [((p[0] ?? 0) - home.bounds.min[0] + margin) * perMetre, ((p[2] ?? 0) - home.bounds.min[2] + margin) * perMetre];
  const points = log.steps.map((s) => point(s.agent.position));
  const n = Math.max(1, points.length - 1);
  const segments = points.slice(1).map((p, i) => `<line x1="${points[i]![0].toFixed(1)}" y1="${points[i]![1].toFixed(1)}" x2="${p[0].toFixed(1)}" y2="${p[1].toFixed(1)}" stroke="${timeColour(i / n)}" stroke-width="3" stroke-linecap="round"/>`);
  const square = (p: [number, number], colour: string): string => `<rect x="${(p[0] - 5).toFixed(1)}" y="${(p[1] - 5).toFixed(1)}" width="10" height="10" fill="${colour}" stroke="#fff" stroke-width="1.5"/>`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${segments.join("")}${square(points[0]!, "#1a9e3f")}${square(points.at(-1)!, "#d42020")}</svg>`;
  return plan.composite([{ input: Buffer.from(svg), top: 0, left: 0 }]).png().toBuffer();
}

/** One CSV field: quoted when it holds a comma, quote or line break; a text a spreadsheet would run as a formula starts with an apostrophe. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A run's question table as CSV (one header row), for a spreadsheet. */
export function questionsCsv(rows: readonly Record<string, unknown>[], ratings: Record<string, { score: number }[]>): string {
  const header = ["question_id", "category", "question", "answer", "score", "ratings", "rating_mean"];
  const lines = rows.map((q) => {
    const own = ratings[String(q.questionId)] ?? [];
    const mean = own.length > 0 ? own.reduce((a, r) => a + r.score, 0) / own.length : null;
    return [q.questionId, q.category, q.question, q.answer, typeof q.score === "number" ? q.score : q.score === null ? "failed" : null, own.length, mean].map(csvField).join(",");
  });
  return `${[header.join(","), ...lines].join("\r\n")}\r\n`;
}

/** One stage of a run (answering, judging, exploring…) as the viewer's information panel shows it. */
export interface RunStageInfo {
  name: string;
  command: string | null;
  eqakitVersion: string | null;
  createdAt: string | null;
  wallTimeMs: number | null;
  models: { role: string; name: string; endpoint?: string }[];
  /** The settings a reader compares first, each as one line. */
  modes: [string, string][];
  counts: [string, number][];
  /** Replies that were not answers, by status (truncated, filtered, refused). */
  replyStatuses: [string, number][];
  failures: [string, number][];
  config: Record<string, unknown>;
}

/** How a run was made: its stages and the tokens and dollars of each model role. */
export interface RunInfo {
  stages: RunStageInfo[];
  costs: { stage: string; role: string; model: string; calls: number; cacheHits: number; promptTokens: number; completionTokens: number; dollars: string }[];
}

const MODE_KEYS = ["agent", "explorer", "mode", "promptVariant", "forceGuess", "withoutGuess", "sampling", "parameters", "similarity", "grounded", "memory", "benchmark", "subset", "questions", "predictions", "episodes", "framesRoot", "shard"];
const stageSummary = z.looseObject({
  eqakitVersion: z.string().optional().catch(undefined),
  createdAt: z.string().optional().catch(undefined),
  wallTimeMs: z.number().optional().catch(undefined),
  config: z.record(z.string(), z.unknown()).optional().catch(undefined),
  counts: z.record(z.string(), z.unknown()).optional().catch(undefined),
  replyStatuses: z.record(z.string(), z.unknown()).optional().catch(undefined),
  failures: z.array(z.looseObject({ error: z.string(), status: z.unknown().optional() })).optional().catch(undefined),
});

function oneLine(value: unknown): string {
  if (typeof value === "string") return value;
  if (isObject(value) && typeof value.path === "string") return value.path;
  return JSON.stringify(value) ?? "–";
}

function stageInfo(name: string, summary: unknown, runCommand: string | undefined): RunStageInfo | undefined {
  const s = stageSummary.safeParse(summary).data;
  if (!s) return undefined;
  const config = s.config ?? {};
  const command = Array.isArray(config.command) && config.command.every((p) => typeof p === "string") ? config.command.join(" ") : typeof config.command === "string" ? config.command : (runCommand ?? null);
  const numbers = (record: Record<string, unknown> | undefined): [string, number][] => Object.entries(record ?? {}).filter((e): e is [string, number] => typeof e[1] === "number");
  return {
    name,
    command,
    eqakitVersion: s.eqakitVersion ?? null,
    createdAt: s.createdAt ?? null,
    wallTimeMs: s.wallTimeMs ?? null,
    models: modelsOf(config),
    modes: MODE_KEYS.filter((k) => config[k] !== undefined && config[k] !== null).map((k) => [k, oneLine(config[k])]),
    counts: numbers(s.counts),
    replyStatuses: numbers(s.replyStatuses).filter(([, n]) => n > 0),
    failures: failuresByReason(s.failures ?? []),
    config,
  };
}

/** A run's information panel: each stage's summary (or, for other kinds, its own summary file) and its costs by role. */
export function runInfo(run: LoadedRun): RunInfo {
  const stages: RunStageInfo[] = [];
  const add = (name: string, summary: unknown): void => {
    const info = summary === undefined ? undefined : stageInfo(name, summary, run.commands.at(-1));
    if (info) stages.push(info);
  };
  add("answer", run.answer);
  add("judge (LLM-Match)", run.score);
  add("structured judge (TAG-EQA)", run.tag?.summary);
  if (!run.answer && !run.score && !run.tag) add(run.kind, readJson(join(run.dir, existsSync(join(run.dir, "bench.json")) ? "bench.json" : "summary.json"), []));
  const costs = run.costs.flatMap(({ stage, cost }) => cost.roles.map((r) => ({ stage, role: r.role, model: r.model, calls: r.calls, cacheHits: r.cacheHits, promptTokens: r.promptTokens, completionTokens: r.completionTokens, dollars: formatDollars(r.dollars) })));
  return { stages, costs };
}
