/**
 * 3-D boxes in the world frame (metres, y up). An axis-aligned box is its min and max corner;
 * an oriented box is gravity-aligned (rotated about y only, as furniture stands), found by
 * principal components of the points' floor-plane footprint.
 */
export interface Aabb {
  min: [number, number, number];
  max: [number, number, number];
}

export interface OrientedBox {
  center: [number, number, number];
  /** Extent along the box's own x, y, z axes. */
  size: [number, number, number];
  /** Rotation about +y, radians, from the world's x axis to the box's. */
  yaw: number;
}

/** The axis-aligned box of xyz triples; undefined when there are none. */
export function aabbOf(points: ArrayLike<number>): Aabb | undefined {
  if (points.length < 3) return undefined;
  let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity;
  for (let p = 0; p < points.length; p += 3) {
    const x = points[p]!, y = points[p + 1]!, z = points[p + 2]!;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
    if (z < minZ) minZ = z;
    if (z > maxZ) maxZ = z;
  }
  return { min: [minX, minY, minZ], max: [maxX, maxY, maxZ] };
}

export function aabbCenter(box: Aabb): [number, number, number] {
  return [(box.min[0] + box.max[0]) / 2, (box.min[1] + box.max[1]) / 2, (box.min[2] + box.max[2]) / 2];
}

export function aabbSize(box: Aabb): [number, number, number] {
  return [box.max[0] - box.min[0], box.max[1] - box.min[1], box.max[2] - box.min[2]];
}

export function aabbVolume(box: Aabb): number {
  const [x, y, z] = aabbSize(box);
  return Math.max(0, x) * Math.max(0, y) * Math.max(0, z);
}

/** Volume shared by two boxes. */
export function aabbIntersection(a: Aabb, b: Aabb): number {
  let volume = 1;
  for (let axis = 0; axis < 3; axis++) {
    const overlap = Math.min(a.max[axis]!, b.max[axis]!) - Math.max(a.min[axis]!, b.min[axis]!);
    if (overlap <= 0) return 0;
    volume *= overlap;
  }
  return volume;
}

/** 3-D intersection over union of two axis-aligned boxes. */
export function iou3d(a: Aabb, b: Aabb): number {
  const inter = aabbIntersection(a, b);
  if (inter === 0) return 0;
  return inter / (aabbVolume(a) + aabbVolume(b) - inter);
}

/** Intersection over union of two 2-D boxes given as [x, y, width, height]. */
export function iou2d(a: readonly [number, number, number, number], b: readonly [number, number, number, number]): number {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a[2] * a[3] + b[2] * b[3] - inter);
}

/** Shared volume over the smaller box's volume: 1 when one box holds the other. */
export function overlapOfSmaller(a: Aabb, b: Aabb): number {
  const inter = aabbIntersection(a, b);
  if (inter === 0) return 0;
  return inter / Math.max(1e-12, Math.min(aabbVolume(a), aabbVolume(b)));
}

/** Overlap of the two boxes' floor-plane (x, z) footprints over a's footprint area. */
export function footprintOverlap(a: Aabb, b: Aabb): number {
  const ox = Math.min(a.max[0], b.max[0]) - Math.max(a.min[0], b.min[0]);
  const oz = Math.min(a.max[2], b.max[2]) - Math.max(a.min[2], b.min[2]);
  if (ox <= 0 || oz <= 0) return 0;
  const area = (a.max[0] - a.min[0]) * (a.max[2] - a.min[2]);
  return area > 0 ? (ox * oz) / area : 0;
}

/** Smallest distance between two boxes (0 when they touch or overlap). */
export function aabbDistance(a: Aabb, b: Aabb): number {
  let sum = 0;
  for (let axis = 0; axis < 3; axis++) {
    const gap = Math.max(0, Math.max(a.min[axis]!, b.min[axis]!) - Math.min(a.max[axis]!, b.max[axis]!));
    sum += gap * gap;
  }
  return Math.sqrt(sum);
}

/**
 * A gravity-aligned oriented box: the floor-plane axes are the principal components of the
 * points' (x, z), the height is their y range. Undefined when there are no points.
 */
export function orientedBoxOf(points: Float32Array): OrientedBox | undefined {
  const n = points.length / 3;
  if (n < 1) return undefined;
  let mx = 0, mz = 0;
  for (let p = 0; p < points.length; p += 3) {
    mx += points[p]!;
    mz += points[p + 2]!;
  }
  mx /= n;
  mz /= n;
  let sxx = 0, sxz = 0, szz = 0;
  for (let p = 0; p < points.length; p += 3) {
    const dx = points[p]! - mx;
    const dz = points[p + 2]! - mz;
    sxx += dx * dx;
    sxz += dx * dz;
    szz += dz * dz;
  }
  const yaw = 0.5 * Math.atan2(2 * sxz, sxx - szz);
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  // the points in the box's own frame, (u, y, v), in doubles: their ranges are its extent
  const own = new Float64Array(points.length);
  for (let p = 0; p < points.length; p += 3) {
    const dx = points[p]! - mx;
    const dz = points[p + 2]! - mz;
    own[p] = c * dx + s * dz;
    own[p + 1] = points[p + 1]!;
    own[p + 2] = -s * dx + c * dz;
  }
  const {
    min: [minU, minY, minV],
    max: [maxU, maxY, maxV],
  } = aabbOf(own)!;
  const cu = (minU + maxU) / 2;
  const cv = (minV + maxV) / 2;
  return {
    center: [mx + c * cu - s * cv, (minY + maxY) / 2, mz + s * cu + c * cv],
    size: [maxU - minU, maxY - minY, maxV - minV],
    yaw,
  };
}
