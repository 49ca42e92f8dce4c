import { z } from "zod";
import { OPENEQA_CATEGORIES, UserError, sha256Hex } from "../core/index.js";
import { writeFileAtomically } from "../core/index.js";
import { readTextFile } from "./json.js";
import { describeZodError } from "./validate.js";

/**
 * A reward-model instance (EQA-RM, seed 004 §4.1): an agent's whole response to an EQA
 * question (predicted answer a and reasoning trace z^o, one step per `<think>` block), the
 * episode it saw (v^o: N keyframes of an OpenEQA episode history or a video), and, when
 * known, the ground-truth answer and the ground-truth score s^gt (0-10).
 *
 * The file format is JSONL, one instance a line, with these snake_case fields:
 *
 * | field | type | meaning |
 * |---|---|---|
 * | `id` | string, required, unique | the instance's id |
 * | `question_id` | string | the OpenEQA question it answers |
 * | `question` | string, required | q |
 * | `predicted_answer` | string, required | a |
 * | `reasoning_trace` | string[], required | z^o, one step a `<think>` block |
 * | `episode_history` | string, required | OpenEQA's id (`scannet-v0/…`), resolved under `--frames` |
 * | `frames` | string | the episode's folder or video, relative to the instance file (overrides `episode_history`) |
 * | `keyframes` | int[] | frame indices of the keyframes; default: N spread evenly (OpenEQA's `round(linspace)`) |
 * | `num_keyframes` | int ≥ 1 | N, 5 by default (as the paper) |
 * | `ground_truth_answer` | string | the benchmark's answer |
 * | `ground_truth_score` | int 0-10 or null | s^gt |
 * | `source` | `hm3d` or `scannet` (or another environment name) | the environment; default: from `episode_history` |
 * | `category` | one of OpenEQA's seven categories | the question's category |
 * | `critique` | string | the ground-truth scorer's critique c_r (for analysis only) |
 */
export interface RewardInstance {
  id: string;
  questionId?: string;
  question: string;
  predictedAnswer: string;
  reasoningTrace: string[];
  episodeHistory: string;
  frames?: string;
  keyframes?: number[];
  numKeyframes: number;
  groundTruthAnswer?: string;
  groundTruthScore: number | null;
  source: string;
  category?: string;
  critique?: string;
}

export const DEFAULT_KEYFRAMES = 5;

const instanceRecord = z.object({
  id: z.string().min(1, "must be a non-empty string"),
  question_id: z.string().min(1).optional(),
  question: z.string().min(1, "must be a non-empty string"),
  predicted_answer: z.string(),
  reasoning_trace: z.array(z.string()),
  episode_history: z.string().min(1, "must be a non-empty string"),
  frames: z.string().min(1).optional(),
  keyframes: z.array(z.number().int().nonnegative()).min(1).optional(),
  num_keyframes: z.number().int().min(1).optional(),
  ground_truth_answer: z.string().optional(),
  ground_truth_score: z.number().int("must be a whole number from 0 to 10").min(0, "must be from 0 to 10").max(10, "must be from 0 to 10").nullable().optional(),
  source: z.string().min(1).optional(),
  category: z
    .string()
    .refine((c) => (OPENEQA_CATEGORIES as readonly string[]).includes(c), { message: `unknown category; expected one of: ${OPENEQA_CATEGORIES.join(", ")}` })
    .optional(),
  critique: z.string().optional(),
});

export type RewardInstanceRecord = z.infer<typeof instanceRecord>;

/** The environment of an episode history: `hm3d-v0/…` → `hm3d`, `scannet-v0/…` → `scannet`. */
export function environmentOf(episodeHistory: string): string {
  const head = episodeHistory.split("/")[0]!.toLowerCase();
  if (head.startsWith("hm3d")) return "hm3d";
  if (head.startsWith("scannet")) return "scannet";
  return head.replace(/-v\d+$/, "");
}

/** Display names of environments, as the paper's tables write them. */
export function environmentLabel(source: string): string {
  if (source === "hm3d") return "HM3D";
  if (source === "scannet") return "ScanNet";
  return source;
}

export interface RewardInstanceFile {
  path: string;
  sha256: string;
  instances: RewardInstance[];
}

