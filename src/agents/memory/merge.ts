import { aabbDistance, aabbIntersection, aabbOf, aabbVolume, iou2d, overlapOfSmaller, voxelDownsample, concatPoints, type Aabb } from "../../geometry/index.js";
import { cosineSimilarity } from "../../models/index.js";
import { VIEW_PARAMETERS } from "./views.js";
import type { ObjectView } from "./types.js";

/** Parameters of SVM's step 2. */
export const MERGE_PARAMETERS = {
  /** Boxes are grown by this (metres) before overlaps are measured: a view of one face is flat. */
  padding: 0.05,
  /** Least overlap (shared volume over the smaller padded box) for a view to join an instance. */
  minOverlap: 0.2,
  /** Least similarity of two descriptions (1 for equal labels; the sentence encoder's cosine otherwise). */
  minSimilarity: 0.75,
  /** Instances of similar descriptions overlapping this much are merged after all views are placed. */
  mergeOverlap: 0.5,
  /**
   * Views of one instance-mask id are one object when their boxes lie at most this far apart
   * (metres): a view that saw only a corner of a TV, the rest hidden, overlaps nothing of it. An
   * object carried farther away (a mug from the desk to the microwave) is kept at each place.
   */
  maskGap: 0.5,
} as const;

/**
 * Telling objects apart without depth (an RGB-only video): a view continues an object of a
 * similar description seen shortly before near the same place in the image; otherwise it is
 * another object. Two views of one frame are never one object.
 */
export const TRACK_PARAMETERS = {
  /** Looked-at frames a view may follow the object's last view by (it may be missed in between). */
  maxFrameGap: 5,
  /** Seconds a view may follow the object's last view by, when the frames' times are known (videos). */
  maxSeconds: 3,
  /** Least overlap (intersection over union) of the two 2-D boxes … */
  minIou: 0.1,
  /** … or most distance between their centres, in sizes of the larger box (its longer side). */
  maxShift: 0.75,
} as const;

/** Where a frame lies in the episode: its place among the frames looked at and, when known, its time in seconds. */
export interface FramePlace {
  order: number;
  seconds?: number;
}

/** An instance being built: its views and their merged points. */
export interface DraftInstance {
  views: ObjectView[];
  points?: Float32Array;
  box?: Aabb;
}

/** Similarity of two descriptions: 1 when equal, else the cosine of their embeddings (0 without them). */
export type DescriptionSimilarity = (a: string, b: string) => number;

export function embeddingSimilarity(vectors: ReadonlyMap<string, Float32Array>): DescriptionSimilarity {
  return (a, b) => {
    if (a === b) return 1;
    const va = vectors.get(a);
    const vb = vectors.get(b);
    return va && vb ? cosineSimilarity(va, vb) : 0;
  };
}

export function padBox(box: Aabb, by: number): Aabb {
  return { min: [box.min[0] - by, box.min[1] - by, box.min[2] - by], max: [box.max[0] + by, box.max[1] + by, box.max[2] + by] };
}

