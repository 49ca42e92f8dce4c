/**
 * Planning on an occupancy map: frontier cells and their clusters, a distance field from the
 * agent (Dijkstra on traversable cells), the next goal by distance and information gain, and
 * A* paths. 8-connected, no corner cutting; typed arrays and a binary heap.
 *
 * Goal choice: for each frontier cluster (8-connected frontier cells, at least `minClusterSize`
 * of them) the goal is its reachable cell nearest the cluster's centroid. Its score is
 *
 *     score = gain / (1 + d),   gain = (unknown cells within `gainRadius` of the goal) · cellSize²
 *
 * with d the goal's path distance from the agent in metres: the unknown floor area (m²) a look
 * from there could reveal, per metre walked. The highest score wins; ties go to the lower cell
 * index, so the choice is deterministic.
 *
 * Where to look: a `ViewFan` casts a camera's rays over the map (stopped by occupied cells), so
 * that `bestViewHeading` can face the most unknown floor from a point, and `chooseLookout`, once
 * no frontier is left, the known floor that earlier views saw least.
 */
import { OccupancyMap, CELL_OCCUPIED, CELL_UNKNOWN } from "./occupancy.js";

const SQRT2 = Math.SQRT2;

/** A min-heap of cell indices keyed by float priorities. */
class CellHeap {
  private cells = new Int32Array(1024);
  private keys = new Float64Array(1024);
  size = 0;

  push(cell: number, key: number): void {
    if (this.size === this.cells.length) {
      const cells = new Int32Array(this.size * 2);
      cells.set(this.cells);
      this.cells = cells;
      const keys = new Float64Array(this.size * 2);
      keys.set(this.keys);
      this.keys = keys;
    }
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((this.keys[p] as number) <= key) break;
      this.cells[i] = this.cells[p] as number;
      this.keys[i] = this.keys[p] as number;
      i = p;
    }
    this.cells[i] = cell;
    this.keys[i] = key;
  }

  /** Removes the smallest; returns its cell. */
  pop(): number {
    const top = this.cells[0] as number;
    const n = --this.size;
    const cell = this.cells[n] as number;
    const key = this.keys[n] as number;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && (this.keys[c + 1] as number) < (this.keys[c] as number)) c++;
      if ((this.keys[c] as number) >= key) break;
      this.cells[i] = this.cells[c] as number;
      this.keys[i] = this.keys[c] as number;
      i = c;
    }
    this.cells[i] = cell;
    this.keys[i] = key;
    return top;
  }
}

const DC = [1, -1, 0, 0, 1, 1, -1, -1];
const DR = [0, 0, 1, -1, 1, -1, 1, -1];

/** Calls `visit(neighbour, stepCost)` for the traversable 8-neighbours of a cell (no corner cutting). */
function forNeighbours(map: OccupancyMap, cell: number, visit: (n: number, cost: number) => void): void {
  const cols = map.cols;
  const c = cell % cols;
  const r = (cell - c) / cols;
  for (let k = 0; k < 8; k++) {
    const dc = DC[k] as number;
    const dr = DR[k] as number;
    const nc = c + dc;
    const nr = r + dr;
    if (nc < 0 || nr < 0 || nc >= cols || nr >= map.rows) continue;
    const n = nr * cols + nc;
    if (!map.traversable(n)) continue;
    if (k >= 4 && (!map.traversable(r * cols + nc) || !map.traversable(nr * cols + c))) continue;
    visit(n, k >= 4 ? SQRT2 : 1);
  }
}

/** Path distance in metres from `start` to every cell (Infinity where unreachable). */
export function distanceField(map: OccupancyMap, start: number): Float64Array {
  const dist = new Float64Array(map.cols * map.rows).fill(Infinity);
  if (start < 0) return dist;
  const heap = new CellHeap();
  dist[start] = 0;
  heap.push(start, 0);
  const step = map.cellSize;
  while (heap.size > 0) {
    const cell = heap.pop();
    const d = dist[cell] as number;
    forNeighbours(map, cell, (n, cost) => {
      const nd = d + cost * step;
      if (nd < (dist[n] as number)) {
        dist[n] = nd;
        heap.push(n, nd);
      }
    });
  }
  return dist;
}

