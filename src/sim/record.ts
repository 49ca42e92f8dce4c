/**
 * Recordings of the task-doer in the built-in simulator: `out/frames/` (an OpenEQA-style frame
 * folder with instance masks, one frame per step, read unchanged by every EM-EQA agent and
 * `eqa memory build`), `out/trajectory.json` (the ground truth, `eqakit-trajectory/1`: per step
 * the agent's pose, every object's pose, receptacle and states, and the events), and
 * `out/home.json` + `out/plan.png`. A recording is deterministic: one that was killed is simply
 * redone; the log is written last, atomically.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { UserError, seededRandom, randomInt, writeFileAtomically } from "../core/index.js";
import { parseTrajectoryLog, type TrajectoryEvent, type TrajectoryLog, type TrajectoryLogStep, type TrajectoryObject, type TrajectoryObjectState, type TrajectoryEventType } from "../data/index.js";
import { FrameFolderWriter } from "../episodes/index.js";
import { catalogueType } from "./catalogue.js";
import { generateHome, type Home, type SceneObject } from "./home.js";
import { HouseholdEnvironment, DEFAULT_CAMERA_HEIGHT } from "./household.js";
import { objectName } from "./manipulation.js";
import { writeHome } from "./plan.js";
import type { ActResult, Action, AgentState, SimEvent } from "./protocol.js";
import { TASK_TYPES, TaskDoer, feasibleTasks, planTask, type PlannedTask, type TaskSpec, type TaskType } from "./tasks.js";

export interface RecordOptions {
  seed: number;
  /** Tasks in order: a type, `"random"` (a feasible type chosen by the seed) or a full spec. */
  tasks: (TaskType | "random" | TaskSpec)[];
  out: string;
  width?: number;
  height?: number;
  hfovDeg?: number;
  /** Keep walking and looking around after the tasks until this many steps (default 0). */
  minSteps?: number;
  /** Chance of a failed action or detour at each occasion (default 0.15). */
  failureRate?: number;
  /** Stop after this many actions (default max(5000, 2 × minSteps)). */
  maxSteps?: number;
  /** The world to start from (default: the home of `seed` as generated), e.g. where an earlier recording left it; it is copied, never changed. */
  home?: Home;
  /** The agent's start state (default: the home's start); it must be navigable. */
  start?: AgentState;
  /** Seeds the choice of the tasks' objects and the doer's failures and detours (default `seed`), so that several recordings in one home differ. */
  taskSeed?: number;
  /** The log's id (default `home-<seed>-<task types>`). */
  id?: string;
}

export interface RecordedTask {
  type: TaskType;
  description: string;
  done: boolean;
  reason?: string;
}

