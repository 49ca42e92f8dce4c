/**
 * The kinds of run folders beside LLM-Match, answer and TAG-EQA structured-judge runs, as the
 * report and the viewer read them: `eqa explore` (judged or not), `eqa rm score`, `eqa rm bench`,
 * `eqa memory build`, `eqa generate tag` and `eqa answer-tag`. For each, the schema of what its
 * writer puts in the folder, the headline metrics the papers report, and its questions (or
 * instances, episodes) as rows with their ground truth and answers.
 */
import { memoByFile } from "../core/index.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { episodeFileName, latestMemoryRecords, loadActiveEpisodes, memoryRecordSchema, MEMORY_FAILURES_FILE, MEMORY_RECORDS_FILE, type ActiveEpisode } from "../agents/index.js";
import { loadMixedSet, loadTagQuestions, type TagQuestion } from "../data/index.js";
import { llmMatchPoints } from "../eval/index.js";
import { TAG_ANSWERS_FILE } from "../generate/index.js";
import { meanEstimate, readJsonFile, readRecords } from "./files.js";
import { structuredAnswerText } from "./tag-runs.js";

/** One figure a run is judged by, as its paper names it. */
export interface HeadlineMetric {
  /** As the paper writes it: "C*", "E_path", "LLM-Match", "accuracy (K=4)". */
  name: string;
  value: number | null;
  /** "%", "m", "" (a count or a ratio). */
  unit: string;
  /** How many items it averages, when it is an average. */
  n?: number;
  ci?: [number | null, number | null];
  /** What it is, in a line. */
  about: string;
}

const nullableNumber = z.number().nullable();
const counts = z.record(z.string(), z.number());

// ---- eqa explore ----

const efficiencySchema = z.looseObject({ efficiency: z.number(), correctness: z.number(), meanPathRatio: z.number(), n: z.number(), unit: z.string() });
const expressSchema = z.looseObject({ c: nullableNumber, cStar: nullableNumber, ePath: nullableNumber, dT: nullableNumber, nScored: z.number(), nPath: z.number(), nGoal: z.number(), unjudged: z.number() });
const reliabilitySchema = z.looseObject({ ace: nullableNumber, npl: nullableNumber, wce: nullableNumber, n: z.number() });

/** `summary.json` of `eqa explore` (`ExploreSummary`, with `reliability` and, when judged, `judged`). */
export const exploreSummarySchema = z.looseObject({
  kind: z.literal("explore"),
  eqakitVersion: z.string(),
  createdAt: z.string(),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ episodes: z.number(), finished: z.number(), failed: z.number(), answered: z.number(), blindAnswers: z.number().optional() }),
  stops: counts,
  metrics: z.looseObject({
    pathLength: z.looseObject({ meanMetres: nullableNumber, meanSteps: nullableNumber }),
    goalDistance: z.looseObject({ meanMetres: nullableNumber, n: z.number() }),
    coverage: z.looseObject({ mean: nullableNumber, min: nullableNumber, n: z.number() }).optional(),
    multipleChoice: z.looseObject({ accuracy: nullableNumber, correct: z.number(), n: z.number(), unread: z.number() }).optional(),
  }),
  failures: z.array(z.looseObject({ questionId: z.string(), error: z.string() })),
  reliability: reliabilitySchema.optional(),
  judged: z
    .looseObject({
      judge: z.string(),
      mode: z.string(),
      judged: z.number(),
      failed: z.number(),
      llmMatch: z.looseObject({ correctness: nullableNumber, n: z.number() }),
      efficiency: z.looseObject({ metres: efficiencySchema.nullable(), steps: efficiencySchema.nullable() }),
      express: expressSchema.nullable(),
      failures: z.array(z.looseObject({ questionId: z.string(), error: z.string() })),
    })
    .optional(),
});
export type ExploreRunSummary = z.infer<typeof exploreSummarySchema>;

