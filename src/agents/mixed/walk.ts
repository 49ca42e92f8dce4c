/**
 * An agent's walk in the live environment: every view written to its frame folder, every pose
 * and metre kept. It plans on its own occupancy map, built from the depth of its history's
 * frames and of what it sees now (never the simulator's navigation grid): it walks to a point it
 * remembers, looks around there, and explores further with the frontier explorer, each time
 * stopping as soon as a view shows what it looks for.
 */
import { FrameFolderWriter, openEpisode } from "../../episodes/index.js";
import { MOVE_STEP_M, TURN_STEP_DEG, wrapAngle, type AgentState, type DiscreteAction, type Environment, type EnvObservation } from "../../sim/index.js";
import { exploreFrontier, headingTo, nearestTraversable, pathWaypoint } from "../explore/explorer.js";
import { OccupancyMap } from "../explore/occupancy.js";
import { aStar } from "../explore/planning.js";
import { seenPlace, type LookFor } from "./needs.js";

/** A pose the agent stood in, with the action that led there (none for the start). */
export interface WalkStep {
  action: DiscreteAction | null;
  success: boolean;
  state: AgentState;
}

const TURN = (TURN_STEP_DEG * Math.PI) / 180;
/** Where the agent stands to look at a remembered place: this far from it, metres. */
const LOOK_DISTANCE_M = 1.0;
/** How often (in views) an exploration checks whether it may stop for its caller. */
const UNTIL_EVERY = 4;
/** Turns toward what was found while looking it over (each from the latest view of it). */
const LOOK_OVER_TURNS = 4;
/** Looks down (15° each) at what was found: its top, and into a basin, seen from close by. */
const LOOK_OVER_DOWN = 2;
/** What was found further than this, metres, is walked up to (to `LOOK_DISTANCE_M`) before it is looked over. */
const APPROACH_BEYOND_M = LOOK_DISTANCE_M + 0.5;

export class LiveWalk {
  readonly steps: WalkStep[] = [];
  pathLengthM = 0;
  /** Whether a view showed what the agent looks for. */
  found = false;
  state: AgentState = { position: [0, 0, 0], yaw: 0, pitch: 0 };
  /** The latest view (once found, the one that showed what is looked for). */
  private last: EnvObservation | undefined;
  private readonly writer: FrameFolderWriter;
  private writing: Promise<void> = Promise.resolve();
  private refused: { error: unknown } | undefined;

  private constructor(
    private readonly env: Environment,
    readonly map: OccupancyMap,
    framesDir: string,
    private readonly shows: (obs: EnvObservation) => boolean,
    private readonly maxSteps: number,
  ) {
    this.writer = new FrameFolderWriter(framesDir);
  }

  /** A walk from the environment's current state; its first view is taken at once. */
  static async start(env: Environment, options: { framesDir: string; shows: (obs: EnvObservation) => boolean; maxSteps: number }): Promise<LiveWalk> {
    const walk = new LiveWalk(env, new OccupancyMap(await env.bounds()), options.framesDir, options.shows, options.maxSteps);
    const first = await env.observe();
    walk.state = first.state;
    walk.steps.push({ action: null, success: true, state: first.state });
    walk.seen(first);
    return walk;
  }

  /** Frames written so far (once `finish` has been awaited, all of them). */
  get frames(): number {
    return this.writer.frames;
  }

  get actions(): number {
    return this.steps.length - 1;
  }

  /** While it looks over what it found, walking and turning go on though it found it. */
  private lookingOver = false;

  private budgetLeft(): boolean {
    return (this.lookingOver || !this.found) && this.actions < this.maxSteps;
  }

  /** Adds the depth of a remembered frame folder to the map (every `stride`-th frame). */
  async remember(framesDir: string, cameraHeight: number, stride = 3): Promise<void> {
    const episode = await openEpisode(framesDir);
    for (let index = 0; index < episode.frameCount; index += stride) {
      const frame = await episode.frame(index);
      const camera = frame.depthCamera ?? frame.camera;
      if (!frame.pose || !frame.depth || !camera) continue;
      const floorY = (frame.pose[7] as number) - cameraHeight;
      const state: AgentState = { position: [frame.pose[3] as number, floorY, frame.pose[11] as number], yaw: 0, pitch: 0 };
      const obs: EnvObservation = { width: camera.width, height: camera.height, camera, pose: frame.pose, state, rgb: new Uint8Array(0), depth: frame.depth };
      this.map.integrate(obs, floorY);
    }
  }

