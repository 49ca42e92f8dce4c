/**
 * How right a memory of a built-in recording is, against the simulator's ground truth: the
 * recording's `home.json` (its seed, from which the home and every object's drawn parts come
 * again), `trajectory.json` (each step's object positions, relations and receptacles) and its
 * frames' instance masks and depth.
 *
 * - An object counts as seen when its mask covers at least `MIN_VISIBLE_SHARE` of a frame within
 *   the memory's depth range (`VIEW_PARAMETERS`: 0.1-4 m) in at least `MIN_VISIBLE_FRAMES` of
 *   the frames the memory looked at; walls, floors and ceilings never count.
 * - Each instance stands for the object whose mask id most of its views carry (a memory built
 *   without masks has none: every instance is unmatched). It is right (precision) when its
 *   centre lies within that object's drawn box grown by `PLACE_TOLERANCE_M`, where the object was
 *   at the middle frame of the instance's views (an object the task carries lies elsewhere
 *   later). An object seen is found when an instance stands for it; split when two instances
 *   stand for it at one place (the object had moved less than `MOVED_M` between their views:
 *   an object carried from the desk to the microwave and seen at both is two places, not split).
 * - Centre error: the distance from the centre of an object's largest instance (most views) to
 *   the centre of the object as drawn (its parts' box: a TV on its stand, a lamp's shade on its
 *   pole), where the object was when that instance saw it.
 * - On/inside: the memory's "on" and "inside" relations between instances of two objects; one is
 *   right when the trajectory has that object on (inside) that receptacle at a frame looked at. Recall counts the trajectory's relations of objects found on (inside)
 *   receptacles found, at frames looked at that saw both.
 */
import { join } from "node:path";
import { z } from "zod";
import { UserError } from "../../core/index.js";
import { loadTrajectoryLog, readJsonFile } from "../../data/index.js";
import { openEpisode } from "../../episodes/index.js";
import { drawnParts, generateHome, objectName } from "../../sim/index.js";
import type { SceneGraph } from "./types.js";
import { VIEW_PARAMETERS } from "./views.js";

/** Least share of a frame an object's mask (within the depth range) covers to count as seen in it: 100 pixels at 640×480. */
export const MIN_VISIBLE_SHARE = 100 / (640 * 480);
/** Frames looked at an object must be seen in to count. */
export const MIN_VISIBLE_FRAMES = 3;
/** Two places of an object closer than this (metres) are one place: it was not moved between them. */
export const MOVED_M = 0.1;
/** How far (metres) an instance's centre may lie outside its object's drawn box. */
export const PLACE_TOLERANCE_M = 0.25;
const STRUCTURE = new Set(["wall", "floor", "ceiling"]);

/** One object of the recording as the memory holds it. */
export interface ObjectTruth {
  name: string;
  /** Frames looked at that saw it. */
  frames: number;
  /** Instances standing for it. */
  instances: number;
  /** Places it was at when they saw it (one unless it was moved). */
  places: number;
  /** Metres from its largest instance's centre to its drawn centre (absent when not found). */
  centreError?: number;
}

export interface MemoryTruth {
  /** Objects seen in at least `MIN_VISIBLE_FRAMES` frames looked at. */
  objects: number;
  found: number;
  /** Instances, and those standing for an object at its place. */
  instances: number;
  rightInstances: number;
  /** Objects (seen or not) that several instances stand for at one place (not moved between their views). */
  split: string[];
  missed: string[];
  /** Centre errors of the objects found, in metres. */
  centreErrors: number[];
  relations: { predicted: number; right: number; truth: number; recalled: number; wrong: string[]; missedTruth: string[] };
  perObject: ObjectTruth[];
}

const homeFileSchema = z.object({ seed: z.number().int() }).loose();

