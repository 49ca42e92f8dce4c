/**
 * Whether an RGB-only memory of a built-in recording holds the furniture its masks show.
 *
 * Each home (seeds 0-4) is recorded as `eqa sim record --seed N --task random --min-steps 120
 * --width 512 --height 512` does (a random household task, then walking to furniture and looking
 * around). Its memory is built twice, as `eqa memory build` builds it: from the instance
 * masks (`--no-detector --ignore-labels wall,floor,ceiling`: which objects are there and seen),
 * and from a copy of the frames without the mask files (`NNNNN-instance.png`,
 * `instance_labels.json`), so that the embedded detector finds the objects, with its defaults.
 * Both look at the same frames (`--sampling`, 60 uniformly by default); `--min-score` is the
 * detector's least confidence (`eqa memory build`'s default 0.3 unless given), `--support-frames`
 * as `eqa memory build`'s (0 unless given).
 *
 * An object of the masks' memory counts when it is of a COCO class (bench/sim-coco.ts, books
 * and mugs left out: a sofa is a couch, an armchair a chair or a couch, a table, desk or coffee
 * table a dining table, a TV stand its tv, a stove an oven, a fridge a refrigerator, a plant a
 * potted plant) and its largest view covers at least 1 % of the frame. It is found when the
 * RGB-only memory has an instance of its class at its place: the instance's centre within its
 * box grown by 0.25 m, or its centre within the instance's box. A desk's chair (a part of the
 * desk in the masks) is counted apart: a chair instance at a desk. An RGB-only instance of a
 * furniture class (chair, couch, dining table, bed) at no object of a matching type is
 * unmatched (chairs match armchairs, sofas and desks).
 *
 *   node --import tsx bench/sim-memory.ts [--seeds 0-4] [--size 512] [--sampling uniform:60] [--min-score 0.3] [--support-frames 0] [--out DIR]
 *
 * Run by `npm run bench -- sim-memory`. Prints one JSON line of figures.
 */
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildEpisodeMemory, type MemoryInstance } from "../src/agents/index.js";
import { openEpisode, parseSamplingSpec } from "../src/episodes/index.js";
import { recordTask } from "../src/sim/index.js";
import { textFlag as flag } from "./flags.js";
import { COCO_CLASSES } from "./sim-coco.js";

// books and mugs are left out: the figures in BENCHMARKS.md count furniture, appliances and a few tableware types
const COCO = Object.fromEntries(Object.entries(COCO_CLASSES).filter(([type]) => type !== "book" && type !== "mug"));
const FURNITURE = ["chair", "couch", "dining table", "bed"];
/** The types a furniture-class instance may stand for (a chair: an armchair, a sofa's seat, a desk's chair). */
const STANDS_FOR: Record<string, string[]> = { chair: ["armchair", "sofa", "desk", "table"], couch: ["sofa", "armchair"], "dining table": ["table", "desk", "coffee table"], bed: ["bed"] };

const [from, to] = flag("seeds", "0-4").split("-").map(Number) as [number, number];
const size = Number(flag("size", "512"));
const samplingText = flag("sampling", "uniform:60");
const sampling = parseSamplingSpec(samplingText);
const minScore = process.argv.includes("--min-score") ? Number(flag("min-score", "0.3")) : undefined;
const supportFrames = Number(flag("support-frames", "0"));
const out = flag("out", fileURLToPath(new URL("./out/sim-memory", import.meta.url)));

/** Distance from a point to a box (0 inside). */
function distance(point: readonly number[], box: { min: readonly number[]; max: readonly number[] }): number {
  let sum = 0;
  for (let a = 0; a < 3; a++) {
    const d = Math.max(box.min[a]! - point[a]!, 0, point[a]! - box.max[a]!);
    sum += d * d;
  }
  return Math.sqrt(sum);
}

/** Whether an RGB-only instance lies at an object of the masks' memory. */
function at(found: MemoryInstance, object: MemoryInstance): boolean {
  return distance(found.center!, object.box!) <= 0.25 || distance(object.center!, found.box!) === 0;
}

