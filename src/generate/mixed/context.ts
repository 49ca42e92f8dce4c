/**
 * One home of a Mixed EQA set as the question templates read it: its recorded days (each with
 * what the agent saw, from the frames' instance masks), the present home, the changes, and the
 * views programs are executed over. The "seen" rules live here: an object counts for a moment of
 * a day only when the agent saw it as it was then (`TrajectoryWorld.seenFor`: not moved since),
 * a state only when seen since it last changed, a surface's contents only when the surface was
 * seen since they last changed and each thing on it was seen as it was.
 */
import type { MixedSnapshotObject, MixedWorldView, TrajectoryLog } from "../../data/index.js";
import type { AgentState, Home } from "../../sim/index.js";
import type { MixedChange } from "./changes.js";
import type { RecordedDay } from "./days.js";
import type { ViewPaths } from "./paths.js";
import { homeSnapshot, stepSnapshot } from "./views.js";

export interface HomeContext {
  seed: number;
  scene: string;
  days: RecordedDay[];
  present: Home;
  presentObjects: MixedSnapshotObject[];
  changes: MixedChange[];
  start: AgentState;
  truth: MixedWorldView;
  remembered: MixedWorldView;
  paths: ViewPaths;
}

/** A history frame: the day and the frame index of its recording. */
export interface EvidenceFrame {
  day: number;
  frame: number;
}

/** Whether `type` names one object among `objects`. */
export function uniqueType(objects: readonly MixedSnapshotObject[], type: string): boolean {
  let n = 0;
  for (const o of objects) if (o.type === type && ++n > 1) return false;
  return n === 1;
}

/** The log's snapshot at a step (cached per log). */
const snapshots = new WeakMap<TrajectoryLog, Map<number, MixedSnapshotObject[]>>();
export function snapshotAt(log: TrajectoryLog, step: number): MixedSnapshotObject[] {
  let byStep = snapshots.get(log);
  if (!byStep) snapshots.set(log, (byStep = new Map()));
  let snapshot = byStep.get(step);
  if (!snapshot) byStep.set(step, (snapshot = stepSnapshot(log, log.steps[step]!)));
  return snapshot;
}

export function presentSnapshot(home: Home): MixedSnapshotObject[] {
  return homeSnapshot(home);
}

/** Frames of a day's steps (the last `limit`). */
export function framesOf(day: RecordedDay, steps: readonly number[], limit = 3): EvidenceFrame[] {
  return steps.slice(-limit).flatMap((s) => {
    const frame = day.log.steps[s]?.frame;
    return typeof frame === "number" ? [{ day: day.day, frame }] : [];
  });
}

/** Steps at which the agent saw the object as it was at `step` (placement unchanged since). */
export function seenAsAt(day: RecordedDay, id: string, step: number): number[] {
  return day.world.seenFor(id, step);
}

/** Steps at which the agent saw the object since its states last changed before `step`. */
export function stateSeenAt(day: RecordedDay, id: string, step: number): number[] {
  const key = (s: number): string => JSON.stringify(day.log.steps[s]?.objects[id]?.states ?? null);
  const at = key(step);
  let from = step;
  while (from > 0 && key(from - 1) === at) from--;
  const out: number[] = [];
  for (let s = from; s <= step; s++) if (day.world.visibleAt(id, s)) out.push(s);
  return out;
}

/** Steps at which the agent saw the surface since its contents last changed before `step`, when each thing on it was seen as it was; else empty. */
export function contentsSeenAt(day: RecordedDay, receptacle: string, step: number): number[] {
  const on = (s: number): string =>
    Object.entries(day.log.steps[s]?.objects ?? {})
      .filter(([, state]) => state.receptacle === receptacle && state.relation !== "held")
      .map(([id]) => id)
      .sort()
      .join(",");
  const at = on(step);
  for (const id of at === "" ? [] : at.split(",")) if (seenAsAt(day, id, step).length === 0) return [];
  let from = step;
  while (from > 0 && on(from - 1) === at) from--;
  const out: number[] = [];
  for (let s = from; s <= step; s++) if (day.world.visibleAt(receptacle, s)) out.push(s);
  return out;
}

/** How an object rests at a day's step: "on", "inside", "held" or "none". */
export function relationAt(day: RecordedDay, id: string, step: number): string | undefined {
  return day.log.steps[step]?.objects[id]?.relation;
}

/** How an object rests now. */
export function presentRelation(home: Home, id: string): string | undefined {
  const o = home.objects.find((x) => `${x.type.replaceAll(" ", "_")}-${x.id}` === id);
  if (!o) return undefined;
  return o.held ? "held" : o.inside !== undefined ? "inside" : o.on !== undefined ? "on" : "none";
}

/** The instance id of a log id (`mug-41` → 41). */
export function instanceId(id: string): number {
  return Number(/-(\d+)$/.exec(id)?.[1] ?? Number.NaN);
}
