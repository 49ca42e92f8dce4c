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
import { MOVE_STEP_M, TURN_STEP_DEG, wrapAngle, type AgentState, type DiscreteAction, type Environment, type EnvObservation, type Point3, type SceneBounds } from "../../sim/index.js";
import { OccupancyMap, type OccupancyOptions } from "./occupancy.js";
import { aStar, chooseGoal, type GoalOptions } from "./planning.js";

export interface FrontierExplorerOptions extends OccupancyOptions, Omit<GoalOptions, "excluded"> {
  /** Most actions to take (default 500). */
  maxSteps?: number;
  /** A goal counts as reached within this distance, metres (default 0.3). */
  reachRadius?: number;
  /** Called with every observation (frame index, observation), e.g. to keep the frames. */
  onObservation?: (frame: number, obs: EnvObservation) => void;
  /** Called with every observation after `onObservation`: true ends the exploration there (stop reason `stopped`), e.g. when what was looked for is in view. */
  stopWhen?: (obs: EnvObservation) => boolean;
}

export interface TrajectoryStep {
  /** The action taken to reach this step (undefined for step 0, the start). */
  action?: DiscreteAction;
  success: boolean;
  state: AgentState;
  /** Camera-to-world pose after the action. */
  pose: Pose;
}

export type StopReason = "no_frontier" | "budget" | "stopped";

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
export function explorerClock(): { pause(): void; resume(): void; ownMs(): number; outside<T>(work: () => Promise<T>): Promise<T> } {
  let own = 0;
  let t = performance.now();
  const pause = (): void => {
    own += performance.now() - t;
  };
  const resume = (): void => {
    t = performance.now();
  };
  return {
    pause,
    resume,
    ownMs: () => own,
    /** Awaits the environment, a model or the disk: their time is not the explorer's own. */
    outside: async (work) => {
      pause();
      try {
        return await work();
      } finally {
        resume();
      }
    },
  };
}

/**
 * One frontier exploration's bookkeeping: the environment reached off the explorer's own clock,
 * the occupancy map and the cells never to be chosen again, every pose and view, the path walked.
 */
class FrontierWalk {
  readonly clock = explorerClock();
  readonly map: OccupancyMap;
  readonly excluded: Uint8Array;
  readonly steps: TrajectoryStep[] = [];
  readonly observedSteps: number[] = [];
  readonly goals: ExplorationResult["goals"] = [];
  pathLengthM = 0;
  moves = 0;
  replans = 0;
  /** `stopWhen` held for a view. */
  stopped = false;
  state: AgentState = { position: [0, 0, 0], yaw: 0, pitch: 0 };

  constructor(
    private readonly env: Environment,
    bounds: SceneBounds,
    private readonly options: FrontierExplorerOptions,
  ) {
    this.map = new OccupancyMap(bounds, options);
    this.excluded = new Uint8Array(this.map.cols * this.map.rows);
  }

  /** The first view, where the agent stands. */
  async start(): Promise<void> {
    const first = await this.clock.outside(() => this.env.observe());
    this.steps.push({ success: true, state: first.state, pose: first.pose });
    this.state = first.state;
    this.map.integrate(first, first.state.position[1]);
    this.observedSteps.push(0);
    this.options.onObservation?.(0, first);
    if (this.options.stopWhen?.(first)) this.stopped = true;
  }

  private async observe(): Promise<EnvObservation> {
    const obs = await this.clock.outside(() => this.env.observe());
    this.map.integrate(obs, obs.state.position[1]);
    this.observedSteps.push(this.steps.length - 1);
    if (this.options.onObservation) {
      this.clock.pause();
      this.options.onObservation(this.observedSteps.length - 1, obs);
      this.clock.resume();
    }
    if (this.options.stopWhen?.(obs)) this.stopped = true;
    return obs;
  }

  /** One action; a successful one is followed by a view. */
  async act(action: DiscreteAction): Promise<boolean> {
    const result = await this.clock.outside(() => this.env.act({ type: action }));
    const prev = this.state;
    this.state = result.state;
    this.pathLengthM += Math.hypot(this.state.position[0] - prev.position[0], this.state.position[1] - prev.position[1], this.state.position[2] - prev.position[2]);
    if (action === "move_forward" && result.success) this.moves++;
    if (result.success) {
      this.steps.push({ action, success: true, state: this.state, pose: new Float64Array(0) });
      const obs = await this.observe();
      (this.steps[this.steps.length - 1] as TrajectoryStep).pose = obs.pose;
    } else {
      const last = this.steps[this.steps.length - 1] as TrajectoryStep;
      this.steps.push({ action, success: false, state: this.state, pose: last.pose });
    }
    return result.success;
  }

  budgetLeft(maxSteps: number): boolean {
    return !this.stopped && this.steps.length - 1 < maxSteps;
  }

  /** Turns toward `heading` until within half a turn step or out of budget. */
  async face(heading: number, maxSteps: number): Promise<void> {
    let err = wrapAngle(heading - this.state.yaw);
    while (Math.abs(err) > TURN / 2 && this.budgetLeft(maxSteps)) {
      await this.act(err > 0 ? "turn_left" : "turn_right");
      err = wrapAngle(heading - this.state.yaw);
    }
  }