function mainLabel(views: readonly ObjectView[]): string {
  const counts = new Map<string, number>();
  for (const v of views) counts.set(v.label, (counts.get(v.label) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? "object";
}

function absorb(target: DraftInstance, points: Float32Array | undefined): void {
  if (!points) return;
  const merged = target.points ? concatPoints([target.points, points]) : points;
  target.points = voxelDownsample(merged, VIEW_PARAMETERS.voxel).centroids;
  target.box = aabbOf(target.points);
}

/**
 * Associates object views with global instances, frame by frame (SVM's step 2): a view with
 * a 3-D box joins the instance whose box it overlaps most among those with a similar
 * description, else starts a new one; a view from instance masks joins only its own mask id's
 * instance, within {@link MERGE_PARAMETERS}' `maskGap`; the instance's box is re-computed from the merged
 * points. Views without 3-D boxes (no depth or pose) are one instance per mask id when they
 * come from instance masks, and are otherwise told apart by when and where in the image they were seen ({@link TRACK_PARAMETERS}; `places` gives each frame's order and time,
 * by default the frame index). A final pass merges instances that still overlap (of one mask id:
 * that lie within `maskGap`).
 */
export function mergeViews(views: readonly ObjectView[], similarity: DescriptionSimilarity, places?: ReadonlyMap<number, FramePlace>): DraftInstance[] {
  const p = MERGE_PARAMETERS;
  const unplaced = views.filter((v) => !v.box || !v.points);
  // an episode's instance masks say which object a view is: one instance per mask id
  const byMask = new Map<number, DraftInstance>();
  for (const view of unplaced) {
    if (view.maskId === undefined) continue;
    const group = byMask.get(view.maskId) ?? { views: [] };
    byMask.set(view.maskId, group);
    group.views.push(view);
  }
  const instances: DraftInstance[] = [...byMask.values(), ...trackViews(unplaced.filter((v) => v.maskId === undefined), similarity, places)];
  for (const view of views) {
    if (!view.box || !view.points) continue;
    const viewBox = padBox(view.box, p.padding);
    let best: DraftInstance | undefined;
    let bestScore = -Infinity;
    for (const instance of instances) {
      if (!instance.box) continue;
      // the masks say which object a view is: it joins its own object, the nearest place of it
      const same = sameMaskObject(view, instance);
      if (same === false) continue;
      if (same === true) {
        const gap = aabbDistance(view.box, instance.box);
        if (gap <= p.maskGap && 3 - gap > bestScore) {
          bestScore = 3 - gap;
          best = instance;
        }
        continue;
      }
      const overlap = overlapOfSmaller(viewBox, padBox(instance.box, p.padding));
      if (overlap < p.minOverlap) continue;
      const sim = similarity(view.label, mainLabel(instance.views));
      if (sim < p.minSimilarity) continue;
      const score = overlap + sim;
      if (score > bestScore) {
        bestScore = score;
        best = instance;
      }
    }
    if (!best) {
      best = { views: [] };
      instances.push(best);
    }
    best.views.push(view);
    absorb(best, view.points);
  }
  // merge what still overlaps (an object first seen from two sides)
  let merged = true;
  while (merged) {
    merged = false;
    outer: for (let i = 0; i < instances.length; i++) {
      for (let j = i + 1; j < instances.length; j++) {
        const a = instances[i]!;
        const b = instances[j]!;
        if (!a.box || !b.box) continue;
        const masksA = maskIds(a);
        const masksB = maskIds(b);
        if (masksA.size > 0 && masksB.size > 0) {
          // objects the masks tell apart stay apart; one object's places, when near, are one
          if (![...masksA].some((m) => masksB.has(m)) || aabbDistance(a.box, b.box) > p.maskGap) continue;
        } else {
          if (similarity(mainLabel(a.views), mainLabel(b.views)) < p.minSimilarity) continue;
          if (overlapOfSmaller(padBox(a.box, p.padding / 2), padBox(b.box, p.padding / 2)) < p.mergeOverlap) continue;
        }
        a.views.push(...b.views);
        absorb(a, b.points);
        instances.splice(j, 1);
        merged = true;
        break outer;
      }
    }
  }
  return instances;
}

/** The instance-mask ids of an instance's views. */
function maskIds(instance: DraftInstance): Set<number> {
  return new Set(instance.views.flatMap((v) => (v.maskId === undefined ? [] : [v.maskId])));
}

/**
 * Whether a view from a mask is of an instance's object, by the masks: true when the instance
 * holds views of its mask id, false when it holds views of other ids only, undefined when the
 * masks cannot say (the view or the instance has none: a detector's).
 */
function sameMaskObject(view: ObjectView, instance: DraftInstance): boolean | undefined {
  if (view.maskId === undefined) return undefined;
  const ids = maskIds(instance);
  if (ids.size === 0) return undefined;
  return ids.has(view.maskId);
}

/**
 * Views without 3-D positions as objects: frame by frame, each view continues the object it
 * matches best (a similar description, last seen within the gap, its 2-D box overlapping or
 * near the view's), each object taking at most one view of a frame; a view that matches none
 * starts an object. An object that leaves the view and comes back later counts again.
 */
function trackViews(views: readonly ObjectView[], similarity: DescriptionSimilarity, places: ReadonlyMap<number, FramePlace> | undefined): DraftInstance[] {
  const t = TRACK_PARAMETERS;
  const place = (frame: number): FramePlace => places?.get(frame) ?? { order: frame };
  const tracks: { draft: DraftInstance; last: ObjectView }[] = [];
  const frames = [...new Set(views.map((v) => v.frame))].sort((a, b) => place(a).order - place(b).order);
  for (const frame of frames) {
    const here = place(frame);
    const inFrame = views.filter((v) => v.frame === frame);
    const pairs: { view: number; track: number; score: number }[] = [];
    tracks.forEach((track, k) => {
      const then = place(track.last.frame);
      if (here.order - then.order > t.maxFrameGap) return;
      if (here.seconds !== undefined && then.seconds !== undefined && here.seconds - then.seconds > t.maxSeconds) return;
      inFrame.forEach((view, v) => {
        if (similarity(view.label, mainLabel(track.draft.views)) < MERGE_PARAMETERS.minSimilarity) return;
        const iou = iou2d(view.box2d, track.last.box2d);
        const shift = centreShift(view.box2d, track.last.box2d);
        if (iou < t.minIou && shift > t.maxShift) return;
        pairs.push({ view: v, track: k, score: iou - shift });
      });
    });
    pairs.sort((a, b) => b.score - a.score || a.view - b.view || a.track - b.track);
    const taken = new Set<number>();
    const placed = new Map<number, number>();
    for (const pair of pairs) {
      if (placed.has(pair.view) || taken.has(pair.track)) continue;
      placed.set(pair.view, pair.track);
      taken.add(pair.track);
    }
    inFrame.forEach((view, v) => {
      const k = placed.get(v);
      if (k === undefined) {
        tracks.push({ draft: { views: [view] }, last: view });
        return;
      }
      tracks[k]!.draft.views.push(view);
      tracks[k]!.last = view;
    });
  }
  return tracks.map((track) => track.draft);
}

type Box2d = readonly [number, number, number, number];

/** Distance between two boxes' centres, in lengths of the larger box's longer side. */
function centreShift(a: Box2d, b: Box2d): number {
  const dx = a[0] + a[2] / 2 - (b[0] + b[2] / 2);
  const dy = a[1] + a[3] / 2 - (b[1] + b[3] / 2);
  return Math.hypot(dx, dy) / Math.max(a[2], a[3], b[2], b[3], 1e-6);
}

export { mainLabel };

/**
 * The instances that stand. One from the masks or a vision-language model, or with a detection at
 * `minScore` or above, is sure. One resting on weaker detections alone stands when it was detected
 * in `supportFrames` frames or more, and does not lie mostly within a surer instance of another
 * label (the detector's second guess at that object: a sofa also scored as a bed): surer means
 * sure, or more detections' confidence in all.
 */
export function standingInstances(instances: readonly DraftInstance[], minScore: number, supportFrames: number): DraftInstance[] {
  const sure = (d: DraftInstance): boolean => d.views.some((v) => v.source !== "detector" || v.score >= minScore);
  const supported = instances.filter((d) => sure(d) || new Set(d.views.map((v) => v.frame)).size >= supportFrames);
  // each instance's evidence and label, worked out once for the pairwise test below
  const facts = new Map(supported.map((d) => [d, { evidence: sure(d) ? Infinity : d.views.reduce((sum, v) => sum + v.score, 0), label: mainLabel(d.views) }]));
  return supported.filter((d) => {
    const own = facts.get(d)!;
    if (own.evidence === Infinity || !d.box) return true;
    // mostly within the other's box: a cup on a table does not take the table's place
    const within = (o: DraftInstance): number => aabbIntersection(o.box!, d.box!) / Math.max(1e-12, aabbVolume(d.box!));
    return !supported.some((o) => o !== d && o.box && facts.get(o)!.label !== own.label && facts.get(o)!.evidence > own.evidence && within(o) >= MERGE_PARAMETERS.mergeOverlap);
  });
}