const perType: Record<string, { seen: number; found: number }> = {};
const chairsAtDesks = { desks: 0, found: 0 };
const homes: { seed: number; frames: number; looked: number; masksInstances: number; rgbInstances: number; found: string[]; missed: string[]; unmatched: string[]; seconds: number }[] = [];
let furnitureInstances = 0;
let unmatched = 0;
for (let seed = from; seed <= to; seed++) {
  const dir = join(out, `home-${seed}`);
  const summary = await recordTask({ seed, tasks: ["random"], out: dir, width: size, height: size, minSteps: 120 });
  // the recording as a user without masks has it: the same folder without the mask files
  const rgbOnly = join(dir, "frames-rgb-only");
  rmSync(rgbOnly, { recursive: true, force: true });
  mkdirSync(rgbOnly, { recursive: true });
  for (const name of readdirSync(summary.framesDir)) if (!name.endsWith("-instance.png") && name !== "instance_labels.json") cpSync(join(summary.framesDir, name), join(rgbOnly, name));
  const masks = await buildEpisodeMemory(await openEpisode(summary.framesDir, `home-${seed}`), { sampling, detector: false, ignoreLabels: ["wall", "floor", "ceiling"] });
  const started = performance.now();
  const rgb = await buildEpisodeMemory(await openEpisode(rgbOnly, `home-${seed}`), { sampling, supportFrames, ...(minScore !== undefined ? { minScore } : {}) });
  const seconds = Math.round(performance.now() - started) / 1000;
  const placed = rgb.graph.instances.filter((i) => i.center && i.box);
  const objects = masks.graph.instances.filter((i) => i.box && i.center);
  const home = { seed, frames: summary.frames, looked: rgb.graph.frames.length, masksInstances: masks.graph.instances.length, rgbInstances: rgb.graph.instances.length, found: [] as string[], missed: [] as string[], unmatched: [] as string[], seconds };
  for (const object of objects) {
    const classes = COCO[object.label];
    if (!classes || Math.max(...object.views.map((v) => v.area)) < 0.01 * size * size) continue;
    const t = (perType[object.label] ??= { seen: 0, found: 0 });
    t.seen++;
    const hit = placed.some((i) => classes.includes(i.label) && at(i, object));
    if (hit) t.found++;
    (hit ? home.found : home.missed).push(object.label);
    if (object.label === "desk") {
      chairsAtDesks.desks++;
      if (placed.some((i) => i.label === "chair" && at(i, object))) chairsAtDesks.found++;
    }
  }
  for (const instance of placed) {
    if (!FURNITURE.includes(instance.label)) continue;
    furnitureInstances++;
    if (objects.some((o) => STANDS_FOR[instance.label]!.includes(o.label) && at(instance, o))) continue;
    unmatched++;
    home.unmatched.push(`${instance.label} at (${instance.center!.map((c) => c.toFixed(1)).join(", ")})`);
  }
  homes.push(home);
  console.error(`home ${seed}: ${summary.frames} frames, ${home.looked} looked at; found ${home.found.join(", ") || "nothing"}; missed ${home.missed.join(", ") || "nothing"}; unmatched ${home.unmatched.join(", ") || "none"} (${seconds} s)`);
}
const seen = Object.values(perType).reduce((s, t) => s + t.seen, 0);
const found = Object.values(perType).reduce((s, t) => s + t.found, 0);
const key = ["sofa", "armchair", "table", "desk", "coffee table"];
const keySeen = key.reduce((s, k) => s + (perType[k]?.seen ?? 0), 0);
const keyFound = key.reduce((s, k) => s + (perType[k]?.found ?? 0), 0);
console.log(
  JSON.stringify({
    benchmark: "sim-memory-rgb-only",
    size: `${size}x${size}`,
    sampling: samplingText,
    minScore: minScore ?? 0.3,
    supportFrames,
    homes: to - from + 1,
    objects: seen,
    found,
    recallPercent: seen === 0 ? 0 : Math.round((found / seen) * 1000) / 10,
    seatsAndTables: { seen: keySeen, found: keyFound },
    chairsAtDesks,
    perType,
    furnitureInstances,
    unmatched,
    perHome: homes,
  }),
);
