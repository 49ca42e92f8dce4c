/**
 * ALFRED expert trajectories (`traj_data.json`, askforalfred/alfred `json_2.1.0`) replayed
 * symbolically into trajectory logs (`eqakit-trajectory/1`), without a simulator.
 *
 * - The agent starts at `scene.init_action` and follows `plan.low_actions`: `MoveAhead` 0.25 m
 *   along its heading, `RotateLeft`/`RotateRight` 90°, `LookUp`/`LookDown` 15°. Step 0 is the
 *   start; step i+1 follows low action i.
 * - AI2-THOR is left-handed (y up, +z ahead at rotation 0, rotation grows clockwise seen from
 *   above, horizon grows looking down). eqakit's world is right-handed: a point (x, y, z) becomes
 *   (x, y − 0.9, −z) for the agent (THOR reports the centre of its 1.8 m capsule, 0.9 m above
 *   its feet; its camera is 0.675 m above that centre, so `cameraHeight` is 1.575) and (x, y, −z)
 *   for objects; yaw = −rotation, pitch = −horizon (radians).
 * - Objects: the movable ones from `scene.object_poses` (named like `Mug_291e6e8a`); every other
 *   object an action names, with the position written in its id (`Fridge|-02.10|+00.00|+01.07`;
 *   `Sink|…|SinkBasin` is a SinkBasin; `Apple|…|AppleSliced_2` a slice, which exists from the
 *   step it is first named and starts where its parent is). A pose and an action id are the same
 *   object when they share a type and lie within 5 cm; the log then names it by its ALFRED id.
 * - What ALFRED does not record comes from the AI2-THOR catalogue (`ai2thor-catalogue.json`):
 *   kind, `on`/`in`, the states a type can have and their defaults (lamps from
 *   `scene.object_toggles`), material, use, fixed colours. The rest is absent: the relation of
 *   movable objects no action touched is `unknown`, furniture's is `none`; `filled` is never known.
 *   A picked object starts on or inside the receptacle the plan's PickupObject names
 *   (`coordinateReceptacleObjectId`), added under an ALFRED-style id when no action names it.
 * - Events follow the interactions; `heat`, `cool` and `clean` follow the plan's HeatObject,
 *   CoolObject and CleanObject: the objects put into the microwave are heated when it is turned on,
 *   those put into the fridge cooled when it is closed, the object in the sink basin (the plan's
 *   `cleanObjectId`) cleaned when the faucet is turned on; `target` names the appliance.
 * - Contradictions skip the file (AlfredTrajectoryError names the file and step): a put of an
 *   object not in hand, a pickup while holding another, opening what is known to be open (or
 *   closing what is closed, toggling on what is on…), using a slice before its parent is sliced.
 * - A held object is 0.4 m ahead of the camera; a put object sits at its receptacle's position
 *   and moves with it (a box carried with things inside).
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { UserError } from "../core/index.js";
import { ai2thorCatalogue } from "./ai2thor-catalogue.js";
import { readJsonFile } from "./json.js";
import { describeZodError } from "./validate.js";
import { parseTrajectoryLog, TRAJECTORY_FORMAT, type ObjectRelation, type TrajectoryEvent, type TrajectoryEventType, type TrajectoryLog, type TrajectoryLogStep, type TrajectoryObject, type TrajectoryStateName } from "./trajectory-log.js";

/** THOR's agent position is the centre of its capsule, this far above its feet. */
export const ALFRED_AGENT_CENTRE_HEIGHT = 0.9;
/** The camera sits 0.675 m above the capsule's centre (AI2-THOR 2.1). */
export const ALFRED_CAMERA_HEIGHT = 1.575;
export const ALFRED_MOVE_STEP = 0.25;
const HELD_REACH = 0.4;
const SAME_OBJECT_DISTANCE = 0.05;

