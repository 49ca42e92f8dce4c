/**
 * LA-EQA (Long-term Active EQA, "Enter the Mind Palace", CoRL 2025): its question file, the
 * predictions of a system that ran its worlds, and the positions of its places.
 *
 * The questions (`la_eqa_benchmark/eqa-questions.json` in mind-palace-laeqa/benchmark, fetched by
 * `eqa data fetch la-eqa`; the repository has no licence, so eqakit never ships it) are a JSON
 * list of records, every field kept:
 *
 * ```json
 * { "question": "Where did I leave my red backpack last night?", "category": "past",
 *   "question_id": "hbt_92_2", "scene_name": "092-hm3d-eF36g7L6Z9M",
 *   "answer": "On the sofa downstairs OR sofa living room downstairs",
 *   "best_path": [], "start_place": 54 }
 * ```
 *
 * `answer` joins the alternatives with " OR " (upper case: "At or by the coat hanger" is one
 * answer); `best_path` lists the places (scene-graph place nodes of the world "now") the shortest
 * walk from `start_place` visits to see what answers the question, empty when memory alone answers.
 *
 * Predictions (`eqa score --benchmark` on an LA-EQA file) are `[{"question_id", "answer",
 * "distance_traveled"}]`: the answer, and the metres the agent walked in the world "now" (the
 * reference's `stats_total_distance`, the name its result files give it); `distance_traveled` may be
 * left out, and that question then has no SPL.
 *
 * Places (`--places`) give each scene's place positions as the world "now" holds them, in the order
 * its scene graph lists them (the reference's nearest-id fallback depends on that order):
 * `{"092-hm3d-eF36g7L6Z9M": [{"id": 54, "position": [x, y, z]}, …], …}`.
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { UserError, sha256Hex } from "../core/index.js";
import { parseJsonText, readTextFile } from "./json.js";
import { loadQuestionSubset } from "./openeqa.js";
import { describeJsonType, describeZodError, firstItems, requireRecords, validateRecords } from "./validate.js";

/** LA-EQA's categories, in the order its file first lists them. */
export const LA_EQA_CATEGORIES = ["past", "present", "multi_past", "past_present", "past_present_future"] as const;
export type LaEqaCategory = (typeof LA_EQA_CATEGORIES)[number];

/** What separates an answer's alternatives: " OR " in upper case, with any white space around it. */
const ALTERNATIVE_SEPARATOR = /\s+OR\s+/;

const placeId = z.number().int("must be an integer place id");

/** One record of LA-EQA's `eqa-questions.json`, as the file writes it. */
export const laEqaQuestionRecord = z.object({
  question: z.string().min(1, "must be a non-empty string"),
  category: z.enum(LA_EQA_CATEGORIES, { message: `unknown category; expected one of: ${LA_EQA_CATEGORIES.join(", ")}` }),
  question_id: z.string().min(1, "must be a non-empty string"),
  scene_name: z.string().min(1, "must be a non-empty string"),
  answer: z.string().min(1, "must be a non-empty string"),
  best_path: z.array(placeId),
  start_place: placeId,
});
export type LaEqaQuestionRecord = z.infer<typeof laEqaQuestionRecord>;

/** An LA-EQA question: every field of its record, and its answer's alternatives. */
export interface LaEqaQuestion {
  questionId: string;
  question: string;
  category: LaEqaCategory;
  sceneName: string;
  /** The answer as the file writes it, alternatives and all (what the reference's judge is given). */
  answer: string;
  /** The answer's alternatives, split at " OR " and trimmed. */
  alternatives: string[];
  /** Places the shortest walk from the start visits, in order; empty when memory alone answers. */
  bestPath: number[];
  startPlace: number;
}

export interface LaEqaBenchmark {
  path: string;
  /** sha256 of the file's bytes, recorded in summaries. */
  sha256: string;
  questions: LaEqaQuestion[];
  byId: Map<string, LaEqaQuestion>;
}

/** The alternatives of an LA-EQA answer: split at " OR " (upper case), each trimmed, none empty. */
export function laEqaAlternatives(answer: string): string[] {
  return answer
    .split(ALTERNATIVE_SEPARATOR)
    .map((a) => a.trim())
    .filter((a) => a !== "");
}

/** Whether a parsed JSON file looks like LA-EQA's questions (its first record has `best_path`, `start_place` or `scene_name`, which OpenEQA's lack). */
export function isLaEqaQuestionFile(value: unknown): boolean {
  if (!Array.isArray(value) || value.length === 0) return false;
  const first: unknown = value[0];
  return typeof first === "object" && first !== null && ("best_path" in first || "start_place" in first || "scene_name" in first);
}

/** Loads and validates LA-EQA's question file (or one of its shape): every question, field and alternative. */
export async function loadLaEqaBenchmark(path: string): Promise<LaEqaBenchmark> {
  const text = await readTextFile(path);
  const records = validateRecords(parseJsonText(text, path), laEqaQuestionRecord, path, "LA-EQA questions");
  requireRecords(records, path, "questions", "pass LA-EQA's eqa-questions.json (eqa data fetch la-eqa)");
  const byId = new Map<string, LaEqaQuestion>();
  const questions = records.map((record, index): LaEqaQuestion => {
    if (byId.has(record.question_id)) throw new UserError("duplicate question id", { file: path, index, id: record.question_id, field: "question_id" });
    const question: LaEqaQuestion = {
      questionId: record.question_id,
      question: record.question,
      category: record.category,
      sceneName: record.scene_name,
      answer: record.answer,
      alternatives: laEqaAlternatives(record.answer),
      bestPath: record.best_path,
      startPlace: record.start_place,
    };
    byId.set(question.questionId, question);
    return question;
  });
  return { path, sha256: sha256Hex(text), questions, byId };
}

