/**
 * How the embedded detector scores tables: those of the built-in homes, each looked at
 * squarely, beside a real home's dining table in a video.
 *
 * Built-in: every table, desk and coffee table of homes 0-9, looked at from up to 13 free cells
 * of its room 1.4-3.5 m from its centre (spread over the room's cells in order), turned and
 * tilted at its centre; a view counts when the object covers ≥ 1 % of the 512×512 frame. Its
 * score in a view is that of the best "dining table" detection (COCO's only table class) whose
 * box centre lies in the object's mask box, the detector run at 0.05 so that scores under its
 * default threshold (0.3) are seen.
 *
 * Real (`--video FILE --frames A-B`): the best "dining table" detection of each frame A..B
 * (0-based) of a video, frames in which a person sees a table whole. In OpenEQA's HM3D demo
 * video (open-eqa-hm3d-demo.mp4), frames 46-86 show its dining table and chairs.
 *
 *   node --import tsx bench/sim-tables.ts [--seeds 0-9] [--video FILE --frames A-B]
 *
 * Run by `npm run bench -- sim-tables` (with the demo video when ../shared/data has it). Prints
 * one JSON line of figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractVideoFrames } from "../src/episodes/index.js";
import { loadObjectDetector, readRgbImage, type Detection } from "../src/models/embedded/index.js";
import { HouseholdEnvironment, generateHome, homeNavGrid, roomAt, type NavGrid, type SceneObject } from "../src/sim/index.js";
import { textFlag as flag } from "./flags.js";
import { maskBoxes, type MaskBox } from "./sim-coco.js";

const SIZE = 512;
const TYPES = ["table", "desk", "coffee table"];
const [from, to] = flag("seeds", "0-9").split("-").map(Number) as [number, number];
const video = flag("video", "");
const [firstFrame, lastFrame] = flag("frames", "46-86").split("-").map(Number) as [number, number];
const detector = await loadObjectDetector();

/** The best "dining table" score among `detections` whose centre lies in `box` (all of them without a box). */
function tableScore(detections: readonly Detection[], box?: MaskBox): number {
  const within = detections.filter((d) => {
    if (d.label !== "dining table") return false;
    if (!box) return true;
    const cx = d.box[0] + d.box[2] / 2;
    const cy = d.box[1] + d.box[3] / 2;
    return cx >= box.x0 && cx <= box.x1 && cy >= box.y0 && cy <= box.y1;
  });
  return Math.max(0, ...within.map((d) => d.score));
}

/** The object's scores over the views aimed at it, best first. */
async function aimedScores(env: HouseholdEnvironment, grid: NavGrid, object: SceneObject): Promise<number[]> {
  const { home } = env;
  const [tx, ty, tz] = [0, 1, 2].map((a) => (object.min[a]! + object.max[a]!) / 2) as [number, number, number];
  const cells = grid.freeCellsIn([tx - 3.5, tz - 3.5], [tx + 3.5, tz + 3.5]).filter((cell) => {
    const [x, z] = grid.cellCentre(cell);
    const d = Math.hypot(x - tx, z - tz);
    return d >= 1.4 && d <= 3.5 && roomAt(home, x, z)?.id === object.roomId;
  });
  const stride = Math.max(1, Math.floor(cells.length / 12));
  const scores: number[] = [];
  for (let i = 0; i < cells.length; i += stride) {
    const [x, z] = grid.cellCentre(cells[i]!);
    const pose = { position: [x, 0, z] as [number, number, number], yaw: Math.atan2(-(tx - x), -(tz - z)), pitch: Math.atan2(ty - env.cameraPosition[1], Math.hypot(tx - x, tz - z)) };
    if (!env.actNow({ type: "teleport", state: pose }).success) continue;
    const obs = env.observeNow();
    const box = maskBoxes(obs.masks!.ids, SIZE).get(object.id);
    if (!box || box.n < 0.01 * SIZE * SIZE) continue;
    scores.push(tableScore(await detector.detect({ data: obs.rgb, width: SIZE, height: SIZE }, { minScore: 0.05, maxDetections: 100 }), box));
  }
  return scores.sort((a, b) => b - a);
}

const median = (sorted: readonly number[]): number => sorted[Math.floor(sorted.length / 2)] ?? 0;
const builtin: Record<string, { objects: number; bestAtLeast03: number; bestScores: number[]; medianScores: number[] }> = {};
for (let seed = from; seed <= to; seed++) {
  const home = generateHome(seed);
  const env = new HouseholdEnvironment(home, { width: SIZE, height: SIZE, hfovDeg: 90 });
  const grid = homeNavGrid(home);
  for (const object of home.objects.filter((o) => TYPES.includes(o.type))) {
    const scores = await aimedScores(env, grid, object);
    if (scores.length === 0) continue;
    const figures = (builtin[object.type] ??= { objects: 0, bestAtLeast03: 0, bestScores: [], medianScores: [] });
    figures.objects++;
    if (scores[0]! >= 0.3) figures.bestAtLeast03++;
    figures.bestScores.push(scores[0]!);
    figures.medianScores.push(median(scores));
  }
}

let real: Record<string, unknown> | undefined;
if (video) {
  const dir = mkdtempSync(join(tmpdir(), "eqa-sim-tables-"));
  try {
    await extractVideoFrames(video, dir, { maxFrames: lastFrame + 1 });
    const scores: number[] = [];
    for (let f = firstFrame; f <= lastFrame; f++) {
      const image = await readRgbImage(join(dir, `${String(f).padStart(5, "0")}-rgb.png`));
      scores.push(tableScore(await detector.detect(image, { minScore: 0.05, maxDetections: 100 })));
    }
    const sorted = [...scores].sort((a, b) => b - a);
    real = { video, frames: `${firstFrame}-${lastFrame}`, framesAtLeast03: scores.filter((s) => s >= 0.3).length, best: sorted[0] ?? 0, median: median(sorted) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(JSON.stringify({ benchmark: "sim-table-scores-512x512", homes: to - from + 1, builtin, ...(real ? { real } : {}) }));
