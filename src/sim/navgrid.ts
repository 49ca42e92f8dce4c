/**
 * An occupancy grid of the floor (x, z) for navigation: 0.05 m cells; a cell is free when a
 * disc of the agent's radius at its centre touches no obstacle footprint. Geodesic distance is
 * the straight line when it stays on free cells, otherwise Dijkstra on the 8-connected grid
 * (no corner cutting) between the points' cells.
 */
import type { Point3 } from "./protocol.js";

export const NAV_CELL_M = 0.05;
export const AGENT_RADIUS_M = 0.2;

export class NavGrid {
  readonly originX: number;
  readonly originZ: number;
  readonly cols: number;
  readonly rows: number;
  /** 1 = blocked. Cells outside the given bounds do not exist. */
  readonly blocked: Uint8Array;
  private readonly fields = new Map<number, Float64Array>();

  constructor(min: Point3, max: Point3, blocked?: Uint8Array) {
    this.originX = min[0];
    this.originZ = min[2];
    this.cols = Math.ceil((max[0] - min[0]) / NAV_CELL_M);
    this.rows = Math.ceil((max[2] - min[2]) / NAV_CELL_M);
    this.blocked = blocked ?? new Uint8Array(this.cols * this.rows);
  }

  clone(): NavGrid {
    const g = new NavGrid([this.originX, 0, this.originZ], [this.originX + this.cols * NAV_CELL_M, 0, this.originZ + this.rows * NAV_CELL_M], this.blocked.slice());
    return g;
  }

  cellCentre(cell: number): [number, number] {
    const c = cell % this.cols;
    const r = Math.floor(cell / this.cols);
    return [this.originX + (c + 0.5) * NAV_CELL_M, this.originZ + (r + 0.5) * NAV_CELL_M];
  }

  /** The cell containing (x, z), or -1 outside the grid. */
  cellAt(x: number, z: number): number {
    const c = Math.floor((x - this.originX) / NAV_CELL_M);
    const r = Math.floor((z - this.originZ) / NAV_CELL_M);
    if (c < 0 || r < 0 || c >= this.cols || r >= this.rows) return -1;
    return r * this.cols + c;
  }

  /** Blocks every cell whose centre is within the agent's radius of the box's footprint. */
  block(min: Point3, max: Point3): void {
    const c0 = Math.max(0, Math.floor((min[0] - AGENT_RADIUS_M - this.originX) / NAV_CELL_M));
    const c1 = Math.min(this.cols - 1, Math.ceil((max[0] + AGENT_RADIUS_M - this.originX) / NAV_CELL_M));
    const r0 = Math.max(0, Math.floor((min[2] - AGENT_RADIUS_M - this.originZ) / NAV_CELL_M));
    const r1 = Math.min(this.rows - 1, Math.ceil((max[2] + AGENT_RADIUS_M - this.originZ) / NAV_CELL_M));
    const r2 = AGENT_RADIUS_M * AGENT_RADIUS_M;
    for (let r = r0; r <= r1; r++) {
      const z = this.originZ + (r + 0.5) * NAV_CELL_M;
      const dz = z < min[2] ? min[2] - z : z > max[2] ? z - max[2] : 0;
      for (let c = c0; c <= c1; c++) {
        const x = this.originX + (c + 0.5) * NAV_CELL_M;
        const dx = x < min[0] ? min[0] - x : x > max[0] ? x - max[0] : 0;
        if (dx * dx + dz * dz < r2) this.blocked[r * this.cols + c] = 1;
      }
    }
    this.fields.clear();
  }

  isFree(x: number, z: number): boolean {
    const cell = this.cellAt(x, z);
    return cell >= 0 && this.blocked[cell] === 0;
  }

  /** Whether the segment stays on free cells (sampled every half cell). */
  segmentFree(x0: number, z0: number, x1: number, z1: number): boolean {
    const length = Math.hypot(x1 - x0, z1 - z0);
    const steps = Math.max(1, Math.ceil(length / (NAV_CELL_M / 2)));
    for (let i = 0; i <= steps; i++) {
      const t = i / steps;
      if (!this.isFree(x0 + (x1 - x0) * t, z0 + (z1 - z0) * t)) return false;
    }
    return true;
  }

  freeCellsIn(min: [number, number], max: [number, number]): number[] {
    const out: number[] = [];
    for (let cell = 0; cell < this.blocked.length; cell++) {
      if (this.blocked[cell] !== 0) continue;
      const [x, z] = this.cellCentre(cell);
      if (x > min[0] && x < max[0] && z > min[1] && z < max[1]) out.push(cell);
    }
    return out;
  }

