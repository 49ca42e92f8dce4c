/**
 * TAG-EQA generation speed: questions generated with the template renderer from all 506 ALFRED
 * trajectories of ../shared/data/alfred (the paper: 14k pairs from 1.5k trajectories), or from
 * any `alfred:DIR` / `sim:DIR` source. Loading and generation are timed apart.
 *
 *   node --import tsx bench/generate.ts [--source alfred:DIR|sim:DIR] [--per-trajectory 10] [--seed 0]
 *
 * It also measures what only the whole set shows: the English checker's counts per class
 * (src/generate/english.ts), the never-seen check (src/generate/sightings.ts), trajectories with
 * questions in more than one split, and the generation funnel (programs made, dropped by each
 * rule, kept).
 *
 * Prints one JSON line of figures.
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import { buildTagDataset, loadTrajectorySource } from "../src/generate/index.js";
import { textFlag as flag } from "./flags.js";

const source = flag("source", `alfred:${join(import.meta.dirname, "..", "..", "shared", "data", "alfred")}`);
const perTrajectory = Number(flag("per-trajectory", "10"));
const seed = Number(flag("seed", "0"));

const t0 = performance.now();
const { inputs, skipped } = await loadTrajectorySource(source, tmpdir());
const t1 = performance.now();
const loadedRssMB = Math.round(process.memoryUsage().rss / 1e6);
const dataset = buildTagDataset(inputs, { perTrajectory, seed }, skipped);
const t2 = performance.now();
const generateSeconds = (t2 - t1) / 1000;
const steps = inputs.reduce((s, i) => s + i.log.steps.length, 0);
const splitsOf = new Map<string, Set<string>>();
for (const q of dataset.questions) splitsOf.set(q.trajectory, new Set([...(splitsOf.get(q.trajectory) ?? []), q.split]));
console.log(
  JSON.stringify({
    benchmark: "tag-generate-template",
    source,
    trajectories: inputs.length,
    skipped: skipped.length,
    steps,
    questions: dataset.stats.questions,
    grounded: dataset.stats.grounded,
    splits: dataset.stats.splits,
    trajectoriesInSeveralSplits: [...splitsOf.values()].filter((x) => x.size > 1).length,
    englishTexts: dataset.stats.english.texts,
    english: dataset.stats.english.counts,
    seen: dataset.stats.seen,
    queryTypes: dataset.stats.queryTypes,
    funnel: dataset.stats.funnel,
    loadSeconds: Math.round(t1 - t0) / 1000,
    generateSeconds: Math.round(generateSeconds * 1000) / 1000,
    pairsPerSecond: Math.round((dataset.stats.questions / generateSeconds) * 10) / 10,
    msPerTrajectory: Math.round(((t2 - t1) / Math.max(1, inputs.length)) * 10) / 10,
    rssAfterLoadMB: loadedRssMB,
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  }),
);
