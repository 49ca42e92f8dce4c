/**
 * The state Fine-EQA's reference mode keeps between steps (the fields of EXPRESS-Bench's
 * `TSDFPlanner` and `main.py`'s loop) and its steps as functions of that state: the exploration
 * state machine (`get_exp_state`), the semantic value map (`integrate_sem`), the region map
 * (`integrate_reg`, `modify_map`), the next goal in a region (`find_next_point_region`), the next
 * frontier pose (`find_next_pose`, `find_normal_into_space`) and the candidate points in view
 * (`find_prompt_points_within_view`). None calls a model or an environment, so each is reached by
 * a unit test; `fine-eqa-reference.ts` runs them in the reference's order. Sources and every
 * decision are in that file's header.
 */
import type { Random } from "../../core/index.js";
import { farthestPoints, gaussianSmooth, gridDisc, projectToPixel } from "../../geometry/index.js";
import { wrapAngle, type AgentState, type EnvObservation } from "../../sim/index.js";
import { headingTo } from "./explorer.js";
import { CELL_FREE, CELL_OCCUPIED, CELL_UNKNOWN, type OccupancyMap } from "./occupancy.js";
import { aStar, distanceField } from "./planning.js";

/** `fine_eqa.yaml` and the defaults of `main.py` / `tsdf.py` the reference runs with. */
export const REF = {
  seed: 42,
  initClearanceM: 1.0,
  blackPixelRatio: 0.5,
  minRandomInitSteps: 2,
  maxRounds: 3,
  gsvT: 0.5,
  gsvF: 3,
  promptPoints: 3,
  maxUnoccupied: 300,
  minPointsForClustering: 3,
  pointMinDistM: 2,
  pointMaxDistM: 10,
  clusterThresholdM: 1,
  minPromptPoints: 2,
  camOffsetM: 0.6,
  viewMarginTopPx: 100,
  viewMarginSidePx: 30,
  circleRadiusPx: 18,
  fontPx: 30,
  referenceSidePx: 512,
  valueRadiusM: 1,
  regionRadiusM: 1,
  regionJoinFactor: 3,
  visitedRadiusM: 0.5,
  smoothSigmaCells: 5,
  distT: 10,
  unexploredT: 0.2,
  unoccupiedT: 2,
  valT: 0.5,
  valDirT: 0.5,
  maxValCheckM: 3,
  minDistFromCur: 0.5,
  maxDistFromCurM: 3,
  frontierSpacingM: 1.5,
  maxUnexploredCheckM: 3,
  maxUnoccupiedCheckM: 1,
  frontierTries: 50,
  goalPathTries: 10,
} as const;

/** A relevant region as `get_exp_state` keeps it: rounds begun (`count`), looks made in the round (`dir`), goal points (cells). */
export interface RegionExploration {
  region: number;
  count: number;
  dir: number;
  points: number[];
}

/** The relevant regions in the reference's order, and whether the agent explores frontiers (FBE) rather than a region (GOE). */
export interface ExplorationPlan {
  regions: RegionExploration[];
  fbe: boolean;
}

export function explorationPlan(relevant: number[]): ExplorationPlan {
  return { regions: relevant.map((region) => ({ region, count: 0, dir: 0, points: [] })), fbe: true };
}

/**
 * `get_exp_state` (tsdf.py), rule for rule: advances the plan by one step and says whether that
 * step explores frontiers. Only the first region, and the second when exactly two were named, are
 * ever visited; a region's visit is at most `maxRounds` rounds of four looks.
 */