/** Scores a memory built from a built-in recording (`out` of `eqa sim record`) against its ground truth. */
export async function memoryAgainstRecording(graph: SceneGraph, recordingDir: string): Promise<MemoryTruth> {
  const homeFile = join(recordingDir, "home.json");
  const parsed = homeFileSchema.safeParse(await readJsonFile(homeFile));
  if (!parsed.success) throw new UserError("not a built-in home (no seed)", { file: homeFile, field: "seed" }, "give the folder eqa sim record --out wrote");
  const home = generateHome(parsed.data.seed);
  const log = await loadTrajectoryLog(join(recordingDir, "trajectory.json"));
  const episode = await openEpisode(join(recordingDir, log.frames ?? "frames"), graph.episode);
  const names = new Map(home.objects.map((o) => [o.id, objectName(o)] as const));
  const ids = new Map([...names].map(([id, name]) => [name, id] as const));
  // the drawn box's centre less the object's box centre: where its parts put it
  const extent = new Map<number, { min: number[]; max: number[] }>();
  for (const part of drawnParts(home)) {
    const e = extent.get(part.id);
    if (!e) extent.set(part.id, { min: [...part.min], max: [...part.max] });
    else for (let a = 0; a < 3; a++) {
      e.min[a] = Math.min(e.min[a]!, part.min[a]!);
      e.max[a] = Math.max(e.max[a]!, part.max[a]!);
    }
  }
  const objects = new Map(home.objects.map((o) => [o.id, o] as const));
  const stepAt = new Map(log.steps.map((s) => [s.frame, s] as const));
  const drawnAt = (id: number, frame: number): { centre: number[]; half: number[] } | undefined => {
    const o = objects.get(id);
    const e = extent.get(id);
    const state = stepAt.get(frame)?.objects[names.get(id) ?? ""];
    if (!o || !e || !state?.position) return undefined;
    const position = state.position;
    const offset = [0, 1, 2].map((a) => (e.min[a]! + e.max[a]!) / 2 - (o.min[a]! + o.max[a]!) / 2);
    return { centre: position.map((p, a) => p + offset[a]!), half: [0, 1, 2].map((a) => (e.max[a]! - e.min[a]!) / 2) };
  };

  // which objects each frame looked at shows
  const seenIn = new Map<number, number[]>();
  for (const index of graph.frames) {
    const frame = await episode.frame(index);
    if (!frame.masks) continue;
    const { ids: mask, labels } = frame.masks;
    const counts = new Map<number, number>();
    for (let i = 0; i < mask.length; i++) {
      const id = mask[i]!;
      if (id === 0) continue;
      const d = frame.depth && frame.depth.length === mask.length ? frame.depth[i]! : NaN;
      if (frame.depth && !(d >= VIEW_PARAMETERS.minDepth && d <= VIEW_PARAMETERS.maxDepth)) continue;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const [id, n] of counts) {
      if (n < MIN_VISIBLE_SHARE * mask.length || STRUCTURE.has(labels[String(id)] ?? "")) continue;
      const list = seenIn.get(id) ?? [];
      list.push(index);
      seenIn.set(id, list);
    }
  }
  const counted = [...seenIn].filter(([, frames]) => frames.length >= MIN_VISIBLE_FRAMES).map(([id]) => id);

  // each instance's object: the mask id most of its views carry
  const standsFor = new Map<number, number>();
  for (const instance of graph.instances) {
    const votes = new Map<number, number>();
    for (const v of instance.views) if (v.maskId !== undefined) votes.set(v.maskId, (votes.get(v.maskId) ?? 0) + 1);
    const best = [...votes].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    if (best) standsFor.set(instance.id, best[0]);
  }
  const instancesOf = new Map<number, typeof graph.instances>();
  for (const instance of graph.instances) {
    const id = standsFor.get(instance.id);
    if (id === undefined) continue;
    instancesOf.set(id, [...(instancesOf.get(id) ?? []), instance]);
  }
  // an instance is compared with its object where the object was when the instance's views saw it
  const placeOf = (instance: (typeof graph.instances)[number]): { centre: number[]; half: number[] } | undefined => {
    const id = standsFor.get(instance.id);
    if (id === undefined) return undefined;
    const frames = [...new Set(instance.views.map((v) => v.frame))].sort((a, b) => a - b);
    return drawnAt(id, frames[Math.floor(frames.length / 2)]!);
  };
  let rightInstances = 0;
  for (const instance of graph.instances) {
    const drawn = placeOf(instance);
    if (!drawn || !instance.center) continue;
    const outside = Math.hypot(...[0, 1, 2].map((a) => Math.max(0, Math.abs(instance.center![a]! - drawn.centre[a]!) - drawn.half[a]!)));
    if (outside <= PLACE_TOLERANCE_M) rightInstances++;
  }
  const perObject: ObjectTruth[] = [];
  const centreErrors: number[] = [];
  const split: string[] = [];
  for (const [id, mine] of instancesOf) {
    // several instances of an object that had not moved between them: one object split
    const places = mine.map(placeOf).filter((p) => p !== undefined);
    const apart = places.some((p, i) => places.some((q, j) => j > i && Math.hypot(...[0, 1, 2].map((a) => p.centre[a]! - q.centre[a]!)) < MOVED_M));
    if (apart) split.push(`${names.get(id)} (${mine.length})`);
  }
  for (const id of counted) {
    const mine = instancesOf.get(id) ?? [];
    const truth: ObjectTruth = { name: names.get(id) ?? `object ${id}`, frames: seenIn.get(id)!.length, instances: mine.length, places: new Set(mine.map((i) => JSON.stringify(placeOf(i)?.centre.map((c) => Math.round(c / MOVED_M))))).size };
    const largest = [...mine].sort((a, b) => b.views.length - a.views.length)[0];
    const drawn = largest ? placeOf(largest) : undefined;
    if (largest?.center && drawn) {
      truth.centreError = Math.hypot(...[0, 1, 2].map((a) => largest.center![a]! - drawn.centre[a]!));
      centreErrors.push(truth.centreError);
    }
    perObject.push(truth);
  }

  // on / inside
  const found = new Set(counted.filter((id) => instancesOf.has(id)));
  const truthPairs = new Set<string>();
  const seenFrames = new Map([...seenIn].map(([id, frames]) => [id, new Set(frames)] as const));
  const anyTruth = new Set<string>();
  for (const index of graph.frames) {
    const step = stepAt.get(index);
    if (!step) continue;
    for (const [name, state] of Object.entries(step.objects)) {
      if ((state.relation !== "on" && state.relation !== "inside") || state.receptacle === null) continue;
      const subject = ids.get(name);
      const receptacle = ids.get(state.receptacle);
      if (subject === undefined || receptacle === undefined) continue;
      const key = `${name} ${state.relation} ${state.receptacle}`;
      anyTruth.add(key);
      if (found.has(subject) && found.has(receptacle) && seenFrames.get(subject)?.has(index) && seenFrames.get(receptacle)?.has(index)) truthPairs.add(key);
    }
  }
  const predicted = new Set<string>();
  for (const r of graph.relations) {
    if (r.relation !== "on" && r.relation !== "inside") continue;
    const a = standsFor.get(r.subject);
    const b = standsFor.get(r.object);
    if (a === undefined || b === undefined) continue;
    predicted.add(a === b ? `${names.get(a)} ${r.relation} itself` : `${names.get(a)} ${r.relation} ${names.get(b)}`);
  }
  const wrong = [...predicted].filter((p) => !anyTruth.has(p));
  const missedTruth = [...truthPairs].filter((t) => !predicted.has(t));
  return {
    objects: counted.length,
    found: found.size,
    instances: graph.instances.length,
    rightInstances,
    split,
    missed: counted.filter((id) => !found.has(id)).map((id) => names.get(id) ?? `object ${id}`),
    centreErrors,
    relations: { predicted: predicted.size, right: predicted.size - wrong.length, truth: truthPairs.size, recalled: truthPairs.size - missedTruth.length, wrong, missedTruth },
    perObject,
  };
}
