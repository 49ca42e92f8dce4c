/**
 * The built-in household simulator as an `Environment`: a procedural home, its navigation
 * grid, the ray-casting renderer, and manipulation (`manipulation.ts`) that changes the
 * simulator's copy of the home; `reset` moves the agent back to its start and leaves the
 * objects as they are.
 */
import { UserError, type Pose } from "../core/index.js";
import { generateHome, homeNavGrid, type Home } from "./home.js";
import type { NavGrid } from "./navgrid.js";
import { manipulate } from "./manipulation.js";
import {
  LOOK_STEP_DEG,
  MAX_PITCH_DEG,
  MOVE_STEP_M,
  TURN_STEP_DEG,
  agentPose,
  wrapAngle,
  isManipulation,
  type ActResult,
  type Action,
  type AgentState,
  type Environment,
  type EnvironmentInfo,
  type EnvObservation,
  type SceneBounds,
  type Point3,
  type ManipulationAction,
} from "./protocol.js";
import { SceneRenderer, idsIn, type RenderOptions } from "./render.js";

export const DEFAULT_CAMERA_HEIGHT = 1.5;

export interface HouseholdOptions {
  /** Image size and horizontal field of view (default 320×240, 90°). */
  width?: number;
  height?: number;
  hfovDeg?: number;
  /** Whether observations carry instance masks (default true). */
  masks?: boolean;
  cameraHeight?: number;
  /** The episode's start state (default: the home's). */
  start?: AgentState;
}

const TURN = (TURN_STEP_DEG * Math.PI) / 180;
const LOOK = (LOOK_STEP_DEG * Math.PI) / 180;
const MAX_PITCH = (MAX_PITCH_DEG * Math.PI) / 180 + 1e-9;

function copyState(s: AgentState): AgentState {
  return { position: [s.position[0], s.position[1], s.position[2]], yaw: s.yaw, pitch: s.pitch };
}

export class HouseholdEnvironment implements Environment {
  readonly home: Home;
  readonly grid: NavGrid;
  private readonly renderer: SceneRenderer;
  private readonly render: RenderOptions;
  private readonly withMasks: boolean;
  private readonly cameraHeight: number;
  private readonly start: AgentState;
  private state: AgentState;
  /** Instance ids in view, for the manipulation rules; undefined after anything changed. */
  private visibleIds: Set<number> | undefined;

  /** `home` is copied: manipulation changes the simulator's copy (`this.home`) only. */
  constructor(home: Home, options: HouseholdOptions = {}) {
    this.home = structuredClone(home);
    this.grid = homeNavGrid(home);
    this.renderer = new SceneRenderer(this.home);
    this.render = { width: options.width ?? 320, height: options.height ?? 240, hfovDeg: options.hfovDeg ?? 90 };
    if (!Number.isInteger(this.render.width) || !Number.isInteger(this.render.height) || this.render.width < 1 || this.render.height < 1) {
      throw new UserError(`image size must be positive integers, got ${this.render.width}x${this.render.height}`);
    }
    if (!(this.render.hfovDeg > 0 && this.render.hfovDeg < 180)) throw new UserError(`horizontal field of view must be in (0, 180) degrees, got ${this.render.hfovDeg}`);
    this.withMasks = options.masks ?? true;
    this.cameraHeight = options.cameraHeight ?? DEFAULT_CAMERA_HEIGHT;
    this.start = copyState(options.start ?? home.start);
    if (!this.navigable(this.start.position)) {
      throw new UserError(`the start position (${this.start.position.join(", ")}) is not navigable in home ${home.seed}`);
    }
    this.state = copyState(this.start);
  }

  /** A simulator on the home of `seed`. */
  static fromSeed(seed: number, options: HouseholdOptions = {}): HouseholdEnvironment {
    return new HouseholdEnvironment(generateHome(seed), options);
  }

  private navigable(p: Point3): boolean {
    return this.grid.isFree(p[0], p[2]);
  }

  /** The current state (a copy). */
  get current(): AgentState {
    return copyState(this.state);
  }

  async info(): Promise<EnvironmentInfo> {
    return { name: "eqakit-household", sceneId: `home-${this.home.seed}`, cameraHeight: this.cameraHeight };
  }

  async reset(start?: AgentState): Promise<AgentState> {
    if (start !== undefined) {
      if (!this.navigable(start.position)) throw new UserError(`reset: the start position (${start.position.join(", ")}) is not navigable`);
      this.state = { position: [start.position[0], 0, start.position[2]], yaw: wrapAngle(start.yaw), pitch: start.pitch };
    } else this.state = copyState(this.start);
    this.visibleIds = undefined;
    return this.current;
  }