const xyz = z.object({ x: z.number(), y: z.number(), z: z.number() });
const apiActionSchema = z.object({
  action: z.string().min(1),
  objectId: z.string().min(1).optional(),
  receptacleObjectId: z.string().min(1).optional(),
  cleanObjectId: z.string().min(1).optional(),
});
const rawSchema = z.object({
  task_type: z.string().min(1),
  turk_annotations: z.object({ anns: z.array(z.object({ task_desc: z.string() })) }).optional(),
  scene: z.object({
    floor_plan: z.string().min(1),
    init_action: z.object({ x: z.number(), y: z.number(), z: z.number(), rotation: z.number(), horizon: z.number() }),
    object_poses: z.array(z.object({ objectName: z.string().min(1), position: xyz })),
    object_toggles: z.array(z.object({ objectType: z.string(), isOn: z.boolean() })).default([]),
  }),
  plan: z.object({
    high_pddl: z.array(
      z.object({
        high_idx: z.number().int(),
        discrete_action: z.object({ action: z.string() }),
        planner_action: z.object({ action: z.string(), coordinateReceptacleObjectId: z.tuple([z.string().min(1), z.array(z.number()).length(6)]).optional() }).optional(),
      }),
    ),
    low_actions: z.array(z.object({ high_idx: z.number().int(), api_action: apiActionSchema, discrete_action: z.object({ action: z.string() }).optional() })),
  }),
});
type RawTrajectory = z.infer<typeof rawSchema>;
type RawLowAction = RawTrajectory["plan"]["low_actions"][number];
type Vec3 = [number, number, number];

/** A contradiction or a malformed record inside an ALFRED file, at a log step when known. */
export class AlfredTrajectoryError extends UserError {
  readonly step: number | undefined;
  constructor(message: string, file: string, step?: number, field?: string) {
    super(step === undefined ? message : `step ${step}: ${message}`, { file, ...(field ? { field } : {}) });
    this.step = step;
  }
}

interface ThorPose {
  x: number;
  y: number;
  z: number;
  rotation: number;
  horizon: number;
}

interface LiveObject {
  position: Vec3 | null;
  relation: ObjectRelation;
  receptacle: string | null;
  states: Partial<Record<TrajectoryStateName, boolean>>;
  /** Put down during the trajectory: its position follows its receptacle's. */
  placed: boolean;
  present: boolean;
}

/** Replays one ALFRED trajectory; throws AlfredTrajectoryError naming the file and step. */
export function replayAlfredTrajectory(raw: unknown, file: string): TrajectoryLog {
  return new Replay(parseAlfredTrajectory(raw, file), file).run();
}

function parseAlfredTrajectory(raw: unknown, file: string): RawTrajectory {
  const parsed = rawSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const { message, field } = describeZodError(parsed.error, raw);
  throw new AlfredTrajectoryError(`not an ALFRED trajectory: ${message}`, file, undefined, field);
}

class Replay {
  private readonly objects: TrajectoryObject[] = [];
  private readonly live = new Map<string, LiveObject>();
  /** ALFRED id → the log's object id (the same string). */
  private readonly ids = new Map<string, string>();
  /** The log id of each entry of `scene.object_poses` not yet matched to an ALFRED id. */
  private readonly poseIds: (string | undefined)[] = [];
  private readonly steps: TrajectoryLogStep[] = [];
  private readonly events: TrajectoryEvent[] = [];
  private readonly eventCounts = new Map<string, number>();
  private readonly highActions = new Map<number, string>();
  private readonly putDuringHigh = new Map<number, string[]>();
  /** Per high-level PickupObject, the planner's receptacle: type and [x, x, z, z, y, y] in quarter metres. */
  private readonly pickupSources = new Map<number, [string, number[]]>();
  private pose: ThorPose;
  private held: string | null = null;

  constructor(
    private readonly raw: RawTrajectory,
    private readonly file: string,
  ) {
    const init = raw.scene.init_action;
    this.pose = { x: init.x, y: init.y, z: init.z, rotation: init.rotation, horizon: init.horizon };
    for (const high of raw.plan.high_pddl) {
      this.highActions.set(high.high_idx, high.discrete_action.action);
      const source = high.planner_action?.action === "PickupObject" ? high.planner_action.coordinateReceptacleObjectId : undefined;
      if (source) this.pickupSources.set(high.high_idx, source);
    }
  }

  run(): TrajectoryLog {
    this.addPoseObjects();
    this.raw.plan.low_actions.forEach((action, i) => this.registerIds(action, i + 1));
    this.placeFirstPickups();
    this.snapshot(null);
    this.raw.plan.low_actions.forEach((action, i) => {
      this.apply(action, i + 1);
      this.snapshot(action.discrete_action?.action ?? action.api_action.action);
    });
    const description = this.raw.turk_annotations?.anns[0]?.task_desc;
    return {
      format: TRAJECTORY_FORMAT,
      id: alfredLogId(this.file),
      source: "alfred",
      environment: this.raw.scene.floor_plan,
      task: { type: this.raw.task_type, description: description ?? "" },
      cameraHeight: ALFRED_CAMERA_HEIGHT,
      objects: this.objects,
      steps: this.steps,
      events: this.events,
    };
  }

