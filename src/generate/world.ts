import type { TrajectoryLog, TrajectoryObject, TrajectoryObjectState } from "../data/index.js";
import { groundingTransform as poseGroundingTransform, type Transform } from "../geometry/index.js";
import type { EventRef } from "./program.js";

export type Vec3 = [number, number, number];

/**
 * World → grounding frame of TAG-EQA: the agent's camera at the origin at its first
 * observation (step 0), looking along −z, y up (pitch left out so that y stays up).
 */
export function groundingTransform(log: TrajectoryLog): Transform {
  const first = log.steps[0]!.agent;
  return poseGroundingTransform(yawPose(first.position, first.yaw, log.cameraHeight));
}

/** The camera-to-world pose of an agent at `position` (feet) heading `yaw`. */
function yawPose(position: readonly number[], yaw: number, cameraHeight: number): Float64Array {
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  return Float64Array.from([c, 0, s, position[0]!, 0, 1, 0, position[1]! + cameraHeight, -s, 0, c, position[2]!, 0, 0, 0, 1]);
}

export function applyTransform(m: ArrayLike<number>, p: readonly number[]): Vec3 {
  const [x, y, z] = [p[0]!, p[1]!, p[2]!];
  return [m[0]! * x + m[1]! * y + m[2]! * z + m[3]!, m[4]! * x + m[5]! * y + m[6]! * z + m[7]!, m[8]! * x + m[9]! * y + m[10]! * z + m[11]!];
}

export function round2(v: number): number {
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? 0 : r;
}

export function roundVec(p: readonly number[]): Vec3 {
  return [round2(p[0]!), round2(p[1]!), round2(p[2]!)];
}

/**
 * What the agent saw, per object and step, when its frames tell (a simulator recording's
 * instance masks, `sightings.ts`): `true` where the object is seen. Objects absent from the
 * map were never seen; logs without sightings use the geometric test of `TrajectoryWorld`.
 */
export type ObjectSightings = ReadonlyMap<string, Uint8Array>;

const registeredSightings = new WeakMap<TrajectoryLog, ObjectSightings>();

/** Gives a log the sightings its frames tell; the world of the log uses them instead of geometry. */
export function registerSightings(log: TrajectoryLog, sightings: ObjectSightings): void {
  registeredSightings.set(log, sightings);
}

/** Half the field of view of the geometric test: 90° × 90° (AI2-THOR's square camera). */
export const SEEN_HALF_FOV_TAN = 1;
/** Farthest an object is seen, metres (the geometric test; the masks' depth alike). */
export const SEEN_RANGE = 6;

/** A located event: its step and object id. */
export interface LocatedEvent {
  step: number;
  object: string;
}

/**
 * A trajectory log indexed for programs: objects by type, events by (type, object type,
 * ordinal), positions in the grounding frame.
 */
export class TrajectoryWorld {
  readonly log: TrajectoryLog;
  readonly lastStep: number;
  private readonly byId = new Map<string, TrajectoryObject>();
  private readonly byType = new Map<string, TrajectoryObject[]>();
  private readonly events = new Map<string, LocatedEvent>();
  private readonly eventCounts = new Map<string, number>();
  private readonly toGrounding: Transform;
  private readonly tracks = new Map<string, Vec3[]>();
  private readonly seenTogether = new Map<string, Int32Array>();
  private readonly sightings: ObjectSightings | undefined;
  private readonly visibility = new Map<string, Uint8Array>();
  private readonly runStarts = new Map<string, Int32Array>();

  constructor(log: TrajectoryLog) {
    this.log = log;
    this.sightings = registeredSightings.get(log);
    this.lastStep = log.steps.length - 1;
    this.toGrounding = groundingTransform(log);
    for (const o of log.objects) {
      this.byId.set(o.id, o);
      const list = this.byType.get(o.type) ?? [];
      list.push(o);
      this.byType.set(o.type, list);
    }
    for (const event of log.events) {
      const type = this.byId.get(event.object)?.type;
      if (type === undefined) continue;
      const countKey = `${event.type}\u0000${type}`;
      const ordinal = (this.eventCounts.get(countKey) ?? 0) + 1;
      this.eventCounts.set(countKey, ordinal);
      this.events.set(`${countKey}\u0000${ordinal}`, { step: event.step, object: event.object });
    }
  }

  object(id: string): TrajectoryObject | undefined {
    return this.byId.get(id);
  }

  ofType(type: string): readonly TrajectoryObject[] {
    return this.byType.get(type) ?? [];
  }

  types(): string[] {
    return [...this.byType.keys()].sort();
  }

  objectsOfKind(kind: TrajectoryObject["kind"]): TrajectoryObject[] {
    return this.log.objects.filter((o) => o.kind === kind);
  }