  /** Whether all free cells form one 4-connected component. */
  isConnected(): boolean {
    const n = this.blocked.length;
    let first = -1;
    let free = 0;
    for (let i = 0; i < n; i++) {
      if (this.blocked[i] === 0) {
        free++;
        if (first < 0) first = i;
      }
    }
    if (free === 0) return false;
    const seen = new Uint8Array(n);
    const queue = new Int32Array(free);
    let head = 0;
    let tail = 0;
    queue[tail++] = first;
    seen[first] = 1;
    while (head < tail) {
      const cell = queue[head++] as number;
      const c = cell % this.cols;
      const neighbours = [c > 0 ? cell - 1 : -1, c + 1 < this.cols ? cell + 1 : -1, cell - this.cols, cell + this.cols];
      for (const next of neighbours) {
        if (next < 0 || next >= n || seen[next] || this.blocked[next] !== 0) continue;
        seen[next] = 1;
        queue[tail++] = next;
      }
    }
    return tail === free;
  }

  /** Dijkstra distances (metres between cell centres) from `source` to every cell; Infinity where unreachable. */
  distanceField(source: number): Float64Array {
    const cached = this.fields.get(source);
    if (cached) return cached;
    const n = this.blocked.length;
    const dist = new Float64Array(n).fill(Infinity);
    const heap = new MinHeap();
    dist[source] = 0;
    heap.push(source, 0);
    const diag = Math.SQRT2 * NAV_CELL_M;
    while (heap.size > 0) {
      const [cell, d] = heap.pop();
      if (d > (dist[cell] as number)) continue;
      const c = cell % this.cols;
      const r = Math.floor(cell / this.cols);
      for (let dr = -1; dr <= 1; dr++) {
        for (let dc = -1; dc <= 1; dc++) {
          if (dr === 0 && dc === 0) continue;
          const nr = r + dr;
          const nc = c + dc;
          if (nr < 0 || nc < 0 || nr >= this.rows || nc >= this.cols) continue;
          const next = nr * this.cols + nc;
          if (this.blocked[next] !== 0) continue;
          if (dr !== 0 && dc !== 0 && (this.blocked[r * this.cols + nc] !== 0 || this.blocked[nr * this.cols + c] !== 0)) continue;
          const nd = d + (dr !== 0 && dc !== 0 ? diag : NAV_CELL_M);
          if (nd < (dist[next] as number)) {
            dist[next] = nd;
            heap.push(next, nd);
          }
        }
      }
    }
    if (this.fields.size > 64) this.fields.clear();
    this.fields.set(source, dist);
    return dist;
  }

  /** Walkable distance between two points; Infinity when either is blocked or they are not connected. */
  geodesic(x0: number, z0: number, x1: number, z1: number): number {
    const a = this.cellAt(x0, z0);
    const b = this.cellAt(x1, z1);
    if (a < 0 || b < 0 || this.blocked[a] !== 0 || this.blocked[b] !== 0) return Infinity;
    if (this.segmentFree(x0, z0, x1, z1)) return Math.hypot(x1 - x0, z1 - z0);
    const field = this.distanceField(a);
    return field[b] as number;
  }
}

class MinHeap {
  private readonly cells: number[] = [];
  private readonly keys: number[] = [];
  get size(): number {
    return this.cells.length;
  }
  push(cell: number, key: number): void {
    const cells = this.cells;
    const keys = this.keys;
    let i = cells.length;
    cells.push(cell);
    keys.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((keys[p] as number) <= key) break;
      cells[i] = cells[p] as number;
      keys[i] = keys[p] as number;
      i = p;
    }
    cells[i] = cell;
    keys[i] = key;
  }
  pop(): [number, number] {
    const cells = this.cells;
    const keys = this.keys;
    const top: [number, number] = [cells[0] as number, keys[0] as number];
    const lastCell = cells.pop() as number;
    const lastKey = keys.pop() as number;
    const n = cells.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const m = r < n && (keys[r] as number) < (keys[l] as number) ? r : l;
        if ((keys[m] as number) >= lastKey) break;
        cells[i] = cells[m] as number;
        keys[i] = keys[m] as number;
        i = m;
      }
      cells[i] = lastCell;
      keys[i] = lastKey;
    }
    return top;
  }
}
