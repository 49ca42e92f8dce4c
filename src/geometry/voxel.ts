/**
 * Voxel grids over xyz triples (Float32Array, 3 numbers a point). Voxel (i, j, k) holds the
 * points with floor(x / size) = i, and so on; a voxel's key packs i, j, k (each within
 * ±2^16 voxels of the origin, ±3.2 km at 5 cm) into one safe integer.
 */
const OFFSET = 65536;
const SPAN = 131072;

export function voxelKey(i: number, j: number, k: number): number {
  return ((i + OFFSET) * SPAN + (j + OFFSET)) * SPAN + (k + OFFSET);
}

export interface VoxelGrid {
  size: number;
  /** Centroid of each occupied voxel's points, xyz triples, in order of first occupation. */
  centroids: Float32Array;
  /** Points in each voxel. */
  counts: Uint32Array;
  /** Each voxel's key. */
  keys: Float64Array;
}

/**
 * Voxel down-sampling: one point per occupied voxel, the centroid of its points (as Open3D's
 * `voxel_down_sample`). Points outside the key's range are dropped.
 */
export function voxelDownsample(points: Float32Array, size: number): VoxelGrid {
  if (!(size > 0)) throw new RangeError(`voxel size must be above 0, not ${size}`);
  const inv = 1 / size;
  const index = new Map<number, number>();
  let capacity = 1024;
  let sums = new Float64Array(capacity * 3);
  let counts = new Uint32Array(capacity);
  let keys = new Float64Array(capacity);
  let n = 0;
  for (let p = 0; p < points.length; p += 3) {
    const x = points[p]!;
    const y = points[p + 1]!;
    const z = points[p + 2]!;
    const i = Math.floor(x * inv);
    const j = Math.floor(y * inv);
    const k = Math.floor(z * inv);
    if (i < -OFFSET || i >= OFFSET || j < -OFFSET || j >= OFFSET || k < -OFFSET || k >= OFFSET) continue;
    const key = ((i + OFFSET) * SPAN + (j + OFFSET)) * SPAN + (k + OFFSET);
    let slot = index.get(key);
    if (slot === undefined) {
      if (n === capacity) {
        capacity *= 2;
        const s = new Float64Array(capacity * 3);
        s.set(sums);
        sums = s;
        const c = new Uint32Array(capacity);
        c.set(counts);
        counts = c;
        const kk = new Float64Array(capacity);
        kk.set(keys);
        keys = kk;
      }
      slot = n++;
      index.set(key, slot);
      keys[slot] = key;
    }
    const o = slot * 3;
    sums[o] = sums[o]! + x;
    sums[o + 1] = sums[o + 1]! + y;
    sums[o + 2] = sums[o + 2]! + z;
    counts[slot] = counts[slot]! + 1;
  }
  const centroids = new Float32Array(n * 3);
  for (let s = 0; s < n; s++) {
    const c = counts[s]!;
    centroids[s * 3] = sums[s * 3]! / c;
    centroids[s * 3 + 1] = sums[s * 3 + 1]! / c;
    centroids[s * 3 + 2] = sums[s * 3 + 2]! / c;
  }
  return { size, centroids, counts: counts.slice(0, n), keys: keys.slice(0, n) };
}

/** Concatenates xyz arrays. */
export function concatPoints(parts: readonly Float32Array[]): Float32Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Float32Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
