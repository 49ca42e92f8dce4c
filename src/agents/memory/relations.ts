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

/** How an object sits among a receptacle's points, in metres. */
export const SURFACE_PARAMETERS = {
  /** The receptacle's surface under an object is looked for this far beyond its footprint (the object hides what is right under it). */
  margin: 0.05,
  /** The receptacle's points count as a wall beside an object when they rise above its bottom by half its height, and at least this. */
  minRise: 0.04,
  /** A wall closes a side when it stands within this of where the surface the object rests on reaches (a basin's wall; not a chair's back beyond a desk's edge). */
  wallGap: 0.05,
  /** Points that make a surface or a wall (one stray point does not). */
  minPoints: 3,
  /** A roof covers this share of an object's footprint (in cells of `roofCell`): a pillow's edge over a laptop on a bed is no roof. */
  roofCover: 0.5,
  roofCell: 0.04,
} as const;

/**
 * Relations between instances from their 3-D boxes, ConceptGraphs-style: on, inside, above,
 * below (both directions are stated) and next to (stated once per pair, smaller id first).
 * A pair gets one relation at most, tried in that order.
 *
 * A box holds the space round an object's parts: a desk's box reaches up its monitor, a bed's
 * its headboard, a dining table's its chairs' backs, so a mug on the desk's top lies in the
 * desk's box. With the instances' points (`points`, by instance id), an object in another's box
 * is inside it only when the other's points close round it: a roof over it (a microwave, an open
 * cabinet), or walls on all four sides that rise from the surface it rests on (a sink's basin, a
 * toilet's bowl, a bathtub), where a monitor behind a mug or a chair's back beyond the desk's
 * edge close one side or none; otherwise, resting on the other's surface (its points at or below
 * the object's bottom, round its footprint), it is on it.
 * Without points (an imported memory) the boxes decide alone.
 */
export function inferRelations(instances: readonly MemoryInstance[], points?: ReadonlyMap<number, Float32Array>): Relation[] {
  const t = RELATION_THRESHOLDS;
  const relations: Relation[] = [];
  const boxed = instances.filter((i): i is MemoryInstance & { box: Aabb } => i.box !== undefined);
  for (let x = 0; x < boxed.length; x++) {
    for (let y = x + 1; y < boxed.length; y++) {
      const a = boxed[x]!;
      const b = boxed[y]!;
      let relation = pairRelation(a.box, b.box, t);
      if (points && relation?.name !== "inside" && relation?.name !== "on") relation = standingIn(a, b, points, t) ?? relation;
      if (!relation) continue;
      if (relation.name === "inside") {
        const [inner, outer] = relation.swap ? [b, a] : [a, b];
        const around = points?.get(outer.id);
        if (around && !enclosed(inner.box, around, t) && beneath(inner.box, around, t)) relation = { name: "on", swap: relation.swap };
      }
      const [first, second] = relation.swap ? [b, a] : [a, b];
      if (relation.name === "above") {
        relations.push({ subject: first.id, relation: "above", object: second.id }, { subject: second.id, relation: "below", object: first.id });
      } else relations.push({ subject: first.id, relation: relation.name, object: second.id });
    }
  }
  return relations;
}

/**
 * A tall object standing within another's box and rising above it (a lamp in a sink; a lamp on a
 * bed, whose box reaches up its headboard): its bottom within the other's box, over its
 * footprint, its top above it, so that less of it lies in the box than `inside` asks and its
 * bottom is far below the box's top. It is inside when the other's points close round it (walls
 * rising from where it stands), else on it when they make a surface under it; the boxes alone
 * never say either.
 */
/** The walls round an object standing in a basin rise at least this above its bottom, metres (its top may stand far above the rim). */
const STANDING_IN_WALL_M = 0.1;