export function advanceExplorationPlan(plan: ExplorationPlan): boolean {
  const list = plan.regions;
  if (list.length === 0) return plan.fbe;
  const hasPoints = (i: number): boolean => i >= 0 && i < list.length && list[i]!.count === 0 && list[i]!.points.length > 0;
  const complete = (i: number): boolean => list[i]!.count === REF.maxRounds && list[i]!.dir === 3;
  const reset = (i: number): void => {
    if (i >= 0 && i < list.length) list[i] = { region: list[i]!.region, count: 0, dir: 0, points: [] };
  };
  const advance = (i: number): void => {
    const e = list[i]!;
    if (e.dir === 3) {
      e.count++;
      e.dir = 0;
    } else e.dir++;
  };
  if (plan.fbe) {
    if (hasPoints(0)) {
      plan.fbe = false;
      list[0]!.count = 1;
    } else if (list.length === 2 && hasPoints(1)) {
      plan.fbe = false;
      list[1]!.count = 1;
    }
  } else if (list[0]!.count > 0) {
    if (complete(0)) {
      reset(0);
      if (list.length === 2 && hasPoints(1)) list[1]!.count = 1;
      else plan.fbe = true;
    } else advance(0);
  } else if (hasPoints(0)) {
    reset(1);
    list[0]!.count = 1;
  } else if (complete(1)) {
    reset(1);
    plan.fbe = true;
  } else advance(1);
  return plan.fbe;
}

/** The region being visited: the one with most rounds begun (the first on ties). */
export function activeRegion(plan: ExplorationPlan): number {
  let best = 0;
  plan.regions.forEach((e, i) => {
    if (e.count > plan.regions[best]!.count) best = i;
  });
  return best;
}

/** The reference planner's maps over the occupancy grid, its visited goals, its committed frontier and its random draws. */
export class ReferenceMaps {
  readonly rows: number;
  readonly cols: number;
  readonly cellSize: number;
  /** Semantic value per cell (`integrate_sem`'s running mean) and how many updates each holds. */
  readonly value: Float32Array;
  readonly valueWeight: Float32Array;
  /** Region index per cell, −1 where none. */
  readonly regionMap: Int16Array;
  /** Each region's earlier points (cells), joined to a new one within `regionJoinFactor` radii. */
  readonly regionHistory = new Map<number, number[]>();
  /** Goal cells already chosen in a region. */
  readonly visited: number[] = [];
  /** A frontier beyond `maxDistFromCurM` being approached over several steps. */
  committed: { target: number; toward: [number, number] } | undefined;

  constructor(
    readonly map: OccupancyMap,
    readonly random: Random,
  ) {
    this.rows = map.rows;
    this.cols = map.cols;
    this.cellSize = map.cellSize;
    this.value = new Float32Array(map.rows * map.cols);
    this.valueWeight = new Float32Array(map.rows * map.cols);
    this.regionMap = new Int16Array(map.rows * map.cols).fill(-1);
  }

  rc(cell: number): [number, number] {
    return [Math.floor(cell / this.cols), cell % this.cols];
  }

  centre(cell: number): [number, number] {
    return this.map.cellCentre(cell);
  }

  /** The cells within `radiusM` (truncated to whole cells, as the reference does) of `cell`. */
  discAround(cell: number, radiusCells: number): number[] {
    const [r0, c0] = this.rc(cell);
    return gridDisc(r0, c0, radiusCells, this.rows, this.cols);
  }
}

/** The start's surroundings taken as free floor (the reference's `init_clearance`). */
export function clearStart(maps: ReferenceMaps, position: readonly number[], clearanceM: number): void {
  const start = maps.map.cellAt(position[0] as number, position[2] as number);
  if (start < 0 || clearanceM <= 0) return;
  for (const cell of maps.discAround(start, clearanceM / maps.cellSize)) if (maps.map.cells[cell] === CELL_UNKNOWN) maps.map.cells[cell] = CELL_FREE;
}

/** Pixels of a view that are pure black (the reference skips a view more than half black). */
export function blackPixels(obs: EnvObservation): number {
  let black = 0;
  for (let i = 0; i < obs.rgb.length; i += 3) if ((obs.rgb[i] as number) + (obs.rgb[i + 1] as number) + (obs.rgb[i + 2] as number) === 0) black++;
  return black;
}