/** Traversable cells with an unknown 4-neighbour. */
export function frontierCells(map: OccupancyMap): Uint8Array {
  const out = new Uint8Array(map.cols * map.rows);
  const { cols, rows, cells } = map;
  for (let r = 1; r < rows - 1; r++) {
    for (let c = 1; c < cols - 1; c++) {
      const i = r * cols + c;
      if (!map.traversable(i)) continue;
      if (cells[i - 1] === CELL_UNKNOWN || cells[i + 1] === CELL_UNKNOWN || cells[i - cols] === CELL_UNKNOWN || cells[i + cols] === CELL_UNKNOWN) out[i] = 1;
    }
  }
  return out;
}

export interface FrontierCluster {
  /** Cell indices, ascending. */
  cells: number[];
  /** Centroid, world (x, z). */
  centroid: [number, number];
}

/** 8-connected clusters of frontier cells, in order of their lowest cell. */
export function frontierClusters(map: OccupancyMap, frontier: Uint8Array, minClusterSize = 3): FrontierCluster[] {
  const seen = new Uint8Array(frontier.length);
  const clusters: FrontierCluster[] = [];
  const cols = map.cols;
  const stack: number[] = [];
  for (let i = 0; i < frontier.length; i++) {
    if (frontier[i] !== 1 || seen[i] === 1) continue;
    const members: number[] = [];
    seen[i] = 1;
    stack.push(i);
    while (stack.length > 0) {
      const cell = stack.pop() as number;
      members.push(cell);
      const c = cell % cols;
      const r = (cell - c) / cols;
      for (let k = 0; k < 8; k++) {
        const nc = c + (DC[k] as number);
        const nr = r + (DR[k] as number);
        if (nc < 0 || nr < 0 || nc >= cols || nr >= map.rows) continue;
        const n = nr * cols + nc;
        if (frontier[n] === 1 && seen[n] === 0) {
          seen[n] = 1;
          stack.push(n);
        }
      }
    }
    if (members.length < minClusterSize) continue;
    members.sort((a, b) => a - b);
    let sx = 0;
    let sz = 0;
    for (const m of members) {
      const [x, z] = map.cellCentre(m);
      sx += x;
      sz += z;
    }
    clusters.push({ cells: members, centroid: [sx / members.length, sz / members.length] });
  }
  return clusters;
}

/** Unknown area (m²) within `radius` metres of a cell. */
export function informationGain(map: OccupancyMap, cell: number, radius: number): number {
  const k = Math.ceil(radius / map.cellSize);
  const cols = map.cols;
  const c0 = cell % cols;
  const r0 = (cell - c0) / cols;
  const k2 = (radius / map.cellSize) ** 2;
  let unknown = 0;
  for (let dr = -k; dr <= k; dr++) {
    const r = r0 + dr;
    if (r < 0 || r >= map.rows) continue;
    for (let dc = -k; dc <= k; dc++) {
      const c = c0 + dc;
      if (c < 0 || c >= cols || dc * dc + dr * dr > k2) continue;
      if (map.cells[r * cols + c] === CELL_UNKNOWN) unknown++;
    }
  }
  return unknown * map.cellSize * map.cellSize;
}

export interface GoalChoice {
  cell: number;
  /** World (x, z) of the goal cell's centre. */
  point: [number, number];
  distance: number;
  gain: number;
  score: number;
  cluster: FrontierCluster;
}

export interface GoalOptions {
  minClusterSize?: number;
  /** Radius of the information-gain disc, metres (default 1.5). */
  gainRadius?: number;
  /** Cells never to choose again (goals that proved unreachable or were already visited). */
  excluded?: Uint8Array;
}

/** The next frontier goal (see the module's comment for the score), or undefined when no frontier is reachable. */
export function chooseGoal(map: OccupancyMap, agentCell: number, options: GoalOptions = {}): GoalChoice | undefined {
  const dist = distanceField(map, agentCell);
  const clusters = frontierClusters(map, frontierCells(map), options.minClusterSize ?? 3);
  const gainRadius = options.gainRadius ?? 1.5;
  let best: GoalChoice | undefined;
  for (const cluster of clusters) {
    let goal = -1;
    let goalD2 = Infinity;
    for (const cell of cluster.cells) {
      if (!Number.isFinite(dist[cell] as number) || options.excluded?.[cell] === 1) continue;
      const [x, z] = map.cellCentre(cell);
      const d2 = (x - cluster.centroid[0]) ** 2 + (z - cluster.centroid[1]) ** 2;
      if (d2 < goalD2) {
        goalD2 = d2;
        goal = cell;
      }
    }
    if (goal < 0) continue;
    const distance = dist[goal] as number;
    const gain = informationGain(map, goal, gainRadius);
    const score = gain / (1 + distance);
    if (best === undefined || score > best.score || (score === best.score && goal < best.cell)) {
      best = { cell: goal, point: map.cellCentre(goal), distance, gain, score, cluster };
    }
  }
  return best;
}

