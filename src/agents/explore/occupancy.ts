/**
 * A 2-D top-down occupancy map of the floor (x, z) built from depth: every cell is unknown,
 * free or occupied. Depth pixels are back-projected to world points (src/geometry); a point
 * within `floorBand` metres of the agent's floor is floor (its cell and the cells on the line
 * of sight to it become free), a point between `floorBand` and `maxObstacleHeight` above the
 * floor is an obstacle (its cell becomes occupied, the cells before it free), and points above
 * the band (ceilings, the wall above a door) are left out. Occupied is sticky: later free
 * evidence does not clear it. Cells within `inflateRadius` of an occupied cell are not
 * traversable for the agent's body (a count per cell, updated as cells become occupied).
 * Typed arrays throughout.
 */
import { backProject } from "../../geometry/index.js";
import { NAV_CELL_M, type EnvObservation, type NavGrid, type Point3, type SceneBounds } from "../../sim/index.js";

export const CELL_UNKNOWN = 0;
export const CELL_FREE = 1;
export const CELL_OCCUPIED = 2;

export interface OccupancyOptions {
  /** Cell size, metres (default 0.1). */
  cellSize?: number;
  /** Points within this height of the floor are floor (default 0.08 m). */
  floorBand?: number;
  /** Points above the floor band and up to this height are obstacles (default 1.8 m). */
  maxObstacleHeight?: number;
  /** Depths used, metres (default 0.1 to 5). */
  minDepth?: number;
  maxDepth?: number;
  /**
   * Every stride-th pixel in each direction (default: about 80 columns across the image, every
   * 4th pixel at 320 px; a fixed stride would leave rays a metre apart at range in a small image).
   */
  stride?: number;
  /**
   * Cells within this distance of an occupied cell are not traversable (default 0.15 m: a
   * little under a 0.2 m body radius, as cell quantisation already adds up to a cell; a move
   * that still touches a wall fails in the environment and the explorer re-plans).
   */
  inflateRadius?: number;
  /** Extra margin around the scene bounds, metres (default 0.5). */
  margin?: number;
}

export class OccupancyMap {
  readonly cellSize: number;
  readonly originX: number;
  readonly originZ: number;
  readonly cols: number;
  readonly rows: number;
  /** CELL_UNKNOWN, CELL_FREE or CELL_OCCUPIED per cell, row-major (row = z, column = x). */
  readonly cells: Uint8Array;
  /** How many occupied cells are within the inflation radius of each cell. */
  readonly near: Uint16Array;
  private readonly floorBand: number;
  private readonly maxObstacleHeight: number;
  private readonly minDepth: number;
  private readonly maxDepth: number;
  private readonly stride: number | undefined;
  private readonly kernel: Int32Array;
  private readonly kernelDc: Int32Array;
  private readonly kernelDr: Int32Array;
  /** Bumped whenever a cell turns occupied (plans made before may cross it). */
  occupiedVersion = 0;

  constructor(bounds: SceneBounds, options: OccupancyOptions = {}) {
    this.cellSize = options.cellSize ?? 0.1;
    const margin = options.margin ?? 0.5;
    this.originX = bounds.min[0] - margin;
    this.originZ = bounds.min[2] - margin;
    this.cols = Math.max(1, Math.ceil((bounds.max[0] - bounds.min[0] + 2 * margin) / this.cellSize));
    this.rows = Math.max(1, Math.ceil((bounds.max[2] - bounds.min[2] + 2 * margin) / this.cellSize));
    this.cells = new Uint8Array(this.cols * this.rows);
    this.near = new Uint16Array(this.cols * this.rows);
    this.floorBand = options.floorBand ?? 0.08;
    this.maxObstacleHeight = options.maxObstacleHeight ?? 1.8;
    this.minDepth = options.minDepth ?? 0.1;
    this.maxDepth = options.maxDepth ?? 5;
    this.stride = options.stride;
    const radius = options.inflateRadius ?? 0.15;
    const k = Math.ceil(radius / this.cellSize);
    const dcs: number[] = [];
    const drs: number[] = [];
    for (let dr = -k; dr <= k; dr++) {
      for (let dc = -k; dc <= k; dc++) {
        if (Math.hypot(dc, dr) * this.cellSize <= radius + 1e-9) {
          dcs.push(dc);
          drs.push(dr);
        }
      }
    }
    this.kernelDc = Int32Array.from(dcs);
    this.kernelDr = Int32Array.from(drs);
    this.kernel = Int32Array.from(dcs.map((dc, i) => (drs[i] as number) * this.cols + dc));
  }

  /** The cell containing (x, z), or -1 outside the map. */
  cellAt(x: number, z: number): number {
    const c = Math.floor((x - this.originX) / this.cellSize);
    const r = Math.floor((z - this.originZ) / this.cellSize);
    if (c < 0 || r < 0 || c >= this.cols || r >= this.rows) return -1;
    return r * this.cols + c;
  }

  /** The centre (x, z) of a cell. */
  cellCentre(cell: number): [number, number] {
    const c = cell % this.cols;
    const r = (cell - c) / this.cols;
    return [this.originX + (c + 0.5) * this.cellSize, this.originZ + (r + 0.5) * this.cellSize];
  }

  /** Free and clear of obstacles by the inflation radius: the agent may stand here. */
  traversable(cell: number): boolean {
    return this.cells[cell] === CELL_FREE && this.near[cell] === 0;
  }