/** integrate_sem: each candidate's value averaged into a disc of `valueRadiusM` (running mean, weight 1). */
export function integrateValue(maps: ReferenceMaps, candidates: number[], values: number[]): void {
  candidates.forEach((cell, i) => {
    for (const p of maps.discAround(cell, Math.trunc(REF.valueRadiusM / maps.cellSize))) {
      const w = maps.valueWeight[p] as number;
      maps.valueWeight[p] = w + 1;
      maps.value[p] = (w * (maps.value[p] as number) + (values[i] as number)) / (w + 1);
    }
  });
}

/** integrate_reg and modify_map: the region's disc, joined to its earlier points within 3 m; a goal point when relevant and not near a visited point. */
export function integrateRegion(maps: ReferenceMaps, plan: ExplorationPlan, cell: number, region: number): boolean {
  const radius = Math.trunc(REF.regionRadiusM / maps.cellSize);
  const [r0, c0] = maps.rc(cell);
  for (const p of maps.discAround(cell, radius)) maps.regionMap[p] = region;
  const history = maps.regionHistory.get(region);
  if (history === undefined) maps.regionHistory.set(region, [cell]);
  else {
    for (const earlier of history) {
      const [r1, c1] = maps.rc(earlier);
      if (Math.hypot(r1 - r0, c1 - c0) > REF.regionJoinFactor * radius) continue;
      const len = Math.max(Math.abs(r1 - r0), Math.abs(c1 - c0));
      for (let s = 0; s <= len; s++) {
        const r = Math.round(r1 + ((r0 - r1) * s) / Math.max(1, len));
        const c = Math.round(c1 + ((c0 - c1) * s) / Math.max(1, len));
        for (const p of gridDisc(r, c, radius, maps.rows, maps.cols)) maps.regionMap[p] = region;
      }
    }
    history.push(cell);
  }
  const entry = plan.regions.find((e) => e.region === region);
  if (entry === undefined) return false;
  const near = maps.visited.some((v) => {
    const [vr, vc] = maps.rc(v);
    return Math.hypot(vr - r0, vc - c0) < radius / 2;
  });
  if (near) return false;
  entry.points.push(cell);
  return true;
}

/** find_next_point_region: the region's goal point of highest masked value, else the masked map's maximum away from visited points. */
export function nextRegionPoint(maps: ReferenceMaps, entry: RegionExploration): number {
  const { rows, cols } = maps;
  const n = rows * cols;
  const smooth = gaussianSmooth(maps.value, rows, cols, REF.smoothSigmaCells);
  const masked = new Float32Array(n);
  for (let i = 0; i < n; i++) masked[i] = maps.regionMap[i] === entry.region ? (smooth[i] as number) : 0;
  const maskedSmooth = gaussianSmooth(masked, rows, cols, REF.smoothSigmaCells);
  let next: number;
  if (entry.points.length > 0) {
    let best = 0;
    entry.points.forEach((p, i) => {
      if ((maskedSmooth[p] as number) > (maskedSmooth[entry.points[best] as number] as number)) best = i;
    });
    next = entry.points[best] as number;
    entry.points.splice(best, 1);
  } else {
    const away = Float32Array.from(maskedSmooth);
    const radius = Math.trunc(REF.visitedRadiusM / maps.cellSize);
    for (const v of maps.visited) for (const p of maps.discAround(v, radius)) away[p] = 0;
    const again = gaussianSmooth(away, rows, cols, REF.smoothSigmaCells);
    let max = -Infinity;
    const ties: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = again[i] as number;
      if (v > max) {
        max = v;
        ties.length = 0;
      }
      if (v === max) ties.push(i);
    }
    next = ties[Math.floor(maps.random() * ties.length)] as number;
  }
  maps.visited.push(next);
  return next;
}

/** Where `find_next_pose` sends the agent: a cell, a heading, and how it was chosen. */
export interface NextPose {
  cell: number;
  yaw: number;
  kind: "frontier" | "commit" | "random";
}