  /** The object's state at a step; undefined when the log does not say. */
  state(id: string, step: number): TrajectoryObjectState | undefined {
    return this.log.steps[step]?.objects[id];
  }

  /** The object's world position at a step; null when unknown. */
  position(id: string, step: number): Vec3 | null {
    const p = this.state(id, step)?.position;
    return p ? [p[0], p[1], p[2]] : null;
  }

  grounded(p: readonly number[]): Vec3 {
    return roundVec(applyTransform(this.toGrounding, p));
  }

  /** The object's position in the grounding frame at a step, else at its last known step at or before it, else any. */
  groundedPositionNear(id: string, step: number): Vec3 | null {
    for (let t = Math.min(step, this.lastStep); t >= 0; t--) {
      const p = this.position(id, t);
      if (p) return this.grounded(p);
    }
    for (let t = step + 1; t <= this.lastStep; t++) {
      const p = this.position(id, t);
      if (p) return this.grounded(p);
    }
    return null;
  }

  event(ref: EventRef): LocatedEvent | undefined {
    return this.events.get(`${ref.type}\u0000${ref.objectType}\u0000${ref.ordinal}`);
  }

  /** How many events of a type happened to objects of a type. */
  eventCount(type: string, objectType: string): number {
    return this.eventCounts.get(`${type}\u0000${objectType}`) ?? 0;
  }

  /** Every event with its ordinal, in step order. */
  eventRefs(): { ref: EventRef; event: LocatedEvent }[] {
    const out: { ref: EventRef; event: LocatedEvent }[] = [];
    for (const [key, event] of this.events) {
      const [type, objectType, ordinal] = key.split("\u0000");
      out.push({ ref: { type: type as EventRef["type"], objectType: objectType!, ordinal: Number(ordinal) }, event });
    }
    return out.sort((a, b) => a.event.step - b.event.step);
  }

  /** A point in the camera frame of the agent at a step: x right, y up, depth along the view. */
  inView(p: readonly number[], step: number): { x: number; depth: number } {
    const agent = this.log.steps[step]!.agent;
    const dx = p[0]! - agent.position[0];
    const dz = p[2]! - agent.position[2];
    const c = Math.cos(agent.yaw);
    const s = Math.sin(agent.yaw);
    return { x: c * dx - s * dz, depth: -(s * dx + c * dz) };
  }

  /** The distinct grounded positions an object had over the trajectory. */
  groundedTrack(id: string): Vec3[] {
    let track = this.tracks.get(id);
    if (!track) {
      track = [];
      let last = "";
      for (let t = 0; t <= this.lastStep; t++) {
        const p = this.position(id, t);
        if (!p) continue;
        const g = this.grounded(p);
        const key = g.join(",");
        if (key !== last) track.push(g);
        last = key;
      }
      this.tracks.set(id, track);
    }
    return track;
  }

  /**
   * The latest step t' ≤ t at which the agent saw both objects, neither having moved between
   * t' and t (a view of an object that has moved since says nothing of where it is), or null.
   */
  lastSeenTogether(a: string, b: string, t: number): number | null {
    const key = `${a}\u0000${b}`;
    let last = this.seenTogether.get(key);
    if (!last) {
      last = new Int32Array(this.lastStep + 1);
      const va = this.visibleSteps(a);
      const vb = this.visibleSteps(b);
      let seen = -1;
      for (let s = 0; s <= this.lastStep; s++) {
        if (va[s] && vb[s]) seen = s;
        last[s] = seen;
      }
      this.seenTogether.set(key, last);
    }
    const at = Math.min(t, this.lastStep);
    const step = last[at]!;
    return step < 0 || step < Math.max(this.runStart(a, at), this.runStart(b, at)) ? null : step;
  }

  /** Whether the agent saw the object at a step (its frames' masks, else the geometric test). */
  visibleAt(id: string, step: number): boolean {
    return this.visibleSteps(id)[step] === 1;
  }

  /**
   * The steps at which the agent saw the object as it was at step t: seen at t' ≤ t, and neither
   * moved nor put elsewhere between t' and t (an object in hand counts as unmoved while held).
   * Empty when the agent cannot know the object as it was then.
   */
  seenFor(id: string, t: number): number[] {
    const at = Math.min(t, this.lastStep);
    const visible = this.visibleSteps(id);
    const out: number[] = [];
    for (let s = this.runStart(id, at); s <= at; s++) if (visible[s]) out.push(s);
    return out;
  }

  /** The first step of the run of steps ending at t over which the object stayed where it was at t. */
  private runStart(id: string, t: number): number {
    let starts = this.runStarts.get(id);
    if (!starts) {
      starts = new Int32Array(this.lastStep + 1);
      let last = "";
      for (let s = 0; s <= this.lastStep; s++) {
        const key = this.placementKey(id, s);
        starts[s] = s > 0 && key === last ? starts[s - 1]! : s;
        last = key;
      }
      this.runStarts.set(id, starts);
    }
    return starts[t]!;
  }