  /** Marks a cell occupied (and its neighbourhood not traversable). */
  markOccupied(cell: number): void {
    if (cell < 0 || this.cells[cell] === CELL_OCCUPIED) return;
    this.cells[cell] = CELL_OCCUPIED;
    this.occupiedVersion++;
    const c = cell % this.cols;
    const r = (cell - c) / this.cols;
    const n = this.kernel.length;
    for (let i = 0; i < n; i++) {
      const cc = c + (this.kernelDc[i] as number);
      const rr = r + (this.kernelDr[i] as number);
      if (cc < 0 || rr < 0 || cc >= this.cols || rr >= this.rows) continue;
      const j = cell + (this.kernel[i] as number);
      this.near[j] = (this.near[j] as number) + 1;
    }
  }

  /** Marks free the cells on the line from one cell to another (Bresenham), `to` included when `inclusive`. */
  private clearRay(c0: number, r0: number, c1: number, r1: number, inclusive: boolean): void {
    const cells = this.cells;
    const cols = this.cols;
    let c = c0;
    let r = r0;
    const dc = Math.abs(c1 - c0);
    const dr = -Math.abs(r1 - r0);
    const sc = c0 < c1 ? 1 : -1;
    const sr = r0 < r1 ? 1 : -1;
    let err = dc + dr;
    for (;;) {
      const last = c === c1 && r === r1;
      if (last && !inclusive) return;
      const i = r * cols + c;
      if (cells[i] === CELL_UNKNOWN) cells[i] = CELL_FREE;
      if (last) return;
      const e2 = 2 * err;
      if (e2 >= dr) {
        err += dr;
        c += sc;
      }
      if (e2 <= dc) {
        err += dc;
        r += sr;
      }
    }
  }

  /**
   * Adds one observation; `floorY` is the height of the agent's floor (its feet). Returns the
   * number of cells that changed from unknown.
   */
  integrate(obs: EnvObservation, floorY: number = obs.state.position[1]): number {
    const { points } = backProject(obs.depth, obs.camera, obs.pose, { minDepth: this.minDepth, maxDepth: this.maxDepth, stride: this.stride ?? Math.max(1, Math.round(obs.camera.width / 80)) });
    const camCell = this.cellAt(obs.pose[3] as number, obs.pose[11] as number);
    if (camCell < 0) return 0;
    const before = this.countKnown();
    const cc = camCell % this.cols;
    const cr = (camCell - cc) / this.cols;
    if (this.cells[camCell] === CELL_UNKNOWN) this.cells[camCell] = CELL_FREE;
    const n = points.length / 3;
    const inv = 1 / this.cellSize;
    const obstacles: number[] = [];
    for (let i = 0; i < n; i++) {
      const h = (points[3 * i + 1] as number) - floorY;
      if (h > this.maxObstacleHeight) continue;
      const c = Math.floor(((points[3 * i] as number) - this.originX) * inv);
      const r = Math.floor(((points[3 * i + 2] as number) - this.originZ) * inv);
      if (c < 0 || r < 0 || c >= this.cols || r >= this.rows) continue;
      if (h < this.floorBand) this.clearRay(cc, cr, c, r, true);
      else {
        this.clearRay(cc, cr, c, r, false);
        obstacles.push(r * this.cols + c);
      }
    }
    for (const cell of obstacles) this.markOccupied(cell);
    return this.countKnown() - before;
  }

  /** Cells that are not unknown. */
  countKnown(): number {
    let k = 0;
    const cells = this.cells;
    for (let i = 0; i < cells.length; i++) if (cells[i] !== CELL_UNKNOWN) k++;
    return k;
  }

  /** Whether the world point (x, z) lies in a free cell. */
  isFreeAt(x: number, z: number): boolean {
    const cell = this.cellAt(x, z);
    return cell >= 0 && this.cells[cell] === CELL_FREE;
  }
}

/** How much of the floor the agent could reach a map has seen. */
export interface Coverage {
  /** seenM2 / reachableM2, in [0, 1]. */
  share: number;
  /** Floor reachable from the start, m². */
  reachableM2: number;
  /** Of it, floor the map holds as known (free or occupied), m². */
  seenM2: number;
}

/**
 * The share of the floor reachable from `start` (the navigation grid's free cells connected to
 * it) that `map` has seen: a reachable grid cell counts as seen when the map cell at its centre
 * is known. Undefined when the start is not on the grid's free floor.
 */
export function reachableCoverage(map: OccupancyMap, grid: NavGrid, start: Point3): Coverage | undefined {
  const source = grid.cellAt(start[0], start[2]);
  if (source < 0 || grid.blocked[source] !== 0) return undefined;
  const dist = grid.distanceField(source);
  let reachable = 0;
  let seen = 0;
  for (let i = 0; i < dist.length; i++) {
    if (!Number.isFinite(dist[i] as number)) continue;
    reachable++;
    const [x, z] = grid.cellCentre(i);
    const cell = map.cellAt(x, z);
    if (cell >= 0 && map.cells[cell] !== CELL_UNKNOWN) seen++;
  }
  const area = NAV_CELL_M * NAV_CELL_M;
  return { share: reachable > 0 ? seen / reachable : 0, reachableM2: reachable * area, seenM2: seen * area };
}
