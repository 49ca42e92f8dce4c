/**
 * A Mixed EQA set from the built-in simulator (`eqa generate mixed`): for each home, its days
 * recorded one after another, the changes made while the agent was away, its start pose now,
 * and questions in LA-EQA's four categories with answers executed over the ground truth. Writes
 * `homes/home-<seed>/` (each day's recording and `end.json`, `changes.json`, `present.json`);
 * the caller writes `episodes.json` and `stats.json` (`writeMixedSet`). Deterministic for a
 * seed; the days already recorded are read back, so a killed generation redone gives the same files.
 */
import { join } from "node:path";
import { seededRandom, writeFileAtomically } from "../../core/index.js";
import { MIXED_CATEGORIES, MIXED_FORMAT, type MixedCategory, type MixedEpisode, type MixedHome, type MixedSet } from "../../data/index.js";
import type { RunDirectory } from "../../store/index.js";
import { checkEnglishSet, type EnglishReport } from "../english.js";
import { logSeed } from "../generate.js";
import { assignSplits } from "../split.js";
import { applyChanges, startPose, type MixedChange } from "./changes.js";
import { presentSnapshot, type HomeContext } from "./context.js";
import { recordDays, type RecordedDay } from "./days.js";
import { ViewPaths } from "./paths.js";
import { emptyMixedFunnels, selectEpisodes, type MixedFunnel, type UnsplitEpisode } from "./select.js";
import { multiPastCandidates, pastCandidates, pastPresentCandidates, presentCandidates } from "./templates.js";
import { lastSightings, rememberedView, truthView } from "./views.js";

export interface MixedSetOptions {
  /** The homes' seeds. */
  seeds: number[];
  /** Days recorded per home. */
  days: number;
  /** Changes while the agent was away, per home. */
  changes: number;
  /** Household tasks per day. */
  tasksPerDay: number;
  /** Questions per category per home, at most. */
  perCategory: number;
  /** Seeds the days' tasks, the changes, the start poses, the choice of questions and the splits. */
  seed: number;
  onProgress?: (message: string) => void;
}

export interface MixedSetStats {
  format: typeof MIXED_FORMAT;
  homes: number;
  days: number;
  questions: number;
  categories: Record<MixedCategory, number>;
  templates: Record<string, number>;
  /** Yes, no and other answers per category. */
  answers: Record<MixedCategory, { yes: number; no: number; other: number }>;
  /** Mean metres to a view of the answer, per category (0 where the history answers). */
  meanPathLength: Record<MixedCategory, number>;
  changes: Record<string, number>;
  splits: { train: number; validation: number; test: number };
  /** Per category: candidates made, dropped by each rule, kept, chosen. */
  funnel: Record<MixedCategory, MixedFunnel>;
  english: EnglishReport;
  renderer: { name: string; rewritten?: number; keptTemplate?: number; failed?: number; prompts?: Record<string, string> };
}

export interface MixedSetBuild {
  set: MixedSet;
  stats: MixedSetStats;
}

/** One home: its days, changes, present world and start, its questions. */
async function buildHome(dir: string, seed: number, options: MixedSetOptions, funnels: Record<MixedCategory, MixedFunnel>): Promise<{ home: MixedHome; episodes: UnsplitEpisode[]; changes: MixedChange[] }> {
  const random = seededRandom(logSeed(options.seed, `home-${seed}`));
  const scene = `home-${seed}`;
  const days: RecordedDay[] = await recordDays(dir, seed, { days: options.days, tasksPerDay: options.tasksPerDay, seed: options.seed }, random, options.onProgress);
  const seen = new Set(lastSightings(days).keys());
  const handled = new Set(days.flatMap((d) => d.log.events.map((e) => e.object)));
  const { home: present, changes } = applyChanges(days.at(-1)!.end, options.changes, random, { handled, seen });
  const start = startPose(present, random);
  present.start = start;
  const folder = `homes/${scene}`;
  await writeFileAtomically(join(dir, folder, "changes.json"), `${JSON.stringify(changes, null, 2)}\n`);
  await writeFileAtomically(join(dir, folder, "present.json"), `${JSON.stringify(present, null, 2)}\n`);
  const ctx: HomeContext = {
    seed,
    scene,
    days,
    present,
    presentObjects: presentSnapshot(present),
    changes,
    start,
    truth: truthView(days, present),
    remembered: rememberedView(days),
    paths: new ViewPaths(present, start),
  };
  const candidates = [...pastCandidates(ctx), ...presentCandidates(ctx), ...multiPastCandidates(ctx), ...pastPresentCandidates(ctx)];
  const episodes = selectEpisodes(ctx, candidates, options.perCategory, random, funnels);
  options.onProgress?.(`home ${seed}: ${changes.length} changes while away, ${episodes.length} questions`);
  const home: MixedHome = {
    scene,
    days: days.map((d) => ({ day: d.day, when: d.when, recording: d.recording, end_state: d.endState })),
    changes: `${folder}/changes.json`,
    present: `${folder}/present.json`,
  };
  return { home, episodes, changes };
}