  private seen(obs: EnvObservation): void {
    if (this.refused) throw this.refused.error;
    this.last = obs;
    this.map.integrate(obs, obs.state.position[1]);
    this.writing = this.writing
      .then(async () => {
        if (!this.refused) await this.writer.write(obs);
      })
      .catch((error: unknown) => {
        this.refused ??= { error };
      });
    if (this.shows(obs)) this.found = true;
  }

  private moved(to: AgentState): void {
    const from = this.state;
    this.pathLengthM += Math.hypot(to.position[0] - from.position[0], to.position[1] - from.position[1], to.position[2] - from.position[2]);
    this.state = to;
  }

  async act(action: DiscreteAction): Promise<boolean> {
    const result = await this.env.act({ type: action });
    this.moved(result.state);
    this.steps.push({ action, success: result.success, state: result.state });
    if (result.success) this.seen(await this.env.observe());
    return result.success;
  }

  /** Turns toward `heading` (until within half a turn step). */
  async face(heading: number): Promise<void> {
    let err = wrapAngle(heading - this.state.yaw);
    while (Math.abs(err) > TURN / 2 && this.budgetLeft()) {
      await this.act(err > 0 ? "turn_left" : "turn_right");
      err = wrapAngle(heading - this.state.yaw);
    }
  }

  /** A full turn on the spot, stopping when a view shows what is looked for. */
  async lookAround(): Promise<void> {
    for (let i = 0; i < Math.round((2 * Math.PI) / TURN) && this.budgetLeft(); i++) await this.act("turn_left");
  }

  /**
   * The traversable cell of the map nearest `LOOK_DISTANCE_M` from (x, z), from which to look at
   * it; with `side`, only on that side of it (within 60° of the way from it to `side`): a thing
   * seen from one side is looked at from there, not from beyond it, where the map knows no way.
   */
  private lookoutCell(x: number, z: number, side?: readonly [number, number]): number {
    let best = -1;
    let bestScore = Infinity;
    const reach = Math.ceil((LOOK_DISTANCE_M + 1) / this.map.cellSize);
    const centre = this.map.cellAt(x, z);
    if (centre < 0) return -1;
    const c0 = centre % this.map.cols;
    const r0 = (centre - c0) / this.map.cols;
    for (let dr = -reach; dr <= reach; dr++) {
      for (let dc = -reach; dc <= reach; dc++) {
        const c = c0 + dc;
        const r = r0 + dr;
        if (c < 0 || r < 0 || c >= this.map.cols || r >= this.map.rows) continue;
        const cell = r * this.map.cols + c;
        if (!this.map.traversable(cell)) continue;
        if (side && (dc * (side[0] - x) + dr * (side[1] - z)) < 0.5 * Math.hypot(dc, dr) * Math.hypot(side[0] - x, side[1] - z)) continue;
        const score = Math.abs(Math.hypot(dc, dr) * this.map.cellSize - LOOK_DISTANCE_M);
        if (score < bestScore) [best, bestScore] = [cell, score];
      }
    }
    return best;
  }

