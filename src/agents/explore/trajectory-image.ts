/**
 * A top-down picture of one exploration (after EXPRESS-Bench's Fig. 4): the explored
 * occupancy map (free floor light, obstacles dark, unexplored greyed out), the path coloured by
 * time (blue at the start through to red at the end), the start as a green square and the end
 * as a red one. For the built-in simulator the home's plan (`renderPlan`) is drawn underneath,
 * dimmed where the agent never saw. x runs to the right, z downwards, as in the plan.
 */
import { writeFileAtomically } from "../../core/index.js";
import { loadSharp } from "../../episodes/index.js";
import { renderPlan, type Home } from "../../sim/index.js";
import { CELL_FREE, CELL_OCCUPIED, type OccupancyMap } from "./occupancy.js";

export interface TrajectoryImageInput {
  map: OccupancyMap;
  /** The agent's positions (x, z) in step order. */
  path: [number, number][];
  /** The built-in simulator's home, drawn underneath. */
  home?: Home;
  /** Pixels per metre (default 40). */
  pixelsPerMetre?: number;
}

type Rgb = [number, number, number];

/** Blue → cyan → yellow → red along t ∈ [0, 1]. */
function timeColour(t: number): Rgb {
  const stops: Rgb[] = [[40, 60, 220], [20, 190, 220], [240, 200, 30], [220, 30, 30]];
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = stops[i] as Rgb;
  const b = stops[i + 1] as Rgb;
  return [0, 1, 2].map((k) => Math.round((a[k] as number) + ((b[k] as number) - (a[k] as number)) * f)) as Rgb;
}

/** The picture as RGB8 pixels. */
export function drawTrajectory(input: TrajectoryImageInput): { width: number; height: number; rgb: Uint8Array } {
  const ppm = input.pixelsPerMetre ?? 40;
  const { map } = input;
  const width = Math.max(1, Math.round(map.cols * map.cellSize * ppm));
  const height = Math.max(1, Math.round(map.rows * map.cellSize * ppm));
  const rgb = new Uint8Array(width * height * 3);
  const plan = input.home ? renderPlan(input.home, ppm) : undefined;
  const planX0 = input.home ? input.home.bounds.min[0] - 0.25 : 0;
  const planZ0 = input.home ? input.home.bounds.min[2] - 0.25 : 0;
  for (let py = 0; py < height; py++) {
    const z = map.originZ + (py + 0.5) / ppm;
    for (let px = 0; px < width; px++) {
      const x = map.originX + (px + 0.5) / ppm;
      const cell = map.cellAt(x, z);
      const state = cell >= 0 ? map.cells[cell] : 0;
      let base: Rgb = [255, 255, 255];
      if (plan) {
        const qx = Math.floor((x - planX0) * ppm);
        const qy = Math.floor((z - planZ0) * ppm);
        if (qx >= 0 && qy >= 0 && qx < plan.width && qy < plan.height) {
          const q = (qy * plan.width + qx) * 3;
          base = [plan.rgb[q] as number, plan.rgb[q + 1] as number, plan.rgb[q + 2] as number];
        }
      }
      let out: Rgb;
      if (state === CELL_OCCUPIED) out = [50, 50, 60];
      else if (state === CELL_FREE) out = plan ? base : [235, 235, 225];
      else out = base.map((v) => Math.round(v * 0.45 + 60)) as Rgb;
      const p = (py * width + px) * 3;
      rgb[p] = out[0];
      rgb[p + 1] = out[1];
      rgb[p + 2] = out[2];
    }
  }
  const dot = (x: number, z: number, radius: number, c: Rgb): void => {
    const cx = (x - map.originX) * ppm;
    const cz = (z - map.originZ) * ppm;
    for (let py = Math.floor(cz - radius); py <= Math.ceil(cz + radius); py++) {
      for (let px = Math.floor(cx - radius); px <= Math.ceil(cx + radius); px++) {
        if (px < 0 || py < 0 || px >= width || py >= height) continue;
        const p = (py * width + px) * 3;
        rgb[p] = c[0];
        rgb[p + 1] = c[1];
        rgb[p + 2] = c[2];
      }
    }
  };
  const path = input.path;
  const segments = Math.max(1, path.length - 1);
  for (let i = 1; i < path.length; i++) {
    const [x0, z0] = path[i - 1] as [number, number];
    const [x1, z1] = path[i] as [number, number];
    const n = Math.max(1, Math.ceil(Math.hypot(x1 - x0, z1 - z0) * ppm));
    for (let k = 0; k <= n; k++) {
      const f = k / n;
      dot(x0 + (x1 - x0) * f, z0 + (z1 - z0) * f, 1, timeColour((i - 1 + f) / segments));
    }
  }
  const first = path[0];
  const last = path[path.length - 1];
  if (first) dot(first[0], first[1], 4, [20, 170, 60]);
  if (last) dot(last[0], last[1], 3, [200, 20, 20]);
  return { width, height, rgb };
}

/** Writes the picture as a PNG file, whole or not at all. */
export async function writeTrajectoryImage(file: string, input: TrajectoryImageInput): Promise<void> {
  const { width, height, rgb } = drawTrajectory(input);
  const sharp = await loadSharp();
  await writeFileAtomically(file, await sharp(rgb, { raw: { width, height, channels: 3 } }).png().toBuffer());
}