/** One line of an exploration's `episodes.jsonl` (`ExploreRecord`), the fields shown. */
const exploreRecordSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  scene: z.string(),
  answer: z.string().nullable(),
  stop: z.string().nullable(),
  pathLengthM: nullableNumber,
  pathLengthSteps: nullableNumber,
  frames: z.number(),
  coverage: nullableNumber.optional(),
  choice: z.string().nullable().optional(),
  correct: z.boolean().optional(),
  error: z.string().nullable(),
  // the frames the explorer's calls were sent (Fine-EQA), and those its answering agent used (frontier's EM-EQA agent)
  details: z
    .looseObject({
      calls: z.array(z.looseObject({ frames: z.array(z.number()).optional() })).optional(),
      trace: z.looseObject({ frames: z.array(z.number()).optional() }).optional(),
    })
    .optional()
    .catch(undefined),
});

/** The frames an exploration's agent used: those sent with its calls and those its answering agent was given, else the last (what Fine-EQA answers from and the EAC judge sees). */
function framesUsed(r: z.infer<typeof exploreRecordSchema>): number[] {
  const used = new Set([...(r.details?.trace?.frames ?? []), ...(r.details?.calls ?? []).flatMap((c) => c.frames ?? [])]);
  if (used.size === 0 && r.frames > 0) used.add(r.frames - 1);
  return [...used].filter((i) => Number.isInteger(i) && i >= 0 && i < r.frames).sort((a, b) => a - b);
}

/** One line of an exploration's `judgements.jsonl` (`ExploreJudgement`). */
const exploreJudgementSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  llmMatch: nullableNumber,
  eac: z.union([z.looseObject({ status: z.literal("ok"), grounding: z.number(), accuracy: z.number(), score: z.number() }), z.looseObject({ status: z.literal("failed"), error: z.string() })]).nullable(),
  error: z.string().nullable(),
});

/** An exploration's episode as a question row. */
export interface ExploreQuestion {
  questionId: string;
  question?: string;
  category?: string;
  groundTruth?: string;
  choices?: string[];
  answer: string | null;
  stop: string | null;
  pathLengthM: number | null;
  pathLengthSteps: number | null;
  coverage?: number | null;
  choice?: string | null;
  correct?: boolean;
  /** LLM-Match's σ, when judged (null: the judgement failed). */
  score?: number | null;
  points?: number;
  eac?: { grounding: number; accuracy: number; score: number } | { error: string };
  error?: string;
  /** The episode's frame folder under the run's `frames/`, the frames the agent used in it, and its top-down picture (`trajectories/<id>.png`) when drawn. */
  episode: string;
  frames: number[];
  plan?: string;
}

const episodesFile = memoByFile((path): Promise<Map<string, ActiveEpisode> | undefined> => loadActiveEpisodes(path).then((list) => new Map(list.map((e) => [e.questionId, e])), () => undefined));

/** Reads an exploration's episodes and judgements; the episodes file (for questions and ground truth) is the first of `locate`'s places that reads. */
export async function loadExploreQuestions(dir: string, summary: ExploreRunSummary | undefined, locate: (named: unknown) => (string | undefined)[], notes: string[]): Promise<ExploreQuestion[]> {
  const byId = new Map<string, ExploreQuestion>();
  const records = join(dir, "episodes.jsonl");
  if (existsSync(records)) {
    // later lines win: a resumed run appends the episodes it explored again
    for (const r of readRecords(records, exploreRecordSchema)) {
      const episode = episodeFileName(r.questionId);
      const plan = join(dir, "trajectories", `${episode}.png`);
      byId.set(r.questionId, {
        questionId: r.questionId,
        episode,
        frames: framesUsed(r),
        ...(existsSync(plan) ? { plan } : {}),
        answer: r.answer,
        stop: r.stop,
        pathLengthM: r.pathLengthM,
        pathLengthSteps: r.pathLengthSteps,
        ...(r.coverage !== undefined ? { coverage: r.coverage } : {}),
        ...(r.choice !== undefined ? { choice: r.choice } : {}),
        ...(r.correct !== undefined ? { correct: r.correct } : {}),
        ...(r.error !== null ? { error: r.error } : {}),
      });
    }
  }
  const judgements = join(dir, "judgements.jsonl");
  if (existsSync(judgements)) {
    for (const j of readRecords(judgements, exploreJudgementSchema)) {
      const q = byId.get(j.questionId);
      if (!q) continue;
      q.score = j.llmMatch;
      if (j.llmMatch !== null) q.points = llmMatchPoints(j.llmMatch);
      else delete q.points;
      if (j.eac) q.eac = j.eac.status === "ok" ? { grounding: j.eac.grounding, accuracy: j.eac.accuracy, score: j.eac.score } : { error: j.eac.error };
      if (j.error !== null) q.error = `judge: ${j.error}`;
    }
  }
  let episodes: Map<string, ActiveEpisode> | undefined;
  for (const path of locate(summary?.config.episodes)) if (path && !episodes) episodes = await episodesFile(path);
  if (summary && !episodes) notes.push(`the episodes file ${String(summary.config.episodes ?? "(not named)")} could not be read: questions and ground truth are not shown`);
  for (const q of byId.values()) {
    const e = episodes?.get(q.questionId);
    if (!e) continue;
    q.question = e.question;
    if (e.category) q.category = e.category;
    if (e.answer !== undefined) q.groundTruth = e.answer;
    if (e.choices) q.choices = e.choices;
  }
  // the episodes file's order, whatever order the episodes finished in
  const order = episodes ? [...episodes.keys()] : [];
  const at = new Map(order.map((id, i) => [id, i]));
  return [...byId.values()].sort((a, b) => (at.get(a.questionId) ?? order.length) - (at.get(b.questionId) ?? order.length));
}