function standingIn(a: MemoryInstance & { box: Aabb }, b: MemoryInstance & { box: Aabb }, points: ReadonlyMap<number, Float32Array>, t: typeof RELATION_THRESHOLDS): { name: "inside" | "on"; swap: boolean } | undefined {
  for (const [inner, outer, swap] of [[a, b, false], [b, a, true]] as const) {
    const i = inner.box;
    const o = outer.box;
    if (aabbVolume(o) < 2 * aabbVolume(i) || footprintOverlap(i, o) < t.support) continue;
    if (!(i.min[1] > o.min[1] && i.min[1] < o.max[1] - t.contactGap && i.max[1] > o.max[1])) continue;
    const around = points.get(outer.id);
    if (!around) continue;
    if (enclosed(i, around, t, STANDING_IN_WALL_M)) return { name: "inside", swap };
    if (beneath(i, around, t)) return { name: "on", swap };
  }
  return undefined;
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

/**
 * Whether a receptacle's points make a surface under a box: at or below its bottom (within
 * `contactGap` above it), under or round its footprint. A view that saw only a mug's rim, the
 * rest hidden, puts its bottom above the desk it stands on.
 */
function beneath(box: Aabb, points: Float32Array, t: typeof RELATION_THRESHOLDS): boolean {
  const m = SURFACE_PARAMETERS.margin;
  let n = 0;
  for (let p = 0; p < points.length; p += 3) {
    const x = points[p]!;
    const z = points[p + 2]!;
    if (x < box.min[0] - m || x > box.max[0] + m || z < box.min[2] - m || z > box.max[2] + m) continue;
    if (points[p + 1]! <= box.min[1] + t.contactGap && ++n >= SURFACE_PARAMETERS.minPoints) return true;
  }
  return false;
}

/**
 * Whether a receptacle's points close round a box: a roof over most of its footprint, or, on each of its
 * four sides, a wall (points rising past half its height, or `wallHeight`) that stands where the surface it rests
 * on reaches, within `SURFACE_PARAMETERS.wallGap`. Each side looks along the strip of the
 * footprint's width, never off its corners.
 */
function enclosed(box: Aabb, points: Float32Array, t: typeof RELATION_THRESHOLDS, wallHeight = 0.5 * (box.max[1] - box.min[1])): boolean {
  const s = SURFACE_PARAMETERS;
  const rise = box.min[1] + Math.max(s.minRise, wallHeight);
  const wall = [Infinity, Infinity, Infinity, Infinity]; // nearest wall on −x, +x, −z, +z
  const wallPoints = [0, 0, 0, 0];
  const floor = [0, 0, 0, 0]; // how far the surface at the box's bottom reaches on each side
  const roof = new Set<number>();
  const cell = s.roofCell;
  const columns = Math.max(1, Math.ceil((box.max[0] - box.min[0]) / cell));
  const rows = Math.max(1, Math.ceil((box.max[2] - box.min[2]) / cell));
  for (let p = 0; p < points.length; p += 3) {
    const x = points[p]!;
    const y = points[p + 1]!;
    const z = points[p + 2]!;
    const alongX = x >= box.min[0] && x <= box.max[0];
    const alongZ = z >= box.min[2] && z <= box.max[2];
    if (alongX && alongZ) {
      if (y > box.max[1]) roof.add(Math.min(rows - 1, Math.floor((z - box.min[2]) / cell)) * columns + Math.min(columns - 1, Math.floor((x - box.min[0]) / cell)));
      continue;
    }
    let side: number;
    let distance: number;
    if (alongZ) [side, distance] = x < box.min[0] ? [0, box.min[0] - x] : [1, x - box.max[0]];
    else if (alongX) [side, distance] = z < box.min[2] ? [2, box.min[2] - z] : [3, z - box.max[2]];
    else continue;
    if (y > rise) {
      wall[side] = Math.min(wall[side]!, distance);
      wallPoints[side]!++;
    } else if (Math.abs(y - box.min[1]) <= t.contactGap) floor[side] = Math.max(floor[side]!, distance);
  }
  if (roof.size >= s.roofCover * columns * rows) return true;
  return [0, 1, 2, 3].every((side) => wallPoints[side]! >= s.minPoints && wall[side]! <= floor[side]! + s.wallGap);
}
