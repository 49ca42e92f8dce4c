/**
 * TAG-EQA generation speed: questions generated with the template renderer from all 506 ALFRED
 * trajectories of ../shared/data/alfred (the paper: 14k pairs from 1.5k trajectories), or from
 * any `alfred:DIR` / `sim:DIR` source. Loading and generation are timed apart.
 *
 *   node --import tsx bench/generate.ts [--source alfred:DIR|sim:DIR] [--per-trajectory 10] [--seed 0]
 *
 * It also measures what only the whole set shows: the English checker's counts per class
 * (src/generate/english.ts: answers in another tense than their question, type names cut where
 * English writes one word, …), the never-seen check (src/generate/sightings.ts), trajectories
 * with questions in more than one split, the generation funnel (programs made, dropped by each
 * rule, kept), questions that name their answer, and questions whose moment changes nothing:
 * asked without it at any single step of the trajectory, the answer would be the same.
 *
 * Prints one JSON line of figures.
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import { answerSignature, buildTagDataset, containsItsAnswer, executeProgramDetailed, loadTrajectorySource, worldOf } from "../src/generate/index.js";
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
const logs = new Map(inputs.map((i) => [i.log.id, i.log]));
let namingTheirAnswer = 0;
let momentQuestions = 0;
let momentChangingNothing = 0;
for (const q of dataset.questions) {
  if (containsItsAnswer(q.program, q.structured_answer)) namingTheirAnswer++;
  if (!q.program.filters.some((c) => c.type === "moment")) continue;
  momentQuestions++;
  const log = logs.get(q.trajectory)!;
  const signature = answerSignature(executeProgramDetailed(q.program, log));
  const without = { ...q.program, filters: q.program.filters.filter((c) => c.type !== "moment") };
  let changes = false;
  for (let step = 0; step <= worldOf(log).lastStep && !changes; step++) {
    const at = executeProgramDetailed(without, log, [step, step]);
    changes = !at.unknown && answerSignature(at) !== signature;
  }
  if (!changes) momentChangingNothing++;
}
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
    namingTheirAnswer,
    momentQuestions,
    momentChangingNothing,
    loadSeconds: Math.round(t1 - t0) / 1000,
    generateSeconds: Math.round(generateSeconds * 1000) / 1000,
    pairsPerSecond: Math.round((dataset.stats.questions / generateSeconds) * 10) / 10,
    msPerTrajectory: Math.round(((t2 - t1) / Math.max(1, inputs.length)) * 10) / 10,
    rssAfterLoadMB: loadedRssMB,
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  }),
);
