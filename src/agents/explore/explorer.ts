/**
 * The frontier explorer: over any `Environment`, observe, add the depth to an occupancy map,
 * choose a frontier goal (see planning.ts), plan an A* path on the map and follow it with the
 * primitive actions (turn toward the next waypoint to within half a turn step, then move
 * forward). A failed move marks the cell ahead occupied and re-plans; a path that crosses a
 * newly occupied cell is re-planned; a goal that cannot be reached is excluded. It begins with
 * a full turn on the spot and stops when no reachable frontier is left or the step budget is
 * spent. The trajectory records the pose of every step, the path length in metres and steps,
 * and the step indices where it observed; `explorerMs` is its own time, without the
 * environment's calls.
 */
import type { Pose } from "../../core/index.js";
import { MOVE_STEP_M, TURN_STEP_DEG, wrapAngle, type AgentState, type DiscreteAction, type Environment, type EnvObservation } from "../../sim/index.js";
import { OccupancyMap, type OccupancyOptions } from "./occupancy.js";
import { aStar, chooseGoal, type GoalOptions } from "./planning.js";

export interface FrontierExplorerOptions extends OccupancyOptions, Omit<GoalOptions, "excluded"> {
  /** Most actions to take (default 500). */
  maxSteps?: number;
  /** A goal counts as reached within this distance, metres (default 0.3). */
  reachRadius?: number;
  /** Called with every observation (frame index, observation), e.g. to keep the frames. */
  onObservation?: (frame: number, obs: EnvObservation) => void;
}

export interface TrajectoryStep {
  /** The action taken to reach this step (undefined for step 0, the start). */
  action?: DiscreteAction;
  success: boolean;
  state: AgentState;
  /** Camera-to-world pose after the action. */
  pose: Pose;
}

export type StopReason = "no_frontier" | "budget";

export interface ExplorationResult {
  /** Step 0 is the start; one entry per action after it. */
  steps: TrajectoryStep[];
  /** Actions taken. */
  actions: number;
  /** Successful forward moves. */
  moves: number;
  /** Metres walked (sum of the distances between consecutive positions). */
  pathLengthM: number;
  /** Path length in steps: the number of actions taken. */
  pathLengthSteps: number;
  /** Step indices whose observation was taken (and integrated into the map). */
  observedSteps: number[];
  goals: { point: [number, number]; distance: number; gain: number; score: number; reached: boolean }[];
  replans: number;
  stop: StopReason;
  map: OccupancyMap;
  /** The explorer's own time (map, planning, control), without the environment's calls and `onObservation`. */
  explorerMs: number;
  explorerMsPerStep: number;
}

const TURN = (TURN_STEP_DEG * Math.PI) / 180;

/** Heading (yaw) that looks from (x0, z0) toward (x1, z1): yaw 0 looks along −z, positive turns left. */
export function headingTo(x0: number, z0: number, x1: number, z1: number): number {
  return Math.atan2(-(x1 - x0), -(z1 - z0));
}

/** The traversable cell nearest `cell` within a few cells (the agent's cell may sit in an inflated margin). */
export function nearestTraversable(map: OccupancyMap, cell: number, reach = 4): number {
  if (cell < 0) return -1;
  if (map.traversable(cell)) return cell;
  const c0 = cell % map.cols;
  const r0 = (cell - c0) / map.cols;
  let best = -1;
  let bestD = Infinity;
  for (let dr = -reach; dr <= reach; dr++) {
    for (let dc = -reach; dc <= reach; dc++) {
      const c = c0 + dc;
      const r = r0 + dr;
      if (c < 0 || r < 0 || c >= map.cols || r >= map.rows) continue;
      const i = r * map.cols + c;
      const d = dc * dc + dr * dr;
      if (d < bestD && map.traversable(i)) {
        bestD = d;
        best = i;
      }
    }
  }
  return best;
}

/**
 * The explorer's own time: it runs between `resume` and `pause`, which bracket every model and
 * environment call, so that `ownMs` is the time per step the explorer itself costs.
 */
export function explorerClock(): { pause(): void; resume(): void; ownMs(): number } {
  let own = 0;
  let t = performance.now();
  return {
    pause: () => {
      own += performance.now() - t;
    },
    resume: () => {
      t = performance.now();
    },
    ownMs: () => own,
  };
}