/** Parses and validates one instance (a line's JSON value); throws a UserError naming file, line and field. */
export function parseRewardInstance(raw: unknown, file: string, line: number): RewardInstance {
  const result = instanceRecord.safeParse(raw);
  const id = typeof raw === "object" && raw !== null && typeof (raw as { id?: unknown }).id === "string" ? (raw as { id: string }).id : undefined;
  if (!result.success) {
    const { message, field } = describeZodError(result.error, raw);
    throw new UserError(message, { file, line, ...(id !== undefined ? { id } : {}), ...(field ? { field } : {}) }, "see the instance format in docs/reward-models.md");
  }
  return fromRecord(result.data);
}

function fromRecord(r: RewardInstanceRecord): RewardInstance {
  return {
    id: r.id,
    ...(r.question_id !== undefined ? { questionId: r.question_id } : {}),
    question: r.question,
    predictedAnswer: r.predicted_answer,
    reasoningTrace: r.reasoning_trace,
    episodeHistory: r.episode_history,
    ...(r.frames !== undefined ? { frames: r.frames } : {}),
    ...(r.keyframes !== undefined ? { keyframes: r.keyframes } : {}),
    numKeyframes: r.keyframes?.length ?? r.num_keyframes ?? DEFAULT_KEYFRAMES,
    ...(r.ground_truth_answer !== undefined ? { groundTruthAnswer: r.ground_truth_answer } : {}),
    groundTruthScore: r.ground_truth_score ?? null,
    source: r.source ?? environmentOf(r.episode_history),
    ...(r.category !== undefined ? { category: r.category } : {}),
    ...(r.critique !== undefined ? { critique: r.critique } : {}),
  };
}

/** An instance as its JSONL line spells it. */
export function toRewardInstanceRecord(instance: RewardInstance): RewardInstanceRecord {
  return {
    id: instance.id,
    ...(instance.questionId !== undefined ? { question_id: instance.questionId } : {}),
    question: instance.question,
    predicted_answer: instance.predictedAnswer,
    reasoning_trace: instance.reasoningTrace,
    episode_history: instance.episodeHistory,
    ...(instance.frames !== undefined ? { frames: instance.frames } : {}),
    ...(instance.keyframes !== undefined ? { keyframes: instance.keyframes } : { num_keyframes: instance.numKeyframes }),
    ...(instance.groundTruthAnswer !== undefined ? { ground_truth_answer: instance.groundTruthAnswer } : {}),
    ground_truth_score: instance.groundTruthScore,
    source: instance.source,
    ...(instance.category !== undefined ? { category: instance.category } : {}),
    ...(instance.critique !== undefined ? { critique: instance.critique } : {}),
  };
}

/** Parses a JSONL text of instances: every line validated, ids unique. */
export function parseRewardInstances(text: string, file: string): RewardInstance[] {
  const instances: RewardInstance[] = [];
  const seen = new Set<string>();
  const lines = text.split("\n");
  lines.forEach((lineText, i) => {
    if (lineText.trim() === "") return;
    let raw: unknown;
    try {
      raw = JSON.parse(lineText);
    } catch {
      throw new UserError("malformed JSON", { file, line: i + 1 }, "each line of an instance file must be one JSON object");
    }
    const instance = parseRewardInstance(raw, file, i + 1);
    if (seen.has(instance.id)) throw new UserError("duplicate instance id", { file, line: i + 1, id: instance.id, field: "id" });
    seen.add(instance.id);
    instances.push(instance);
  });
  if (instances.length === 0) throw new UserError("no instances in the file", { file }, "an instance file holds one JSON object a line");
  return instances;
}

/** Loads and validates a JSONL file of reward-model instances. */
export async function loadRewardInstances(path: string): Promise<RewardInstanceFile> {
  const text = await readTextFile(path);
  return { path, sha256: sha256Hex(text), instances: parseRewardInstances(text, path) };
}

/** Writes instances as JSONL (atomically). */
export async function writeRewardInstances(path: string, instances: readonly RewardInstance[]): Promise<void> {
  await writeFileAtomically(path, instances.map((i) => `${JSON.stringify(toRewardInstanceRecord(i))}\n`).join(""));
}