  private fail(message: string, step: number): never {
    throw new AlfredTrajectoryError(message, this.file, step, `plan.low_actions.${step - 1}`);
  }

  /** Poses of one prefab name are distinct copies: `Name-1`, `Name-2`… when the name repeats. */
  private addPoseObjects(): void {
    const poses = this.raw.scene.object_poses;
    const total = new Map<string, number>();
    for (const pose of poses) total.set(pose.objectName, (total.get(pose.objectName) ?? 0) + 1);
    const seen = new Map<string, number>();
    for (const pose of poses) {
      const n = (seen.get(pose.objectName) ?? 0) + 1;
      seen.set(pose.objectName, n);
      const id = (total.get(pose.objectName) ?? 1) > 1 ? `${pose.objectName}-${n}` : pose.objectName;
      const type = pose.objectName.split("_")[0] ?? pose.objectName;
      this.addObject(id, type, thorPoint(pose.position.x, pose.position.y, pose.position.z), true);
      this.poseIds.push(id);
    }
  }

  private addObject(id: string, type: string, position: Vec3 | null, present: boolean): void {
    const entry = catalogueEntry(type);
    const kind = entry?.kind ?? "object";
    const properties: TrajectoryObject["properties"] = {};
    if (entry?.colour) properties.colour = entry.colour;
    if (entry?.material) properties.material = entry.material;
    if (entry?.use) properties.use = entry.use;
    this.objects.push({ id, type: entry?.type ?? type, kind, receptacle: entry?.receptacle ?? null, properties, states: [...(entry?.states ?? [])] });
    const states: LiveObject["states"] = { ...entry?.defaults };
    for (const toggle of this.raw.scene.object_toggles) {
      if (toggle.objectType.toLowerCase() === type.toLowerCase() && entry?.states.includes("toggled")) states.toggled = toggle.isOn;
    }
    this.live.set(id, { position, relation: kind === "furniture" ? "none" : "unknown", receptacle: null, states, placed: false, present });
  }

  /** Gives every id an action names a log object, matching ids to poses by type and position. */
  private registerIds(action: RawLowAction, step: number): void {
    const api = action.api_action;
    for (const alfredId of [api.objectId, api.receptacleObjectId, api.cleanObjectId]) {
      if (alfredId === undefined || this.ids.has(alfredId)) continue;
      const parsed = parseAlfredId(alfredId);
      if (!parsed) this.fail(`object id ${JSON.stringify(alfredId)} is not Type|x|y|z`, step);
      if (parsed.parent !== undefined) {
        this.registerIds({ high_idx: action.high_idx, api_action: { action: "", objectId: parsed.parent } }, step);
        this.addObject(alfredId, parsed.type, null, false);
        this.ids.set(alfredId, alfredId);
        continue;
      }
      const match = this.matchPose(parsed.type, parsed.position);
      if (match) this.renameObject(match, alfredId);
      else this.addObject(alfredId, parsed.type, parsed.position, true);
      this.ids.set(alfredId, alfredId);
    }
  }

  /**
   * The planner names the receptacle each picked object is taken from; for an object no earlier
   * action touched, that is where it was at the start.
   */
  private placeFirstPickups(): void {
    const touched = new Set<string>();
    for (const action of this.raw.plan.low_actions) {
      const alfredId = action.api_action.objectId;
      const id = alfredId === undefined ? undefined : this.ids.get(alfredId);
      if (id === undefined) continue;
      const source = this.pickupSources.get(action.high_idx);
      const state = this.state(id);
      if (action.api_action.action === "PickupObject" && source && !touched.has(id) && state.present && state.relation === "unknown") {
        const receptacle = this.receptacleAt(source[0], source[1]);
        const kind = this.objects.find((o) => o.id === receptacle)?.receptacle;
        Object.assign(state, { relation: kind === "in" ? "inside" : "on", receptacle });
      }
      touched.add(id);
    }
  }

  /** The object of `type` at planner coordinates, added under an ALFRED-style id if no action names it. */
  private receptacleAt(type: string, coordinates: number[]): string {
    const [x = 0, , z = 0, , y = 0] = coordinates.map((c) => c / 4);
    const position = thorPoint(x, y, z);
    for (const object of this.objects) {
      const state = this.live.get(object.id);
      if (object.type.toLowerCase() === type.toLowerCase() && state?.position && distance(state.position, position) <= SAME_OBJECT_DISTANCE) return object.id;
    }
    const id = `${type}|${thorNumber(x)}|${thorNumber(y)}|${thorNumber(z)}`;
    if (this.live.has(id)) return id;
    this.addObject(id, type, position, true);
    this.ids.set(id, id);
    return id;
  }

