/**
 * Validation of the structured judge, as TAG-EQA's §3.1 does it: perturb correct structured
 * answers with three random disruptions, score each perturbed answer against the truth directly
 * (the "hard-coded" score: the matcher on the structure), then render the perturbed answer as
 * text, have the judge extract its structure and score that (the judge's score). The Pearson
 * correlation of the two over the sample tells how much the extraction loses (the paper: 0.81 on
 * 300 validation samples).
 *
 * Disruptions (chosen uniformly with replacement among those that apply, seeded):
 *   tag-swap        an object's type replaced by another type seen in the questions
 *   move-position   an object's position moved 0.5-4 m in a random horizontal direction (to the cm)
 *   change-caption  an object's caption replaced by another caption seen (or dropped)
 *   change-predicate a group's predicate replaced by another predicate seen
 *   drop-object     an object removed, never the last (a count that matched the objects follows)
 *   add-object      a copy of an object with another type added (a count follows)
 * The text rendering is deterministic: eqakit's own `renderStructuredAnswer` by default, or one
 * given (`eqa score-tag --validate` uses the dataset generator's answer template, src/generate).
 */
import { z } from "zod";
import { sha256Hex, seededRandom, randomInt, type Random } from "../../core/index.js";
import type { AnswerGroup, StructuredAnswer, StructuredObject, TagQuestion } from "../../data/index.js";
import { runModelBatch, type ChatModel, type ModelSpec } from "../../models/index.js";
import { openRun, resumeItems, RUN_KIND } from "../../store/index.js";
import { correlate, type CorrelationEstimate } from "../agreement.js";
import { mean } from "../stats.js";
import { extractStructuredAnswer } from "./structured-extract.js";
import { tagQuestionItems } from "./structured-run.js";
import { defaultTextSimilarity, matchStructuredAnswers, type StructuredMatchOptions } from "./structured-match.js";

export const DISRUPTIONS = ["tag-swap", "move-position", "change-caption", "change-predicate", "drop-object", "add-object"] as const;
export type Disruption = (typeof DISRUPTIONS)[number];

export interface PerturbationVocabulary {
  types: string[];
  captions: string[];
  predicates: string[];
}

/** Types, captions and non-empty predicates seen in the answers, sorted and unique. */
export function perturbationVocabulary(answers: readonly StructuredAnswer[]): PerturbationVocabulary {
  const types = new Set<string>();
  const captions = new Set<string>();
  const predicates = new Set<string>();
  for (const answer of answers) {
    for (const group of answer) {
      if (group.predicate.trim() !== "") predicates.add(group.predicate);
      for (const o of group.objects) {
        types.add(o.type);
        if (o.caption) captions.add(o.caption);
      }
    }
  }
  return { types: [...types].sort(), captions: [...captions].sort(), predicates: [...predicates].sort() };
}

function pick<T>(random: Random, items: readonly T[]): T | undefined {
  return items.length === 0 ? undefined : items[randomInt(random, items.length)];
}

function pickOther(random: Random, items: readonly string[], not: string | null | undefined): string | undefined {
  return pick(random, items.filter((x) => x !== not));
}

function objectSlots(answer: StructuredAnswer): { group: AnswerGroup; index: number }[] {
  return answer.flatMap((group) => group.objects.map((_, index) => ({ group, index })));
}

function keepCount(group: AnswerGroup, before: number): void {
  if (typeof group.value === "number" && group.value === before) group.value = group.objects.length;
}

function applicable(answer: StructuredAnswer, vocabulary: PerturbationVocabulary): Disruption[] {
  const slots = objectSlots(answer);
  const result: Disruption[] = [];
  if (slots.length > 0 && vocabulary.types.length > 1) result.push("tag-swap", "add-object");
  if (slots.some((s) => s.group.objects[s.index]!.position)) result.push("move-position");
  if (slots.length > 0) result.push("change-caption");
  // the last object stays, so that further disruptions have something to act on
  if (slots.length > 1) result.push("drop-object");
  if (answer.some((g) => g.predicate.trim() !== "") && vocabulary.predicates.length > 1) result.push("change-predicate");
  return result;
}

function disrupt(answer: StructuredAnswer, kind: Disruption, random: Random, vocabulary: PerturbationVocabulary): void {
  const slot = pick(random, objectSlots(answer));
  if (kind === "change-predicate") {
    const group = pick(random, answer.filter((g) => g.predicate.trim() !== ""))!;
    group.predicate = pickOther(random, vocabulary.predicates, group.predicate) ?? group.predicate;
    delete group.conditions;
    return;
  }
  if (!slot) return;
  const object = slot.group.objects[slot.index]!;
  if (kind === "tag-swap") object.type = pickOther(random, vocabulary.types, object.type) ?? object.type;
  else if (kind === "change-caption") object.caption = pickOther(random, vocabulary.captions, object.caption) ?? null;
  else if (kind === "move-position") {
    const moved = pick(random, objectSlots(answer).filter((s) => s.group.objects[s.index]!.position))!;
    const target = moved.group.objects[moved.index]!;
    const [x, y, z] = target.position!;
    const d = 0.5 + 3.5 * random();
    const angle = 2 * Math.PI * random();
    const centimetres = (v: number): number => Math.round(v * 100) / 100;
    target.position = [centimetres(x + d * Math.cos(angle)), y, centimetres(z + d * Math.sin(angle))];
  } else if (kind === "drop-object") {
    const before = slot.group.objects.length;
    slot.group.objects.splice(slot.index, 1);
    keepCount(slot.group, before);
  } else if (kind === "add-object") {
    const before = slot.group.objects.length;
    const added: StructuredObject = { ...object, type: pickOther(random, vocabulary.types, object.type) ?? object.type };
    slot.group.objects.push(added);
    keepCount(slot.group, before);
  }
}