export interface RecordSummary {
  seed: number;
  steps: number;
  events: number;
  frames: number;
  failedActions: number;
  tasks: RecordedTask[];
  trajectory: string;
  framesDir: string;
  /** The world as the recording ended (objects moved, states changed), and the agent's last state. */
  endHome: Home;
  endState: AgentState;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** The objects a log lists: furniture and small objects (not walls). */
function logged(home: Home): SceneObject[] {
  return home.objects.filter((o) => o.kind !== "structure");
}

function describeObject(o: SceneObject): TrajectoryObject {
  const spec = catalogueType(o.type);
  const properties: TrajectoryObject["properties"] = {};
  if (o.colourName !== undefined) properties.colour = o.colourName;
  if (o.material !== undefined) properties.material = o.material;
  if (o.use !== undefined) properties.use = o.use;
  return {
    id: objectName(o),
    type: o.type,
    kind: o.kind === "furniture" ? "furniture" : "object",
    receptacle: spec.receptacle,
    size: [round3(o.max[0] - o.min[0]), round3(o.max[1] - o.min[1]), round3(o.max[2] - o.min[2])],
    properties,
    states: [...spec.states],
  };
}

/** An object's state at a step; a held object is where the camera is. */
function objectState(o: SceneObject, names: Map<number, string>, camera: readonly number[]): TrajectoryObjectState {
  const receptacle = o.inside ?? o.on;
  const at = o.held ? camera : [(o.min[0] + o.max[0]) / 2, (o.min[1] + o.max[1]) / 2, (o.min[2] + o.max[2]) / 2];
  return {
    position: [round3(at[0] as number), round3(at[1] as number), round3(at[2] as number)],
    relation: o.held ? "held" : o.inside !== undefined ? "inside" : o.on !== undefined ? "on" : "none",
    receptacle: receptacle === undefined ? null : (names.get(receptacle) ?? null),
    states: { ...o.states },
  };
}

/** How a log writes an action: its type, then the object it names. */
function actionText(action: Action, names: Map<number, string>): string {
  if ("object" in action) return `${action.type} ${names.get(action.object) ?? action.object}`;
  if ("receptacle" in action) return `${action.type} ${names.get(action.receptacle) ?? action.receptacle}`;
  return action.type;
}

/** Resolves the task list against a home (throws a `UserError` for an impossible task). */
export function planTasks(home: Home, tasks: RecordOptions["tasks"], seed: number): PlannedTask[] {
  if (tasks.length === 0) throw new UserError("no task given");
  const random = seededRandom(seed ^ 0x7a5c);
  return tasks.map((task) => {
    let spec: TaskSpec;
    if (task === "random") {
      const feasible = feasibleTasks(home);
      if (feasible.length === 0) throw new UserError(`no task is possible in the home of seed ${seed}`);
      spec = { type: feasible[randomInt(random, feasible.length)] as TaskType };
    } else if (typeof task === "string") {
      if (!(TASK_TYPES as readonly string[]).includes(task)) throw new UserError(`unknown task "${task}"`, {}, `tasks: ${TASK_TYPES.join(", ")}, random`);
      spec = { type: task };
    } else spec = task;
    return planTask(home, spec, random);
  });
}

/** Records the task-doer doing `tasks` in the home of `seed` into `out`. */
export async function recordTask(options: RecordOptions): Promise<RecordSummary> {
  const home = options.home ?? generateHome(options.seed);
  const planned = planTasks(home, options.tasks, options.taskSeed ?? options.seed);
  const env = new HouseholdEnvironment(home, { width: options.width ?? 320, height: options.height ?? 240, hfovDeg: options.hfovDeg ?? 90, masks: true, ...(options.start ? { start: options.start } : {}) });
  const framesDir = join(options.out, "frames");
  await rm(framesDir, { recursive: true, force: true }); // a redone recording starts clean
  await writeHome(home, options.out);
  const writer = new FrameFolderWriter(framesDir);
  const objects = logged(env.home);
  const names = new Map(env.home.objects.map((o) => [o.id, objectName(o)] as const));
  const steps: TrajectoryLogStep[] = [];
  const events: TrajectoryEvent[] = [];
  const counts = new Map<string, number>();
  let failedActions = 0;

  const snapshot = async (action: Action | null, result: ActResult | null): Promise<void> => {
    const frame = await writer.write(env.observeNow());
    const state = env.current;
    const held = env.held;
    const perObject: Record<string, TrajectoryObjectState> = {};
    const camera = env.cameraPosition;
    for (const o of objects) perObject[names.get(o.id) as string] = objectState(o, names, camera);
    const step = steps.length;
    steps.push({
      step,
      action: action ? actionText(action, names) : null,
      success: result ? result.success : true,
      frame,
      agent: { position: [round3(state.position[0]), round3(state.position[1]), round3(state.position[2])], yaw: state.yaw, pitch: state.pitch },
      held: held === null ? null : (names.get(held) ?? null),
      objects: perObject,
    });
    for (const event of result?.events ?? []) events.push(logEvent(event, step, names, counts));
    if (result && !result.success) failedActions++;
  };

  await snapshot(null, null);
  const minSteps = options.minSteps ?? 0;
  const doer = new TaskDoer(env, {
    seed: options.taskSeed ?? options.seed,
    failureRate: options.failureRate ?? 0.15,
    maxSteps: options.maxSteps ?? Math.max(5000, 2 * minSteps),
    onStep: (action, result) => snapshot(action, result),
  });
  const done: RecordedTask[] = [];
  for (const task of planned) {
    const outcome = await doer.perform(task);
    done.push({ type: task.type, description: task.description, done: outcome.done, ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}) });
  }
  if (doer.steps < minSteps) await doer.wander(minSteps);

  const log: TrajectoryLog = {
    format: "eqakit-trajectory/1",
    id: options.id ?? `home-${options.seed}-${planned.map((t) => t.type).join("-")}`,
    source: "sim",
    environment: `home-${options.seed}`,
    task: { type: planned.map((t) => t.type).join(","), description: planned.map((t) => t.description).join("; then ") },
    cameraHeight: DEFAULT_CAMERA_HEIGHT,
    frames: "frames",
    objects: objects.map(describeObject),
    steps,
    events,
  };
  const trajectory = join(options.out, "trajectory.json");
  parseTrajectoryLog(log, trajectory);
  await writeFileAtomically(trajectory, `${JSON.stringify(log)}\n`);
  return { seed: options.seed, steps: steps.length, events: events.length, frames: writer.frames, failedActions, tasks: done, trajectory, framesDir, endHome: structuredClone(env.home), endState: env.current };
}

function logEvent(event: SimEvent, step: number, names: Map<number, string>, counts: Map<string, number>): TrajectoryEvent {
  const object = names.get(event.object) as string;
  const key = `${event.type}\u0000${object}`;
  const index = (counts.get(key) ?? 0) + 1;
  counts.set(key, index);
  const out: TrajectoryEvent = { step, type: event.type as TrajectoryEventType, object, index };
  if (event.from !== undefined) out.from = names.get(event.from) ?? null;
  if (event.target !== undefined) out.target = names.get(event.target) ?? null;
  return out;
}