/** find_next_pose: a frontier drawn by weight and backed off, committed when beyond 3 m; no frontier: here, a random heading. */
export function nextPose(maps: ReferenceMaps, state: AgentState, step: number, agentCell: number): NextPose {
  const [ar, ac] = agentCell >= 0 ? maps.rc(agentCell) : maps.rc(maps.map.cellAt(state.position[0], state.position[2]));
  let goal: { cell: number; toward: [number, number]; kind: NextPose["kind"] };
  if (maps.committed) goal = { cell: maps.committed.target, toward: maps.committed.toward, kind: "commit" };
  else {
    const picked = pickFrontier(maps, state, step, agentCell, [ar, ac]);
    if (!picked) {
      const a = maps.random() - 0.5;
      const b = maps.random() - 0.5;
      return { cell: agentCell, yaw: yawOf(a, b), kind: "random" };
    }
    goal = { ...picked, kind: "frontier" };
  }
  return approach(maps, state, agentCell, [ar, ac], goal);
}

/** The heading of a step of (dr, dc) on the grid. */
function yawOf(dr: number, dc: number): number {
  return headingTo(0, 0, dc, dr);
}

/** A goal within `maxDistFromCurM` is reached in one move; a farther one is committed to and approached that far along the path. */
function approach(maps: ReferenceMaps, state: AgentState, agentCell: number, [ar, ac]: [number, number], goal: { cell: number; toward: [number, number]; kind: NextPose["kind"] }): NextPose {
  const { cellSize } = maps;
  const { toward } = goal;
  const [tr, tc] = maps.rc(goal.cell);
  let next = goal.cell;
  let dir: [number, number] = [toward[0] - tr, toward[1] - tc];
  let reachedEnd = true;
  const far = Math.hypot(tr - ar, tc - ac) > REF.maxDistFromCurM / cellSize;
  if (far) {
    maps.committed = { target: goal.cell, toward };
    const path = agentCell >= 0 ? aStar(maps.map, agentCell, goal.cell) : undefined;
    if (path && path.length > 1) {
      const index = Math.min(Math.trunc(REF.maxDistFromCurM / cellSize), path.length - 1);
      next = path[index] as number;
      reachedEnd = index === path.length - 1;
      const [xr, xc] = maps.rc(next);
      dir = [toward[0] - xr, toward[1] - xc];
    }
  }
  if (!far || reachedEnd) maps.committed = undefined;
  if (dir[0] === 0 && dir[1] === 0) dir = [toward[0] - ar, toward[1] - ac];
  return { cell: next, yaw: dir[0] === 0 && dir[1] === 0 ? state.yaw : yawOf(dir[0], dir[1]), kind: goal.kind };
}

/** The frontier cells reachable from the agent's cell: 3 or 4 of their 8 neighbours unknown. */
function frontierCells(maps: ReferenceMaps, island: Float32Array | Float64Array | number[]): [number, number][] {
  const { rows, cols } = maps;
  const frontiers: [number, number][] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (!Number.isFinite(island[r * cols + c] as number)) continue;
      let k = 0;
      for (let dr = -1; dr <= 1; dr++) for (let dc = -1; dc <= 1; dc++) if (dr !== 0 || dc !== 0) k += unknownAt(maps, r + dr, c + dc);
      if (k >= 3 && k <= 4) frontiers.push([r, c]);
    }
  }
  return frontiers;
}

function unknownAt(maps: ReferenceMaps, r: number, c: number): number {
  return r >= 0 && c >= 0 && r < maps.rows && c < maps.cols && maps.map.cells[r * maps.cols + c] === CELL_UNKNOWN ? 1 : 0;
}