/** EXPRESS-Bench's and OpenEQA's figures of an exploration, and HM-EQA's accuracy. */
export function exploreHeadline(s: ExploreRunSummary): HeadlineMetric[] {
  const out: HeadlineMetric[] = [];
  const j = s.judged;
  if (j) {
    out.push({ name: "LLM-Match", value: j.llmMatch.correctness, unit: "%", n: j.llmMatch.n, about: `OpenEQA's correctness C over the judged episodes (judge ${j.judge}, ${j.mode})` });
    for (const e of [j.efficiency.metres, j.efficiency.steps]) if (e) out.push({ name: `E (${e.unit})`, value: e.efficiency, unit: "%", n: e.n, about: "OpenEQA's efficiency-weighted LLM-Match (Eq. 1), path lengths in this unit" });
    const x = j.express;
    if (x) {
      out.push({ name: "C", value: x.c, unit: "%", n: x.nScored, about: "EXPRESS-Bench: EAC accuracy σ over the judged episodes" });
      out.push({ name: "C*", value: x.cStar, unit: "%", n: x.nScored, about: "EXPRESS-Bench: exploration-answer consistency δ·σ" });
      out.push({ name: "E_path", value: x.ePath, unit: "%", n: x.nPath, about: "EXPRESS-Bench: C* weighted by path efficiency" });
      out.push({ name: "d_T", value: x.dT, unit: "m", n: x.nGoal, about: "EXPRESS-Bench: distance from the final position to the goal" });
    }
  }
  const r = s.reliability;
  if (r && r.n > 0) {
    out.push({ name: "ACE", value: r.ace, unit: "", n: r.n, about: "EXPRESS-Bench Eq. 2: mean confidence of the view the answer came from" });
    out.push({ name: "NPL", value: r.npl, unit: "", n: r.n, about: "EXPRESS-Bench Eq. 3: mean normalised path length" });
    out.push({ name: "WCE", value: r.wce, unit: "", n: r.n, about: "EXPRESS-Bench Eq. 4: confidence weighted by path efficiency" });
  }
  const mc = s.metrics.multipleChoice;
  if (mc && mc.n > 0) out.push({ name: "accuracy (multiple choice)", value: mc.accuracy, unit: "%", n: mc.n, about: `HM-EQA: answers whose letter is the answer's (${mc.unread} with no letter read, counted wrong)` });
  const coverage = s.metrics.coverage;
  if (coverage && coverage.n > 0) out.push({ name: "coverage", value: coverage.mean === null ? null : 100 * coverage.mean, unit: "%", n: coverage.n, about: "share of the reachable floor the exploration's map saw" });
  out.push({ name: "path length", value: s.metrics.pathLength.meanMetres, unit: "m", n: s.counts.finished, about: "mean length of the path walked" });
  if (s.metrics.goalDistance.n > 0) out.push({ name: "distance to goal", value: s.metrics.goalDistance.meanMetres, unit: "m", n: s.metrics.goalDistance.n, about: "mean geodesic distance from the final position to the goal" });
  for (const [stop, n] of Object.entries(s.stops)) out.push({ name: `stop: ${stop}`, value: n, unit: "", about: "episodes that ended this way" });
  out.push({ name: "episodes finished", value: s.counts.finished, unit: "", about: `of ${s.counts.episodes}; ${s.counts.failed} failed, ${s.counts.answered} answered` });
  return out;
}

