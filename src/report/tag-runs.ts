/**
 * TAG-EQA structured-judge runs (`eqa score-tag`) as the report and the viewer read them: the
 * summary's figures (Figs. 4-6), and per question the judgement beside the question, its true
 * structured answer and the prediction it judged, from the files the run's configuration names.
 */
import { memoByFile } from "../core/index.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { loadTagQuestions, structuredAnswerSchema, type StructuredAnswer, type TagQuestion } from "../data/index.js";
import { loadTagPredictions, type TagPrediction } from "../eval/index.js";
import { meanEstimate, readRecords, usageTotals } from "./files.js";

const scorePair = z.object({ grounded: meanEstimate, ungrounded: meanEstimate });
const errorRate = z.object({ answers: z.number().nullable(), perAnswer: z.number().nullable(), rate: z.number().nullable() });

export const tagSummarySchema = z.looseObject({
  kind: z.literal("tag-structured"),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ questions: z.number(), scored: z.number(), failed: z.number(), invalid: z.number() }),
  scores: scorePair,
  validAnswerRate: z.number().nullable(),
  errors: z.record(z.string(), errorRate),
  categories: z.record(z.string(), z.record(z.string(), scorePair)),
  failures: z.array(z.looseObject({ questionId: z.string(), error: z.string() })),
  usage: usageTotals,
});

/** `TagScoreSummary` as read back from JSON: undefined figures (NaN) are null. */
export type TagRunSummary = z.infer<typeof tagSummarySchema>;
export type TagEstimate = z.infer<typeof meanEstimate>;
export type TagScorePair = z.infer<typeof scorePair>;

const errorCounts = z.looseObject({
  objectFalsePositives: z.number(),
  objectFalseNegatives: z.number(),
  predicateFalsePositives: z.number(),
  predicateFalseNegatives: z.number(),
});

const tagJudgementLine = z.looseObject({
  questionId: z.string(),
  status: z.enum(["scored", "failed", "unreadable"]),
  valid: z.boolean().default(false),
  source: z.enum(["structured", "empty", "judge"]).nullable().default(null),
  score: z.number().nullable(),
  groundedScore: z.number().nullable().default(null),
  ungroundedScore: z.number().nullable().default(null),
  errors: errorCounts.nullable().default(null),
  predicted: structuredAnswerSchema.nullable().catch(null),
  replies: z.array(z.string().nullable()).default([]),
  error: z.string().nullable().default(null),
});

export type TagErrorCounts = z.infer<typeof errorCounts>;

/** One question of a TAG run. */
export interface TagRunQuestion {
  questionId: string;
  /** From the questions file, when it could be read (the grounded variant when the run scored those). */
  question?: string;
  answerText?: string;
  truth?: StructuredAnswer;
  tags?: TagQuestion["tags"];
  split?: string;
  trajectory?: string;
  /** The prediction as submitted (free text or a structure); null for no answer; undefined when the predictions could not be read. */
  prediction?: string | StructuredAnswer | null;
  /** The structure that was scored: the prediction itself, or what the judge read from its text. */
  predicted: StructuredAnswer | null;
  source: "structured" | "empty" | "judge" | null;
  /** "unreadable": the judge's replies could not be read as a structure (no score). */
  status: "scored" | "failed" | "unreadable";
  /** The grounded score (1-5), null when judging failed. */
  score: number | null;
  groundedScore: number | null;
  ungroundedScore: number | null;
  errors: TagErrorCounts | null;
  valid: boolean;
  replies: (string | null)[];
  error?: string;
  /** The answering agent's transcript, when it answered in the run's `answers/` folder (`eqa demo --model`). */
  transcript?: { frames: number[]; calls: { role: string; model: string; prompt: string; reply: string | null; cached: boolean }[]; episode?: string };
}

export interface TagRunPart {
  summary?: TagRunSummary;
  /** Whether the run scored the grounded variants of the questions. */
  grounded: boolean;
  /** The questions file in its dataset (recordings beside it), else the run's copy, when found. */
  questionsPath?: string;
  questions: TagRunQuestion[];
}