  private placementKey(id: string, step: number): string {
    const s = this.state(id, step);
    if (!s) return "absent";
    if (s.relation === "held") return "held";
    return `${s.relation}|${s.receptacle ?? ""}|${s.position ? roundVec(s.position).join(",") : ""}`;
  }

  private visibleSteps(id: string): Uint8Array {
    let steps = this.visibility.get(id);
    if (!steps) {
      steps = new Uint8Array(this.lastStep + 1);
      const sighted = this.sightings?.get(id);
      for (let s = 0; s <= this.lastStep; s++) {
        // what the agent holds is known to it, in view or not
        if (this.state(id, s)?.relation === "held") steps[s] = 1;
        else if (this.sightings) steps[s] = sighted?.[s] ?? 0;
        else steps[s] = this.geometricallyVisible(id, s) ? 1 : 0;
      }
      this.visibility.set(id, steps);
    }
    return steps;
  }

  /**
   * The geometric test, for logs without frames (ALFRED) or masks: the object has a position at
   * that step (its pose then, never an earlier one); its centre is in front of the camera, within
   * the 90° × 90° field of view (yaw and pitch) and within SEEN_RANGE; it is not inside a
   * receptacle that can open and is not known to be open (a closed fridge, drawer, microwave);
   * and, when the log gives sizes, the segment from the camera to its centre crosses no
   * furniture's box other than the one it rests on or in. When the log gives the object's size,
   * the top of its box (1 cm below) may stand for its centre (a chair behind a counter).
   */
  private geometricallyVisible(id: string, step: number): boolean {
    const state = this.state(id, step);
    if (!state?.position) return false;
    if (state.relation === "inside" && state.receptacle !== null) {
      const holder = this.byId.get(state.receptacle);
      if (holder?.states.includes("open") && this.state(holder.id, step)?.states.open !== true) return false;
    }
    const size = this.byId.get(id)?.size;
    const points: Vec3[] = [[state.position[0], state.position[1], state.position[2]]];
    if (size) points.push([state.position[0], state.position[1] + size[1] / 2 - 0.01, state.position[2]]);
    return points.some((p) => this.pointInSight(p, id, state.receptacle, step));
  }

  private pointInSight(point: Vec3, id: string, receptacle: string | null, step: number): boolean {
    const agent = this.log.steps[step]!.agent;
    const camera: Vec3 = [agent.position[0], agent.position[1] + this.log.cameraHeight, agent.position[2]];
    const d = [point[0] - camera[0], point[1] - camera[1], point[2] - camera[2]] as const;
    const cy = Math.cos(agent.yaw);
    const sy = Math.sin(agent.yaw);
    const cp = Math.cos(agent.pitch);
    const sp = Math.sin(agent.pitch);
    const depth = -sy * cp * d[0] + sp * d[1] - cy * cp * d[2];
    const x = cy * d[0] - sy * d[2];
    const y = sy * sp * d[0] + cp * d[1] + cy * sp * d[2];
    if (depth <= 0.1 || Math.abs(x) > depth * SEEN_HALF_FOV_TAN || Math.abs(y) > depth * SEEN_HALF_FOV_TAN) return false;
    if (Math.hypot(d[0], d[1], d[2]) > SEEN_RANGE) return false;
    for (const other of this.log.objects) {
      if (other.kind !== "furniture" || !other.size || other.id === id || other.id === receptacle) continue;
      const p = this.state(other.id, step)?.position;
      if (p && segmentCrossesBox(camera, point, p, other.size)) return false;
    }
    return true;
  }
}

/** Whether the segment from `a` to `b` (its last 5 % left out) crosses the box of `size` centred at `centre`, shrunk by 2 cm. */
function segmentCrossesBox(a: readonly number[], b: readonly number[], centre: readonly number[], size: readonly number[]): boolean {
  let t0 = 0;
  let t1 = 0.95;
  for (let k = 0; k < 3; k++) {
    const half = size[k]! / 2 - 0.02;
    if (half <= 0) return false;
    const lo = centre[k]! - half;
    const hi = centre[k]! + half;
    const dir = b[k]! - a[k]!;
    if (Math.abs(dir) < 1e-12) {
      if (a[k]! < lo || a[k]! > hi) return false;
      continue;
    }
    let u0 = (lo - a[k]!) / dir;
    let u1 = (hi - a[k]!) / dir;
    if (u0 > u1) [u0, u1] = [u1, u0];
    t0 = Math.max(t0, u0);
    t1 = Math.min(t1, u1);
    if (t0 > t1) return false;
  }
  return true;
}