/** The weight of a frontier: unexplored and unoccupied space along its normal, its value and the value ahead, its distance. */
function frontierWeight(maps: ReferenceMaps, smooth: Float32Array, state: AgentState, [r, c]: [number, number], [nr, nc]: [number, number], [ar, ac]: [number, number], useValue: boolean): number {
  const { rows, cols, cellSize } = maps;
  const along = (metres: number, f: (r: number, c: number) => number): number[] => {
    const out: number[] = [];
    for (let i = 0; i < Math.trunc(metres / cellSize); i++) {
      const rr = Math.round(r + i * nr);
      const cc = Math.round(c + i * nc);
      if (rr >= 0 && cc >= 0 && rr < rows && cc < cols) out.push(f(rr, cc));
    }
    return out;
  };
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
  const unoccupiedRate = sum(along(REF.maxUnoccupiedCheckM, (rr, cc) => (maps.map.cells[rr * cols + cc] === CELL_FREE ? 1 : 0))) / Math.trunc(REF.maxUnoccupiedCheckM / cellSize);
  const unexploredRate = sum(along(REF.maxUnexploredCheckM, (rr, cc) => unknownAt(maps, rr, cc))) / Math.trunc(REF.maxUnexploredCheckM / cellSize);
  const ahead = along(REF.maxValCheckM, (rr, cc) => smooth[rr * cols + cc] as number).filter((v) => v > 0);
  const valAhead = ahead.length === 0 ? 0 : sum(ahead) / ahead.length;
  let w = Math.exp(unexploredRate / REF.unexploredT) * Math.exp(unoccupiedRate / REF.unoccupiedT);
  if (useValue) w *= Math.exp((smooth[r * cols + c] as number) / REF.valT) * Math.exp(valAhead / REF.valDirT);
  const dist = Math.hypot(r - ar, c - ac) * cellSize;
  w *= Math.exp(-dist / REF.distT);
  // the reference compares metres with a count of cells here (0.5 / 0.1): within 5 m and facing it
  if (dist < REF.minDistFromCur / cellSize && Math.abs(wrapAngle(state.yaw - yawOf(nr, nc))) < Math.PI / 6) w *= 1e-3;
  return w;
}

/** A frontier drawn by weight (up to `frontierTries` draws) and backed off up to `frontierSpacingM` from the unknown. */
function pickFrontier(maps: ReferenceMaps, state: AgentState, step: number, agentCell: number, agent: [number, number]): { cell: number; toward: [number, number] } | undefined {
  const island = distanceField(maps.map, agentCell);
  let frontiers = frontierCells(maps, island);
  if (frontiers.length > 10) frontiers = clusterCentres(frontiers);
  if (frontiers.length === 0) return undefined;
  const smooth = gaussianSmooth(maps.value, maps.rows, maps.cols, REF.smoothSigmaCells);
  const useValue = step >= REF.minRandomInitSteps;
  const weights = frontiers.map((f) => frontierWeight(maps, smooth, state, f, normalInto(maps, f[0], f[1]), agent, useValue));
  const total = weights.reduce((a, b) => a + b, 0);
  for (let tries = 0; tries < REF.frontierTries; tries++) {
    let x = maps.random() * total;
    let i = 0;
    while (i < weights.length - 1 && x >= (weights[i] as number)) x -= weights[i++] as number;
    const frontier = frontiers[i] as [number, number];
    const cell = backOff(maps, island, frontier);
    if (cell !== undefined) return { cell, toward: frontier };
  }
  return undefined;
}

/** Steps back from a frontier against its normal until `frontierSpacingM`, an obstacle or the island's edge; undefined when under two steps fit. */
function backOff(maps: ReferenceMaps, island: ArrayLike<number>, [fr, fc]: [number, number]): number | undefined {
  const { rows, cols, cellSize } = maps;
  const inIsland = (r: number, c: number): boolean => r >= 0 && c >= 0 && r < rows && c < cols && Number.isFinite(island[r * cols + c] as number);
  const [nr, nc] = normalInto(maps, fr, fc);
  let pr = fr;
  let pc = fc;
  let back = 0;
  const maxBack = Math.trunc(REF.frontierSpacingM / cellSize);
  for (;;) {
    pr -= nr;
    pc -= nc;
    back++;
    if (back >= maxBack) break;
    if (pr <= 0 || pc <= 0 || pr >= rows || pc >= cols) break;
    const cell = Math.trunc(pr) * cols + Math.trunc(pc);
    if (maps.map.cells[cell] === CELL_OCCUPIED || !inIsland(Math.trunc(pr), Math.trunc(pc))) {
      pr += 2 * nr;
      pc += 2 * nc;
      break;
    }
  }
  const rr = Math.round(pr);
  const cc = Math.round(pc);
  return back >= 2 && rr > 0 && cc > 0 && rr < rows && cc < cols && inIsland(rr, cc) ? rr * cols + cc : undefined;
}

