/**
 * A TAG-EQA dataset from many trajectory logs: programs per log, template text, splits and
 * statistics (Fig. 3). Deterministic for a seed: the same logs and seed give the same bytes.
 */
import type { TagPredicateType, TagQuestion, TagSplit, TrajectoryLog } from "../data/index.js";
import { emptyFunnel, generatePrograms, type GeneratedProgram, type GenerationFunnel } from "./generate.js";
import { predicateTypes, queryKey, type EventRef } from "./program.js";
import { renderAnswer, renderQuestion, structuredQuestion, type EventTotals } from "./render.js";
import { assignSplits } from "./split.js";
import { checkEnglishSet, type EnglishIssue } from "./english.js";
import { forgetWorld, worldOf } from "./execute.js";
import { checkSeenSet, type SeenReport } from "./sightings.js";
import { registerSightings, type ObjectSightings } from "./world.js";
import type { RunDirectory } from "../store/index.js";

export interface TrajectoryInput {
  log: TrajectoryLog;
  /** The file it was read from, for messages. */
  file?: string;
  /** The recording's frame folder, relative to the dataset's directory. */
  episodeHistory?: string | null;
  /** What the agent saw, from the recording's instance masks (`maskSightings`); else the geometric test. */
  sightings?: ObjectSightings | null;
}

/** A trajectory file that was not used, and why. */
export interface SkippedTrajectory {
  file: string;
  step?: number;
  error: string;
}

export interface DatasetOptions {
  perTrajectory: number;
  seed: number;
}

export interface TagDatasetStats {
  questions: number;
  trajectories: number;
  trajectoriesWithoutQuestions: number;
  skipped: number;
  /** The files skipped (their errors are in skipped.json). */
  skippedFiles: string[];
  environments: number;
  splits: Record<TagSplit, number>;
  /** Environments of validation and test that training never saw, and their questions. */
  unseenEnvironments: string[];
  unseenQuestions: { validation: number; test: number };
  queryTypes: Record<string, number>;
  queries: Record<string, number>;
  /** Conditions of each predicate type (Fig. 3). */
  predicateTypes: Record<string, number>;
  predicates: Record<string, number>;
  /** Fig. 3's categories: properties split into visual and utility, spatial into relative and situational. */
  categories: Record<string, number>;
  conditionsPerQuestion: Record<string, number>;
  ambiguous: number;
  grounded: number;
  /** Questions with no observations (episode_history null, as from ALFRED): for judges only, refused by eqa answer. */
  withoutObservations: number;
  /** The English checker over every question and answer text (src/generate/english.ts): texts with each issue. */
  english: { texts: number; counts: Record<EnglishIssue, number>; examples: Record<EnglishIssue, string[]> };
  /** The never-seen check over every question (src/generate/sightings.ts `checkSeenSet`). */
  seen: SeenReport;
  /** Programs sampled, dropped by each rule (FUNNEL_RULES in src/generate/generate.ts), and kept. */
  funnel: GenerationFunnel;
  /** How the texts were written: the template renderer, or a model (with what it rewrote). */
  renderer: { name: string; rewritten?: number; keptTemplate?: number; failed?: number; prompts?: Record<string, string> };
}

export interface TagDataset {
  questions: TagQuestion[];
  stats: TagDatasetStats;
}

/** Writes `questions.json`, `stats.json` and `skipped.json` (each atomically). */
export async function writeTagDataset(run: RunDirectory, dataset: TagDataset, skipped: readonly SkippedTrajectory[]): Promise<void> {
  await run.writeJson("questions.json", dataset.questions);
  await run.writeJson("stats.json", dataset.stats);
  await run.writeJson("skipped.json", skipped);
}