  /**
   * Walks on its own map to a spot about a metre from (x, z), re-planning when a move fails or
   * the map learns of an obstacle on the path, then faces the point. False when no path is known.
   */
  async walkTo(x: number, z: number, side?: readonly [number, number]): Promise<boolean> {
    let failures = 0;
    while (this.budgetLeft()) {
      const goal = this.lookoutCell(x, z, side);
      const here = nearestTraversable(this.map, this.map.cellAt(this.state.position[0], this.state.position[2]));
      if (goal < 0 || here < 0) return false;
      const [gx, gz] = this.map.cellCentre(goal);
      if (Math.hypot(gx - this.state.position[0], gz - this.state.position[2]) <= MOVE_STEP_M) break;
      const path = aStar(this.map, here, goal);
      if (!path) {
        // looking over what it found, it looks from where it stands
        if (this.lookingOver) return false;
        // no way known there yet: explore until the map holds one
        if ((await this.explore(() => aStar(this.map, nearestTraversable(this.map, this.map.cellAt(this.state.position[0], this.state.position[2])), goal) !== undefined)) !== "stopped") return false;
        continue;
      }
      const version = this.map.occupiedVersion;
      while (this.budgetLeft() && this.map.occupiedVersion === version) {
        const p = this.state.position;
        if (Math.hypot(gx - p[0], gz - p[2]) <= MOVE_STEP_M) break;
        const [wx, wz] = pathWaypoint(this.map, path, p, [gx, gz]);
        const err = wrapAngle(headingTo(p[0], p[2], wx, wz) - this.state.yaw);
        if (Math.abs(err) > TURN / 2 + 1e-9) {
          await this.act(err > 0 ? "turn_left" : "turn_right");
          continue;
        }
        if (!(await this.act("move_forward"))) {
          const ax = p[0] - Math.sin(this.state.yaw) * (MOVE_STEP_M + 0.15);
          const az = p[2] - Math.cos(this.state.yaw) * (MOVE_STEP_M + 0.15);
          this.map.markOccupied(this.map.cellAt(ax, az));
          if (++failures > 8) return false;
          break;
        }
      }
      const p = this.state.position;
      if (Math.hypot(gx - p[0], gz - p[2]) <= MOVE_STEP_M) break;
    }
    await this.face(headingTo(this.state.position[0], this.state.position[2], x, z));
    return true;
  }

  /**
   * Explores further with the frontier explorer (a map of its own) until a view shows what is
   * looked for, `until` holds (checked every few views), or the budget is spent.
   */
  async explore(until?: () => boolean): Promise<string> {
    if (!this.budgetLeft()) return this.found ? "found" : "budget";
    let views = 0;
    const result = await exploreFrontier(this.env, {
      maxSteps: this.maxSteps - this.actions,
      onObservation: (index, obs) => {
        // the explorer's first view is where this walk already stands
        if (index > 0) this.seen(obs);
      },
      stopWhen: () => this.found || (until !== undefined && ++views % UNTIL_EVERY === 0 && until()),
    });
    for (const step of result.steps.slice(1)) {
      this.moved(step.state);
      this.steps.push({ action: step.action ?? null, success: step.success, state: step.state });
    }
    return this.found ? "found" : result.stop;
  }

  /**
   * Looks over what a view showed (the first of `wanted` the latest view holds): walks to about a
   * metre from the middle of what it saw of it when it stands further, turns toward that middle
   * (a turn at a time, as more of it comes into view), then looks down at it. The view that ends
   * a walk may show only a sliver of a table past a door frame, a low stand's side from up close
   * with its top below the view, or a bathtub from across the room over whose rim nothing inside
   * shows: what is on or in it is not yet in sight. Spends the budget left, found or not.
   */
  async lookOver(wanted: LookFor["types"]): Promise<void> {
    this.lookingOver = true;
    try {
      const first = this.last && seenPlace(this.last, wanted);
      if (first && Math.hypot(first.x - this.state.position[0], first.z - this.state.position[2]) > APPROACH_BEYOND_M) await this.walkTo(first.x, first.z, [this.state.position[0], this.state.position[2]]);
      for (let turns = 0; turns < LOOK_OVER_TURNS && this.budgetLeft(); turns++) {
        const place = this.last && seenPlace(this.last, wanted);
        if (!place) break;
        const err = wrapAngle(headingTo(this.state.position[0], this.state.position[2], place.x, place.z) - this.state.yaw);
        if (Math.abs(err) <= TURN / 2) break;
        await this.act(err > 0 ? "turn_left" : "turn_right");
      }
      for (let down = 0; down < LOOK_OVER_DOWN && this.budgetLeft(); down++) if (!(await this.act("look_down"))) break;
    } finally {
      this.lookingOver = false;
    }
  }

  /** Waits for every frame to be written (a refused write is thrown). */
  async finish(): Promise<void> {
    await this.writing;
    if (this.refused) throw this.refused.error;
  }
}