  /** Never chooses again the cells within `radius` metres of `cell`. */
  excludeAround(cell: number, radius: number): void {
    excludeAround(this.map, this.excluded, cell, radius);
  }

  /** Something unseen stopped a move: the cell ahead is marked occupied. */
  markBlocked(): void {
    const ax = this.state.position[0] - Math.sin(this.state.yaw) * (MOVE_STEP_M + 0.15);
    const az = this.state.position[2] - Math.cos(this.state.yaw) * (MOVE_STEP_M + 0.15);
    this.map.markOccupied(this.map.cellAt(ax, az));
  }
}

/** Marks the cells of the square within `radius` metres of `cell` as never to be chosen again. */
export function excludeAround(map: OccupancyMap, excluded: Uint8Array, cell: number, radius: number): void {
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
}

/** The waypoint on a path: from the path cell nearest the agent, the first at least one move away (else the goal). */
export function pathWaypoint(map: OccupancyMap, path: number[], position: Point3, goal: [number, number]): [number, number] {
  let nearestIdx = 0;
  let nearestD = Infinity;
  for (let i = 0; i < path.length; i++) {
    const [x, z] = map.cellCentre(path[i] as number);
    const d = Math.hypot(x - position[0], z - position[2]);
    if (d < nearestD) {
      nearestD = d;
      nearestIdx = i;
    }
  }
  for (let i = nearestIdx; i < path.length; i++) {
    const [x, z] = map.cellCentre(path[i] as number);
    if (Math.hypot(x - position[0], z - position[2]) >= MOVE_STEP_M) return [x, z];
  }
  return goal;
}

/** Explores `env` from its current state (call `reset` first for the episode's start). */
export async function exploreFrontier(env: Environment, options: FrontierExplorerOptions = {}): Promise<ExplorationResult> {
  const maxSteps = options.maxSteps ?? 500;
  const reach = options.reachRadius ?? 0.3;
  const walk = new FrontierWalk(env, await env.bounds(), options);
  const { map } = walk;
  await walk.start();
  let stop: StopReason = "budget";

  // A full turn on the spot first.
  for (let i = 0; i < Math.round((2 * Math.PI) / TURN) && walk.budgetLeft(maxSteps); i++) await walk.act("turn_left");

  let goal: ReturnType<typeof chooseGoal>;
  let path: number[] | undefined;
  let pathVersion = -1;
  let fails = 0;
  while (walk.budgetLeft(maxSteps)) {
    const position = walk.state.position;
    const agentCell = nearestTraversable(map, map.cellAt(position[0], position[2]));
    if (goal === undefined) {
      goal = chooseGoal(map, agentCell, { ...options, excluded: walk.excluded });
      if (goal === undefined) {
        stop = "no_frontier";
        break;
      }
      walk.goals.push({ point: goal.point, distance: goal.distance, gain: goal.gain, score: goal.score, reached: false });
      path = undefined;
      fails = 0;
    }
    if (Math.hypot(goal.point[0] - position[0], goal.point[1] - position[2]) <= reach) {
      (walk.goals[walk.goals.length - 1] as ExplorationResult["goals"][number]).reached = true;
      // The goal and its surroundings are done: never choose them again.
      walk.excludeAround(goal.cell, 0.5);
      // Look toward the cluster it came for.
      await walk.face(headingTo(position[0], position[2], goal.cluster.centroid[0], goal.cluster.centroid[1]), maxSteps);
      goal = undefined;
      continue;
    }
    if (path === undefined || pathVersion !== map.occupiedVersion && path.some((c) => !map.traversable(c))) {
      if (path !== undefined) walk.replans++;
      path = aStar(map, agentCell, goal.cell);
      pathVersion = map.occupiedVersion;
      if (path === undefined) {
        walk.excludeAround(goal.cell, 0.3);
        goal = undefined;
        continue;
      }
    }
    const [wx, wz] = pathWaypoint(map, path, position, goal.point);
    const err = wrapAngle(headingTo(position[0], position[2], wx, wz) - walk.state.yaw);
    if (Math.abs(err) > TURN / 2 + 1e-9) {
      await walk.act(err > 0 ? "turn_left" : "turn_right");
      continue;
    }
    if (!(await walk.act("move_forward"))) {
      // Something unseen is in the way: mark it and plan again.
      walk.replans++;
      fails++;
      walk.markBlocked();
      path = undefined;
      if (fails > 8) {
        walk.excluded[goal.cell] = 1;
        goal = undefined;
      }
    }
  }
  walk.clock.pause();
  if (walk.stopped) stop = "stopped";
  const actions = walk.steps.length - 1;
  return {
    steps: walk.steps,
    actions,
    moves: walk.moves,
    pathLengthM: walk.pathLengthM,
    pathLengthSteps: actions,
    observedSteps: walk.observedSteps,
    goals: walk.goals,
    replans: walk.replans,
    stop,
    map,
    explorerMs: walk.clock.ownMs(),
    explorerMsPerStep: actions > 0 ? walk.clock.ownMs() / actions : 0,
  };
}