const datasetQuestions = memoByFile((path): Promise<TagQuestion[] | undefined> => loadTagQuestions(path).catch(() => undefined));

async function tagQuestions(path: string | undefined, named: unknown, notes: string[]): Promise<TagQuestion[] | undefined> {
  if (!path) {
    if (named !== undefined) notes.push(`the questions ${JSON.stringify(named)} could not be found: TAG questions are shown by id only`);
    return undefined;
  }
  const found = await datasetQuestions(path);
  if (!found) notes.push(`the questions ${path} could not be read: TAG questions are shown by id only`);
  return found;
}

async function tagPredictions(path: string | undefined, notes: string[]): Promise<Map<string, TagPrediction> | undefined> {
  if (!path) return undefined;
  try {
    return new Map((await loadTagPredictions(path)).map((p) => [p.question_id, p]));
  } catch {
    notes.push(`the predictions ${path} could not be read: the answers as submitted are not shown`);
    return undefined;
  }
}

function fromJudgement(j: z.infer<typeof tagJudgementLine>): TagRunQuestion {
  return {
    questionId: j.questionId,
    predicted: j.predicted,
    source: j.source,
    status: j.status,
    score: j.score,
    groundedScore: j.groundedScore,
    ungroundedScore: j.ungroundedScore,
    errors: j.errors,
    valid: j.valid,
    replies: j.replies,
    ...(j.error ? { error: j.error } : {}),
  };
}

/** The TAG part of a run directory whose summary (if any) is of kind "tag-structured"; `locate` finds an input the configuration names. */
export async function loadTagPart(dir: string, summary: TagRunSummary | undefined, locate: (name: string, named: unknown) => string | undefined, notes: string[]): Promise<TagRunPart> {
  const grounded = summary?.config.grounded === true;
  // later lines win: a resumed run appends the judgements it retried
  const byId = new Map<string, TagRunQuestion>();
  const judgements = join(dir, "judgements.jsonl");
  if (existsSync(judgements)) {
    for (const j of readRecords(judgements, tagJudgementLine)) byId.set(j.questionId, fromJudgement(j));
  } else notes.push("no judgements.jsonl: per-question scores are not shown");

  // the run's copies, or the files its summary names (store's runInputPath)
  const questionsPath = locate("questions", summary?.config.questions);
  const questions = await tagQuestions(questionsPath, summary?.config.questions, notes);
  const predictions = await tagPredictions(locate("predictions", summary?.config.predictions), notes);
  const order = questions ? questions.map((q) => q.question_id).filter((id) => byId.has(id)) : [];
  for (const id of byId.keys()) if (!order.includes(id)) order.push(id);
  const known = new Map((questions ?? []).map((q) => [q.question_id, q]));
  const out = order.map((id) => {
    const q = byId.get(id)!;
    const record = known.get(id);
    if (record) {
      const variant = grounded && record.grounded ? record.grounded : record;
      Object.assign(q, { question: variant.question, answerText: variant.answer, truth: variant.structured_answer, tags: record.tags, split: record.split, trajectory: record.trajectory });
    }
    if (predictions) q.prediction = predictions.get(id)?.answer ?? null;
    return q;
  });
  return { ...(summary ? { summary } : {}), grounded, ...(questionsPath ? { questionsPath } : {}), questions: out };
}

/** A structured answer as one line per group, for text displays: `predicate → value [objects]`. */
export function structuredAnswerText(answer: StructuredAnswer): string {
  return answer
    .map((g) => {
      const objects = g.objects.map((o) => `${o.caption ? `${o.caption} (${o.type})` : o.type}${o.position ? ` @ (${o.position.map((v) => v.toFixed(2)).join(", ")})` : ""}`);
      return `${g.predicate ? `${g.predicate}: ` : ""}${valueText(g.value)}${objects.length > 0 ? ` [${objects.join("; ")}]` : ""}`;
    })
    .join("\n");
}

export function valueText(value: StructuredAnswer[number]["value"]): string {
  if (value === null) return "–";
  if (Array.isArray(value)) return value.join(", ");
  return String(value);
}
