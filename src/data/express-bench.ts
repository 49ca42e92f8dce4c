/**
 * EXPRESS-Bench records (exploration-aware EQA, seed `003_…`): the loader for the benchmark's
 * JSON file (`express-bench.json`, an array of records).
 *
 * Each record holds an HM3D scene, a question and its answer, the start pose (position in
 * Habitat's y-up world frame, rotation as the quaternion `[w, x, y, z]` the reference passes to
 * `np.quaternion`), the goal pose from which the answer can be seen, the geodesic distance from
 * start to goal in metres (the `l_i` of the EXPRESS-Bench path metrics), and the action
 * trajectory that reaches the goal: an object keyed `step_0`, `step_1`, … whose entries give the
 * action taken and the pose after it. The trajectory is returned as an array in step order.
 *
 * Validation is strict at the edge (zod): a bad record fails with a UserError naming the file,
 * the record's index and the field. The step keys must be exactly `step_0 … step_{n-1}`.
 * `step_length` is kept as the file gives it and not required to equal the number of steps.
 */
import { z } from "zod";
import { UserError } from "../core/index.js";
import { readJsonFile } from "./json.js";
import { validateRecords } from "./validate.js";

export type ExpressVec3 = [number, number, number];
/** A quaternion `[w, x, y, z]`, as the reference builds it with `np.quaternion(w, x, y, z)`. */
export type ExpressQuaternion = [number, number, number, number];

/** One step of an EXPRESS-Bench trajectory: the action and the agent's pose after it. */
export interface ExpressBenchStep {
  index: number;
  action: string;
  position: ExpressVec3;
  rotation: ExpressQuaternion;
}

export interface ExpressBenchRecord {
  episodeId: number;
  trajectoryId: number;
  /** e.g. `hm3d/train/00006-HkseAnWCgqk`. */
  sceneId: string;
  /** The folder of the trajectory's recording, e.g. `0000-00006-HkseAnWCgqk`. */
  episodePath: string;
  /** Question type: state, knowledge, location, attribute, counting, existence, object. */
  type: string;
  question: string;
  answer: string;
  startPosition: ExpressVec3;
  startRotation: ExpressQuaternion;
  goalPosition: ExpressVec3;
  goalRotation: ExpressQuaternion;
  /** Geodesic distance from start to goal, in metres. */
  geodesicDistance: number;
  /** The file's `step_length` (number of steps of the trajectory). */
  stepLength: number;
  /** The trajectory in step order. */
  actions: ExpressBenchStep[];
}

const finite = z.number().refine(Number.isFinite, "expected a finite number");
const vec3 = z.tuple([finite, finite, finite]);
const quaternion = z.tuple([finite, finite, finite, finite]);
const stepSchema = z.object({ action: z.string().min(1), position: vec3, rotation: quaternion });

const recordSchema = z.object({
  episode_id: z.number().int(),
  trajectory_id: z.number().int(),
  scene_id: z.string().min(1),
  episode_path: z.string().min(1),
  type: z.string().min(1),
  question: z.string().min(1),
  answer: z.string(),
  start_position: vec3,
  start_rotation: quaternion,
  goal_position: vec3,
  goal_rotation: quaternion,
  geodesic_distance: z.number().nonnegative().refine(Number.isFinite, "expected a finite number"),
  step_length: z.number().int().nonnegative(),
  actions: z.record(z.string(), stepSchema),
});

type RawRecord = z.infer<typeof recordSchema>;

const STEP_KEY = /^step_(0|[1-9]\d*)$/;

/** Validates an already parsed EXPRESS-Bench file (`file` names it in errors). */
export function parseExpressBench(value: unknown, file: string): ExpressBenchRecord[] {
  const raw = validateRecords<RawRecord>(value, recordSchema, file, "EXPRESS-Bench records");
  return raw.map((record, index) => toRecord(record, index, file));
}

/** Fields only EXPRESS-Bench records have (an active-episodes file has none of them). */
const EXPRESS_BENCH_KEYS = ["episode_id", "trajectory_id", "scene_id", "episode_path", "start_rotation", "goal_rotation", "geodesic_distance", "actions"];

/**
 * Whether parsed JSON is meant as EXPRESS-Bench records: an array whose first record has any
 * field of the benchmark's own, so that a record missing another one is reported by name.
 */
export function looksLikeExpressBench(value: unknown): boolean {
  const first: unknown = Array.isArray(value) ? value[0] : undefined;
  return typeof first === "object" && first !== null && EXPRESS_BENCH_KEYS.some((key) => key in first);
}

/** Reads and validates an EXPRESS-Bench JSON file. */
export async function loadExpressBench(file: string): Promise<ExpressBenchRecord[]> {
  return parseExpressBench(await readJsonFile(file), file);
}

function toRecord(raw: RawRecord, index: number, file: string): ExpressBenchRecord {
  const steps: ExpressBenchStep[] = [];
  for (const [key, step] of Object.entries(raw.actions)) {
    const match = STEP_KEY.exec(key);
    if (!match) {
      throw new UserError(`unexpected step key "${key}", expected step_0, step_1, …`, { file, index, field: `actions.${key}` });
    }
    steps.push({ index: Number(match[1]), action: step.action, position: step.position, rotation: step.rotation });
  }
  steps.sort((a, b) => a.index - b.index);
  steps.forEach((step, i) => {
    if (step.index !== i) {
      throw new UserError(`steps are not numbered step_0 … step_${steps.length - 1}: step_${i} is missing`, { file, index, field: "actions" });
    }
  });
  return {
    episodeId: raw.episode_id,
    trajectoryId: raw.trajectory_id,
    sceneId: raw.scene_id,
    episodePath: raw.episode_path,
    type: raw.type,
    question: raw.question,
    answer: raw.answer,
    startPosition: raw.start_position,
    startRotation: raw.start_rotation,
    goalPosition: raw.goal_position,
    goalRotation: raw.goal_rotation,
    geodesicDistance: raw.geodesic_distance,
    stepLength: raw.step_length,
    actions: steps,
  };
}

/**
 * The length in metres of a record's recorded trajectory: the sum of straight-line distances
 * from the start position through each step's position (turns add nothing).
 */
export function expressTrajectoryLength(record: Pick<ExpressBenchRecord, "startPosition" | "actions">): number {
  let total = 0;
  let previous = record.startPosition;
  for (const step of record.actions) {
    total += Math.hypot(step.position[0] - previous[0], step.position[1] - previous[1], step.position[2] - previous[2]);
    previous = step.position;
  }
  return total;
}