  /** Renders the current view synchronously. */
  observeNow(): EnvObservation {
    const pose = agentPose(this.state, this.cameraHeight);
    const rendered = this.renderer.render(pose, this.render);
    const obs: EnvObservation = {
      width: this.render.width,
      height: this.render.height,
      camera: rendered.camera,
      pose,
      state: this.current,
      rgb: rendered.rgb,
      depth: rendered.depth,
    };
    if (this.withMasks) obs.masks = this.renderer.masks(rendered);
    this.visibleIds = idsIn(rendered.ids);
    return obs;
  }

  async observe(): Promise<EnvObservation> {
    return this.observeNow();
  }

  /** The view from a camera placed at `pose` (camera-to-world); the agent stays where it is. */
  async observePose(pose: Pose): Promise<EnvObservation> {
    const rendered = this.renderer.render(pose, this.render);
    const obs: EnvObservation = { width: this.render.width, height: this.render.height, camera: rendered.camera, pose: Float64Array.from(pose), state: this.current, rgb: rendered.rgb, depth: rendered.depth };
    if (this.withMasks) obs.masks = this.renderer.masks(rendered);
    return obs;
  }

  /** The object in hand, if any. */
  get held(): number | null {
    return this.home.objects.find((o) => o.held)?.id ?? null;
  }

  /** Whether the object shows in the current view. */
  isVisible(id: number): boolean {
    return this.visible().has(id);
  }

  /** Whether the object would show in the view from `state` (the current state is kept). */
  wouldSee(state: AgentState, id: number): boolean {
    return this.renderer.render(agentPose(state, this.cameraHeight), this.render).ids.includes(id);
  }

  /** The camera's position in the world. */
  get cameraPosition(): Point3 {
    return [this.state.position[0], this.state.position[1] + this.cameraHeight, this.state.position[2]];
  }

  private visible(): Set<number> {
    if (!this.visibleIds) this.visibleIds = idsIn(this.renderer.render(agentPose(this.state, this.cameraHeight), this.render).ids);
    return this.visibleIds;
  }

  private manipulateNow(action: ManipulationAction): ActResult {
    const outcome = manipulate(this.home, action, { camera: this.cameraPosition, visible: this.visible() });
    if (!outcome.ok) return { success: false, reason: outcome.reason, state: this.current };
    this.renderer.rebuild();
    this.visibleIds = undefined;
    return { success: true, state: this.current, events: outcome.events };
  }

  /** Does an action synchronously. */
  actNow(action: Action): ActResult {
    if (isManipulation(action)) return this.manipulateNow(action);
    this.visibleIds = undefined;
    const s = this.state;
    const fail = (reason: string): ActResult => ({ success: false, reason, state: this.current });
    switch (action.type) {
      case "move_forward": {
        const x = s.position[0] - Math.sin(s.yaw) * MOVE_STEP_M;
        const z = s.position[2] - Math.cos(s.yaw) * MOVE_STEP_M;
        if (!this.grid.segmentFree(s.position[0], s.position[2], x, z)) return fail("blocked: an obstacle or wall is in the way");
        s.position = [x, s.position[1], z];
        break;
      }
      case "turn_left":
        s.yaw = wrapAngle(s.yaw + TURN);
        break;
      case "turn_right":
        s.yaw = wrapAngle(s.yaw - TURN);
        break;
      case "look_up":
        if (s.pitch + LOOK > MAX_PITCH) return fail(`pitch limit: cannot look up beyond ${MAX_PITCH_DEG}°`);
        s.pitch += LOOK;
        break;
      case "look_down":
        if (s.pitch - LOOK < -MAX_PITCH) return fail(`pitch limit: cannot look down beyond ${MAX_PITCH_DEG}°`);
        s.pitch -= LOOK;
        break;
      case "teleport": {
        const t = action.state;
        if (!this.navigable(t.position)) return fail(`not navigable: (${t.position.join(", ")})`);
        if (Math.abs(t.pitch) > MAX_PITCH) return fail(`pitch limit: ${MAX_PITCH_DEG}°`);
        this.state = { position: [t.position[0], 0, t.position[2]], yaw: wrapAngle(t.yaw), pitch: t.pitch };
        break;
      }
    }
    return { success: true, state: this.current };
  }

  async act(action: Action): Promise<ActResult> {
    return this.actNow(action);
  }

  async isNavigable(point: Point3): Promise<boolean> {
    return this.navigable(point);
  }

  async geodesicDistance(from: Point3, to: Point3): Promise<number> {
    return this.grid.geodesic(from[0], from[2], to[0], to[2]);
  }

  async bounds(): Promise<SceneBounds> {
    return { min: [...this.home.bounds.min], max: [...this.home.bounds.max] };
  }

  async close(): Promise<void> {
    /* nothing held */
  }
}