// ---- eqa rm score, eqa rm bench ----

const metricEstimate = z.looseObject({ value: z.number().nullable(), ci: z.tuple([z.number().nullable(), z.number().nullable()]) });
const groupMetrics = z.looseObject({ n: z.number(), accuracy: metricEstimate, rmse: metricEstimate });
const rewardMetrics = z.looseObject({ tolerance: z.number(), overall: groupMetrics, pooled: groupMetrics, environments: z.record(z.string(), groupMetrics) });

/** `summary.json` of `eqa rm score` (`RmScoreSummary`). */
export const rmScoreSummarySchema = z.looseObject({
  kind: z.literal("rm-score"),
  eqakitVersion: z.string(),
  createdAt: z.string(),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ instances: z.number(), scored: z.number(), failed: z.number(), withGroundTruth: z.number(), samples: z.number(), failedSamples: z.number(), malformedSamples: z.number() }),
  metrics: rewardMetrics.nullable(),
  failures: z.array(z.looseObject({ id: z.string(), errors: z.array(z.string()) })),
});
export type RmScoreRunSummary = z.infer<typeof rmScoreSummarySchema>;

/** `bench.json` of `eqa rm bench` (`RmBenchSummary`). */
export const rmBenchSummarySchema = z.looseObject({
  kind: z.literal("rm-bench"),
  eqakitVersion: z.string(),
  createdAt: z.string(),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ instances: z.number(), withGroundTruth: z.number(), samples: z.number(), failedSamples: z.number() }),
  scaling: z.record(z.string(), z.record(z.string(), z.looseObject({ overall: groupMetrics, failed: z.number() }))),
});
export type RmBenchRunSummary = z.infer<typeof rmBenchSummarySchema>;

/** One line of `evaluations.jsonl` (`RmEvaluationRecord`), the fields shown. */
const rmEvaluationSchema = z.looseObject({
  id: z.string(),
  inputKey: z.string(),
  source: z.string(),
  category: z.string().optional(),
  groundTruthScore: nullableNumber,
  score: nullableNumber,
  samples: z.array(z.looseObject({ score: nullableNumber, critique: z.string().nullable(), reply: z.string().nullable(), error: z.string().optional() })),
});

function rewardHeadline(name: string, m: z.infer<typeof groupMetrics>, tolerance: number): HeadlineMetric[] {
  return [
    { name: `accuracy${name}`, value: m.accuracy.value, unit: "%", n: m.n, ci: m.accuracy.ci, about: `EQA-RM: instances whose score is within ${tolerance} of the ground truth (mean over environments)` },
    { name: `RMSE${name}`, value: m.rmse.value, unit: "", n: m.n, ci: m.rmse.ci, about: "EQA-RM: root mean square error against the ground-truth scores" },
  ];
}

export function rmScoreHeadline(s: RmScoreRunSummary): HeadlineMetric[] {
  const out = s.metrics ? rewardHeadline("", s.metrics.overall, s.metrics.tolerance) : [];
  out.push({ name: "instances scored", value: s.counts.scored, unit: "", about: `of ${s.counts.instances}; ${s.counts.failed} failed, ${s.counts.withGroundTruth} with a ground-truth score` });
  out.push({ name: "malformed samples", value: s.counts.malformedSamples, unit: "", about: `of ${s.counts.samples} samples (${s.counts.failedSamples} gave no score)` });
  return out;
}

export function rmBenchHeadline(s: RmBenchRunSummary): HeadlineMetric[] {
  const plotted = typeof s.config.plotted === "string" ? s.config.plotted : "vote";
  const byK = s.scaling[plotted] ?? Object.values(s.scaling)[0] ?? {};
  const out = Object.entries(byK).flatMap(([k, m]) => rewardHeadline(` (K=${k}, ${plotted})`, m.overall, typeof s.config.tolerance === "number" ? s.config.tolerance : 2));
  out.push({ name: "instances", value: s.counts.instances, unit: "", about: `${s.counts.withGroundTruth} with a ground-truth score; ${s.counts.failedSamples} of ${s.counts.samples} samples failed` });
  return out;
}

