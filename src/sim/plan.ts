/**
 * A home on disk: `home.json` (the `Home` itself) and `plan.png`, a top-down picture of the
 * plan (floors coloured by room type with the room's name, walls dark, doorways open, furniture
 * in its colour with a dark outline, small objects in their colours, the start as a red dot with
 * a line along its heading).
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
  const line = 1.5 / pixelsPerMetre;
  for (const kind of layers) {
    for (const o of home.objects) {
      if (o.kind !== kind) continue;
      if (kind === "structure" && o.min[1] > 0.5) continue; // lintels: the doorway stays open
      if (o.inside !== undefined) continue; // hidden inside a closed receptacle
      if (kind === "furniture") {
        // an outline, then the inside in the furniture's colour
        fill(o.min[0], o.min[2], o.max[0], o.max[2], [30, 30, 30]);
        fill(o.min[0] + line, o.min[2] + line, o.max[0] - line, o.max[2] - line, o.colour.map((v) => Math.round(v * 0.8)));
        continue;
      }
      fill(o.min[0], o.min[2], o.max[0], o.max[2], kind === "structure" ? [40, 40, 40] : o.colour);
    }
  }
  // each room's name, in capitals, near its middle
  for (const room of home.rooms) {
    const text = room.type.toUpperCase();
    const roomPixels = (room.max[0] - room.min[0]) * pixelsPerMetre * 0.9;
    const scale = Math.max(1, Math.min(Math.round(pixelsPerMetre / 20), Math.floor(roomPixels / (text.length * 6))));
    const textWidth = text.length * 6 * scale;
    const left = Math.round(((room.min[0] + room.max[0]) / 2 - x0) * pixelsPerMetre - textWidth / 2);
    const top = Math.round(((room.min[1] + room.max[1]) / 2 - z0) * pixelsPerMetre - 3.5 * scale);
    drawText(rgb, width, height, text, left, top, scale);
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

/** 5×7 capitals for the room names: each row a 5-bit mask, the high bit on the left. */
const GLYPHS: Record<string, number[]> = {
  A: [14, 17, 17, 31, 17, 17, 17],
  B: [30, 17, 17, 30, 17, 17, 30],
  C: [14, 17, 16, 16, 16, 17, 14],
  D: [30, 17, 17, 17, 17, 17, 30],
  E: [31, 16, 16, 30, 16, 16, 31],
  F: [31, 16, 16, 30, 16, 16, 16],
  G: [14, 17, 16, 23, 17, 17, 15],
  H: [17, 17, 17, 31, 17, 17, 17],
  I: [14, 4, 4, 4, 4, 4, 14],
  K: [17, 18, 20, 24, 20, 18, 17],
  L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17],
  N: [17, 25, 21, 19, 17, 17, 17],
  O: [14, 17, 17, 17, 17, 17, 14],
  R: [30, 17, 17, 30, 20, 18, 17],
  T: [31, 4, 4, 4, 4, 4, 4],
  V: [17, 17, 17, 17, 17, 10, 4],
  W: [17, 17, 17, 21, 21, 21, 10],
  Y: [17, 17, 10, 4, 4, 4, 4],
};

/** Writes `text` in dark capitals with a light halo at (left, top), `scale` pixels a dot. */
function drawText(rgb: Uint8Array, width: number, height: number, text: string, left: number, top: number, scale: number): void {
  const dot = (x: number, y: number, c: number): void => {
    for (let dy = 0; dy < scale; dy++) {
      for (let dx = 0; dx < scale; dx++) {
        const px = x + dx;
        const py = y + dy;
        if (px < 0 || py < 0 || px >= width || py >= height) continue;
        const p = (py * width + px) * 3;
        rgb[p] = c;
        rgb[p + 1] = c;
        rgb[p + 2] = c;
      }
    }
  };
  for (const pass of [0, 1]) {
    [...text].forEach((ch, i) => {
      const rows = GLYPHS[ch];
      if (!rows) return;
      rows.forEach((bits, r) => {
        for (let col = 0; col < 5; col++) {
          if (!((bits >> (4 - col)) & 1)) continue;
          const x = left + (i * 6 + col) * scale;
          const y = top + r * scale;
          if (pass === 0) for (const [hx, hy] of [[-1, 0], [1, 0], [0, -1], [0, 1]] as const) dot(x + hx * scale, y + hy * scale, 250);
          else dot(x, y, 20);
        }
      });
    });
  }
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