/** A copy of `answer` with `count` random disruptions applied (see the module comment). */
export function perturbStructuredAnswer(answer: StructuredAnswer, random: Random, vocabulary: PerturbationVocabulary, count = 3): { answer: StructuredAnswer; applied: Disruption[] } {
  const copy = structuredClone(answer) as StructuredAnswer;
  const applied: Disruption[] = [];
  for (let i = 0; i < count; i++) {
    const kind = pick(random, applicable(copy, vocabulary));
    if (!kind) break;
    disrupt(copy, kind, random, vocabulary);
    applied.push(kind);
  }
  return { answer: copy, applied };
}

function coordinates(p: readonly number[]): string {
  return `(x=${p[0]!.toFixed(2)}, y=${p[1]!.toFixed(2)}, z=${p[2]!.toFixed(2)})`;
}

function describeObject(o: StructuredObject): string {
  return `a ${o.type}${o.caption ? ` (${o.caption})` : ""}${o.position ? ` at ${coordinates(o.position)}` : ""}`;
}

function describeValue(value: AnswerGroup["value"]): string | undefined {
  if (value === null) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? "nothing" : value.join(", ");
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

/** The structured answer in plain English, deterministically: one sentence per group. */
export function renderStructuredAnswer(answer: StructuredAnswer): string {
  if (answer.length === 0) return "I don't know.";
  return answer
    .map((group) => {
      const lead = group.predicate.trim() === "" ? "" : `For ${group.predicate}: `;
      const value = describeValue(group.value);
      const objects = group.objects.length === 0 ? "there are no such objects" : `the objects are ${group.objects.map(describeObject).join("; ")}`;
      return `${lead}${value !== undefined ? `the answer is ${value}, and ` : ""}${objects}.`;
    })
    .join(" ");
}

export interface ValidationItem {
  questionId: string;
  inputKey: string;
  applied: Disruption[];
  rendered: string;
  /** The matcher on the perturbed structure itself (grounded score, 1-5). */
  hardScore: number;
  hardUngroundedScore: number;
  /** The matcher on the judge's extraction of the rendered text; null when the extraction failed. */
  judgeScore: number | null;
  judgeUngroundedScore: number | null;
  error: string | null;
}

/** One line of a judge validation's validation.jsonl, as `validateStructuredJudge` writes it (a failed call's scores are null). */
export const validationItemSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  applied: z.custom<Disruption[]>(Array.isArray),
  rendered: z.string(),
  hardScore: z.number(),
  hardUngroundedScore: z.number(),
  judgeScore: z.number().nullable(),
  judgeUngroundedScore: z.number().nullable(),
  error: z.string().nullable(),
}) satisfies z.ZodType<ValidationItem>;

export interface ValidationResult {
  items: ValidationItem[];
  /** Pearson and Spearman of the hard-coded against the judge's grounded scores, over items the judge scored. */
  correlation: CorrelationEstimate;
  ungroundedCorrelation: CorrelationEstimate;
  meanHardScore: number;
  meanJudgeScore: number;
  failed: number;
}

export interface AnswerRenderer {
  name: string;
  render(question: TagQuestion, answer: StructuredAnswer): string;
}

export const DEFAULT_ANSWER_RENDERER: AnswerRenderer = { name: "eqakit", render: (_question, answer) => renderStructuredAnswer(answer) };

export interface ValidationOptions {
  questions: TagQuestion[];
  /** The judge whose extractions are validated (it carries its spec). */
  judge: ChatModel;
  /** How many questions to sample (all by default). */
  samples?: number;
  seed?: number;
  disruptions?: number;
  match?: StructuredMatchOptions;
  /** How a perturbed answer becomes text (default: `renderStructuredAnswer`, named "eqakit"). */
  renderer?: AnswerRenderer;
  /** When given, items are appended to validation.jsonl there (resumable) and the result written to validation.json. */
  outDir?: string;
  concurrency?: number;
}

export const VALIDATION_ITEMS_FILE = "validation.jsonl";
export const VALIDATION_FILE = "validation.json";