/** An instance of a reward-model run as a question row: the reward model's score beside the ground truth, its critiques as the judge's replies. */
export interface RewardInstance {
  questionId: string;
  category?: string;
  source: string;
  groundTruth?: string;
  answer: string | null;
  replies: (string | null)[];
  error?: string;
}

export function loadRewardInstances(dir: string): RewardInstance[] {
  const path = join(dir, "evaluations.jsonl");
  if (!existsSync(path)) return [];
  const byId = new Map<string, RewardInstance>();
  for (const r of readRecords(path, rmEvaluationSchema)) {
    const errors = r.samples.flatMap((s) => (s.error ? [s.error] : []));
    byId.set(r.id, {
      questionId: r.id,
      source: r.source,
      ...(r.category !== undefined ? { category: r.category } : {}),
      ...(r.groundTruthScore !== null ? { groundTruth: `score ${r.groundTruthScore}` } : {}),
      answer: r.score === null ? null : `score ${r.score}`,
      replies: r.samples.map((s) => s.reply),
      ...(r.score === null && errors.length > 0 ? { error: errors.join("; ") } : {}),
    });
  }
  return [...byId.values()];
}

// ---- eqa memory build ----

export interface MemoryEpisode {
  questionId: string;
  answer: string | null;
  error?: string;
  seconds: number;
}

export function loadMemoryBuild(dir: string): { episodes: MemoryEpisode[]; headline: HeadlineMetric[] } {
  const byId = new Map<string, MemoryEpisode>();
  // built episodes and failed attempts (a later success supersedes them), each episode once per settings
  const read = (file: string) => (existsSync(join(dir, file)) ? readRecords(join(dir, file), memoryRecordSchema) : []);
  for (const r of latestMemoryRecords(read(MEMORY_RECORDS_FILE), read(MEMORY_FAILURES_FILE))) {
    byId.set(`${r.episode}`, { questionId: r.episode, answer: r.instances === null ? null : `${r.instances} object instance(s) (settings ${r.settingsKey})`, seconds: r.seconds, ...(r.error !== null ? { error: r.error } : {}) });
  }
  const episodes = [...byId.values()];
  const built = episodes.filter((e) => e.error === undefined);
  return {
    episodes,
    headline: [
      { name: "episodes built", value: built.length, unit: "", about: `of ${episodes.length}; ${episodes.length - built.length} failed` },
      { name: "seconds per episode", value: built.length > 0 ? built.reduce((a, e) => a + e.seconds, 0) / built.length : null, unit: "s", n: built.length, about: "mean build time of an episode's memory" },
    ],
  };
}

// ---- eqa generate tag ----

/** `stats.json` of a generated TAG-EQA dataset (`TagDatasetStats`), the fields shown. */
const tagStatsSchema = z.looseObject({
  questions: z.number(),
  trajectories: z.number(),
  skipped: z.number(),
  environments: z.number(),
  ambiguous: z.number(),
  grounded: z.number(),
  queryTypes: counts,
  categories: counts,
});

export interface DatasetQuestion {
  questionId: string;
  question: string;
  category?: string;
  groundTruth: string;
  episode?: string;
}

export async function loadTagDataset(dir: string): Promise<{ questions: DatasetQuestion[]; headline: HeadlineMetric[] }> {
  const stats = readJsonFile(join(dir, "stats.json"), tagStatsSchema);
  const questions = (await loadTagQuestions(join(dir, "questions.json"))).map((q) => ({ questionId: q.question_id, question: q.question, category: q.tags.query_type, groundTruth: q.answer, ...(q.episode_history ? { episode: q.episode_history } : {}) }));
  const headline: HeadlineMetric[] = stats
    ? [
        { name: "questions", value: stats.questions, unit: "", about: `from ${stats.trajectories} trajectories in ${stats.environments} environments (${stats.skipped} files skipped)` },
        { name: "ambiguous", value: stats.ambiguous, unit: "", about: "questions that need the action history to tell objects apart" },
        { name: "grounded", value: stats.grounded, unit: "", about: "questions with a grounded variant" },
        ...Object.entries(stats.queryTypes).map(([type, n]) => ({ name: `query: ${type}`, value: n, unit: "", about: "questions of this query type" })),
      ]
    : [{ name: "questions", value: questions.length, unit: "", about: "questions in questions.json" }];
  return { questions, headline };
}

