/**
 * A home on disk: `home.json` (the `Home` itself) and `plan.png`, a top-down picture of the
 * plan (floors coloured by room type, walls dark, doorways open, furniture and small objects
 * in their colours, the start as a red dot with a line along its heading).
 */
import { join } from "node:path";
import { writeFileAtomically } from "../core/index.js";
import { loadSharp } from "../episodes/index.js";
import { objectCatalogue } from "./catalogue.js";
import type { Home } from "./home.js";

export interface PlanImage {
  width: number;
  height: number;
  /** RGB8, row-major; x to the right, z downwards. */
  rgb: Uint8Array;
}

/** Rasterises the plan at `pixelsPerMetre` (default 40). */
export function renderPlan(home: Home, pixelsPerMetre = 40): PlanImage {
  const margin = 0.25;
  const x0 = home.bounds.min[0] - margin;
  const z0 = home.bounds.min[2] - margin;
  const width = Math.ceil((home.bounds.max[0] - home.bounds.min[0] + 2 * margin) * pixelsPerMetre);
  const height = Math.ceil((home.bounds.max[2] - home.bounds.min[2] + 2 * margin) * pixelsPerMetre);
  const rgb = new Uint8Array(width * height * 3).fill(255);
  const fill = (minX: number, minZ: number, maxX: number, maxZ: number, c: readonly number[]): void => {
    const c0 = Math.max(0, Math.round((minX - x0) * pixelsPerMetre));
    const c1 = Math.min(width, Math.round((maxX - x0) * pixelsPerMetre));
    const r0 = Math.max(0, Math.round((minZ - z0) * pixelsPerMetre));
    const r1 = Math.min(height, Math.round((maxZ - z0) * pixelsPerMetre));
    for (let r = r0; r < r1; r++) {
      for (let col = c0; col < c1; col++) {
        const p = (r * width + col) * 3;
        rgb[p] = c[0] as number;
        rgb[p + 1] = c[1] as number;
        rgb[p + 2] = c[2] as number;
      }
    }
  };
  const catalogue = objectCatalogue();
  for (const room of home.rooms) fill(room.min[0], room.min[1], room.max[0], room.max[1], catalogue.rooms[room.type].floor);
  const layers = ["structure", "furniture", "object"] as const;
  for (const kind of layers) {
    for (const o of home.objects) {
      if (o.kind !== kind) continue;
      if (kind === "structure" && o.min[1] > 0.5) continue; // lintels: the doorway stays open
      if (o.inside !== undefined) continue; // hidden inside a closed receptacle
      fill(o.min[0], o.min[2], o.max[0], o.max[2], kind === "structure" ? [40, 40, 40] : kind === "furniture" ? o.colour.map((v) => Math.round(v * 0.8)) : o.colour);
    }
  }
  const [sx, , sz] = home.start.position;
  fill(sx - 0.12, sz - 0.12, sx + 0.12, sz + 0.12, [220, 20, 20]);
  for (let t = 0; t <= 0.5; t += 0.5 / pixelsPerMetre) {
    const x = sx - Math.sin(home.start.yaw) * t;
    const z = sz - Math.cos(home.start.yaw) * t;
    fill(x - 0.03, z - 0.03, x + 0.03, z + 0.03, [220, 20, 20]);
  }
  return { width, height, rgb };
}

/** Writes `home.json` and `plan.png` into `dir`; returns their paths. */
export async function writeHome(home: Home, dir: string): Promise<{ json: string; png: string }> {
  const json = join(dir, "home.json");
  const png = join(dir, "plan.png");
  await writeFileAtomically(json, `${JSON.stringify(home, null, 2)}\n`);
  const plan = renderPlan(home);
  const sharp = await loadSharp();
  await writeFileAtomically(png, await sharp(Buffer.from(plan.rgb.buffer, plan.rgb.byteOffset, plan.rgb.byteLength), { raw: { width: plan.width, height: plan.height, channels: 3 } }).png().toBuffer());
  return { json, png };
}