  /** The nearest unmatched pose of the same type within 5 cm; it takes the ALFRED id. */
  private matchPose(type: string, position: Vec3): string | undefined {
    let best = -1;
    let bestDistance = SAME_OBJECT_DISTANCE;
    this.raw.scene.object_poses.forEach((pose, i) => {
      if (this.poseIds[i] === undefined || (pose.objectName.split("_")[0] ?? "").toLowerCase() !== type.toLowerCase()) return;
      const d = distance(thorPoint(pose.position.x, pose.position.y, pose.position.z), position);
      if (d <= bestDistance) {
        best = i;
        bestDistance = d;
      }
    });
    if (best < 0) return undefined;
    const id = this.poseIds[best];
    this.poseIds[best] = undefined;
    return id;
  }

  private renameObject(from: string, to: string): void {
    const object = this.objects.find((o) => o.id === from);
    const state = this.live.get(from);
    if (!object || !state) return;
    object.id = to;
    this.live.delete(from);
    this.live.set(to, state);
  }

  private object(alfredId: string | undefined, what: string, step: number): string {
    if (alfredId === undefined) this.fail(`${what} names no object`, step);
    const id = this.ids.get(alfredId);
    if (id === undefined) this.fail(`unknown object ${alfredId}`, step);
    if (!this.state(id).present) this.fail(`${what} names ${id}, which does not exist yet (its parent was not sliced)`, step);
    return id;
  }

  private state(id: string): LiveObject {
    const state = this.live.get(id);
    if (!state) throw new Error(`no live state for ${id}`);
    return state;
  }

  private apply(action: RawLowAction, step: number): void {
    const api = action.api_action;
    switch (api.action) {
      case "MoveAhead": {
        const r = (this.pose.rotation * Math.PI) / 180;
        this.pose.x = round(this.pose.x + ALFRED_MOVE_STEP * Math.sin(r));
        this.pose.z = round(this.pose.z + ALFRED_MOVE_STEP * Math.cos(r));
        return;
      }
      case "RotateLeft":
        this.pose.rotation = (this.pose.rotation + 270) % 360;
        return;
      case "RotateRight":
        this.pose.rotation = (this.pose.rotation + 90) % 360;
        return;
      case "LookUp":
        this.pose.horizon -= 15;
        return;
      case "LookDown":
        this.pose.horizon += 15;
        return;
      case "PickupObject":
        return this.pickup(this.object(api.objectId, "PickupObject", step), step);
      case "PutObject":
        return this.put(this.object(api.objectId, "PutObject", step), this.object(api.receptacleObjectId, "PutObject's receptacle", step), action.high_idx, step);
      case "OpenObject":
      case "CloseObject":
        return this.openClose(this.object(api.objectId, api.action, step), api.action === "OpenObject", action.high_idx, step);
      case "ToggleObjectOn":
      case "ToggleObjectOff":
        return this.toggle(this.object(api.objectId, api.action, step), api.action === "ToggleObjectOn", api.cleanObjectId, action.high_idx, step);
      case "SliceObject": {
        const id = this.object(api.objectId, "SliceObject", step);
        this.state(id).states.sliced = true;
        this.event("slice", id, step);
        return;
      }
      default:
        this.fail(`unknown action ${api.action}`, step);
    }
  }

  private pickup(id: string, step: number): void {
    if (this.held !== null) this.fail(`picks up ${id} while holding ${this.held}`, step);
    const state = this.state(id);
    if (state.relation === "none") this.fail(`picks up ${id}, which is furniture`, step);
    this.event("pickup", id, step, { from: state.receptacle });
    Object.assign(state, { relation: "held", receptacle: null, placed: false });
    this.held = id;
  }

  private put(id: string, receptacle: string, highIdx: number, step: number): void {
    if (this.held !== id) this.fail(this.held === null ? `puts down ${id}, which was never picked up` : `puts down ${id} while holding ${this.held}`, step);
    const kind = this.objects.find((o) => o.id === receptacle)?.receptacle;
    Object.assign(this.state(id), { relation: kind === "in" ? "inside" : "on", receptacle, placed: true });
    this.held = null;
    this.event("put", id, step, { target: receptacle });
    this.putDuringHigh.set(highIdx, [...(this.putDuringHigh.get(highIdx) ?? []), id]);
  }

