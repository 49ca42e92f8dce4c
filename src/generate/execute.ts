/**
 * The program executor: a program (program.ts) over a trajectory log → a structured answer
 * (Fig. 2), grouped by the objects its ambiguous conditions refer to.
 *
 * Time: a question without a moment condition asks about the last step (the present), or, for
 * `countTimes`, about the whole trajectory; moment conditions select a window of steps
 * (intersected when there are several), the event at step s having taken effect at step s:
 *   before E = [0, s−1], after E = [s, end], right before E = s−1, right after E = s,
 *   between E1 and E2 = [s1, s2−1].
 * An object matches when, at some step of the window, every condition holds at once; the query
 * reads its value (state, location) at the last such step. `countTimes` counts the events of
 * its type on matching objects whose step lies in the window, the conditions holding then.
 *
 * Viewpoint of position predicates (in front of, behind, left, right "from the agent's view"):
 * at a step t, the latest step t' ≤ t at which the agent saw both objects (`TrajectoryWorld.visibleAt`:
 * the recording's instance masks, else the geometric test of field of view, range and
 * occlusion) and neither moved between t' and t, with the objects' positions and the agent's
 * pose at t'. Left/right compare the bearings (x / depth) with a margin of 0.1;
 * in front of/behind compare the depths with a margin of 0.3 m for objects whose bearings
 * differ by less than 0.3. Pitch is left out.
 *
 * Answers: one group per combination of the objects the ambiguous conditions refer to (a
 * location or position condition whose type has several objects in the log, and no `at`),
 * ordered by their grounded x, then z; `predicate` "" when nothing is ambiguous. Each group
 * lists the matching objects (type, caption from colour and material, grounded position at the
 * step the query read) and a value: the types (`listObjects`), a count (`countObjects`,
 * `countTimes`, whose objects are those of the counted events), or per object a state word,
 * property value or location phrase (`getState`, `getProperty`, `getLocation`: a string for one
 * object, a list aligned with `objects` for several, null for none).
 *
 * What the log does not know (an absent property, an `unknown` relation, an absent state or
 * position) is neither true nor false: `executeProgramDetailed` reports `unknown` when the
 * answer depends on it, and `executeProgram` treats it as not matching.
 */
import type { AnswerGroup, StructuredAnswer, StructuredObject, TagCondition, TagProgram, TrajectoryLog, TrajectoryObject, TrajectoryStateName } from "../data/index.js";
import { ANY_OBJECT, GROUNDING_TOLERANCE, momentEvents, propertyOf, referenceType, type PropertyKey } from "./program.js";
import { caption } from "./phrases.js";
import { coordinates, relationPhrase, stateWord, words } from "./phrases.js";
import { TrajectoryWorld, type Vec3 } from "./world.js";

const FALSE = 0;
const UNKNOWN = 1;
const TRUE = 2;
type Truth = 0 | 1 | 2;

const SIDE_MARGIN = 0.1;
const DEPTH_MARGIN = 0.3;
const ALIGNED = 0.3;
const STACK_TOLERANCE = 0.05;

export interface ExecutionResult {
  answer: StructuredAnswer;
  /** True when the answer depends on something the log does not know. */
  unknown: boolean;
  /** Indices (in `program.filters`) of the conditions the answer is grouped by, in the order of each group's `conditions`. */
  grouped: number[];
  /** The log's ids of each group's objects (in the order of `objects`): what the answer is about, whatever the time. */
  ids: string[][];
  /**
   * Every object the answer names, with the step the question refers to it at: each group's
   * objects at the step their value was read (a counted event's object at the step before the
   * event, or the event's), and the objects its conditions refer to (the group's reference, or
   * the only object of a referenced type) at the end of the window.
   */
  referenced: ReferencedObject[];
}

/** An object a question refers to, and when: `steps` are alternatives (a counted event's object may be seen just before it or at it); `at` is the step whose position the answer gives. */
export interface ReferencedObject {
  id: string;
  steps: number[];
  at: number;
}

const worlds = new WeakMap<TrajectoryLog, TrajectoryWorld>();