/** Generates the set into `dir` (the recordings and world states); returns the set and its statistics. */
export async function buildMixedSet(dir: string, options: MixedSetOptions): Promise<MixedSetBuild> {
  const funnels = emptyMixedFunnels();
  const homes: MixedHome[] = [];
  const unsplit: UnsplitEpisode[] = [];
  const changes: MixedChange[] = [];
  for (const seed of options.seeds) {
    const built = await buildHome(dir, seed, options, funnels);
    homes.push(built.home);
    unsplit.push(...built.episodes);
    changes.push(...built.changes);
  }
  // a home's questions stay together: splits by home, stratified by category
  const splits = assignSplits(unsplit.map((e) => ({ environment: e.scene, trajectory: e.scene, stratum: e.category })), options.seed);
  const episodes: MixedEpisode[] = unsplit.map((e, i) => ({ ...e, split: splits[i]! }));
  const set: MixedSet = { format: MIXED_FORMAT, homes, episodes };
  return { set, stats: mixedSetStats(set, options.days, changes, funnels) };
}

export function mixedSetStats(set: MixedSet, days: number, changes: readonly MixedChange[], funnel: Record<MixedCategory, MixedFunnel>): MixedSetStats {
  const perCategory = <T>(make: () => T): Record<MixedCategory, T> => Object.fromEntries(MIXED_CATEGORIES.map((c) => [c, make()])) as Record<MixedCategory, T>;
  const stats: MixedSetStats = {
    format: MIXED_FORMAT,
    homes: set.homes.length,
    days,
    questions: set.episodes.length,
    categories: perCategory(() => 0),
    templates: {},
    answers: perCategory(() => ({ yes: 0, no: 0, other: 0 })),
    meanPathLength: perCategory(() => 0),
    changes: {},
    splits: { train: 0, validation: 0, test: 0 },
    funnel,
    english: checkEnglishSet(set.episodes.map((e) => ({ question: e.question, answer: e.answer, grounded: null }))),
    renderer: { name: "template" },
  };
  for (const e of set.episodes) {
    stats.categories[e.category]++;
    stats.templates[e.template ?? "unknown"] = (stats.templates[e.template ?? "unknown"] ?? 0) + 1;
    const answers = stats.answers[e.category];
    if (e.answer_value === "yes") answers.yes++;
    else if (e.answer_value === "no") answers.no++;
    else answers.other++;
    stats.meanPathLength[e.category] += e.gt_path_length;
    stats.splits[e.split]++;
  }
  for (const c of MIXED_CATEGORIES) stats.meanPathLength[c] = stats.categories[c] > 0 ? Math.round((stats.meanPathLength[c] / stats.categories[c]) * 100) / 100 : 0;
  for (const change of changes) stats.changes[change.kind] = (stats.changes[change.kind] ?? 0) + 1;
  return stats;
}

/** Writes `episodes.json` and `stats.json` (each atomically). */
export async function writeMixedSet(run: RunDirectory, build: MixedSetBuild): Promise<void> {
  await run.writeJson("episodes.json", build.set);
  await run.writeJson("stats.json", build.stats);
}