  private openClose(id: string, open: boolean, highIdx: number, step: number): void {
    const states = this.state(id).states;
    if (states.open === open) this.fail(`${open ? "opens" : "closes"} ${id}, which is already ${open ? "open" : "closed"}`, step);
    states.open = open;
    this.event(open ? "open" : "close", id, step);
    if (!open && this.highActions.get(highIdx) === "CoolObject") this.treat("cool", id, this.contentsPutDuring(highIdx, id), step);
  }

  private toggle(id: string, on: boolean, cleaned: string | undefined, highIdx: number, step: number): void {
    const states = this.state(id).states;
    if (states.toggled === on) this.fail(`turns ${id} ${on ? "on" : "off"}, which is already ${on ? "on" : "off"}`, step);
    states.toggled = on;
    this.event(on ? "toggle_on" : "toggle_off", id, step);
    if (!on) return;
    const high = this.highActions.get(highIdx);
    if (high === "HeatObject") this.treat("heat", id, this.contentsPutDuring(highIdx, id), step);
    if (high === "CleanObject") {
      // ALFRED names the whole object in `cleanObjectId` even when a slice of it lies in the basin
      const placed = (this.putDuringHigh.get(highIdx) ?? []).filter((s) => this.state(s).receptacle !== null);
      const subjects = placed.length > 0 || cleaned === undefined ? placed : [this.object(cleaned, "CleanObject", step)];
      const basin = subjects.map((s) => this.state(s).receptacle).find((r) => r !== null) ?? id;
      this.treat("clean", basin, subjects, step);
    }
  }

  /** The objects put into `receptacle` during one high-level action and still there. */
  private contentsPutDuring(highIdx: number, receptacle: string): string[] {
    return (this.putDuringHigh.get(highIdx) ?? []).filter((id) => this.state(id).receptacle === receptacle);
  }

  /** One heat, cool or clean per object per high-level action. */
  private treat(type: "heat" | "cool" | "clean", appliance: string, subjects: string[], step: number): void {
    for (const subject of subjects) {
      const already = this.events.some((e) => e.type === type && e.object === subject && this.highOfStep(e.step) === this.highOfStep(step));
      if (!already) this.event(type, subject, step, { target: appliance });
    }
  }

  private highOfStep(step: number): number | undefined {
    return this.raw.plan.low_actions[step - 1]?.high_idx;
  }

  private event(type: TrajectoryEventType, object: string, step: number, extra: { from?: string | null; target?: string | null } = {}): void {
    const key = `${type}\u0000${object}`;
    const index = (this.eventCounts.get(key) ?? 0) + 1;
    this.eventCounts.set(key, index);
    this.events.push({ step, type, object, ...extra, index });
    if (type === "slice") this.revealSlices(object);
  }

  /** Slices of `parent` exist from its slicing on, where the parent was. */
  private revealSlices(parent: string): void {
    for (const object of this.objects) {
      const parsed = parseAlfredId(object.id);
      if (!parsed?.parent || this.ids.get(parsed.parent) !== parent) continue;
      const slice = this.state(object.id);
      const origin = this.state(parent);
      Object.assign(slice, { present: true, position: this.positionOf(parent, 0), relation: origin.relation === "held" ? "unknown" : origin.relation, receptacle: origin.receptacle, placed: origin.placed });
    }
  }

  private positionOf(id: string, depth: number): Vec3 | null {
    const state = this.state(id);
    if (state.relation === "held") return this.heldPosition();
    if (state.placed && state.receptacle !== null && depth < 8) return this.positionOf(state.receptacle, depth + 1);
    return state.position;
  }

  private heldPosition(): Vec3 {
    const [x, y, z] = this.agentPosition();
    const yaw = this.yaw();
    return [round(x - HELD_REACH * Math.sin(yaw)), round(y + ALFRED_CAMERA_HEIGHT), round(z - HELD_REACH * Math.cos(yaw))];
  }

  private agentPosition(): Vec3 {
    return [round(this.pose.x), round(this.pose.y - ALFRED_AGENT_CENTRE_HEIGHT), round(-this.pose.z)];
  }

  private yaw(): number {
    const yaw = (-this.pose.rotation * Math.PI) / 180;
    return Math.atan2(Math.sin(yaw), Math.cos(yaw));
  }