/** find_normal_into_space: the Sobel gradient of the unknown mask at a cell, turned toward the side with more unknown (random on ties or a flat gradient). */
export function normalInto(maps: ReferenceMaps, r: number, c: number): [number, number] {
  const { rows, cols } = maps;
  const u = (rr: number, cc: number): number => unknownAt(maps, Math.min(rows - 1, Math.max(0, rr)), Math.min(cols - 1, Math.max(0, cc)));
  let g0 = 0;
  let g1 = 0;
  for (let k = -1; k <= 1; k++) {
    const w = k === 0 ? 2 : 1;
    g0 += w * (u(r + 1, c + k) - u(r - 1, c + k));
    g1 += w * (u(r + k, c + 1) - u(r + k, c - 1));
  }
  let nr: number;
  let nc: number;
  if (g0 === 0 && g1 === 0) {
    nr = maps.random();
    nc = maps.random();
  } else {
    nr = -g0;
    nc = -g1;
  }
  const len = Math.hypot(nr, nc) || 1;
  nr /= len;
  nc /= len;
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < 10; i++) {
    const a = [Math.trunc(r + i * nr), Math.trunc(c + i * nc)] as const;
    const b = [Math.trunc(r - i * nr), Math.trunc(c - i * nc)] as const;
    if (a[0] >= 0 && a[1] >= 0 && a[0] < rows && a[1] < cols) s1 += u(a[0], a[1]);
    if (b[0] >= 0 && b[1] >= 0 && b[0] < rows && b[1] < cols) s2 += u(b[0], b[1]);
  }
  if (s1 < s2 || (s1 === s2 && maps.random() < 0.5)) return [-nr, -nc];
  return [nr, nc];
}

/** DBSCAN with eps 1 cell and 2 samples on grid cells: 4-connected groups of at least two, each by its member nearest the mean. */
export function clusterCentres(cells: [number, number][]): [number, number][] {
  const key = (r: number, c: number): string => `${r},${c}`;
  const index = new Map(cells.map((p, i) => [key(p[0], p[1]), i]));
  const seen = new Uint8Array(cells.length);
  const out: [number, number][] = [];
  for (let i = 0; i < cells.length; i++) {
    if (seen[i]) continue;
    const group: number[] = [];
    const stack = [i];
    seen[i] = 1;
    while (stack.length > 0) {
      const j = stack.pop() as number;
      group.push(j);
      const [r, c] = cells[j] as [number, number];
      for (const [dr, dc] of [[1, 0], [-1, 0], [0, 1], [0, -1]] as const) {
        const k = index.get(key(r + dr, c + dc));
        if (k !== undefined && !seen[k]) {
          seen[k] = 1;
          stack.push(k);
        }
      }
    }
    if (group.length < 2) continue;
    const mr = group.reduce((a, j) => a + (cells[j] as [number, number])[0], 0) / group.length;
    const mc = group.reduce((a, j) => a + (cells[j] as [number, number])[1], 0) / group.length;
    let best = group[0] as number;
    for (const j of group) {
      const [r, c] = cells[j] as [number, number];
      const [br, bc] = cells[best] as [number, number];
      if (Math.hypot(r - mr, c - mc) < Math.hypot(br - mr, bc - mc)) best = j;
    }
    out.push(cells[best] as [number, number]);
  }
  return out;
}

