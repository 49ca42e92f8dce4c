import { aabbDistance, aabbIntersection, aabbVolume, footprintOverlap, type Aabb } from "../../geometry/index.js";
import type { MemoryInstance, Relation } from "./types.js";

/** Thresholds of the geometric relations, in metres and fractions. */
export const RELATION_THRESHOLDS = {
  /** a is on b when a's bottom is within this of b's top… */
  contactGap: 0.08,
  /** …and this much of a's footprint lies over b's. */
  support: 0.5,
  /** a is inside b when this much of a's volume is in b, and b is at least twice a's volume. */
  inside: 0.8,
  /** above / below: this much of the footprint overlaps, with a vertical gap over `contactGap`. */
  stacked: 0.3,
  /** next to: boxes at most this far apart, side by side (their heights overlap). */
  near: 0.5,
} as const;

/**
 * Relations between instances from their 3-D boxes, ConceptGraphs-style: on, inside, above,
 * below (both directions are stated) and next to (stated once per pair, smaller id first).
 * A pair gets one relation at most, tried in that order.
 */
export function inferRelations(instances: readonly MemoryInstance[]): Relation[] {
  const t = RELATION_THRESHOLDS;
  const relations: Relation[] = [];
  const boxed = instances.filter((i): i is MemoryInstance & { box: Aabb } => i.box !== undefined);
  for (let x = 0; x < boxed.length; x++) {
    for (let y = x + 1; y < boxed.length; y++) {
      const a = boxed[x]!;
      const b = boxed[y]!;
      const relation = pairRelation(a.box, b.box, t);
      if (!relation) continue;
      const [first, second] = relation.swap ? [b, a] : [a, b];
      if (relation.name === "above") {
        relations.push({ subject: first.id, relation: "above", object: second.id }, { subject: second.id, relation: "below", object: first.id });
      } else relations.push({ subject: first.id, relation: relation.name, object: second.id });
    }
  }
  return relations;
}

function pairRelation(a: Aabb, b: Aabb, t: typeof RELATION_THRESHOLDS): { name: "on" | "inside" | "above" | "next to"; swap: boolean } | undefined {
  const inter = aabbIntersection(a, b);
  const va = aabbVolume(a);
  const vb = aabbVolume(b);
  if (va > 0 && vb >= 2 * va && inter / va >= t.inside) return { name: "inside", swap: false };
  if (vb > 0 && va >= 2 * vb && inter / vb >= t.inside) return { name: "inside", swap: true };
  for (const [top, bottom, swap] of [[a, b, false], [b, a, true]] as const) {
    const gap = top.min[1] - bottom.max[1];
    if (Math.abs(gap) <= t.contactGap && footprintOverlap(top, bottom) >= t.support && top.max[1] > bottom.max[1]) return { name: "on", swap };
  }
  for (const [top, bottom, swap] of [[a, b, false], [b, a, true]] as const) {
    const gap = top.min[1] - bottom.max[1];
    if (gap > t.contactGap && Math.max(footprintOverlap(top, bottom), footprintOverlap(bottom, top)) >= t.stacked) return { name: "above", swap };
  }
  const heightsOverlap = Math.min(a.max[1], b.max[1]) > Math.max(a.min[1], b.min[1]);
  if (heightsOverlap && aabbDistance(a, b) <= t.near) return { name: "next to", swap: false };
  return undefined;
}