// ---- eqa generate mixed ----

const mixedStatsSchema = z.looseObject({ questions: z.number(), homes: z.number(), days: z.number(), categories: counts, meanPathLength: counts.optional() });

/** A Mixed EQA set (`eqa generate mixed`): its questions with their answers and categories, counted per category. */
export async function loadMixedDataset(dir: string): Promise<{ questions: DatasetQuestion[]; headline: HeadlineMetric[] }> {
  const stats = readJsonFile(join(dir, "stats.json"), mixedStatsSchema);
  const set = await loadMixedSet(join(dir, "episodes.json"));
  const questions = set.episodes.map((e) => ({ questionId: e.question_id, question: e.question, category: e.category, groundTruth: e.answer }));
  const headline: HeadlineMetric[] = stats
    ? [
        { name: "questions", value: stats.questions, unit: "", about: `on ${stats.homes} homes, ${stats.days} days of history each` },
        ...Object.entries(stats.categories).map(([category, n]) => ({ name: `category: ${category}`, value: n, unit: "", about: `questions of LA-EQA's ${category} category` })),
        ...Object.entries(stats.meanPathLength ?? {}).map(([category, m]) => ({ name: `path to the answer: ${category}`, value: m, unit: "m", about: "mean shortest path from the start to a view of the answer (0 where the history answers)" })),
      ]
    : [{ name: "questions", value: questions.length, unit: "", about: "questions in episodes.json" }];
  return { questions, headline };
}

// ---- eqa answer-tag ----

const tracedCallSchema = z.looseObject({ role: z.string(), model: z.string(), prompt: z.string(), promptSha256: z.string(), frames: z.array(z.number()).optional(), reply: z.string().nullable(), cached: z.boolean() });

/** One line of `answers.jsonl`, as `runTagAnswers` appends it (a `TagAgentPrediction` with its trace). */
const tagAnswerRecordSchema = z.looseObject({
  question_id: z.string(),
  answer: z.string().nullable(),
  error: z.string().optional(),
  trace: z.looseObject({ frames: z.array(z.number()).optional(), calls: z.array(tracedCallSchema).optional() }).nullable().optional(),
});

/** A question of an answer-tag run: the agent's answer and trace beside the set's question, ground truth and true structure. */
export interface TagAnswerQuestion {
  questionId: string;
  position?: number;
  /** The set's query type. */
  category?: string;
  question?: string;
  groundTruth?: string;
  /** The set's structured answer, one line per group (`structuredAnswerText`). */
  truthText?: string;
  /** The question's frame folder, relative to the set's folder (where the recordings are). */
  episode?: string;
  trajectory?: string;
  answer: string | null;
  error?: string;
  frames: number[];
  calls: z.infer<typeof tracedCallSchema>[];
}

/**
 * An answer-tag run's questions: each answer of `answers.jsonl` (the latest of a question wins)
 * with its trace, joined to the set's questions when `questions` (the set, as the run read it) is
 * given; in the set's order.
 */
export function loadTagAnswers(dir: string, questions: readonly TagQuestion[] | undefined): { answers: TagAnswerQuestion[]; headline: HeadlineMetric[] } {
  const byId = new Map<string, TagAnswerQuestion>();
  for (const r of readRecords(join(dir, TAG_ANSWERS_FILE), tagAnswerRecordSchema)) {
    byId.set(r.question_id, { questionId: r.question_id, answer: r.answer, ...(r.error !== undefined ? { error: r.error } : {}), frames: r.trace?.frames ?? [], calls: r.trace?.calls ?? [] });
  }
  const position = new Map((questions ?? []).map((q, i) => [q.question_id, i]));
  for (const q of questions ?? []) {
    const answered = byId.get(q.question_id);
    if (!answered) continue;
    Object.assign(answered, { position: position.get(q.question_id), category: q.tags.query_type, question: q.question, groundTruth: q.answer, truthText: structuredAnswerText(q.structured_answer), trajectory: q.trajectory }, q.episode_history ? { episode: q.episode_history } : {});
  }
  const answers = [...byId.values()].sort((a, b) => (a.position ?? position.size) - (b.position ?? position.size));
  const failed = answers.filter((a) => a.error !== undefined).length;
  return { answers, headline: [{ name: "answered", value: answers.length - failed, unit: "", about: `of ${answers.length} questions asked; ${failed} failed (score them with eqa score-tag)` }] };
}