  private snapshot(action: string | null): void {
    const objects: TrajectoryLogStep["objects"] = {};
    for (const [id, state] of this.live) {
      if (!state.present) continue;
      objects[id] = { position: this.positionOf(id, 0), relation: state.relation, receptacle: state.receptacle, states: { ...state.states } };
    }
    this.steps.push({
      step: this.steps.length,
      action,
      success: true,
      agent: { position: this.agentPosition(), yaw: this.yaw(), pitch: (-this.pose.horizon * Math.PI) / 180 },
      held: this.held,
      objects,
    });
  }
}

/** `Type|x|y|z` (position in THOR's frame) or `Parent|x|y|z|Part`: a basin or a slice. */
export function parseAlfredId(id: string): { type: string; position: Vec3; parent?: string } | undefined {
  const parts = id.split("|");
  if (parts.length < 4 || parts.length > 5) return undefined;
  const [type, xs, ys, zs, part] = parts as [string, string, string, string, string | undefined];
  const x = Number(xs);
  const y = Number(ys);
  const z = Number(zs);
  if (!type || ![x, y, z].every(Number.isFinite)) return undefined;
  const position = thorPoint(x, y, z);
  if (part === undefined) return { type, position };
  const partType = part.replace(/_\d+$/, "");
  // a basin is a fixed part of its sink; a slice appears only when its parent is sliced
  if (/Sliced$/.test(partType)) return { type: partType, position, parent: parts.slice(0, 4).join("|") };
  return { type: partType, position };
}

/** `<task folder>/<trial>` of a `…/<task folder>/<trial>/traj_data.json` path. */
export function alfredLogId(file: string): string {
  const trialDir = dirname(file);
  return `${basename(dirname(trialDir))}/${basename(trialDir)}`;
}

export interface AlfredLoadResult {
  logs: TrajectoryLog[];
  skipped: { file: string; step?: number; error: string }[];
}

/**
 * Replays and validates every `traj_data.json` under `dir` (recursively, in path order).
 * A file that does not parse or contradicts itself is reported with its path and step and skipped.
 */
export async function loadAlfredTrajectories(dir: string): Promise<AlfredLoadResult> {
  const result: AlfredLoadResult = { logs: [], skipped: [] };
  for (const file of await findAlfredFiles(dir)) {
    try {
      const log = replayAlfredTrajectory(await readJsonFile(file), file);
      result.logs.push(parseTrajectoryLog(log, file));
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      const step = error instanceof AlfredTrajectoryError ? error.step : undefined;
      result.skipped.push({ file, ...(step !== undefined ? { step } : {}), error: error.message });
    }
  }
  return result;
}

export async function findAlfredFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new UserError("folder not found", { file: dir });
    throw error;
  }
  return entries
    .filter((e) => e.isFile() && e.name === "traj_data.json")
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * Object types an ALFRED trajectory names (its object poses and its actions' object and
 * receptacle ids) that the AI2-THOR catalogue lacks: the catalogue's coverage of a data set.
 */
export function alfredTypesOutsideCatalogue(raw: unknown, file: string): Set<string> {
  const trajectory = parseAlfredTrajectory(raw, file);
  const catalogue = ai2thorCatalogue();
  const actionIds = trajectory.plan.low_actions.flatMap((a) => [a.api_action.objectId, a.api_action.receptacleObjectId]);
  const named = [
    ...trajectory.scene.object_poses.map((pose) => pose.objectName.split("_")[0]!),
    ...actionIds.flatMap((id) => {
      const type = id === undefined ? undefined : parseAlfredId(id)?.type;
      return type === undefined ? [] : [type];
    }),
  ];
  return new Set(named.filter((type) => !catalogue.has(type)));
}

function catalogueEntry(type: string) {
  const catalogue = ai2thorCatalogue();
  const exact = catalogue.get(type);
  if (exact) return exact;
  const lower = type.toLowerCase();
  for (const [name, entry] of catalogue) if (name.toLowerCase() === lower) return entry;
  return undefined;
}

function thorPoint(x: number, y: number, z: number): Vec3 {
  return [round(x), round(y), round(-z)];
}

/** AI2-THOR's id spelling of a coordinate: `+02.52`, `-00.14`. */
function thorNumber(v: number): string {
  return `${v < 0 ? "-" : "+"}${Math.abs(v).toFixed(2).padStart(5, "0")}`;
}

function distance(a: Vec3, b: Vec3): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

function round(v: number): number {
  const r = Math.round(v * 1e6) / 1e6;
  return r === 0 ? 0 : r;
}
