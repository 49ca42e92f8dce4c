/**
 * The world as a Mixed EQA program sees it (`MixedWorldView`), built from files alone: each day's
 * trajectory log (its steps' object states and its events) and the present home. The truth view
 * answers every moment; the remembered view holds, for "now", each object as the agent last saw
 * it over all its days, which is what its history alone could say about the present.
 *
 * A moment "after" an event is the step at which the event took effect (the log records each
 * step's states after its action): the `index`-th event of that type on an object of that type
 * in the day's log.
 */
import type { MixedMoment, MixedSnapshotObject, MixedWorldView, TrajectoryLog, TrajectoryLogStep } from "../../data/index.js";
import { objectName, type Home } from "../../sim/index.js";
import type { TrajectoryWorld } from "../world.js";

/** One recorded day: its number, its log and (for what was seen) its indexed world. */
export interface DayLog {
  day: number;
  log: TrajectoryLog;
}

/** The objects of a log's step as a snapshot: receptacles named by type; a held object on nothing. */
export function stepSnapshot(log: TrajectoryLog, step: TrajectoryLogStep): MixedSnapshotObject[] {
  const typeOf = new Map(log.objects.map((o) => [o.id, o.type] as const));
  return log.objects.flatMap((o) => {
    const state = step.objects[o.id];
    if (!state) return [];
    const receptacle = state.relation === "held" || state.receptacle === null ? null : (typeOf.get(state.receptacle) ?? null);
    return [{ id: o.id, type: o.type, receptacle, states: { ...state.states } }];
  });
}

/** The objects of a home (walls aside) as a snapshot, named as logs name them (`mug-41`). */
export function homeSnapshot(home: Home): MixedSnapshotObject[] {
  const byId = new Map(home.objects.map((o) => [o.id, o] as const));
  return home.objects
    .filter((o) => o.kind !== "structure")
    .map((o) => {
      const holder = o.held ? undefined : (o.inside ?? o.on);
      return { id: objectName(o), type: o.type, receptacle: holder === undefined ? null : (byId.get(holder)?.type ?? null), states: { ...o.states } };
    });
}

/** The step of a day's log that a moment names; undefined when the log has no such event. */
export function momentStep(log: TrajectoryLog, moment: Exclude<MixedMoment, { now: true }>): number | undefined {
  if (moment.at === "end") return log.steps.length - 1;
  const typeOf = new Map(log.objects.map((o) => [o.id, o.type] as const));
  const wanted = moment.index ?? 1;
  let seen = 0;
  for (const event of log.events) {
    if (event.type !== moment.event || typeOf.get(event.object) !== moment.object) continue;
    if (++seen === wanted) return event.step;
  }
  return undefined;
}

/** The ground truth: every day's states at every moment, and the present home. */
export function truthView(days: readonly DayLog[], present: Home | null): MixedWorldView {
  const presentObjects = present ? homeSnapshot(present) : undefined;
  return {
    snapshot(moment) {
      if ("now" in moment) return presentObjects;
      const day = days.find((d) => d.day === moment.day);
      if (!day) return undefined;
      const step = momentStep(day.log, moment);
      const at = step === undefined ? undefined : day.log.steps[step];
      return at && stepSnapshot(day.log, at);
    },
  };
}

/** What the agent last saw of each object: the day and step of its latest sighting. */
export function lastSightings(days: readonly { day: number; log: TrajectoryLog; world: TrajectoryWorld }[]): Map<string, { day: number; step: number }> {
  const out = new Map<string, { day: number; step: number }>();
  for (const { day, log, world } of [...days].sort((a, b) => a.day - b.day)) {
    for (const o of log.objects) {
      for (let step = world.lastStep; step >= 0; step--) {
        if (world.visibleAt(o.id, step)) {
          out.set(o.id, { day, step });
          break;
        }
      }
    }
  }
  return out;
}

/**
 * The history's view of "now": each object as the agent last saw it (its receptacle and states
 * at its latest sighting, over all days); objects it never saw are not in it. Other moments are
 * those of the truth, as the history recorded them.
 */
export function rememberedView(days: readonly { day: number; log: TrajectoryLog; world: TrajectoryWorld }[]): MixedWorldView {
  const truth = truthView(days, null);
  const sightings = lastSightings(days);
  const remembered: MixedSnapshotObject[] = [];
  for (const [id, { day, step }] of [...sightings].sort(([a], [b]) => a.localeCompare(b))) {
    const log = days.find((d) => d.day === day)!.log;
    const object = stepSnapshot(log, log.steps[step]!).find((o) => o.id === id);
    if (object) remembered.push(object);
  }
  return { snapshot: (moment) => ("now" in moment ? remembered : truth.snapshot(moment)) };
}