/** The world of a log, indexed once per log object (logs are treated as immutable). */
export function worldOf(log: TrajectoryLog): TrajectoryWorld {
  let world = worlds.get(log);
  if (!world) {
    world = new TrajectoryWorld(log);
    worlds.set(log, world);
  }
  return world;
}

/** Drops a log's index and caches (a dataset holds hundreds of logs; each needs them only while its questions are made). */
export function forgetWorld(log: TrajectoryLog): void {
  worlds.delete(log);
}

/** Executes a program over any trajectory log (complete or partial). */
export function executeProgram(program: TagProgram, log: TrajectoryLog): StructuredAnswer {
  return executeProgramDetailed(program, log).answer;
}

/** `window` replaces the steps the moment conditions select (the effectiveness check asks about the whole trajectory). */
export function executeProgramDetailed(program: TagProgram, log: TrajectoryLog, window?: [number, number]): ExecutionResult {
  return new Execution(program, worldOf(log), window).run();
}

interface Filter {
  condition: TagCondition;
  /** The objects the condition may refer to (all of its type, or the grounded one). */
  references: TrajectoryObject[];
  ambiguous: boolean;
}

class Execution {
  private unknown = false;
  private readonly ids: string[][] = [];
  private readonly referenced = new Map<string, ReferencedObject>();
  private readonly filters: Filter[];
  private readonly window: [number, number] | null;

  constructor(
    private readonly program: TagProgram,
    private readonly world: TrajectoryWorld,
    window?: [number, number],
  ) {
    this.window = window ?? this.momentWindow();
    this.filters = program.filters.filter((c) => c.type !== "moment").map((c) => this.filterOf(c));
  }

  run(): ExecutionResult {
    const ambiguous = this.filters.filter((f) => f.ambiguous);
    const groups = cartesian(ambiguous.map((f) => f.references)).map((choice) => this.group(new Map(ambiguous.map((f, i) => [f, choice[i]!]))));
    return { answer: groups, unknown: this.unknown, grouped: ambiguous.map((f) => this.program.filters.indexOf(f.condition)), ids: this.ids, referenced: [...this.referenced.values()] };
  }

  private momentWindow(): [number, number] | null {
    return momentWindow(this.program.filters, this.world, this.program.query.type === "countTimes");
  }

  private filterOf(condition: TagCondition): Filter {
    const type = referenceType(condition);
    if (type === null) return { condition, references: [], ambiguous: false };
    let references = [...this.world.ofType(type)];
    if (condition.at) {
      const meant = this.nearest(references, condition.at);
      references = meant ? [meant] : [];
    }
    references.sort((a, b) => compareObjects(this.anchor(a), this.anchor(b)));
    return { condition, references, ambiguous: !condition.at && references.length > 1 };
  }

  /** Where an object is named: its grounded position at the end of the window. */
  private anchor(o: TrajectoryObject): Vec3 | null {
    return this.world.groundedPositionNear(o.id, this.window ? this.window[1] : this.world.lastStep);
  }

  private nearest(candidates: TrajectoryObject[], at: readonly number[]): TrajectoryObject | undefined {
    let best: TrajectoryObject | undefined;
    let bestDistance = GROUNDING_TOLERANCE;
    for (const o of candidates) {
      for (const p of this.world.groundedTrack(o.id)) {
        const d = Math.hypot(p[0] - at[0]!, p[1] - at[1]!, p[2] - at[2]!);
        if (d <= bestDistance) {
          bestDistance = d;
          best = o;
        }
      }
    }
    return best;
  }

  private targets(): TrajectoryObject[] {
    const t = this.program.target;
    return t === ANY_OBJECT ? this.world.objectsOfKind("object") : [...this.world.ofType(t)];
  }

  private refer(id: string, steps: number[], at = steps[steps.length - 1]!): void {
    const key = `${id}\u0000${steps.join(",")}`;
    if (!this.referenced.has(key)) this.referenced.set(key, { id, steps, at });
  }