function sampleQuestions(questions: readonly TagQuestion[], samples: number | undefined, random: Random): TagQuestion[] {
  const order = questions.map((q, i) => ({ q, key: random(), i }));
  if (samples === undefined || samples >= questions.length) return [...questions];
  return order.sort((a, b) => a.key - b.key).slice(0, samples).sort((a, b) => a.i - b.i).map((x) => x.q);
}

export interface PerturbedSample {
  question: TagQuestion;
  answer: StructuredAnswer;
  applied: Disruption[];
  rendered: string;
}

/** The sampled questions with their perturbed answers and renderings: the same options, the same sample. */
export function perturbationSample(options: Pick<ValidationOptions, "questions" | "samples" | "seed" | "disruptions" | "renderer">): PerturbedSample[] {
  const renderer = options.renderer ?? DEFAULT_ANSWER_RENDERER;
  const random = seededRandom(options.seed ?? 0);
  const chosen = sampleQuestions(options.questions, options.samples, random);
  const vocabulary = perturbationVocabulary(options.questions.map((q) => q.structured_answer));
  return chosen.map((question) => {
    const perturbed = perturbStructuredAnswer(question.structured_answer, random, vocabulary, options.disruptions ?? 3);
    return { question, ...perturbed, rendered: renderer.render(question, perturbed.answer) };
  });
}

/** Runs the perturbation validation (see the module comment). */
export async function validateStructuredJudge(options: ValidationOptions): Promise<ValidationResult> {
  const seed = options.seed ?? 0;
  const similarity = options.match?.similarity ?? (await defaultTextSimilarity());
  const match = { ...options.match, similarity };
  const tasks = perturbationSample(options).map((task) => ({
    ...task,
    inputKey: sha256Hex(JSON.stringify([options.judge.name, similarity.name, task.question.question_id, task.question.structured_answer, task.answer, task.rendered])),
  }));
  // kind tag-validate: the judge, the similarity, the sample, its seed, the disruptions and the renderer decide the result
  const settings = { judge: options.judge.name, similarity: similarity.name, samples: options.samples ?? null, seed, disruptions: options.disruptions ?? 3, renderer: (options.renderer ?? DEFAULT_ANSWER_RENDERER).name };
  const run = options.outDir ? await openRun({ dir: options.outDir, kind: RUN_KIND["tag-validate"], settings, items: tagQuestionItems(options.questions) }) : undefined;
  const earlier = run
    ? resumeItems(run, { file: VALIDATION_ITEMS_FILE, schema: validationItemSchema, items: tasks, id: (t) => t.question.question_id, inputKey: (t) => t.inputKey, succeeded: (i) => i.judgeScore !== null }).reusable
    : new Map<string, ValidationItem>();
  const done = new Map(earlier);
  const appender = run?.appender(VALIDATION_ITEMS_FILE);
  try {
    await runModelBatch({
      items: tasks.filter((t) => !earlier.has(t.question.question_id)),
      concurrency: options.concurrency ?? 8,
      work: async (task): Promise<ValidationItem> => {
        const hard = await matchStructuredAnswers(task.question.structured_answer, task.answer, match);
        const extraction = await extractStructuredAnswer(options.judge, task.question.question, task.rendered);
        const judged = extraction.answer === null ? null : await matchStructuredAnswers(task.question.structured_answer, extraction.answer, match);
        return {
          questionId: task.question.question_id,
          inputKey: task.inputKey,
          applied: task.applied,
          rendered: task.rendered,
          hardScore: hard.groundedScore,
          hardUngroundedScore: hard.ungroundedScore,
          judgeScore: judged?.groundedScore ?? null,
          judgeUngroundedScore: judged?.ungroundedScore ?? null,
          error: extraction.error,
        };
      },
      failed: (task, error) => ({ questionId: task.question.question_id, inputKey: task.inputKey, applied: task.applied, rendered: task.rendered, hardScore: Number.NaN, hardUngroundedScore: Number.NaN, judgeScore: null, judgeUngroundedScore: null, error: error.message }),
      finished: (task, item) => {
        appender?.append(item);
        done.set(task.question.question_id, item);
      },
      models: [options.judge.spec],
    });
  } finally {
    appender?.close();
  }
  const items = tasks.map((t) => done.get(t.question.question_id)!);
  const paired = items.filter((i) => i.judgeScore !== null);
  const result: ValidationResult = {
    items,
    correlation: correlate(paired.map((i) => i.hardScore), paired.map((i) => i.judgeScore!), { seed, resamples: 2000 }),
    ungroundedCorrelation: correlate(paired.map((i) => i.hardUngroundedScore), paired.map((i) => i.judgeUngroundedScore!), { seed, resamples: 2000 }),
    meanHardScore: mean(paired.map((i) => i.hardScore)),
    meanJudgeScore: mean(paired.map((i) => i.judgeScore!)),
    failed: items.length - paired.length,
  };
  if (run) await run.writeJson(VALIDATION_FILE, { ...result, items: undefined, seed, samples: items.length, disruptions: options.disruptions ?? 3, judge: options.judge.name, similarity: similarity.name, renderer: (options.renderer ?? DEFAULT_ANSWER_RENDERER).name });
  return result;
}

