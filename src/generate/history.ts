/**
 * What an agent answering TAG-EQA questions is given besides its frames: its own actions (the
 * action history), and its frames' poses in the grounding frame, the frame the questions'
 * coordinates are in (the camera at the first observation at the origin, looking along −z,
 * y up; `groundingTransform`).
 *
 * The action history lists what the agent did that a question's moments and counts refer to:
 * each event of the trajectory log (picked up, put, opened, closed, toggled on or off, sliced,
 * filled, emptied, broke, heated, cooled, cleaned), in step order, with the object's type and
 * where it was (in the grounding frame: where it was picked up from, where it was put, where an
 * opened or used object stands), numbered per action and object as the log numbers events ("the
 * second time you opened this fridge": index 2), and the object it came from or went to.
 */
import type { Pose } from "../core/index.js";
import type { TrajectoryEventType, TrajectoryLog } from "../data/index.js";
import { groundingTransform, type Vec3 } from "./world.js";
import { worldOf } from "./execute.js";

/** An object an action names: its type and where it was, in the grounding frame (null when unknown). */
export interface TagActionObject {
  type: string;
  position: Vec3 | null;
}

/** One action of the agent's history. */
export interface TagAction {
  /** The step at which it took effect, and that step's frame when the recording has frames. */
  step: number;
  frame: number | null;
  action: TrajectoryEventType;
  object: TagActionObject;
  /** The n-th time this action was done to this object, from 1. */
  index: number;
  /** Where a picked-up object was taken from (and how it was there: on or inside). */
  from?: TagActionObject & { relation?: "on" | "inside" };
  /** Where a put object went (and how: on or inside), or the appliance that heated, cooled or cleaned it. */
  target?: TagActionObject & { relation?: "on" | "inside" };
}

/** The agent's own actions in a trajectory log, in step order, positions in the grounding frame. */
export function actionHistory(log: TrajectoryLog): TagAction[] {
  const world = worldOf(log);
  const named = (id: string | null | undefined, step: number): TagActionObject | undefined => {
    const o = id ? world.object(id) : undefined;
    return o ? { type: o.type, position: world.groundedPositionNear(o.id, step) } : undefined;
  };
  return log.events.map((event) => {
    // a picked-up object is described where it was before it was taken
    const at = event.type === "pickup" ? Math.max(0, event.step - 1) : event.step;
    const object = named(event.object, at)!;
    const from = named(event.from, at);
    const target = named(event.target, event.step);
    const relation = event.type === "put" ? world.state(event.object, event.step)?.relation : undefined;
    const fromRelation = event.type === "pickup" && event.step > 0 ? world.state(event.object, event.step - 1)?.relation : undefined;
    const frame = log.steps[event.step]?.frame;
    return {
      step: event.step,
      frame: typeof frame === "number" ? frame : null,
      action: event.type,
      object,
      index: event.index,
      ...(from ? { from: { ...from, ...(fromRelation === "on" || fromRelation === "inside" ? { relation: fromRelation } : {}) } } : {}),
      ...(target ? { target: { ...target, ...(relation === "on" || relation === "inside" ? { relation } : {}) } } : {}),
    };
  });
}

/** A camera-to-world pose (4×4 row-major) of the log's world, in the log's grounding frame. */
export function groundingPose(log: TrajectoryLog, pose: Pose): number[] {
  const g = groundingTransform(log);
  const out: number[] = new Array(16).fill(0);
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) for (let k = 0; k < 4; k++) out[r * 4 + c]! += g[r * 4 + k]! * pose[k * 4 + c]!;
  return out.map((v) => Math.round(v * 1e6) / 1e6);
}

/**
 * What an agent answering a TAG-EQA question gets beside the question and its episode's frames
 * (whose poses are in the recording's world): the grounding frame the question's coordinates
 * are in, as the world→grounding transform and as each frame's camera-to-grounding pose, and
 * the agent's action history. Its reply is a structured answer (a JSON array of groups, as
 * `eqa score-tag` reads it) or text, which the structured judge's extraction reads.
 */
export interface TagAnswerContext {
  /** World → grounding frame, 4×4 row-major: the camera at the first observation at the origin, looking along −z, y up (pitch left out), metres. */
  toGrounding: number[];
  /** Each frame's camera-to-grounding pose (4×4 row-major, OpenGL camera axes), by frame index; null for a frame without a valid pose. */
  poses: (number[] | null)[];
  /** The agent's own actions (`actionHistory`). */
  actions: TagAction[];
}

/** The answering context of a trajectory's questions, from its log and its recording's frames (the intrinsics are in the frames). */
export async function tagAnswerContext(log: TrajectoryLog, episode: { frameCount: number; frame(index: number): Promise<{ pose?: Pose | null }> }): Promise<TagAnswerContext> {
  const poses: (number[] | null)[] = [];
  for (let index = 0; index < episode.frameCount; index++) {
    const pose = (await episode.frame(index)).pose;
    poses.push(pose ? groundingPose(log, pose) : null);
  }
  return { toGrounding: Array.from(groundingTransform(log)), poses, actions: actionHistory(log) };
}
