/**
 * How right the memory of a built-in recording is with the recording's own instance masks, where
 * no detector can be blamed, against the simulator's ground truth (`memoryAgainstRecording`:
 * home.json, trajectory.json, the masks and depth).
 *
 * Each home (seeds 0-9) is recorded as `eqa sim record --seed N --task random --min-steps 150`
 * records it (640×480 by default), and its memory built as `eqa memory build --frames REC/frames
 * --no-detector --ignore-labels wall,floor,ceiling` builds it (60 frames looked at, uniformly).
 * Figures, summed over the homes: objects seen (a mask of at least 100 pixels in 640×480 within
 * 4 m, in 3 or more frames looked at) and found; instances at their object's place (precision);
 * objects split (two instances at one place of the object); centre errors (the median, and the
 * share within 10 cm) against the object as drawn; on/inside precision and recall.
 *
 *   node --import tsx bench/sim-memory-masks.ts [--seeds 0-9] [--width 640] [--height 480] [--min-steps 150] [--sampling uniform:60] [--out DIR]
 *
 * Run by `npm run bench -- sim-memory-masks`. Prints one JSON line of figures.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildEpisodeMemory, memoryAgainstRecording } from "../src/agents/index.js";
import { openEpisode, parseSamplingSpec } from "../src/episodes/index.js";
import { recordTask } from "../src/sim/index.js";
import { numberFlag, textFlag } from "./flags.js";

const [from, to] = textFlag("seeds", "0-9").split("-").map(Number) as [number, number];
const width = numberFlag("width", 640);
const height = numberFlag("height", 480);
const minSteps = numberFlag("min-steps", 150);
const samplingText = textFlag("sampling", "uniform:60");
const sampling = parseSamplingSpec(samplingText);
const out = textFlag("out", fileURLToPath(new URL("./out/sim-memory-masks", import.meta.url)));

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;
const total = { objects: 0, found: 0, instances: 0, rightInstances: 0, split: 0, relationsPredicted: 0, relationsRight: 0, relationsTruth: 0, relationsRecalled: 0 };
const errors: number[] = [];
const perHome: unknown[] = [];
for (let seed = from; seed <= to; seed++) {
  const dir = join(out, `home-${seed}`);
  const summary = await recordTask({ seed, tasks: ["random"], out: dir, width, height, minSteps });
  const started = performance.now();
  const { graph } = await buildEpisodeMemory(await openEpisode(summary.framesDir, `home-${seed}`), { sampling, detector: false, ignoreLabels: ["wall", "floor", "ceiling"] });
  const seconds = round((performance.now() - started) / 1000, 1);
  const truth = await memoryAgainstRecording(graph, dir);
  const r = truth.relations;
  total.objects += truth.objects;
  total.found += truth.found;
  total.instances += truth.instances;
  total.rightInstances += truth.rightInstances;
  total.split += truth.split.length;
  total.relationsPredicted += r.predicted;
  total.relationsRight += r.right;
  total.relationsTruth += r.truth;
  total.relationsRecalled += r.recalled;
  errors.push(...truth.centreErrors);
  const far = truth.perObject.filter((o) => (o.centreError ?? 0) > 0.1).map((o) => `${o.name} ${o.centreError!.toFixed(2)} m`);
  perHome.push({ seed, frames: summary.frames, objects: truth.objects, found: truth.found, instances: truth.instances, rightInstances: truth.rightInstances, split: truth.split, missed: truth.missed, far, relations: { predicted: r.predicted, right: r.right, truth: r.truth, recalled: r.recalled, wrong: r.wrong, missed: r.missedTruth }, seconds });
  console.error(`home ${seed}: ${truth.found}/${truth.objects} found, ${truth.rightInstances}/${truth.instances} instances right, split ${truth.split.join(", ") || "none"}; centres off > 10 cm: ${far.join(", ") || "none"}; on/inside ${r.right}/${r.predicted} right, ${r.recalled}/${r.truth} recalled${r.wrong.length ? `; wrong ${r.wrong.join(", ")}` : ""}${r.missedTruth.length ? `; missed ${r.missedTruth.join(", ")}` : ""} (${seconds} s)`);
}
errors.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    benchmark: "sim-memory-masks",
    size: `${width}x${height}`,
    minSteps,
    sampling: samplingText,
    homes: to - from + 1,
    ...total,
    precision: round(total.rightInstances / Math.max(1, total.instances)),
    centreMedianM: round(errors[Math.floor(errors.length / 2)] ?? 0),
    centreWithin10cm: round(errors.filter((e) => e <= 0.1).length / Math.max(1, errors.length)),
    relationPrecision: round(total.relationsRight / Math.max(1, total.relationsPredicted)),
    relationRecall: round(total.relationsRecalled / Math.max(1, total.relationsTruth)),
    perHome,
  }),
);
