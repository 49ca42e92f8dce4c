/**
 * Mixed EQA sets (`eqakit-mixed/1`, TAG-EQA's "Mixed EQA"): active episodes with a history. The
 * agent remembers one or more past recordings of a home ("days") and is placed in the home as it
 * is now, which differs from the end of the last day (things happened while it was away); it may
 * read its history, move and look, then answer.
 *
 * A set is a folder; `episodes.json` is what `eqa explore --episodes` reads, every path in it
 * relative to that file:
 *
 * ```json
 * {
 *   "format": "eqakit-mixed/1",
 *   "homes": [{
 *     "scene": "home-3",
 *     "days": [{ "day": 1, "when": "two days ago, morning",
 *                "recording": "homes/home-3/day-1",          // frames/, trajectory.json, home.json
 *                "end_state": "homes/home-3/day-1/end.json" }],  // the world when the day ended
 *     "changes": "homes/home-3/changes.json",                  // what happened while away
 *     "present": "homes/home-3/present.json"                   // the world now (eqakit-sim-home/1)
 *   }],
 *   "episodes": [{
 *     "question_id": "home-3-present-q02", "scene": "home-3",
 *     "question": "What is on the dining table now?",
 *     "answer": "a mug", "alternatives": ["a mug", "mug"],
 *     "answer_value": "mug",                                   // canonical value, scored exactly
 *     "category": "present", "history_answers": false,
 *     "evidence": { "frames": [{ "day": 1, "frame": 120 }], "objects": ["mug-41"] },
 *     "start": { "position": [1, 0, 2], "yaw": 0 },
 *     "gt_path_length": 4.2,                                   // metres to a view of the answer; 0 when the history answers
 *     "split": "test"
 *   }]
 * }
 * ```
 *
 * `answer_value` is the answer in its canonical form: an object type ("dining table"), "yes" or
 * "no", a state ("open"), a number ("2"), or object types joined by ", " in alphabetical order; a
 * structured answer equal to it after `canonicalMixedValue` is right. `alternatives` are every
 * natural-language answer that is also right (LA-EQA's " OR " alternatives).
 */
import { z } from "zod";
import { UserError } from "../core/index.js";
import { readJsonFile } from "./json.js";
import { mixedProgramSchema } from "./mixed-program.js";
import { requireRecords, validateRecords } from "./validate.js";

export const MIXED_FORMAT = "eqakit-mixed/1";
/** LA-EQA's categories (its `present`, `past`, `multi_past`, `past_present`; `past_present_future` is not generated). */
export const MIXED_CATEGORIES = ["past", "present", "multi_past", "past_present"] as const;
export type MixedCategory = (typeof MIXED_CATEGORIES)[number];

const vec3 = z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]);
const relativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith("/") && !p.split(/[\\/]/).includes(".."), "a path inside the set's folder");

export const mixedDaySchema = z.object({
  day: z.number().int().positive(),
  /** When it was, as a question says it ("two days ago, morning", "yesterday, evening"). */
  when: z.string().min(1),
  /** The day's recording: `frames/`, `trajectory.json` (eqakit-trajectory/1), `home.json`. */
  recording: relativePath,
  /** The world as the day ended (eqakit-sim-home/1). */
  end_state: relativePath,
});

export const mixedHomeSchema = z.object({
  scene: z.string().min(1),
  days: z.array(mixedDaySchema).min(1),
  /** The changes made while the agent was away (a JSON list, each with its kind and objects). */
  changes: relativePath,
  /** The world now (eqakit-sim-home/1): the environment the agent is placed in. */
  present: relativePath,
  /** A prebuilt memory of the history, when one was built. */
  memory: relativePath.optional(),
});

export const mixedEpisodeSchema = z.object({
  question_id: z.string().min(1),
  scene: z.string().min(1),
  question: z.string().min(1),
  answer: z.string().min(1),
  alternatives: z.array(z.string().min(1)).min(1),
  answer_value: z.string(),
  category: z.enum(MIXED_CATEGORIES),
  /** Whether the history alone answers the question. */
  history_answers: z.boolean(),
  evidence: z.object({
    /** History frames that show the answer. */
    frames: z.array(z.object({ day: z.number().int().positive(), frame: z.number().int().nonnegative() })),
    /** Objects (their log ids) that answer it in the present home. */
    objects: z.array(z.string()),
  }),
  start: z.object({ position: vec3, yaw: z.number().finite(), pitch: z.number().finite().optional() }),
  /** Shortest path from the start to a view of what answers it, metres; 0 when the history answers. */
  gt_path_length: z.number().finite().nonnegative(),
  gt_path_steps: z.number().int().nonnegative().optional(),
  split: z.enum(["train", "validation", "test"]),
  /** The question as a program over what is known of the world at given moments (mixed-program.ts): what the program agents execute, and what the generator's answers come from. */
  program: mixedProgramSchema,
  /** Which template made it (kept for the set's statistics and the report). */
  template: z.string().optional(),
});

export const mixedSetSchema = z.object({
  format: z.literal(MIXED_FORMAT),
  homes: z.array(mixedHomeSchema).min(1),
  episodes: z.array(mixedEpisodeSchema),
});

export type MixedDay = z.infer<typeof mixedDaySchema>;
export type MixedHome = z.infer<typeof mixedHomeSchema>;
export type MixedEpisode = z.infer<typeof mixedEpisodeSchema>;
export type MixedSet = z.infer<typeof mixedSetSchema>;

/** Whether a parsed JSON value is a Mixed EQA set (rather than a plain active-episodes file). */
export function looksLikeMixedSet(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { format?: unknown }).format === MIXED_FORMAT;
}

/** The canonical form of an answer value: trimmed, lower case, inner spaces single, a list sorted. */
export function canonicalMixedValue(value: string): string {
  const clean = (s: string): string => s.trim().toLowerCase().replace(/\s+/g, " ").replace(/^(a|an|the) /, "");
  const parts = value.split(",").map(clean).filter((s) => s.length > 0);
  return parts.length > 1 ? parts.sort().join(", ") : (parts[0] ?? "");
}

/**
 * Reads a set's `episodes.json`: every record checked (a wrong one is a UserError naming the
 * file, the record and the field), every episode's scene one of the set's homes.
 */
export function parseMixedSet(value: unknown, file: string): MixedSet {
  if (!looksLikeMixedSet(value)) throw new UserError(`not a Mixed EQA set (expected "format": "${MIXED_FORMAT}")`, { file, field: "format" });
  const record = value as { homes?: unknown; episodes?: unknown };
  const homes = validateRecords(record.homes, mixedHomeSchema, file, "Mixed EQA homes");
  const episodes = requireRecords(validateRecords(record.episodes, mixedEpisodeSchema, file, "Mixed EQA episodes"), file, "Mixed EQA episodes", "a set holds at least one episode");
  const scenes = new Set(homes.map((h) => h.scene));
  for (const [index, episode] of episodes.entries()) {
    if (!scenes.has(episode.scene)) throw new UserError(`episode's scene ${episode.scene} is not one of the set's homes`, { file, index, id: episode.question_id, field: "scene" });
  }
  return mixedSetSchema.parse({ format: MIXED_FORMAT, homes, episodes });
}

export async function loadMixedSet(file: string): Promise<MixedSet> {
  return parseMixedSet(await readJsonFile(file), file);
}
