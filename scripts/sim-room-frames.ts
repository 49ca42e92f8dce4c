/**
 * Renders the room frames of docs/images: one frame of each room type of the built-in homes (in
 * the first of homes 0 and 1 that has it), 480×360 with a 90° field of view, from the corner of
 * the room whose view shows the most of the room's furniture (pieces covering at least 1 % of the
 * frame, then pixels), looking at the room's centre, 15° down.
 * Run with `node --import tsx scripts/sim-room-frames.ts [--out DIR]` (docs/images by default)
 * after the simulator's look changed (PNGs with a 256-colour palette, to keep them small).
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSharp } from "../src/episodes/index.js";
import { HouseholdEnvironment, ROOM_TYPES, generateHome } from "../src/sim/index.js";

const WIDTH = 480;
const HEIGHT = 360;
const at = process.argv.indexOf("--out");
const out = at >= 0 ? (process.argv[at + 1] ?? "") : join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "images");
if (!out) throw new Error("--out needs a folder");
mkdirSync(out, { recursive: true });
const sharp = await loadSharp();
const homes = [generateHome(0), generateHome(1)];

for (const type of ROOM_TYPES) {
  const home = homes.find((h) => h.rooms.some((r) => r.type === type));
  const room = home?.rooms.find((r) => r.type === type);
  if (!home || !room) throw new Error(`no ${type} in homes 0 and 1`);
  const env = new HouseholdEnvironment(home, { width: WIDTH, height: HEIGHT, hfovDeg: 90 });
  const furniture = new Set(home.objects.filter((o) => o.kind !== "structure" && o.roomId === room.id).map((o) => o.id));
  const cx = (room.min[0] + room.max[0]) / 2;
  const cz = (room.min[1] + room.max[1]) / 2;
  let best: { rgb: Uint8Array; pieces: number; shown: number } | undefined;
  for (const inset of [0.55, 0.8, 1.1]) {
    for (const [x, z] of [
      [room.min[0] + inset, room.min[1] + inset],
      [room.max[0] - inset, room.min[1] + inset],
      [room.min[0] + inset, room.max[1] - inset],
      [room.max[0] - inset, room.max[1] - inset],
    ] as const) {
      // yaw 0 looks along −z; turning left (positive yaw) looks towards −x
      const yaw = Math.atan2(-(cx - x), -(cz - z));
      if (!env.actNow({ type: "teleport", state: { position: [x, 0, z], yaw, pitch: (-15 * Math.PI) / 180 } }).success) continue;
      const obs = env.observeNow();
      const ids = obs.masks?.ids;
      if (!ids) throw new Error("the simulator gave no masks");
      const count = new Map<number, number>();
      for (const id of ids) if (furniture.has(id)) count.set(id, (count.get(id) ?? 0) + 1);
      const pieces = [...count.values()].filter((n) => n >= 0.01 * ids.length).length;
      const shown = [...count.values()].reduce((a, n) => a + n, 0);
      if (!best || pieces > best.pieces || (pieces === best.pieces && shown > best.shown)) best = { rgb: obs.rgb, pieces, shown };
    }
    if (best) break;
  }
  if (!best) throw new Error(`no free corner in the ${type} of home ${home.seed}`);
  const file = join(out, `sim-${type.replace(/ /g, "-")}.png`);
  await sharp(Buffer.from(best.rgb), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).png({ palette: true, compressionLevel: 9 }).toFile(file);
  console.log(`${file}: home ${home.seed}, room ${room.id}`);
}
