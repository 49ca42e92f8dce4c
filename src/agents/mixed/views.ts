/**
 * Views of the world (`MixedWorldView`) over what an agent perceived: per past day its perceived
 * trajectory log (a snapshot at the day's end, or right after one of its events), and now the
 * scene graph of what it sees in the live environment. Each agent composes them its own way.
 */
import type { MixedMoment, MixedSnapshotObject, MixedWorldView, TrajectoryLog } from "../../data/index.js";
import type { SceneGraph } from "../memory/index.js";

/** The step of a day's log a moment names: its last step, or the step of the `index`-th event of that type on an object of that type. */
export function momentStep(log: TrajectoryLog, moment: Exclude<MixedMoment, { now: true }>): number | undefined {
  if (moment.at === "end") return log.steps.length - 1;
  const typeOf = new Map(log.objects.map((o) => [o.id, o.type]));
  const matching = log.events.filter((e) => e.type === moment.event && typeOf.get(e.object) === moment.object).sort((a, b) => a.step - b.step);
  return matching[(moment.index ?? 1) - 1]?.step;
}

/**
 * A log's objects, those the agent's own actions name first, the one it handled last (up to
 * `step`) before the others: where a memory holds two objects of one type (one object seen
 * twice, or seen before and after it was moved, or heated where it was seen and carried away as
 * another), what the agent handled itself, and most recently, is what it knows best.
 */
function byAttention(log: TrajectoryLog, step = Number.POSITIVE_INFINITY): TrajectoryLog["objects"] {
  const lastHandled = new Map<string, number>();
  for (const e of log.events) if (e.step <= step) lastHandled.set(e.object, Math.max(lastHandled.get(e.object) ?? -1, e.step));
  const handled = log.objects.filter((o) => lastHandled.has(o.id)).sort((a, b) => lastHandled.get(b.id)! - lastHandled.get(a.id)!);
  return [...handled, ...log.objects.filter((o) => !lastHandled.has(o.id))];
}

/** Two objects of one type on one receptacle closer than this are taken for one, metres. */
const SAME_OBJECT_M = 0.6;

/** The objects of a log at one step, each with the type of what it is on or inside. */
export function logSnapshot(log: TrajectoryLog, step: number): MixedSnapshotObject[] {
  const at = log.steps[Math.max(0, Math.min(step, log.steps.length - 1))];
  if (!at) return [];
  const typeOf = new Map(log.objects.map((o) => [o.id, o.type]));
  const kept: { type: string; receptacle: string | null; position: readonly number[] | null }[] = [];
  return byAttention(log, at.step).flatMap((o) => {
    const state = at.objects[o.id];
    if (!state) return [];
    const receptacle = state.relation === "on" || state.relation === "inside" ? (state.receptacle ? (typeOf.get(state.receptacle) ?? null) : null) : null;
    // one object seen and also handled is two in a memory: the same type on the same receptacle close by is one
    const p = state.position;
    if (kept.some((k) => k.type === o.type && k.receptacle === receptacle && k.position && p && Math.hypot(k.position[0]! - p[0], k.position[2]! - p[2]) < SAME_OBJECT_M)) return [];
    kept.push({ type: o.type, receptacle, position: p });
    const states: Record<string, boolean> = {};
    for (const [name, value] of Object.entries(state.states)) if (typeof value === "boolean") states[name] = value;
    return [{ id: o.id, type: o.type, receptacle, states }];
  });
}

/** Where an object of `type` stood at a step of a log (world metres), when the log places it. */
export function logPosition(log: TrajectoryLog, type: string, step: number): [number, number, number] | undefined {
  const at = log.steps[Math.max(0, Math.min(step, log.steps.length - 1))];
  for (const o of byAttention(log, at?.step)) {
    if (o.type !== type) continue;
    const p = at?.objects[o.id]?.position;
    if (p) return [p[0], p[1], p[2]];
  }
  return undefined;
}

/** The objects of a scene graph (what is seen now), each with the type of what the graph says it is on or inside. */
export function graphSnapshot(graph: SceneGraph): MixedSnapshotObject[] {
  const placed = graph.instances.filter((i) => i.center !== undefined);
  const labelOf = new Map(placed.map((i) => [i.id, i.label]));
  const placement = new Map<number, { relation: string; label: string }>();
  for (const r of graph.relations) {
    if (r.relation !== "on" && r.relation !== "inside") continue;
    const label = labelOf.get(r.object);
    if (label === undefined || placement.get(r.subject)?.relation === "inside") continue;
    placement.set(r.subject, { relation: r.relation, label });
  }
  return placed.map((i) => ({ id: `${i.label.replace(/\s+/g, "_")}-m${i.id}`, type: i.label, receptacle: placement.get(i.id)?.label ?? null, states: {} }));
}

/** Where the scene graph has an object of `type` (its centre), when it has one. */
export function graphPosition(graph: SceneGraph, type: string): [number, number, number] | undefined {
  return graph.instances.find((i) => i.label === type && i.center !== undefined)?.center;
}

/** A view over the days' perceived logs; `now` answers the present (undefined: unknown). */
export function historyView(days: ReadonlyMap<number, TrajectoryLog>, now: () => readonly MixedSnapshotObject[] | undefined): MixedWorldView {
  return {
    snapshot(moment) {
      if ("now" in moment) return now();
      const log = days.get(moment.day);
      if (!log) return undefined;
      const step = momentStep(log, moment);
      return step === undefined ? undefined : logSnapshot(log, step);
    },
  };
}

/** A view that knows only the present, and takes every moment for it (an agent without a past assumes nothing changed). */
export function presentOnlyView(now: readonly MixedSnapshotObject[]): MixedWorldView {
  return { snapshot: () => now };
}

/**
 * The present as a recalling agent knows it after looking: what it saw now, and for the objects
 * of types it did not see now, where it last remembered them (unless it saw that place now).
 */
export function seenOverRemembered(seen: readonly MixedSnapshotObject[], remembered: readonly MixedSnapshotObject[]): MixedSnapshotObject[] {
  const seenTypes = new Set(seen.map((o) => o.type));
  return [...seen, ...remembered.filter((o) => !seenTypes.has(o.type) && (o.receptacle === null || !seenTypes.has(o.receptacle)))];
}