/** A* from `start` to `goal` over traversable cells (octile heuristic); the cells of the path, start first, or undefined. */
export function aStar(map: OccupancyMap, start: number, goal: number): number[] | undefined {
  if (start < 0 || goal < 0 || !map.traversable(goal)) return undefined;
  const n = map.cols * map.rows;
  const g = new Float64Array(n).fill(Infinity);
  const parent = new Int32Array(n).fill(-1);
  const closed = new Uint8Array(n);
  const cols = map.cols;
  const gc = goal % cols;
  const gr = (goal - gc) / cols;
  const h = (cell: number): number => {
    const c = cell % cols;
    const dx = Math.abs(c - gc);
    const dy = Math.abs((cell - c) / cols - gr);
    return Math.max(dx, dy) + (SQRT2 - 1) * Math.min(dx, dy);
  };
  const heap = new CellHeap();
  g[start] = 0;
  heap.push(start, h(start));
  while (heap.size > 0) {
    const cell = heap.pop();
    if (closed[cell] === 1) continue;
    closed[cell] = 1;
    if (cell === goal) {
      const path: number[] = [];
      for (let p = goal; p >= 0; p = parent[p] as number) path.push(p);
      return path.reverse();
    }
    const gCell = g[cell] as number;
    forNeighbours(map, cell, (nb, cost) => {
      const ng = gCell + cost;
      if (ng < (g[nb] as number)) {
        g[nb] = ng;
        parent[nb] = cell;
        heap.push(nb, ng + h(nb));
      }
    });
  }
  return undefined;
}

/** What a camera sees of the floor, for choosing where to look. */
export interface ViewCone {
  /** Horizontal field of view, radians. */
  hfov: number;
  /** How far a look reveals the floor, metres. */
  range: number;
}

/** The horizontal field of view of a pinhole camera, radians. */
export function horizontalFov(camera: { width: number; fx: number }): number {
  return 2 * Math.atan(camera.width / (2 * camera.fx));
}

/**
 * The cells a look could see on a map: rays a cell apart at `range` fan across the field of
 * view, each stopping at the first occupied cell (which it sees) or at the range. Unknown cells
 * do not stop a ray.
 */
export class ViewFan {
  private readonly stamps: Uint32Array;
  private stamp = 0;
  private readonly rays: number;

  constructor(
    readonly map: OccupancyMap,
    readonly view: ViewCone,
  ) {
    this.stamps = new Uint32Array(map.cols * map.rows);
    this.rays = Math.max(2, Math.ceil((view.hfov * view.range) / map.cellSize));
  }