  private group(choice: Map<Filter, TrajectoryObject>): AnswerGroup {
    const query = this.program.query;
    const end = this.window ? this.window[1] : this.world.lastStep;
    for (const f of this.filters) {
      const chosen = choice.get(f);
      if (chosen) this.refer(chosen.id, [end]);
      else if (f.references.length === 1) this.refer(f.references[0]!.id, [end]);
    }
    const labels = [...choice].map(([f, r]) => ({ filter: f, ref: r, at: this.anchor(r) }));
    const predicate = labels.map((l) => `${l.filter.condition.type}: ${relationPhrase(l.filter.condition, l.at)}`).join(", ");
    const conditions = labels.map((l) => ({ key: `${l.filter.condition.type}:${l.filter.condition.key}`, value: l.filter.condition.args.map(String).join(" as "), position: l.at }));
    const base = { predicate, ...(conditions.length > 0 ? { conditions } : {}) };
    if (query.type === "countTimes") return { ...base, ...this.countTimes(choice) };
    const matched: { object: TrajectoryObject; step: number }[] = [];
    for (const o of this.targets()) {
      const step = this.lastMatch(o, choice, this.window);
      if (step !== null) matched.push({ object: o, step });
    }
    for (const m of matched) this.refer(m.object.id, [m.step]);
    const entries = matched.map((m) => ({ ...m, described: this.describe(m.object, m.step) }));
    entries.sort((a, b) => compareDescribed(a.described, b.described));
    this.ids.push(entries.map((e) => e.object.id));
    const objects = entries.map((e) => e.described);
    switch (query.type) {
      case "listObjects":
        return { ...base, objects, value: objects.map((o) => o.type) };
      case "countObjects":
        return { ...base, objects, value: objects.length };
      default: {
        const values = entries.map((e) => this.queryValue(e.object, e.step));
        return { ...base, objects, value: values.length === 0 ? null : values.length === 1 ? values[0]! : values.map((v) => v ?? "unknown") };
      }
    }
  }

  private countTimes(choice: Map<Filter, TrajectoryObject>): { objects: StructuredObject[]; value: number } {
    const eventType = this.program.query.modifier;
    const targets = new Set(this.targets().map((o) => o.id));
    const counted = new Map<string, number>();
    let count = 0;
    if (this.window) {
      for (const event of this.world.log.events) {
        if (event.type !== eventType || !targets.has(event.object)) continue;
        if (event.step < this.window[0] || event.step > this.window[1]) continue;
        const truth = this.holdsAt(this.world.object(event.object)!, choice, event.step);
        if (truth === UNKNOWN) this.unknown = true;
        if (truth !== TRUE) continue;
        count++;
        counted.set(event.object, event.step);
        this.refer(event.object, event.step > 0 ? [event.step - 1, event.step] : [event.step]);
      }
    }
    const entries = [...counted].map(([id, step]) => ({ id, described: this.describe(this.world.object(id)!, step) }));
    entries.sort((a, b) => compareDescribed(a.described, b.described));
    this.ids.push(entries.map((e) => e.id));
    return { objects: entries.map((e) => e.described), value: count };
  }

  /** The last step of the window at which every condition holds for `o`, or null. */
  private lastMatch(o: TrajectoryObject, choice: Map<Filter, TrajectoryObject>, window: [number, number] | null): number | null {
    if (!window) return null;
    let sawUnknown = false;
    for (let t = window[1]; t >= window[0]; t--) {
      const truth = this.holdsAt(o, choice, t);
      if (truth === TRUE) return t;
      if (truth === UNKNOWN) sawUnknown = true;
    }
    if (sawUnknown) this.unknown = true;
    return null;
  }

  private holdsAt(o: TrajectoryObject, choice: Map<Filter, TrajectoryObject>, t: number): Truth {
    let result: Truth = TRUE;
    for (const filter of this.filters) {
      const chosen = choice.get(filter);
      const refs = chosen ? [chosen] : filter.references;
      const truth = this.conditionTruth(filter.condition, o, refs, t);
      if (truth < result) result = truth;
      if (result === FALSE) return FALSE;
    }
    return result;
  }

