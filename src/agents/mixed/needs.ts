/**
 * What a Mixed EQA program asks of the present, read from the program alone: whether it asks
 * about now (so that what the agent remembers may have changed), which object or receptacle it
 * is about, and when a view of the live environment shows enough of it to answer.
 */
import type { MixedMoment, MixedProgram } from "../../data/index.js";
import { backProject } from "../../geometry/index.js";
import type { EnvObservation } from "../../sim/index.js";

const isNow = (moment: MixedMoment | undefined): boolean => moment === undefined || "now" in moment;

/** Whether the program asks about now (a present question, or then against now). */
export function asksAboutNow(program: MixedProgram): boolean {
  if (program.query === "where_days") return false;
  return isNow(program.at) || (program.query === "moved" && isNow(program.since));
}

/** What to look at to answer: the object the program is about, else its receptacle; and how close a view must be. */
export interface LookFor {
  /** Types any of which, seen close enough, is enough (is_on: the object, or the receptacle seen up close). */
  types: { type: string; maxDepthM: number }[];
  /** The type whose remembered place the agent walks to first. */
  walkTo: string | undefined;
}

/** A small object is recognised from a few metres; a receptacle's contents only from near. */
const OBJECT_RANGE_M = 3.5;
const CONTENTS_RANGE_M = 2.2;

export function lookFor(program: MixedProgram): LookFor {
  switch (program.query) {
    case "contents":
    case "count_on":
      return { types: program.receptacle ? [{ type: program.receptacle, maxDepthM: CONTENTS_RANGE_M }] : [], walkTo: program.receptacle };
    case "is_on":
      // the receptacle stays where it was, the object may not: seen up close, it answers yes or no
      return {
        types: [...(program.object ? [{ type: program.object, maxDepthM: OBJECT_RANGE_M }] : []), ...(program.receptacle ? [{ type: program.receptacle, maxDepthM: CONTENTS_RANGE_M }] : [])],
        walkTo: program.receptacle ?? program.object,
      };
    default:
      return { types: program.object ? [{ type: program.object, maxDepthM: OBJECT_RANGE_M }] : [], walkTo: program.object };
  }
}

/** Least share of the image an object must cover to count as seen (a few pixels at 128×96, as a small object far off covers). */
export const MIN_SEEN_SHARE = 0.0005;

/** Whether the observation shows one of the wanted types close enough (instance masks and depth, as the agent perceives them). */
export function showsAny(obs: EnvObservation, wanted: LookFor["types"]): boolean {
  if (!obs.masks || wanted.length === 0) return false;
  const range = new Map(wanted.map((w) => [w.type, w.maxDepthM]));
  const ids = new Map<number, number>();
  for (const [id, label] of Object.entries(obs.masks.labels)) {
    const maxDepth = range.get(label);
    if (maxDepth !== undefined) ids.set(Number(id), maxDepth);
  }
  if (ids.size === 0) return false;
  const counts = new Map<number, number>();
  const { ids: mask } = obs.masks;
  const sameSize = mask.length === obs.depth.length;
  for (let p = 0; p < mask.length; p++) {
    const id = mask[p] as number;
    const maxDepth = ids.get(id);
    if (maxDepth === undefined) continue;
    const d = sameSize ? (obs.depth[p] as number) : 0;
    if (sameSize && !(d > 0 && d <= maxDepth)) continue;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const least = Math.max(6, MIN_SEEN_SHARE * mask.length);
  return [...counts.values()].some((n) => n >= least);
}

/** Where a view shows something: the middle of its points' footprint, world x and z, metres. */
export interface SeenPlace {
  type: string;
  x: number;
  z: number;
}

/**
 * Where the view shows the first of the wanted types it holds close enough: the middle of the
 * points (its instance mask's pixels back-projected with their depth) of the instance of that
 * type that covers most of the image; undefined when it shows none.
 */
export function seenPlace(obs: EnvObservation, wanted: LookFor["types"]): SeenPlace | undefined {
  if (!obs.masks || obs.masks.ids.length !== obs.depth.length) return undefined;
  const { ids, labels } = obs.masks;
  const least = Math.max(6, MIN_SEEN_SHARE * ids.length);
  for (const { type, maxDepthM } of wanted) {
    const candidates = Object.entries(labels).filter(([, label]) => label === type).map(([id]) => Number(id));
    let best: Float32Array | undefined;
    for (const id of candidates) {
      const { points } = backProject(obs.depth, obs.camera, obs.pose, { minDepth: 0.01, maxDepth: maxDepthM, mask: ids, maskValue: id });
      if (points.length / 3 >= least && points.length > (best?.length ?? 0)) best = points;
    }
    if (!best) continue;
    let [x0, x1, z0, z1] = [Infinity, -Infinity, Infinity, -Infinity];
    for (let p = 0; p < best.length; p += 3) {
      x0 = Math.min(x0, best[p]!);
      x1 = Math.max(x1, best[p]!);
      z0 = Math.min(z0, best[p + 2]!);
      z1 = Math.max(z1, best[p + 2]!);
    }
    return { type, x: (x0 + x1) / 2, z: (z0 + z1) / 2 };
  }
  return undefined;
}
