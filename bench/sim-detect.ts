/**
 * Whether a vision model sees the built-in homes as homes: the recall of the embedded COCO
 * detector (`loadObjectDetector`, CenterNet, at its default threshold) over every object of a
 * COCO class covering at least 1 % of a 512×512 view, over random views in homes 0-9.
 *
 * A view: a random free cell of a random room, a random heading (a multiple of 30°) and a pitch
 * of 0° or −30°, all from a fixed seed. An object counts when its instance mask covers ≥ 1 % of
 * the view; it is found when a detection of its class (a sofa is a couch, an armchair a chair or
 * a couch, a table, desk or coffee table a dining table, a TV stand its tv, a stove an oven, a mug
 * a cup) overlaps the box of its mask with IoU ≥ 0.5, or lies mostly (≥ 70 % of its area) within
 * that box with its centre on the object's pixels (a TV on its stand, the stand's id).
 *
 *   node --import tsx bench/sim-detect.ts [--seeds 0-9] [--views 6] [--save DIR]
 *
 * Run by `npm run bench -- sim-detect`. Prints one JSON line of figures.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { seededRandom, randomInt } from "../src/core/index.js";
import { loadSharp } from "../src/episodes/index.js";
import { loadObjectDetector } from "../src/models/embedded/index.js";
import { HouseholdEnvironment, generateHome, homeNavGrid } from "../src/sim/index.js";
import { textFlag as flag } from "./flags.js";
import { COCO_CLASSES as COCO, maskBoxes } from "./sim-coco.js";


const [from, to] = flag("seeds", "0-9").split("-").map(Number) as [number, number];
const viewsPerHome = Number(flag("views", "6"));
const save = process.argv.includes("--save") ? flag("save", "") : "";
const SIZE = 512;
const detector = await loadObjectDetector();
const sharp = await loadSharp();
if (save) mkdirSync(save, { recursive: true });

const perType: Record<string, { seen: number; found: number }> = {};
let seen = 0;
let found = 0;
let views = 0;
let detectMs = 0;
for (let seed = from; seed <= to; seed++) {
  const home = generateHome(seed);
  const grid = homeNavGrid(home);
  const env = new HouseholdEnvironment(home, { width: SIZE, height: SIZE, hfovDeg: 90 });
  const random = seededRandom(1000 + seed);
  for (let k = 0; k < viewsPerHome; k++) {
    const room = home.rooms[randomInt(random, home.rooms.length)];
    if (!room) continue;
    const cells = grid.freeCellsIn(room.min, room.max);
    const cell = cells[randomInt(random, cells.length)];
    if (cell === undefined) continue;
    const [x, z] = grid.cellCentre(cell);
    const yaw = (randomInt(random, 12) * Math.PI) / 6;
    const pitch = randomInt(random, 2) === 0 ? 0 : -Math.PI / 6;
    if (!env.actNow({ type: "teleport", state: { position: [x, 0, z], yaw, pitch } }).success) continue;
    const obs = env.observeNow();
    const masks = obs.masks;
    if (!masks) throw new Error("no masks");
    const boxes = maskBoxes(masks.ids, SIZE);
    const targets = [...boxes.entries()].filter(([id, b]) => COCO[masks.labels[String(id)] ?? ""] && b.n >= 0.01 * SIZE * SIZE);
    views++;
    const t0 = performance.now();
    const detections = await detector.detect({ data: obs.rgb, width: SIZE, height: SIZE });
    detectMs += performance.now() - t0;
    const lines: string[] = [];
    for (const [id, b] of targets) {
      const type = masks.labels[String(id)] as string;
      const classes = COCO[type] as string[];
      const hit = detections.some((d) => {
        if (!classes.includes(d.label)) return false;
        const [dx, dy, dw, dh] = d.box;
        const ix = Math.max(0, Math.min(b.x1, dx + dw) - Math.max(b.x0, dx));
        const iy = Math.max(0, Math.min(b.y1, dy + dh) - Math.max(b.y0, dy));
        const inter = ix * iy;
        const iou = inter / ((b.x1 - b.x0) * (b.y1 - b.y0) + dw * dh - inter);
        if (iou >= 0.5) return true;
        const cu = Math.min(SIZE - 1, Math.max(0, Math.floor(dx + dw / 2)));
        const cv = Math.min(SIZE - 1, Math.max(0, Math.floor(dy + dh / 2)));
        return inter >= 0.7 * dw * dh && masks.ids[cv * SIZE + cu] === id;
      });
      const t = (perType[type] ??= { seen: 0, found: 0 });
      t.seen++;
      seen++;
      if (hit) {
        t.found++;
        found++;
      }
      lines.push(`${type}-${id}:${hit ? "found" : "missed"}`);
    }
    if (save) {
      const name = `home${seed}-view${k}`;
      await sharp(Buffer.from(obs.rgb), { raw: { width: SIZE, height: SIZE, channels: 3 } }).png().toFile(join(save, `${name}.png`));
      console.error(`${name}: ${lines.join(" ")} | ${detections.map((d) => `${d.label} ${d.score.toFixed(2)}`).join(", ")}`);
    }
  }
}
const recall = seen === 0 ? 0 : Math.round((found / seen) * 1000) / 10;
console.log(JSON.stringify({ benchmark: "sim-detector-recall-512x512", homes: to - from + 1, views, objects: seen, found, recallPercent: recall, perType, detectSecondsPerImage: Math.round(detectMs / views) / 1000 }));
