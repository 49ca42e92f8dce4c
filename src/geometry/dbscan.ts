import { voxelKey } from "./voxel.js";

/** Label of points that belong to no cluster. */
export const NOISE = -1;

export interface DbscanResult {
  /** Cluster of each point (0, 1, …), or NOISE. */
  labels: Int32Array;
  clusters: number;
}

/**
 * DBSCAN (Ester et al., 1996) over xyz triples: a point with at least `minPoints` points
 * (itself included) within `eps` metres is a core point; clusters are the core points
 * reachable from one another, with the border points they reach. Neighbours are found
 * through a grid of cells of side eps, so the cost is near-linear for spread-out points.
 */
export function dbscan(points: Float32Array, eps: number, minPoints: number): DbscanResult {
  const n = points.length / 3;
  const labels = new Int32Array(n).fill(-2); // -2: not visited yet
  if (n === 0) return { labels: new Int32Array(0), clusters: 0 };
  const inv = 1 / eps;
  const eps2 = eps * eps;
  const cellOf = (p: number): [number, number, number] => [Math.floor(points[p * 3]! * inv), Math.floor(points[p * 3 + 1]! * inv), Math.floor(points[p * 3 + 2]! * inv)];
  const key = voxelKey;
  // points sorted by cell: cellStart/cellPoints in flat arrays
  const cells = new Map<number, number[]>();
  for (let p = 0; p < n; p++) {
    const [i, j, k] = cellOf(p);
    const id = key(i, j, k);
    let list = cells.get(id);
    if (!list) cells.set(id, (list = []));
    list.push(p);
  }
  const neighbours = (p: number, out: number[]): void => {
    out.length = 0;
    const [i, j, k] = cellOf(p);
    const x = points[p * 3]!;
    const y = points[p * 3 + 1]!;
    const z = points[p * 3 + 2]!;
    for (let di = -1; di <= 1; di++) {
      for (let dj = -1; dj <= 1; dj++) {
        for (let dk = -1; dk <= 1; dk++) {
          const list = cells.get(key(i + di, j + dj, k + dk));
          if (!list) continue;
          for (const q of list) {
            const dx = points[q * 3]! - x;
            const dy = points[q * 3 + 1]! - y;
            const dz = points[q * 3 + 2]! - z;
            if (dx * dx + dy * dy + dz * dz <= eps2) out.push(q);
          }
        }
      }
    }
  };
  let cluster = 0;
  const found: number[] = [];
  const queue = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    if (labels[p] !== -2) continue;
    neighbours(p, found);
    if (found.length < minPoints) {
      labels[p] = NOISE;
      continue;
    }
    labels[p] = cluster;
    let head = 0;
    let tail = 0;
    // -3 marks a point waiting in the queue, so that none is queued twice
    for (const q of found) {
      if (labels[q] === -2) {
        labels[q] = -3;
        queue[tail++] = q;
      } else if (labels[q] === NOISE) labels[q] = cluster;
    }
    while (head < tail) {
      const q = queue[head++]!;
      labels[q] = cluster;
      neighbours(q, found);
      if (found.length < minPoints) continue;
      for (const r of found) {
        if (labels[r] === -2) {
          labels[r] = -3;
          queue[tail++] = r;
        } else if (labels[r] === NOISE) labels[r] = cluster;
      }
    }
    cluster++;
  }
  return { labels, clusters: cluster };
}

/** The points of one cluster. */
export function clusterPoints(points: Float32Array, labels: Int32Array, cluster: number): Float32Array {
  let count = 0;
  for (let i = 0; i < labels.length; i++) if (labels[i] === cluster) count++;
  const out = new Float32Array(count * 3);
  let o = 0;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] !== cluster) continue;
    out[o++] = points[i * 3]!;
    out[o++] = points[i * 3 + 1]!;
    out[o++] = points[i * 3 + 2]!;
  }
  return out;
}

/** Sizes of the clusters, by cluster. */
export function clusterSizes(labels: Int32Array, clusters: number): Uint32Array {
  const sizes = new Uint32Array(clusters);
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i]!;
    if (l >= 0) sizes[l] = sizes[l]! + 1;
  }
  return sizes;
}
