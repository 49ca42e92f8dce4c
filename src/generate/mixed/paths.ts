/**
 * How far the agent must walk now to see what answers a question: the shortest path on the
 * home's navigation grid (metres between cell centres, `NavGrid.distanceField`) from its start
 * to a pose from which the object is in view, at least `SEEN_MIN_PIXELS` of its pixels within
 * `SEEN_RANGE`, as the simulator renders it (the same rule as what the agent saw in its days).
 * Standing points near the object are tried nearest (by walking) first, each looking at the
 * object in whole turns and tilts of the discrete actions.
 */
import {
  DEFAULT_CAMERA_HEIGHT,
  LOOK_STEP_DEG,
  MAX_PITCH_DEG,
  SceneRenderer,
  TURN_STEP_DEG,
  agentPose,
  homeNavGrid,
  roomAt,
  type AgentState,
  type Home,
  type NavGrid,
  type SceneObject,
} from "../../sim/index.js";
import { SEEN_MIN_PIXELS } from "../sightings.js";
import { SEEN_RANGE, round2 } from "../world.js";
import { MIXED_FRAME_HEIGHT, MIXED_FRAME_WIDTH } from "./days.js";

const TURN = (TURN_STEP_DEG * Math.PI) / 180;
const LOOK = (LOOK_STEP_DEG * Math.PI) / 180;
const MAX_PITCH = (MAX_PITCH_DEG * Math.PI) / 180;
/** Standing points tried: within this distance of the object, this far apart, at most this many. */
const NEAR_M = 4;
const STRIDE_M = 0.15;
const MAX_PROBES = 60;
const SPREAD_M = 0.3;

export class ViewPaths {
  private readonly grid: NavGrid;
  private readonly renderer: SceneRenderer;
  private readonly field: Float64Array;
  private readonly cache = new Map<number, number | null>();

  constructor(private readonly home: Home, start: AgentState) {
    this.grid = homeNavGrid(home);
    this.renderer = new SceneRenderer(home);
    this.field = this.grid.distanceField(this.grid.cellAt(start.position[0], start.position[2]));
  }

  /** Metres from the start to a view of the object (instance id); undefined when no standing point shows it. */
  toView(id: number): number | undefined {
    if (!this.cache.has(id)) this.cache.set(id, this.search(id));
    return this.cache.get(id) ?? undefined;
  }

  private search(id: number): number | null {
    const target = this.home.objects.find((o) => o.id === id);
    if (!target) return null;
    for (const cell of this.standingCells(target)) {
      const [x, z] = this.grid.cellCentre(cell);
      if (this.sees(target, x, z)) return round2(this.field[cell]!);
    }
    return null;
  }

  /**
   * Free, reachable cells near the object, in its room when it is in one, nearest to the start
   * (walking) first, at least SPREAD_M apart so that the probes cover the room.
   */
  private standingCells(target: SceneObject): number[] {
    const cells = new Set<number>();
    for (let z = target.min[2] - NEAR_M; z <= target.max[2] + NEAR_M; z += STRIDE_M) {
      for (let x = target.min[0] - NEAR_M; x <= target.max[0] + NEAR_M; x += STRIDE_M) {
        const cell = this.grid.cellAt(x, z);
        if (cell < 0 || this.grid.blocked[cell] !== 0 || !Number.isFinite(this.field[cell]!)) continue;
        const [cx, cz] = this.grid.cellCentre(cell);
        if (target.roomId !== null && roomAt(this.home, cx, cz)?.id !== target.roomId) continue;
        cells.add(cell);
      }
    }
    const picked: number[] = [];
    for (const cell of [...cells].sort((a, b) => this.field[a]! - this.field[b]! || a - b)) {
      const [x, z] = this.grid.cellCentre(cell);
      if (picked.some((p) => Math.hypot(this.grid.cellCentre(p)[0] - x, this.grid.cellCentre(p)[1] - z) < SPREAD_M)) continue;
      picked.push(cell);
      if (picked.length >= MAX_PROBES) break;
    }
    return picked;
  }

  private sees(target: SceneObject, x: number, z: number): boolean {
    const [tx, ty, tz] = [(target.min[0] + target.max[0]) / 2, (target.min[1] + target.max[1]) / 2, (target.min[2] + target.max[2]) / 2];
    const distance = Math.hypot(tx - x, tz - z);
    if (distance > SEEN_RANGE) return false;
    const heading = Math.round(Math.atan2(-(tx - x), -(tz - z)) / TURN) * TURN;
    const pitch = Math.max(-MAX_PITCH, Math.min(MAX_PITCH, Math.round(Math.atan2(ty - DEFAULT_CAMERA_HEIGHT, distance) / LOOK) * LOOK));
    const state: AgentState = { position: [x, 0, z], yaw: heading, pitch };
    const rendered = this.renderer.render(agentPose(state, DEFAULT_CAMERA_HEIGHT), { width: MIXED_FRAME_WIDTH, height: MIXED_FRAME_HEIGHT, hfovDeg: 90 });
    let pixels = 0;
    for (let p = 0; p < rendered.ids.length; p++) {
      if (rendered.ids[p] === target.id && rendered.depth[p]! <= SEEN_RANGE && ++pixels >= SEEN_MIN_PIXELS) return true;
    }
    return false;
  }
}