  private conditionTruth(c: TagCondition, o: TrajectoryObject, refs: readonly TrajectoryObject[], t: number): Truth {
    switch (c.type) {
      case "property": {
        const value = propertyOf(o, c.key as PropertyKey);
        if (value === undefined) return UNKNOWN;
        return value.toLowerCase() === String(c.args[0]).toLowerCase() ? TRUE : FALSE;
      }
      case "state": {
        const key = c.key as TrajectoryStateName;
        if (!o.states.includes(key)) return FALSE;
        const value = this.world.state(o.id, t)?.states[key];
        if (value === undefined) return UNKNOWN;
        return value === (String(c.args[0]) === "true") ? TRUE : FALSE;
      }
      default: {
        let best: Truth = FALSE;
        for (const r of refs) {
          if (r.id === o.id) continue;
          const truth = c.type === "location" ? this.locationTruth(c, o, r, t) : this.positionTruth(c.key, o, r, t);
          if (truth > best) best = truth;
          if (best === TRUE) break;
        }
        return best;
      }
    }
  }

  private locationTruth(c: TagCondition, o: TrajectoryObject, r: TrajectoryObject, t: number): Truth {
    switch (c.key) {
      case "on":
      case "inside":
        return this.restsIn(o.id, c.key, (id) => id === r.id, t);
      case "same_on":
      case "same_inside": {
        const relation = c.key === "same_on" ? "on" : "inside";
        const holder = this.world.state(o.id, t);
        if (!holder || holder.relation === "unknown") return UNKNOWN;
        if (holder.relation !== relation || holder.receptacle === null || this.world.object(holder.receptacle)?.type !== String(c.args[0])) return FALSE;
        return this.restsIn(r.id, relation, (id) => id === holder.receptacle, t);
      }
      case "above":
      case "under":
        return this.stacked(c.key, o, r, t);
      default:
        return FALSE;
    }
  }

  private restsIn(id: string, relation: "on" | "inside", receptacle: (id: string) => boolean, t: number): Truth {
    const s = this.world.state(id, t);
    if (!s || s.relation === "unknown") return UNKNOWN;
    return s.relation === relation && s.receptacle !== null && receptacle(s.receptacle) ? TRUE : FALSE;
  }

  /**
   * Footprints overlap in x–z, and: above, the bottom at or over the other's top; under, the
   * centre lower and the top below the other's top (a box under a table, whose box reaches the
   * floor), and not inside it.
   */
  private stacked(key: "above" | "under", o: TrajectoryObject, r: TrajectoryObject, t: number): Truth {
    const a = this.world.position(o.id, t);
    const b = this.world.position(r.id, t);
    if (!a || !b || !o.size || !r.size) return UNKNOWN;
    const overlap = Math.abs(a[0] - b[0]) < (o.size[0] + r.size[0]) / 2 && Math.abs(a[2] - b[2]) < (o.size[2] + r.size[2]) / 2;
    if (!overlap) return FALSE;
    const top = (p: Vec3, size: readonly number[]): number => p[1] + size[1]! / 2;
    if (key === "above") return a[1] - o.size[1] / 2 >= top(b, r.size) - STACK_TOLERANCE ? TRUE : FALSE;
    const s = this.world.state(o.id, t);
    if (s?.relation === "inside" && s.receptacle === r.id) return FALSE;
    return a[1] < b[1] && top(a, o.size) <= top(b, r.size) - STACK_TOLERANCE ? TRUE : FALSE;
  }

  private positionTruth(key: string, o: TrajectoryObject, r: TrajectoryObject, t: number): Truth {
    const keys = positionKeysAt(this.world, o.id, r.id, t);
    if (keys === null) return this.world.position(o.id, t) && this.world.position(r.id, t) ? FALSE : UNKNOWN;
    return keys.includes(key) ? TRUE : FALSE;
  }

  private describe(o: TrajectoryObject, step: number): StructuredObject {
    return { type: o.type, caption: caption(o.type, [propertyOf(o, "colour"), propertyOf(o, "material")]), position: this.world.groundedPositionNear(o.id, step) };
  }

