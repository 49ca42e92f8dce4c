/**
 * A Mixed EQA run (`eqa explore` on an `eqakit-mixed/1` set, kind `mixed`) as the report and the
 * viewer read it: per question the question, its category, the canonical ground truth and its
 * alternatives, the agent's answer, right or wrong, the history's days, the live path on the plan
 * and the frames the agent looked at now; the headline figures per category.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { episodeFileName } from "../agents/index.js";
import { loadMixedSet, type MixedSet } from "../data/index.js";
import { readJsonFile, readRecords } from "./files.js";
import type { HeadlineMetric } from "./run-kinds.js";

const estimate = z.looseObject({ n: z.number(), mean: z.number(), stderr: z.number(), ci: z.tuple([z.number(), z.number()]) }).nullable();
const figure = z.looseObject({ overall: estimate, byCategory: z.record(z.string(), estimate) });

/** `summary.json` of a mixed run (`MixedSummary`), the fields shown. */
export const mixedSummarySchema = z.looseObject({
  kind: z.literal("mixed"),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ episodes: z.number(), finished: z.number(), failed: z.number(), correct: z.number() }),
  metrics: z.looseObject({ accuracy: figure, spl: figure, wastedMetres: figure, historyFrames: figure }),
  questions: z.array(z.looseObject({ questionId: z.string(), correct: z.boolean(), spl: z.number().nullable() })),
});
export type MixedRunSummary = z.infer<typeof mixedSummarySchema>;

const mixedRecordSchema = z.looseObject({
  questionId: z.string(),
  answer: z.string().nullable(),
  stop: z.string().nullable(),
  pathLengthM: z.number().nullable(),
  pathLengthSteps: z.number().nullable(),
  frames: z.number(),
  historyFrames: z.array(z.looseObject({ day: z.number(), frame: z.number() })),
  error: z.string().nullable(),
});

/** A mixed run's question row. */
export interface MixedQuestionRow {
  questionId: string;
  question?: string;
  category?: string;
  groundTruth?: string;
  extraAnswers?: string[];
  answer: string | null;
  correct?: boolean;
  stop: string | null;
  pathLengthM: number | null;
  pathLengthSteps: number | null;
  /** The history's days, as the agent was handed them, and the history frames it retrieved. */
  history?: string;
  error?: string;
  episode: string;
  frames: number[];
  plan?: string;
}

/** Frames shown of what the agent saw now: up to four, first and last included. */
function shownFrames(count: number): number[] {
  if (count <= 0) return [];
  return [...new Set([0, Math.round((count - 1) / 3), Math.round((2 * (count - 1)) / 3), count - 1])];
}

export function readMixedSummary(dir: string): MixedRunSummary | undefined {
  return readJsonFile(join(dir, "summary.json"), mixedSummarySchema);
}

/** The run's questions, in the set's order; the set is the first of `sets` that reads (a note says when none does). */
export async function loadMixedQuestions(dir: string, summary: MixedRunSummary | undefined, sets: readonly (string | undefined)[], notes: string[]): Promise<MixedQuestionRow[]> {
  let set: MixedSet | undefined;
  for (const file of sets) {
    if (!file || set) continue;
    set = await loadMixedSet(file).catch(() => undefined);
  }
  if (!set) notes.push("the Mixed EQA set the run read could not be found: questions and ground truth are not shown");
  const episodes = new Map((set?.episodes ?? []).map((e) => [e.question_id, e]));
  const days = new Map((set?.homes ?? []).map((h) => [h.scene, h.days.map((d) => `day ${d.day} (${d.when})`).join(", ")]));
  const correct = new Map((summary?.questions ?? []).map((q) => [q.questionId, q.correct]));
  const rows = new Map<string, MixedQuestionRow>();
  const records = join(dir, "mixed.jsonl");
  if (existsSync(records)) {
    for (const r of readRecords(records, mixedRecordSchema)) {
      const e = episodes.get(r.questionId);
      const episode = episodeFileName(r.questionId);
      const plan = join(dir, "trajectories", `${episode}.png`);
      const retrieved = r.historyFrames.map((f) => `day ${f.day} frame ${f.frame}`).join(", ");
      rows.set(r.questionId, {
        questionId: r.questionId,
        ...(e ? { question: e.question, category: e.category, groundTruth: e.answer_value, extraAnswers: e.alternatives } : {}),
        answer: r.answer,
        ...(correct.has(r.questionId) ? { correct: correct.get(r.questionId)! } : {}),
        stop: r.stop,
        pathLengthM: r.pathLengthM,
        pathLengthSteps: r.pathLengthSteps,
        ...(e ? { history: `${days.get(e.scene) ?? "–"}${retrieved ? `; retrieved ${retrieved}` : ""}` } : {}),
        ...(r.error !== null ? { error: r.error } : {}),
        episode,
        frames: shownFrames(r.frames),
        ...(existsSync(plan) ? { plan } : {}),
      });
    }
  }
  const order = [...episodes.keys()];
  const at = new Map(order.map((id, i) => [id, i]));
  return [...rows.values()].sort((a, b) => (at.get(a.questionId) ?? order.length) - (at.get(b.questionId) ?? order.length));
}

/** Accuracy overall and per category, SPL where the present is needed, metres wasted where the history answers. */
export function mixedHeadline(summary: MixedRunSummary): HeadlineMetric[] {
  const of = (name: string, e: z.infer<typeof estimate>, unit: string, about: string): HeadlineMetric[] => (e ? [{ name, value: e.mean, unit, n: e.n, ci: e.ci, about }] : []);
  const m = summary.metrics;
  return [
    ...of("accuracy", m.accuracy.overall, "%", "Mixed EQA: answers equal to the canonical ground truth (exact, no judge)"),
    ...Object.entries(m.accuracy.byCategory).flatMap(([category, e]) => of(`accuracy (${category})`, e, "%", `Mixed EQA: accuracy on ${category} questions`)),
    ...of("SPL", m.spl.overall, "", "LA-EQA's SPL on the questions that need the present"),
    ...of("wasted m", m.wastedMetres.overall, "m", "metres walked on the questions the history answers"),
    ...of("history frames", m.historyFrames.overall, "", "history frames the agent retrieved per question"),
  ];
}