/** The camera pose moved `camOffsetM` forward (the reference's view mask and candidate pixels use it). */
function shiftedPose(obs: EnvObservation): Float64Array {
  const pose = Float64Array.from(obs.pose);
  // forward is the camera's −z axis (third column, negated)
  pose[3] = (pose[3] as number) - (pose[2] as number) * REF.camOffsetM;
  pose[7] = (pose[7] as number) - (pose[6] as number) * REF.camOffsetM;
  pose[11] = (pose[11] as number) - (pose[10] as number) * REF.camOffsetM;
  return pose;
}

/** find_prompt_points_within_view: candidate cells in letter order (none when fewer than 3 qualify). */
export function promptPoints(map: OccupancyMap, obs: EnvObservation, state: AgentState, agentCell: number, random: Random): number[] {
  if (agentCell < 0) return [];
  const { rows, cols, cellSize } = map;
  const island = distanceField(map, agentCell);
  const inView = shiftedViewTest(obs, state.position[1]);
  let pool: number[] = [];
  for (let i = 0; i < rows * cols; i++) {
    if (!Number.isFinite(island[i] as number)) continue;
    const [x, z] = map.cellCentre(i);
    if (inView(x, z)) pool.push(i);
  }
  if (pool.length > REF.maxUnoccupied) {
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pool[i], pool[j]] = [pool[j] as number, pool[i] as number];
    }
    pool = pool.slice(0, REF.maxUnoccupied);
  }
  const ar = Math.floor(agentCell / cols);
  const ac = agentCell % cols;
  const kept = pool.filter((cell) => {
    const r = Math.floor(cell / cols);
    const c = cell % cols;
    const d = Math.hypot(r - ar, c - ac);
    if (!(d > REF.pointMinDistM / cellSize && d < REF.pointMaxDistM / cellSize)) return false;
    let occupied = 0;
    const len = Math.floor(d);
    for (let s = 0; s <= len; s++) {
      const rr = Math.trunc(r + ((ar - r) / d) * s);
      const cc = Math.trunc(c + ((ac - c) / d) * s);
      if (map.cells[rr * cols + cc] === CELL_OCCUPIED) occupied++;
    }
    return occupied <= 1;
  });
  if (kept.length < REF.minPointsForClustering) return [];
  const sampled = farthestPoints(kept.map((cell) => [Math.floor(cell / cols), cell % cols] as [number, number]), REF.promptPoints);
  const merged: [number, number][] = [];
  for (const p of sampled) {
    if (merged.every((q) => Math.hypot(q[0] - p[0], q[1] - p[1]) > REF.clusterThresholdM / cellSize)) merged.push(p);
  }
  return merged.map(([r, c]) => r * cols + c);
}

/** Whether a floor point's column (from 0.2 m below the floor to 3.5 m above) shows inside the margins of the view moved forward. */
function shiftedViewTest(obs: EnvObservation, floorY: number): (x: number, z: number) => boolean {
  const pose = shiftedPose(obs);
  const marginTop = REF.viewMarginTopPx * (obs.height / REF.referenceSidePx);
  const marginSide = REF.viewMarginSidePx * (obs.width / REF.referenceSidePx);
  return (x, z) => {
    for (const h of [-0.2, 0, 1, 2, 3.5]) {
      const p = projectToPixel(obs.camera, pose, x, floorY + h, z);
      if (p && p.u >= marginSide && p.u < obs.width - marginSide && p.v >= marginTop && p.v < obs.height) return true;
    }
    return false;
  };
}

/** Where a candidate is drawn: the cell 0.2 m below the floor seen by the camera moved forward, as the reference projects it. */
export function candidatePixel(map: OccupancyMap, obs: EnvObservation, cell: number, floorY: number): { u: number; v: number } {
  const [x, z] = map.cellCentre(cell);
  return projectToPixel(obs.camera, shiftedPose(obs), x, floorY - 0.2, z) ?? { u: -1000, v: -1000 };
}