  /** Calls `visit` once for every cell seen from (x, z) looking along `yaw` (0 looks along −z, positive turns left). */
  forEach(x: number, z: number, yaw: number, visit: (cell: number) => void): void {
    const { map, view, stamps } = this;
    if (++this.stamp === 0xffffffff) {
      stamps.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const step = map.cellSize / 2;
    for (let i = 0; i <= this.rays; i++) {
      const a = yaw - view.hfov / 2 + (view.hfov * i) / this.rays;
      const dx = -Math.sin(a);
      const dz = -Math.cos(a);
      for (let d = step; d <= view.range; d += step) {
        const c = map.cellAt(x + dx * d, z + dz * d);
        if (c < 0) break;
        if (stamps[c] !== stamp) {
          stamps[c] = stamp;
          visit(c);
        }
        if (map.cells[c] === CELL_OCCUPIED) break;
      }
    }
  }

  /**
   * For each of `headings(count)`, the sum of `weights` over the cells a look from the centre of
   * `cell` along that heading could see. One fan of rays all around is cast (each cell counted
   * for the first ray that reaches it) and each heading sums the rays within its field of view.
   */
  sumsAround(cell: number, weights: Float32Array, count = 12): Float64Array {
    const { map, view, stamps } = this;
    const [x, z] = map.cellCentre(cell);
    if (++this.stamp === 0xffffffff) {
      stamps.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const perHeading = Math.max(1, Math.ceil(((2 * Math.PI) / count) * view.range / map.cellSize));
    const total = count * perHeading;
    const raySums = new Float64Array(total);
    const step = map.cellSize / 2;
    const inv = 1 / map.cellSize;
    const { cols, rows, cells } = map;
    for (let i = 0; i < total; i++) {
      const a = (2 * Math.PI * i) / total;
      const dx = -Math.sin(a);
      const dz = -Math.cos(a);
      let sum = 0;
      for (let d = step; d <= view.range; d += step) {
        const c = Math.floor((x + dx * d - map.originX) * inv);
        const r = Math.floor((z + dz * d - map.originZ) * inv);
        if (c < 0 || r < 0 || c >= cols || r >= rows) break;
        const j = r * cols + c;
        if (stamps[j] !== stamp) {
          stamps[j] = stamp;
          sum += weights[j] as number;
        }
        if (cells[j] === CELL_OCCUPIED) break;
      }
      raySums[i] = sum;
    }
    const half = Math.round((view.hfov / 2 / (2 * Math.PI)) * total);
    const out = new Float64Array(count);
    for (let h = 0; h < count; h++) {
      let sum = 0;
      for (let k = -half; k <= half; k++) sum += raySums[(((h * perHeading + k) % total) + total) % total] as number;
      out[h] = sum;
    }
    return out;
  }
}

/** `count` evenly spaced headings in (−π, π], the first 0. */
export function headings(count = 12): number[] {
  return Array.from({ length: count }, (_, i) => (2 * Math.PI * i) / count - (i > count / 2 ? 2 * Math.PI : 0));
}

/** Of `headings()`, the one whose look from `cell` could reveal the most unknown cells (the first on a tie). */
export function bestViewHeading(fan: ViewFan, cell: number): { yaw: number; unknown: number } {
  const cells = fan.map.cells;
  const unknown = new Float32Array(cells.length);
  for (let i = 0; i < cells.length; i++) if (cells[i] === CELL_UNKNOWN) unknown[i] = 1;
  const sums = fan.sumsAround(cell, unknown);
  const yaws = headings();
  let best = 0;
  for (let h = 1; h < sums.length; h++) if ((sums[h] as number) > (sums[best] as number)) best = h;
  return { yaw: yaws[best] as number, unknown: sums[best] as number };
}

export interface Lookout {
  cell: number;
  yaw: number;
  /** Path distance from the agent, metres. */
  distance: number;
  /** Σ 2^−looks over the known cells in view. */
  freshness: number;
  score: number;
}

/**
 * Where to look once no frontier is left: of the reachable cells on a `spacing` lattice (and
 * the agent's own), at each of `headings()`, the view whose known cells have been looked at
 * least, by `looks` (how many earlier views saw each cell): score = Σ 2^−looks / (1 + d), d the
 * path distance in metres. Undefined when nothing reachable is in view.
 */
export function chooseLookout(fan: ViewFan, agentCell: number, looks: Uint16Array, spacing = 0.5): Lookout | undefined {
  const map = fan.map;
  const dist = distanceField(map, agentCell);
  const k = Math.max(1, Math.round(spacing / map.cellSize));
  const cells = map.cells;
  const weights = new Float32Array(cells.length);
  for (let i = 0; i < cells.length; i++) if (cells[i] !== CELL_UNKNOWN) weights[i] = 2 ** -(looks[i] as number);
  const yaws = headings();
  let best: Lookout | undefined;
  for (let cell = 0; cell < dist.length; cell++) {
    const distance = dist[cell] as number;
    const c = cell % map.cols;
    const r = (cell - c) / map.cols;
    if (!Number.isFinite(distance) || (cell !== agentCell && (c % k !== 0 || r % k !== 0))) continue;
    const sums = fan.sumsAround(cell, weights);
    for (let h = 0; h < sums.length; h++) {
      const freshness = sums[h] as number;
      const score = freshness / (1 + distance);
      if (freshness > 0 && (best === undefined || score > best.score)) best = { cell, yaw: yaws[h] as number, distance, freshness, score };
    }
  }
  return best;
}