/** LLM-Match's headline of a score summary, for the kinds that have one. */
export function llmMatchHeadline(overall: z.infer<typeof meanEstimate>, judge: string | undefined): HeadlineMetric {
  return { name: "LLM-Match", value: overall.mean, unit: "", n: overall.n, ci: overall.ci, about: `OpenEQA's LLM-Match, points 0-100${judge ? ` (judge ${judge})` : ""}` };
}

// ---- eqa score on LA-EQA questions ----

const laEqaAggregates = z.looseObject({ overall: meanEstimate, byCategory: z.record(z.string(), meanEstimate) });

/** `summary.json` of `eqa score` on LA-EQA questions (`LaEqaScoreSummary`), the fields shown. */
export const laEqaSummarySchema = z.looseObject({
  kind: z.literal("la-eqa"),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ questions: z.number(), scored: z.number(), failed: z.number(), judgeUnreadable: z.number(), withoutDistance: z.number() }),
  score: laEqaAggregates,
  llmMatch: laEqaAggregates,
  spl: laEqaAggregates,
});
export type LaEqaRunSummary = z.infer<typeof laEqaSummarySchema>;

/** LA-EQA's figures: the judge's mean mark (1-5), the same as LLM-Match points, and SPL. */
export function laEqaHeadline(s: LaEqaRunSummary): HeadlineMetric[] {
  const { score, llmMatch, spl } = s;
  return [
    { name: "answer score", value: score.overall.mean, unit: "", n: score.overall.n, ci: score.overall.ci, about: "LA-EQA's judge, mean mark 1-5" },
    { name: "LLM-Match", value: llmMatch.overall.mean, unit: "", n: llmMatch.overall.n, ci: llmMatch.overall.ci, about: "the same marks as OpenEQA's points 0-100" },
    { name: "SPL", value: spl.overall.mean, unit: "", n: spl.overall.n, ci: spl.overall.ci, about: `LA-EQA's SPL, over the questions with a distance (${s.counts.withoutDistance} without)` },
  ];
}

const laEqaResultSchema = z.looseObject({
  question_id: z.string(),
  question: z.string(),
  question_type: z.string(),
  GT_A_answer: z.string(),
  A_answer: z.string().nullable(),
  answer_accuracy: z.number().nullable(),
});

/** An LA-EQA score run's questions, from its `results.json` and the judge's replies in `judgements.jsonl`. */
export function loadLaEqaQuestions(dir: string): { questionId: string; category: string; question: string; groundTruth: string; answer: string | null; score: number | null; points?: number; judgeReplies: (string | null)[]; error?: string }[] {
  const results = readJsonFile(join(dir, "results.json"), z.record(z.string(), laEqaResultSchema));
  const judgements = existsSync(join(dir, "judgements.jsonl")) ? readRecords(join(dir, "judgements.jsonl"), z.looseObject({ questionId: z.string(), replies: z.array(z.string().nullable()), error: z.string().nullable() })) : [];
  const byId = new Map(judgements.map((j) => [j.questionId, j]));
  return Object.values(results ?? {}).map((r) => {
    const judged = byId.get(r.question_id);
    return {
      questionId: r.question_id,
      category: r.question_type,
      question: r.question,
      groundTruth: r.GT_A_answer,
      answer: r.A_answer,
      score: r.answer_accuracy,
      // the mark as LLM-Match points, by which the report sorts and compares runs
      ...(r.answer_accuracy !== null ? { points: llmMatchPoints(r.answer_accuracy) } : {}),
      judgeReplies: judged?.replies ?? [],
      ...(judged?.error ? { error: judged.error } : {}),
    };
  });
}