  private queryValue(o: TrajectoryObject, step: number): string | null {
    const modifier = this.program.query.modifier;
    switch (this.program.query.type) {
      case "getState": {
        const value = this.world.state(o.id, step)?.states[modifier as TrajectoryStateName];
        if (value === undefined) {
          this.unknown = true;
          return null;
        }
        return stateWord(modifier as TrajectoryStateName, value);
      }
      case "getProperty": {
        const value = propertyOf(o, modifier as PropertyKey);
        if (value === undefined) this.unknown = true;
        return value ?? null;
      }
      default:
        return this.location(o, step);
    }
  }

  private location(o: TrajectoryObject, step: number): string | null {
    const s = this.world.state(o.id, step);
    if (!s || s.relation === "unknown") {
      this.unknown = true;
      return null;
    }
    if (s.relation === "held") return "in your hand";
    if (s.relation === "none" || s.receptacle === null) return `on the floor${coordinates(this.world.groundedPositionNear(o.id, step))}`;
    const receptacle = this.world.object(s.receptacle)!;
    return `${s.relation === "on" ? "on" : "inside"} the ${words(receptacle.type)}${coordinates(this.world.groundedPositionNear(receptacle.id, step))}`;
  }
}

/**
 * The steps a program's moment conditions select; without any, the last step, or the whole
 * trajectory for `countTimes` (`wholeByDefault`). Null when empty.
 */
export function momentWindow(filters: readonly TagCondition[], world: TrajectoryWorld, wholeByDefault = false): [number, number] | null {
  const moments = filters.filter((c) => c.type === "moment");
  let window: [number, number] = moments.length > 0 || wholeByDefault ? [0, world.lastStep] : [world.lastStep, world.lastStep];
  for (const condition of moments) {
    const steps = momentEvents(condition).map((ref) => world.event(ref)?.step);
    if (steps.some((s) => s === undefined)) return null;
    const [s1, s2] = steps as number[];
    const w: [number, number] =
      condition.key === "before" ? [0, s1! - 1]
      : condition.key === "after" ? [s1!, world.lastStep]
      : condition.key === "right_before" ? [s1! - 1, s1! - 1]
      : condition.key === "right_after" ? [s1!, s1!]
      : [s1!, (s2 ?? s1!) - 1];
    window = [Math.max(window[0], w[0]), Math.min(window[1], w[1])];
  }
  return window[0] <= window[1] ? window : null;
}

/** The position keys that hold between two objects from the agent's view at step t (see the viewpoint above). */
export function positionKeysAt(world: TrajectoryWorld, a: string, b: string, t: number): string[] | null {
  const view = world.lastSeenTogether(a, b, t);
  if (view === null) return null;
  const pa = world.inView(world.position(a, view)!, view);
  const pb = world.inView(world.position(b, view)!, view);
  const ua = pa.x / pa.depth;
  const ub = pb.x / pb.depth;
  const aligned = Math.abs(ua - ub) < ALIGNED;
  const keys: string[] = [];
  if (ua < ub - SIDE_MARGIN) keys.push("left_of");
  if (ua > ub + SIDE_MARGIN) keys.push("right_of");
  if (aligned && pa.depth < pb.depth - DEPTH_MARGIN) keys.push("in_front_of");
  if (aligned && pa.depth > pb.depth + DEPTH_MARGIN) keys.push("behind");
  return keys;
}

function cartesian<T>(lists: T[][]): T[][] {
  return lists.reduce<T[][]>((acc, list) => acc.flatMap((prefix) => list.map((item) => [...prefix, item])), [[]]);
}

function compareObjects(a: Vec3 | null, b: Vec3 | null): number {
  if (!a || !b) return a ? -1 : b ? 1 : 0;
  return a[0] - b[0] || a[2] - b[2] || a[1] - b[1];
}

function compareDescribed(a: StructuredObject, b: StructuredObject): number {
  return a.type.localeCompare(b.type) || compareObjects(a.position ?? null, b.position ?? null);
}