const predictionRecord = z.object({
  question_id: z.string().min(1, "must be a non-empty string"),
  answer: z.string().nullable(),
  /** Metres walked in the world "now"; absent when the system did not measure it (no SPL). */
  distance_traveled: z.number().finite().nonnegative("must be a distance of 0 or more").optional(),
});

/** One prediction for an LA-EQA question: the answer and, when measured, the distance walked. */
export interface LaEqaPrediction {
  questionId: string;
  answer: string | null;
  /** Metres walked in the world "now" (the reference's `stats_total_distance`). */
  distanceTraveled?: number;
}

/** Loads `[{"question_id", "answer", "distance_traveled"}]`; a repeated question id is refused. */
export async function loadLaEqaPredictions(path: string): Promise<LaEqaPrediction[]> {
  const records = validateRecords(parseJsonText(await readTextFile(path), path), predictionRecord, path, "predictions");
  const seen = new Set<string>();
  return records.map((record, index) => {
    if (seen.has(record.question_id)) throw new UserError("duplicate prediction for this question", { file: path, index, id: record.question_id, field: "question_id" });
    seen.add(record.question_id);
    return { questionId: record.question_id, answer: record.answer, ...(record.distance_traveled !== undefined ? { distanceTraveled: record.distance_traveled } : {}) };
  });
}

/** One place of a scene: its id and position (metres) in the world "now". */
export interface LaEqaPlace {
  id: number;
  position: [number, number, number];
}

const placeRecord = z.strictObject({
  id: placeId,
  position: z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]),
});

/** Scene name → its places, in the order its scene graph lists them. */
export type LaEqaPlaces = Map<string, LaEqaPlace[]>;

/** Loads `{"<scene_name>": [{"id", "position": [x, y, z]}, …]}`, each scene's places in order. */
export async function loadLaEqaPlaces(path: string): Promise<LaEqaPlaces> {
  const value = parseJsonText(await readTextFile(path), path);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UserError(`expected a JSON object of scene names to place lists, found ${describeJsonType(value)}`, { file: path }, 'write {"<scene_name>": [{"id": 54, "position": [x, y, z]}, …]}');
  }
  const places: LaEqaPlaces = new Map();
  for (const [scene, list] of Object.entries(value)) {
    if (!Array.isArray(list)) throw new UserError(`expected a list of places, found ${describeJsonType(list)}`, { file: path, id: scene });
    const parsed = list.map((raw: unknown, index): LaEqaPlace => {
      const result = placeRecord.safeParse(raw);
      if (!result.success) {
        const { message, field } = describeZodError(result.error, raw);
        throw new UserError(message, { file: path, id: scene, field: `${index}${field ? `.${field}` : ""}` });
      }
      return result.data;
    });
    const ids = new Set<number>();
    parsed.forEach((place, index) => {
      if (ids.has(place.id)) throw new UserError(`place ${place.id} is listed twice`, { file: path, id: scene, field: `${index}.id` });
      ids.add(place.id);
    });
    places.set(scene, parsed);
  }
  return places;
}

/** The questions whose scene the places file lacks, as a message lists them (empty when none). */
export function scenesWithoutPlaces(questions: readonly LaEqaQuestion[], places: LaEqaPlaces): string {
  return firstItems([...new Set(questions.filter((q) => q.bestPath.length > 0 && !places.has(q.sceneName)).map((q) => q.sceneName))]);
}

/** What `eqa score --benchmark` names an LA-EQA file by: `la-eqa` is the one `eqa data fetch la-eqa` wrote. */
export const LA_EQA_BENCHMARK_NAME = "la-eqa";

/** Whether `--benchmark` names LA-EQA's questions: `la-eqa` (no such file here), or a file whose records are LA-EQA's. */
export async function isLaEqaBenchmark(benchmark: string | undefined): Promise<boolean> {
  if (benchmark === undefined) return false;
  if (benchmark === LA_EQA_BENCHMARK_NAME && !existsSync(benchmark)) return true;
  if (!existsSync(benchmark)) return false;
  try {
    return isLaEqaQuestionFile(parseJsonText(await readTextFile(benchmark), benchmark));
  } catch {
    // a file that cannot be read is named by the OpenEQA loader, as before LA-EQA was known
    return false;
  }
}

/** LA-EQA's questions as `eqa score --benchmark` and `--subset` select them (the subset a JSON list of ids, in its order). */
export async function loadLaEqaSelection(options: { benchmark: string; subset?: string; defaultBenchmark: string }): Promise<{ benchmark: LaEqaBenchmark; questions: LaEqaQuestion[] }> {
  const named = options.benchmark === LA_EQA_BENCHMARK_NAME && !existsSync(options.benchmark);
  if (named && !existsSync(options.defaultBenchmark)) {
    throw new UserError("LA-EQA's questions have not been downloaded", { file: options.defaultBenchmark }, "run `eqa data fetch la-eqa`, or pass --benchmark FILE");
  }
  const benchmark = await loadLaEqaBenchmark(named ? options.defaultBenchmark : options.benchmark);
  if (!options.subset) return { benchmark, questions: benchmark.questions };
  const ids = await loadQuestionSubset(options.subset);
  const unknown = ids.filter((id) => !benchmark.byId.has(id));
  if (unknown.length > 0) throw new UserError(`${unknown.length} question id(s) of the subset are not in ${benchmark.path}: ${firstItems(unknown)}`, { file: options.subset });
  return { benchmark, questions: ids.map((id) => benchmark.byId.get(id)!) };
}