export function buildTagDataset(inputs: readonly TrajectoryInput[], options: DatasetOptions, skipped: readonly SkippedTrajectory[] = []): TagDataset {
  const questions: TagQuestion[] = [];
  let empty = 0;
  const funnel = emptyFunnel();
  for (const input of [...inputs].sort((a, b) => a.log.id.localeCompare(b.log.id))) {
    if (input.sightings) registerSightings(input.log, input.sightings);
    const generated = generatePrograms(input.log, options, funnel);
    if (generated.length === 0) empty++;
    generated.forEach((g, k) => questions.push(toQuestion(input, g, k)));
    forgetWorld(input.log);
  }
  const splits = assignSplits(
    questions.map((q) => ({ environment: q.environment, trajectory: q.trajectory, stratum: `${q.tags.predicate_types.join("+")}|${q.tags.query_type}|${q.grounded ? "grounded" : "plain"}` })),
    options.seed,
  );
  questions.forEach((q, i) => (q.split = splits[i]!));
  return { questions, stats: datasetStats(questions, inputs.length, empty, skipped.map((s) => s.file), funnel) };
}

function toQuestion(input: TrajectoryInput, g: GeneratedProgram, k: number): TagQuestion {
  const log = input.log;
  const world = worldOf(log);
  const totals: EventTotals = (ref: EventRef) => world.eventCount(ref.type, ref.objectType);
  return {
    question_id: `${log.id}-q${String(k).padStart(2, "0")}`,
    trajectory: log.id,
    environment: log.environment,
    source: log.source,
    question: renderQuestion(g.program, totals),
    answer: renderAnswer(g.program, g.answer),
    structured_question: structuredQuestion(g.program),
    program: g.program,
    structured_answer: g.answer,
    grounded: g.grounded
      ? {
          question: renderQuestion(g.grounded.program, totals),
          structured_question: structuredQuestion(g.grounded.program),
          answer: renderAnswer(g.grounded.program, g.grounded.answer),
          structured_answer: g.grounded.answer,
        }
      : null,
    tags: { predicate_types: predicateTypes(g.program), query_type: g.program.query.type, conditions: g.program.filters.length, ambiguous: g.grounded !== null },
    split: "train",
    episode_history: input.episodeHistory ?? null,
    seen: g.seen,
  };
}

const CATEGORY: Record<TagPredicateType, (key: string) => string> = {
  property: (key) => (key === "use" ? "utility properties" : "visual properties"),
  location: () => "relative spatial",
  position: () => "situational spatial",
  state: () => "states",
  moment: () => "temporal",
};

export function datasetStats(questions: readonly TagQuestion[], trajectories: number, withoutQuestions: number, skippedFiles: readonly string[], funnel: GenerationFunnel = emptyFunnel()): TagDatasetStats {
  const count = (record: Record<string, number>, key: string): void => {
    record[key] = (record[key] ?? 0) + 1;
  };
  const stats: TagDatasetStats = {
    questions: questions.length,
    trajectories,
    trajectoriesWithoutQuestions: withoutQuestions,
    skipped: skippedFiles.length,
    skippedFiles: [...skippedFiles],
    environments: new Set(questions.map((q) => q.environment)).size,
    splits: { train: 0, validation: 0, test: 0 },
    unseenEnvironments: [],
    unseenQuestions: { validation: 0, test: 0 },
    queryTypes: {},
    queries: {},
    predicateTypes: {},
    predicates: {},
    categories: {},
    conditionsPerQuestion: {},
    ambiguous: 0,
    grounded: 0,
    withoutObservations: questions.filter((q) => q.episode_history == null).length,
    english: checkEnglishSet(questions),
    seen: checkSeenSet(questions),
    funnel,
    renderer: { name: "template" },
  };
  const trainEnvironments = new Set(questions.filter((q) => q.split === "train").map((q) => q.environment));
  const unseen = new Set<string>();
  for (const q of questions) {
    stats.splits[q.split]++;
    if (q.split !== "train" && !trainEnvironments.has(q.environment)) {
      stats.unseenQuestions[q.split]++;
      unseen.add(q.environment);
    }
    count(stats.queryTypes, q.program.query.type);
    count(stats.queries, queryKey(q.program.query));
    for (const c of q.program.filters) {
      count(stats.predicateTypes, c.type);
      count(stats.predicates, `${c.type}:${c.key}`);
      count(stats.categories, CATEGORY[c.type](c.key));
    }
    count(stats.conditionsPerQuestion, String(q.program.filters.length));
    if (q.tags.ambiguous) stats.ambiguous++;
    if (q.grounded) stats.grounded++;
  }
  stats.unseenEnvironments = [...unseen].sort();
  return stats;
}
