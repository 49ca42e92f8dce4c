import { aabbOf, overlapOfSmaller, voxelDownsample, concatPoints, type Aabb } from "../../geometry/index.js";
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
} as const;

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
 * description, else starts a new one; the instance's box is re-computed from the merged
 * points. Views without 3-D boxes (no depth or pose) are grouped by label. A final pass
 * merges instances that still overlap.
 */
export function mergeViews(views: readonly ObjectView[], similarity: DescriptionSimilarity): DraftInstance[] {
  const p = MERGE_PARAMETERS;
  const instances: DraftInstance[] = [];
  const byLabel = new Map<string, DraftInstance>();
  for (const view of views) {
    if (!view.box || !view.points) {
      let group = byLabel.get(view.label);
      if (!group) {
        group = { views: [] };
        byLabel.set(view.label, group);
        instances.push(group);
      }
      group.views.push(view);
      continue;
    }
    const viewBox = padBox(view.box, p.padding);
    let best: DraftInstance | undefined;
    let bestScore = -Infinity;
    for (const instance of instances) {
      if (!instance.box) continue;
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
        if (similarity(mainLabel(a.views), mainLabel(b.views)) < p.minSimilarity) continue;
        if (overlapOfSmaller(padBox(a.box, p.padding / 2), padBox(b.box, p.padding / 2)) < p.mergeOverlap) continue;
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

export { mainLabel };