/** Explores `env` from its current state (call `reset` first for the episode's start). */
export async function exploreFrontier(env: Environment, options: FrontierExplorerOptions = {}): Promise<ExplorationResult> {
  const maxSteps = options.maxSteps ?? 500;
  const reach = options.reachRadius ?? 0.3;
  const bounds = await env.bounds();
  const clock = explorerClock();
  const { pause, resume } = clock;
  const map = new OccupancyMap(bounds, options);
  const excluded = new Uint8Array(map.cols * map.rows);
  const steps: TrajectoryStep[] = [];
  const observedSteps: number[] = [];
  const goals: ExplorationResult["goals"] = [];
  let pathLengthM = 0;
  let moves = 0;
  let replans = 0;
  let stop: StopReason = "budget";
  let floorY = 0;

  const observe = async (): Promise<EnvObservation> => {
    pause();
    const obs = await env.observe();
    resume();
    floorY = obs.state.position[1];
    map.integrate(obs, floorY);
    observedSteps.push(steps.length - 1);
    if (options.onObservation) {
      pause();
      options.onObservation(observedSteps.length - 1, obs);
      resume();
    }
    return obs;
  };

  pause();
  const first = await env.observe();
  resume();
  steps.push({ success: true, state: first.state, pose: first.pose });
  floorY = first.state.position[1];
  map.integrate(first, floorY);
  observedSteps.push(0);
  options.onObservation?.(0, first);
  let state = first.state;

  const act = async (action: DiscreteAction): Promise<boolean> => {
    pause();
    const result = await env.act({ type: action });
    resume();
    const prev = state;
    state = result.state;
    const dx = state.position[0] - prev.position[0];
    const dz = state.position[2] - prev.position[2];
    const dy = state.position[1] - prev.position[1];
    pathLengthM += Math.hypot(dx, dy, dz);
    if (action === "move_forward" && result.success) moves++;
    if (result.success) {
      steps.push({ action, success: true, state, pose: new Float64Array(0) });
      const obs = await observe();
      (steps[steps.length - 1] as TrajectoryStep).pose = obs.pose;
    } else {
      const last = steps[steps.length - 1] as TrajectoryStep;
      steps.push({ action, success: false, state, pose: last.pose });
    }
    return result.success;
  };
  /** Never chooses again the cells within `radius` metres of `cell`. */
  const excludeAround = (cell: number, radius: number): void => {
    const k = Math.ceil(radius / map.cellSize);
    const gc = cell % map.cols;
    const gr = (cell - gc) / map.cols;
    for (let dr = -k; dr <= k; dr++) {
      for (let dc = -k; dc <= k; dc++) {
        const c = gc + dc;
        const r = gr + dr;
        if (c >= 0 && r >= 0 && c < map.cols && r < map.rows) excluded[r * map.cols + c] = 1;
      }
    }
  };
  const budgetLeft = (): boolean => steps.length - 1 < maxSteps;

  // A full turn on the spot first.
  for (let i = 0; i < Math.round((2 * Math.PI) / TURN) && budgetLeft(); i++) await act("turn_left");

  let goal: ReturnType<typeof chooseGoal>;
  let path: number[] | undefined;
  let pathVersion = -1;
  let fails = 0;
  while (budgetLeft()) {
    const agentCell = nearestTraversable(map, map.cellAt(state.position[0], state.position[2]));
    if (goal === undefined) {
      goal = chooseGoal(map, agentCell, { ...options, excluded });
      if (goal === undefined) {
        stop = "no_frontier";
        break;
      }
      goals.push({ point: goal.point, distance: goal.distance, gain: goal.gain, score: goal.score, reached: false });
      path = undefined;
      fails = 0;
    }
    const [gx, gz] = goal.point;
    if (Math.hypot(gx - state.position[0], gz - state.position[2]) <= reach) {
      (goals[goals.length - 1] as ExplorationResult["goals"][number]).reached = true;
      // The goal and its surroundings are done: never choose them again.
      excludeAround(goal.cell, 0.5);
      // Look toward the cluster it came for.
      const want = headingTo(state.position[0], state.position[2], goal.cluster.centroid[0], goal.cluster.centroid[1]);
      let err = wrapAngle(want - state.yaw);
      while (Math.abs(err) > TURN / 2 && budgetLeft()) {
        await act(err > 0 ? "turn_left" : "turn_right");
        err = wrapAngle(want - state.yaw);
      }
      goal = undefined;
      continue;
    }
    if (path === undefined || pathVersion !== map.occupiedVersion && path.some((c) => !map.traversable(c))) {
      if (path !== undefined) replans++;
      path = aStar(map, agentCell, goal.cell);
      pathVersion = map.occupiedVersion;
      if (path === undefined) {
        excludeAround(goal.cell, 0.3);
        goal = undefined;
        continue;
      }
    }
    // The waypoint: the first path cell at least one move away (or the goal).
    let wx = gx;
    let wz = gz;
    let nearestIdx = 0;
    let nearestD = Infinity;
    for (let i = 0; i < path.length; i++) {
      const [x, z] = map.cellCentre(path[i] as number);
      const d = Math.hypot(x - state.position[0], z - state.position[2]);
      if (d < nearestD) {
        nearestD = d;
        nearestIdx = i;
      }
    }
    for (let i = nearestIdx; i < path.length; i++) {
      const [x, z] = map.cellCentre(path[i] as number);
      if (Math.hypot(x - state.position[0], z - state.position[2]) >= MOVE_STEP_M) {
        wx = x;
        wz = z;
        break;
      }
    }
    const want = headingTo(state.position[0], state.position[2], wx, wz);
    const err = wrapAngle(want - state.yaw);
    if (Math.abs(err) > TURN / 2 + 1e-9) {
      await act(err > 0 ? "turn_left" : "turn_right");
      continue;
    }
    const ok = await act("move_forward");
    if (!ok) {
      // Something unseen is in the way: mark it and plan again.
      replans++;
      fails++;
      const ax = state.position[0] - Math.sin(state.yaw) * (MOVE_STEP_M + 0.15);
      const az = state.position[2] - Math.cos(state.yaw) * (MOVE_STEP_M + 0.15);
      map.markOccupied(map.cellAt(ax, az));
      path = undefined;
      if (fails > 8) {
        excluded[goal.cell] = 1;
        goal = undefined;
      }
    }
  }
  pause();
  const actions = steps.length - 1;
  return {
    steps,
    actions,
    moves,
    pathLengthM,
    pathLengthSteps: actions,
    observedSteps,
    goals,
    replans,
    stop,
    map,
    explorerMs: clock.ownMs(),
    explorerMsPerStep: actions > 0 ? clock.ownMs() / actions : 0,
  };
}
