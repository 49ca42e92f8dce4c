/**
 * The one run loader of the report and the viewer (`eqa report`, `eqa view`, `buildHtmlReport`,
 * `startViewer`). It reads every kind of run folder eqakit writes: `eqa score` (llm-match),
 * `eqa answer`, `eqa run`, `eqa explore` (judged or not), `eqa answer-tag`, `eqa score-tag`,
 * `eqa rm score`, `eqa rm bench`, `eqa memory build`, `eqa generate tag`, and a folder that
 * holds run folders (`eqa demo`'s). For each it gives the kind's headline metrics, its questions
 * with their ground truth, answers and transcripts, and its cost as the summary states it.
 * Every file is checked against its writer's schema: a file eqakit wrote that cannot be read is
 * a UserError naming the file, line and field, never a silent skip. A part that is missing (no
 * summary yet, a benchmark moved away) is left out and named in `notes`.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { UserError, type Question, memoByFile } from "../core/index.js";
import { loadOpenEqaBenchmark, loadPredictions, loadTagQuestions, type TagQuestion } from "../data/index.js";
import { llmMatchPoints, loadPredictionsWithoutGuess, scoreSummarySchema, type MeanEstimate } from "../eval/index.js";
import { COMMANDS_FILE, inferRunKind, readRunManifest, runInputPath, RUN_KINDS, RUN_MANIFEST_FILE, RUN_KIND } from "../store/index.js";
import { meanEstimate, readJsonFile, readRecords, usageTotals } from "./files.js";
import { exploreHeadline, exploreSummarySchema, laEqaHeadline, laEqaSummarySchema, loadLaEqaQuestions, llmMatchHeadline, loadExploreQuestions, loadMemoryBuild, loadRewardInstances, loadMixedDataset, loadTagAnswers, loadTagDataset, rmBenchHeadline, rmBenchSummarySchema, rmScoreHeadline, rmScoreSummarySchema, type ExploreRunSummary, type HeadlineMetric } from "./run-kinds.js";
import { loadRewardBuild, loadRewardReview, type RewardFolder } from "./reward-runs.js";
import { loadTagPart, tagSummarySchema, type TagRunPart } from "./tag-runs.js";
import { modelCallNotes } from "./text.js";
import { loadMixedQuestions, mixedHeadline, readMixedSummary } from "./mixed-runs.js";

export type { HeadlineMetric } from "./run-kinds.js";

const failureList = z.array(z.looseObject({ questionId: z.string(), error: z.string(), status: z.string().optional() }));
const processUsage = z.looseObject({ deviations: z.record(z.string(), z.array(z.string())).optional() }).nullable().optional();

/** `summary.json` of `eqa answer` (`AnswerSummary`), the fields the report and viewer read. */
export const answerSummarySchema = z.looseObject({
  kind: z.literal("answer"),
  eqakitVersion: z.string().optional(),
  createdAt: z.string().optional(),
  wallTimeMs: z.number(),
  config: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ questions: z.number(), answered: z.number(), failed: z.number(), forceGuessChecked: z.number(), abstained: z.number() }),
  abstentionRate: z.number().nullable(),
  replyStatuses: z.record(z.string(), z.number()).optional(),
  failures: failureList,
  usage: z.looseObject({ answers: usageTotals, thisProcess: processUsage }),
});
const runSummarySchema = z.looseObject({ kind: z.literal("run"), answer: answerSummarySchema, score: scoreSummarySchema });
export type ScoreRunSummary = z.infer<typeof scoreSummarySchema>;
export type AnswerRunSummary = z.infer<typeof answerSummarySchema>;

const kindSchema = z.looseObject({ kind: z.string() });
const envelopeSchema = z.looseObject({ eqakitVersion: z.string().optional(), createdAt: z.string().optional(), wallTimeMs: z.number().optional(), config: z.record(z.string(), z.unknown()).optional(), failures: z.array(z.unknown()).optional() });
const roleCostSchema = z.looseObject({ calls: z.number(), cacheHits: z.number(), failed: z.number().optional(), promptTokens: z.number(), completionTokens: z.number(), thinkingTokens: z.number().default(0), images: z.number().optional(), dollars: z.number().nullable() });
const runCostSchema = z.looseObject({
  roles: z.array(roleCostSchema.extend({ role: z.string(), model: z.string() })),
  total: roleCostSchema,
  unpriced: z.array(z.string()).default([]),
  prices: z.array(z.string()).default([]),
});
const withCost = z.looseObject({ cost: runCostSchema.optional() });
const withUsage = z.looseObject({ usage: z.record(z.string(), z.unknown()).optional() });

/**
 * A run directory as the report and the viewer read it. `kind` is the summary's (or, before a
 * summary is written, the kind its files show); `metrics` are the kind's headline figures.
 */
export interface LoadedRun {
  dir: string;
  label: string;
  /** "llm-match", "answer", "run", "explore", "tag-structured", "rm-score", "rm-bench", "memory", "generate-tag", "answer-tag", "rm-build", "rm-review", or "unknown". */
  kind: string;
  score?: ScoreRunSummary;
  answer?: AnswerRunSummary;
  /** An `eqa explore` run's summary (with its judge's scores when judged). */
  explore?: ExploreRunSummary;
  /** The kind's headline figures as its paper names them (LLM-Match; C, C*, E_path, d_T; accuracy and RMSE; …). */
  metrics: HeadlineMetric[];
  /** A summary of another kind than llm-match, answer or tag-structured: its version, date and configuration. */
  otherSummary?: z.infer<typeof envelopeSchema>;
  /** Usage by stage of a summary of another kind (`usage.<stage>` with call counts). */
  otherUsage: [string, UsageRead][];
  /** Tokens and dollars per role, by stage (answer, judge, or the kind of another summary), as the summary states them. */
  costs: { stage: string; cost: RunCostRead }[];
  /** Figures the run drew itself (PNG files at its top level, e.g. reward-model scaling curves). */
  figures: string[];
  /** Per question (episode, instance), in the run's order. */
  questions: RunQuestion[];
  /** A TAG-EQA structured-judge run (`eqa score-tag`, kind "tag-structured"). */
  tag?: TagRunPart;
  /** The folder of the answer run whose transcripts go with the questions (the run itself, or a TAG run's `answers/`). */
  tracesDir?: string;
  /** Where the episode histories of the run's answers are (the answer run's --frames). */
  framesRoot?: string;
  /** The TAG-EQA set an answer-tag run answered, where the run read it (its recordings beside it: each question's plan). */
  tagSet?: string;
  /** The commands that ran in the run's directory to their end, oldest first (`commands.jsonl`). */
  commands: string[];
  /** The settings its manifest records (what decides its results: agent, models, prompts), when it has one. */
  settings?: Record<string, unknown>;
  notes: string[];
}

export type UsageRead = z.infer<typeof usageTotals>;
const tracedCall = z.looseObject({ role: z.string(), model: z.string(), prompt: z.string(), promptSha256: z.string(), frames: z.array(z.number()).optional(), reply: z.string().nullable(), cached: z.boolean() });
export type RunCall = z.infer<typeof tracedCall>;

export interface RunQuestion {
  questionId: string;
  /** The question's place in the benchmark (0-based), when it could be read. */
  position?: number;
  /** From the benchmark, when it could be read. */
  category?: string;
  question?: string;
  groundTruth?: string;
  extraAnswers?: string[];
  /** A multiple-choice question's choices (HM-EQA). */
  choices?: string[];
  /** A TAG-EQA question's structured ground truth, one line per group. */
  truthText?: string;
  /** A TAG-EQA question's trajectory (its recording), whose preparation its answer shares. */
  trajectory?: string;
  episode?: string;
  /** The answer submitted (after force-a-guess); undefined when the run has no answer for it. */
  answer?: string | null;
  /** The agent's own answer when force-a-guess replaced it. */
  agentAnswer?: string | null;
  forceGuess?: "guess" | "keep" | "unreadable";
  /** LLM-Match's mark σ (1-5, 0 for no answer), null when judging failed, undefined when not judged. */
  score?: number | null;
  /** 100·(clip(σ,1,5)−1)/4. */
  points?: number;
  judgeReplies: (string | null)[];
  /** The answer as the judge was sent it (after the reference's cut, or neutralised). */
  judgePrediction?: string | null;
  /** Robust LLM-Match changed text in the answer that addressed the judge: `judgePrediction` is what it read. */
  neutralised?: boolean;
  /** Why a reply was not an answer or a mark (truncated, filtered, refused), when that failed the item. */
  status?: string;
  /** The stage whose failure `error` reports. */
  failedStage?: "answer" | "judge";
  error?: string;
  /** Frame indices the agent used. */
  frames: number[];
  /** A top-down picture of the path the agent walked (an exploration's `trajectories/<id>.png`). */
  plan?: string;
  calls: RunCall[];
  usage?: UsageRead;
  /** A Mixed EQA question's history: the days the agent was handed, and the history frames it retrieved. */
  history?: string;
  /** An exploration's end: why it stopped, its path, the map's coverage (0-1), the EAC judgement, a multiple-choice letter. */
  stop?: string | null;
  pathLengthM?: number | null;
  pathLengthSteps?: number | null;
  coverage?: number | null;
  eac?: { grounding: number; accuracy: number; score: number } | { error: string };
  choice?: string | null;
  correct?: boolean;
}

const judgementLine = z.looseObject({
  questionId: z.string(),
  score: z.number().nullable(),
  prediction: z.string().nullable().optional(),
  replies: z.array(z.string().nullable()).optional(),
  neutralised: z.boolean().optional(),
  status: z.string().optional(),
  error: z.string().nullable().optional(),
});
const answerLine = z.looseObject({
  questionId: z.string(),
  answer: z.string().nullable(),
  episode: z.string().nullable().optional(),
  error: z.string().nullable().optional(),
  status: z.string().optional(),
  trace: z
    .looseObject({
      frames: z.array(z.number()).optional(),
      calls: z.array(tracedCall).optional(),
      agentAnswer: z.string().nullable().optional(),
      forceGuess: z.looseObject({ action: z.enum(["guess", "keep", "unreadable"]) }).optional(),
      usage: usageTotals.optional(),
    })
    .nullable()
    .optional(),
});

const benchmarkById = memoByFile((path): Promise<Map<string, Question> | undefined> => loadOpenEqaBenchmark(path).then((b) => b.byId, () => undefined));

async function benchmarkQuestions(path: string | undefined, named: string | undefined, notes: string[]): Promise<Map<string, Question> | undefined> {
  if (!path) {
    if (named) notes.push(`the benchmark ${named} could not be found: questions are shown by id only`);
    return undefined;
  }
  const found = await benchmarkById(path);
  if (!found) notes.push(`the benchmark ${path} could not be read: questions are shown by id only`);
  return found;
}

/** A path a configuration names: a string, or an object with `path`. */
function namedPath(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "path" in value && typeof value.path === "string") return value.path;
  return undefined;
}

const commandRecord = z.looseObject({ command: z.string().max(100_000), cwd: z.string().optional() });

/**
 * Where an input of a run is now (store's `runInputPath`): the run's own copy, else the path its
 * manifest names, else the path its configuration names (`recorded`, a string or `{ path }`, as
 * typed), read relative to the folder the command ran in. Undefined when it is nowhere.
 */
export function locateRunInput(dir: string, name: string, recorded: unknown): string | undefined {
  return runInputPath(dir, name, namedPath(recorded));
}

/** Whether a folder is one run's folder (not a folder of runs such as the demo's, not an empty one). */
export function isRunFolder(dir: string): boolean {
  const kind = inferRunKind(dir);
  return kind !== undefined && kind !== RUN_KIND.demo;
}

/**
 * The simulator recordings of the first folder of runs among `paths` that is an `eqa demo`'s
 * (its `recordings/`, one `home-N/` each), for the report's Recordings section; none otherwise.
 */
export function demoRecordings(paths: readonly string[]): string | undefined {
  for (const path of paths) {
    const recordings = join(resolve(path), "recordings");
    if (inferRunKind(resolve(path)) === "demo" && existsSync(recordings)) return recordings;
  }
  return undefined;
}

/** What `eqa report` and `eqa view` read, as their errors' hints say it. */
const RUN_FOLDER_HINT = "the --out folders of eqa score, answer, run, explore, score-tag, answer-tag, rm score, rm bench, rm build, rm review --import, memory build, generate tag or reproduce, or a folder holding such folders (eqa demo's)";
/** How deep a folder of runs is searched for run folders. */
const RUN_SEARCH_DEPTH = 3;

/**
 * The run folders a path names: itself when it is a run folder; an `eqa demo` folder's agents'
 * runs (`demoRunFolders`); else the run folders inside it (any folder holding runs), searched
 * three levels deep, never inside a run folder. Each is labelled by its folder's
 * name (its path under the given folder where two share a name). A folder with no run in it
 * (empty, or of files eqakit did not write) is a UserError: a run that has started holds its manifest.
 */
export function runFolders(path: string): { dir: string; label: string }[] {
  const root = resolve(path);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new UserError("not a run directory", { file: path }, `pass ${RUN_FOLDER_HINT}`);
  if (isRunFolder(root)) return [{ dir: root, label: basename(root) }];
  if (inferRunKind(root) === RUN_KIND.demo) {
    const agents = demoRunFolders(root);
    if (agents.length > 0) return agents;
  }
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const sub = join(dir, entry.name);
      if (isRunFolder(sub)) found.push(sub);
      else if (depth < RUN_SEARCH_DEPTH) walk(sub, depth + 1);
    }
  };
  walk(root, 1);
  // a run that has started holds its manifest: a folder without one, or any run below, is not a run
  if (found.length === 0) throw new UserError(`holds no run: neither the folder nor those below it (${RUN_SEARCH_DEPTH} levels down) hold ${RUN_MANIFEST_FILE}, a summary or the records of a command that writes runs`, { file: path }, `pass ${RUN_FOLDER_HINT}`);
  // runs of answers first, datasets after: the first two are what Compare opens on
  const datasets = found.filter((d) => inferRunKind(d) === RUN_KIND["generate-tag"] || inferRunKind(d) === RUN_KIND["generate-mixed"]);
  const ordered = [...found.filter((d) => !datasets.includes(d)), ...datasets];
  const names = ordered.map((d) => basename(d));
  return ordered.map((dir, i) => ({ dir, label: names.filter((n) => n === names[i]).length > 1 ? relative(root, dir) : names[i]! }));
}

/**
 * The runs of an `eqa demo` folder, as the demo's own report shows them: its agents' runs
 * (`runs/program`, `runs/agent`, `runs/<model agent>`, in the order its manifest names them),
 * each labelled by its folder's name; not the dataset they answered, whose questions each run shows.
 */
function demoRunFolders(root: string): { dir: string; label: string }[] {
  let named: readonly string[] = [];
  try {
    named = readRunManifest(root)?.parts ?? [];
  } catch {
    named = [];
  }
  const listed = named.filter((part) => part.startsWith("runs/"));
  const found = existsSync(join(root, "runs")) ? readdirSync(join(root, "runs")).sort().map((name) => `runs/${name}`) : [];
  // a manifest's order first (the program agent, yours, then the language-model agents), folders it does not name after
  const parts = [...new Set([...listed, ...found])];
  return parts.map((part) => join(root, part)).filter((dir) => isRunFolder(dir)).map((dir) => ({ dir, label: basename(dir) }));
}

/** What a report of these paths is titled and shows beside its runs: an `eqa demo` folder's title and recordings, as the demo's own report has them. */
export function reportDefaults(paths: readonly string[]): { title?: string; recordings?: string } {
  const recordings = demoRecordings(paths);
  const onlyDemo = paths.length === 1 && inferRunKind(resolve(paths[0]!)) === "demo";
  return { ...(onlyDemo ? { title: DEMO_REPORT_TITLE } : {}), ...(recordings ? { recordings } : {}) };
}

/** The title of an `eqa demo` folder's report. */
export const DEMO_REPORT_TITLE = "eqakit demo: TAG-EQA questions on simulated homes";

/** Every run the paths name, in order, each folder of runs replaced by its runs. */
export async function loadRuns(paths: readonly string[]): Promise<LoadedRun[]> {
  const runs: LoadedRun[] = [];
  for (const path of paths) for (const { dir, label } of runFolders(path)) runs.push(await loadRun(dir, label));
  return runs;
}

/** A summary's `cost` (`RunCost`) as read back. */
export type RunCostRead = z.infer<typeof runCostSchema>;

function costOf(summary: unknown, file: string): RunCostRead | undefined {
  const cost = withCost.safeParse(summary);
  if (!cost.success) throw new UserError(`the summary's cost does not have the shape eqakit writes: ${cost.error.issues[0]?.message ?? ""}`, { file, field: `cost.${cost.error.issues[0]?.path.join(".") ?? ""}` });
  return cost.data.cost;
}

function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, file: string, prefix = ""): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UserError(`the summary does not have the shape eqakit writes: ${issue?.message ?? "invalid"}`, { file, field: `${prefix}${issue?.path.join(".") ?? ""}` }, "run the command that wrote it again, or restore the file");
}

/** Kinds whose folders may have no summary when they are done: without one, they are not taken for a run still going. */
export const KINDS_WITHOUT_SUMMARY: readonly string[] = RUN_KINDS.filter((k) => !k.summary).map((k) => k.kind);

/** Reads one run directory (not a folder of runs: see `loadRuns`). */
export async function loadRun(dir: string, label?: string): Promise<LoadedRun> {
  const path = resolve(dir);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new UserError("not a run directory", { file: dir }, `pass ${RUN_FOLDER_HINT}`);
  const notes: string[] = [];
  const run: LoadedRun = { dir: path, label: label ?? basename(path), kind: "unknown", metrics: [], otherUsage: [], costs: [], figures: [], questions: [], commands: [], notes };
  try {
    const manifest = readRunManifest(path);
    if (manifest) run.settings = manifest.settings;
  } catch {
    // a manifest that cannot be read is named by the command that opens the folder again; the report shows the rest
  }
  const commandsFile = join(path, COMMANDS_FILE);
  const commands = existsSync(commandsFile) ? readRecords(commandsFile, commandRecord) : [];
  run.commands = commands.map((c) => c.command);
  const summaryName = ["summary.json", "bench.json"].find((name) => existsSync(join(path, name)));
  const summaryFile = join(path, summaryName ?? "summary.json");
  const summary = summaryName ? readJsonFile(summaryFile, kindSchema) : undefined;
  run.kind = summary?.kind ?? inferRunKind(path) ?? "unknown";
  if (!summary && !KINDS_WITHOUT_SUMMARY.includes(run.kind)) notes.push("no summary.json yet: the run may still be going, or was stopped; shown from its records");

  switch (summary?.kind) {
    case RUN_KIND["llm-match"]:
      run.score = parseOrThrow(scoreSummarySchema, summary, summaryFile);
      break;
    case RUN_KIND.answer:
      run.answer = parseOrThrow(answerSummarySchema, summary, summaryFile);
      break;
    case RUN_KIND.run: {
      const both = parseOrThrow(runSummarySchema, summary, summaryFile);
      run.answer = both.answer;
      run.score = both.score;
      break;
    }
    case RUN_KIND["tag-structured"]: {
      run.tag = await loadTagPart(path, parseOrThrow(tagSummarySchema, summary, summaryFile), (name, named) => locateRunInput(path, name, named), notes);
      const cost = costOf(summary, summaryFile);
      if (cost) run.costs.push({ stage: "structured judge", cost });
      break;
    }
    case RUN_KIND.explore:
      run.explore = parseOrThrow(exploreSummarySchema, summary, summaryFile);
      break;
    case RUN_KIND["rm-score"]:
      run.metrics = rmScoreHeadline(parseOrThrow(rmScoreSummarySchema, summary, summaryFile));
      break;
    case RUN_KIND["rm-bench"]:
      run.metrics = rmBenchHeadline(parseOrThrow(rmBenchSummarySchema, summary, summaryFile));
      break;
    case RUN_KIND["la-eqa"]:
      run.metrics = laEqaHeadline(parseOrThrow(laEqaSummarySchema, summary, summaryFile));
      break;
    default:
      break;
  }
  if (summary && !run.score && !run.answer && !run.tag) {
    run.otherSummary = parseOrThrow(envelopeSchema, summary, summaryFile);
    const cost = costOf(summary, summaryFile);
    if (cost) run.costs.push({ stage: run.kind, cost });
    for (const [stage, totals] of Object.entries(parseOrThrow(withUsage, summary, summaryFile).usage ?? {})) {
      const parsed = usageTotals.safeParse(totals);
      if (parsed.success) run.otherUsage.push([stage, parsed.data]);
    }
  }
  // an unfinished `eqa run` has its stages' summaries
  if (!run.score && existsSync(join(path, "summary.score.json"))) run.score = readJsonFile(join(path, "summary.score.json"), scoreSummarySchema);
  if (!run.answer && existsSync(join(path, "summary.answer.json"))) run.answer = readJsonFile(join(path, "summary.answer.json"), answerSummarySchema);
  if (run.kind === "unknown" && (run.score || run.answer)) run.kind = run.score && run.answer ? "run" : run.score ? "llm-match" : "answer";
  for (const [stage, part] of [["answer", run.answer], ["judge", run.score]] as const) {
    if (!part) continue;
    const cost = costOf(part, summaryFile);
    if (cost) run.costs.push({ stage, cost });
    notes.push(...modelCallNotes(part).map((n) => `${stage}: ${n}`));
  }
  // a TAG run still scoring has judgements but no summary yet
  if (run.kind === RUN_KIND["tag-structured"] && !run.tag) run.tag = await loadTagPart(path, undefined, (name, named) => locateRunInput(path, name, named), notes);
  if (run.tag) {
    // the recordings a TAG question was generated from are beside the dataset itself, not the run's copy of its questions
    const dataset = originalInputFile(path, "questions", run.tag.summary?.config.questions);
    if (dataset) run.tag.questionsPath = dataset;
    // the language-model agents of `eqa demo --model` answered in `answers/`: their transcripts
    if (existsSync(join(path, "answers", "traces.jsonl"))) {
      const answers = join(path, "answers");
      run.tracesDir = answers;
      const answerSummary = readJsonFile(join(answers, "summary.json"), answerSummarySchema);
      if (answerSummary) {
        run.answer = answerSummary;
        const cost = costOf(answerSummary, join(answers, "summary.json"));
        if (cost) run.costs.push({ stage: "answer", cost });
      }
      const framesRoot = locateRunInput(answers, "frames", answerSummary?.config.framesRoot);
      if (framesRoot) run.framesRoot = framesRoot;
      const byId = new Map(run.tag.questions.map((q) => [q.questionId, q]));
      for (const record of readRecords(join(answers, "traces.jsonl"), answerLine)) {
        const q = byId.get(record.questionId);
        if (q) q.transcript = { frames: record.trace?.frames ?? [], calls: record.trace?.calls ?? [], ...(record.episode ? { episode: record.episode } : {}) };
      }
    }
    run.metrics = tagHeadline(run.tag);
    return run;
  }

  if (run.kind === RUN_KIND.explore) {
    run.questions = (await loadExploreQuestions(path, run.explore, (named) => [originalInputFile(path, "episodes", named), locateRunInput(path, "episodes", named)], notes)).map((q) => ({ ...q, judgeReplies: [], calls: [] }));
    // the observations the exploration recorded, an OpenEQA-style frame folder per episode
    if (existsSync(join(path, "frames"))) run.framesRoot = join(path, "frames");
    if (run.explore) run.metrics = exploreHeadline(run.explore);
  } else if (run.kind === RUN_KIND.mixed) {
    const mixed = readMixedSummary(path);
    const named = mixed?.config.episodes;
    run.questions = (await loadMixedQuestions(path, mixed, [originalInputFile(path, "episodes", named), locateRunInput(path, "episodes", named)], notes)).map((q) => ({ ...q, judgeReplies: [], calls: [] }));
    if (existsSync(join(path, "frames"))) run.framesRoot = join(path, "frames");
    if (mixed) run.metrics = mixedHeadline(mixed);
  } else if (run.kind === RUN_KIND["rm-score"] || run.kind === RUN_KIND["rm-bench"]) {
    run.questions = loadRewardInstances(path).map((q) => ({ ...q, judgeReplies: q.replies, frames: [], calls: [] }));
  } else if (run.kind === RUN_KIND.memory) {
    const built = loadMemoryBuild(path);
    run.metrics = built.headline;
    run.questions = built.episodes.map((e) => ({ questionId: e.questionId, answer: e.answer, ...(e.error !== undefined ? { error: e.error } : {}), judgeReplies: [], frames: [], calls: [] }));
  } else if (run.kind === RUN_KIND["generate-tag"]) {
    const dataset = await loadTagDataset(path);
    run.metrics = dataset.headline;
    run.questions = dataset.questions.map((q, i) => ({ ...q, position: i, judgeReplies: [], frames: [], calls: [] }));
  } else if (run.kind === RUN_KIND["generate-mixed"]) {
    const dataset = await loadMixedDataset(path);
    run.metrics = dataset.headline;
    run.questions = dataset.questions.map((q, i) => ({ ...q, position: i, judgeReplies: [], frames: [], calls: [] }));
  } else if (run.kind === RUN_KIND["rm-build"] || run.kind === RUN_KIND["rm-review"]) {
    const folder: RewardFolder = run.kind === RUN_KIND["rm-build"] ? loadRewardBuild(path) : await loadRewardReview(path);
    run.metrics = folder.headline;
    notes.push(...folder.notes);
    run.questions = folder.rows.map(({ replies, ...row }) => ({ ...row, judgeReplies: replies, frames: [], calls: [] }));
    if (folder.calls) {
      run.otherUsage.push([run.kind, usageTotals.parse(folder.calls.usage)]);
      run.costs.push({ stage: run.kind, cost: runCostSchema.parse(folder.calls.cost) });
    }
  } else if (run.kind === RUN_KIND["la-eqa"]) {
    run.questions = loadLaEqaQuestions(path).map((q) => ({ ...q, frames: [], calls: [] }));
  } else if (run.kind === RUN_KIND["answer-tag"]) {
    await loadTagAnswerRun(run);
  } else {
    await loadOpenEqaQuestions(run);
  }
  if (run.score) run.metrics.unshift(llmMatchHeadline(run.score.llmMatch.overall, judgeName(run.score.config.judge)));
  if (run.answer && run.answer.abstentionRate !== null) run.metrics.push({ name: "abstained", value: 100 * run.answer.abstentionRate, unit: "%", n: run.answer.counts.forceGuessChecked, about: "force-a-guess: answers the agent abstained on (OpenEQA Table III)" });
  run.figures = readdirSync(path).filter((name) => /\.png$/i.test(name) && statSync(join(path, name)).size < 4_000_000).sort().slice(0, 6).map((name) => join(path, name));
  return run;
}

/**
 * An answer-tag run's questions: its answers with their traces, joined to the set it answered.
 * The set is read where the run read it (its recordings are beside it: the frames the agent was
 * sent are read there), else from the run's own copy (questions and ground truth, no frames).
 */
async function loadTagAnswerRun(run: LoadedRun): Promise<void> {
  const original = originalInputFile(run.dir, "questions", undefined);
  const copy = locateRunInput(run.dir, "questions", undefined);
  let questions: TagQuestion[] | undefined;
  for (const file of [original, copy]) {
    if (file === undefined || questions) continue;
    try {
      questions = await loadTagQuestions(file);
      if (file === original) {
        run.framesRoot = dirname(file);
        run.tagSet = file;
      }
    } catch {
      run.notes.push(`the questions ${file} could not be read`);
    }
  }
  if (!questions) run.notes.push("the questions the run answered are not there any more: questions are shown by id only");
  else if (!run.framesRoot) run.notes.push("the set's recordings are not beside the run's copy of its questions: the frames the agent was sent are not shown");
  const answered = loadTagAnswers(run.dir, questions);
  run.metrics = answered.headline;
  run.tracesDir = run.dir;
  run.questions = answered.answers.map((a) => ({ ...a, ...(a.error !== undefined ? { failedStage: "answer" as const } : {}), judgeReplies: [] }));
  // the frame folders are named relative to the set's folder, and may sit beside it (its recordings): read from the folder holding them all
  if (run.framesRoot) {
    const datasetDir = run.framesRoot;
    const folders = run.questions.flatMap((q) => (q.episode ? [resolve(datasetDir, q.episode)] : []));
    const root = folders.length > 0 ? folders.map((f) => dirname(f)).reduce(commonFolder) : datasetDir;
    run.framesRoot = root;
    for (const q of run.questions) if (q.episode) q.episode = relative(root, resolve(datasetDir, q.episode));
  }
}

/** The deepest folder holding both `a` and `b` (absolute paths). */
function commonFolder(a: string, b: string): string {
  const left = a.split(sep);
  const right = b.split(sep);
  let n = 0;
  while (n < left.length && n < right.length && left[n] === right[n]) n++;
  return left.slice(0, n).join(sep) || sep;
}

/** Where an input was when the run read it (the manifest's path, else the summary's), when it is still there: files beside it (a dataset's recordings, HM-EQA's poses) are there too. */
function originalInputFile(dir: string, name: string, recorded: unknown): string | undefined {
  let manifest: ReturnType<typeof readRunManifest>;
  try {
    manifest = readRunManifest(dir);
  } catch {
    manifest = undefined;
  }
  const named = manifest?.inputs.find((i) => i.name === name)?.path ?? namedPath(recorded);
  if (named === undefined) return undefined;
  const path = isAbsolute(named) ? named : resolve(manifest?.cwd ?? dir, named);
  return existsSync(path) ? path : undefined;
}

function judgeName(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "name" in value && typeof value.name === "string") return value.name;
  return undefined;
}

function tagHeadline(tag: TagRunPart): HeadlineMetric[] {
  const s = tag.summary;
  if (!s) return [];
  return [
    { name: "structured score (grounded)", value: s.scores.grounded.mean, unit: "", n: s.scores.grounded.n, ci: s.scores.grounded.ci, about: "TAG-EQA: mean structured score, 1-5, objects matched by position" },
    { name: "structured score (ungrounded)", value: s.scores.ungrounded.mean, unit: "", n: s.scores.ungrounded.n, ci: s.scores.ungrounded.ci, about: "TAG-EQA: mean structured score, 1-5, objects matched by type" },
    { name: "valid answers", value: s.validAnswerRate === null ? null : 100 * s.validAnswerRate, unit: "%", n: s.counts.questions, about: "TAG-EQA Fig. 4: answers that are valid structures" },
  ];
}

/** The questions of an LLM-Match, answer or `eqa run` folder, from its traces, judgements, predictions and benchmark. */
async function loadOpenEqaQuestions(run: LoadedRun): Promise<void> {
  const path = run.dir;
  const notes = run.notes;
  const byId = new Map<string, RunQuestion>();
  const entry = (id: string): RunQuestion => {
    let q = byId.get(id);
    if (!q) {
      q = { questionId: id, judgeReplies: [], frames: [], calls: [] };
      byId.set(id, q);
    }
    return q;
  };
  const traces = join(path, "traces.jsonl");
  if (existsSync(traces)) {
    run.tracesDir = path;
    for (const record of readRecords(traces, answerLine)) {
      const q = entry(record.questionId);
      q.answer = record.answer;
      if (record.episode) q.episode = record.episode;
      if (record.error) Object.assign(q, { error: record.error, failedStage: "answer" }, record.status ? { status: record.status } : {});
      else {
        delete q.error;
        delete q.failedStage;
        delete q.status;
      }
      q.frames = record.trace?.frames ?? [];
      q.calls = record.trace?.calls ?? [];
      if (record.trace?.usage) q.usage = record.trace.usage;
      const action = record.trace?.forceGuess?.action;
      if (action) q.forceGuess = action;
      if (action === "guess") q.agentAnswer = record.trace?.agentAnswer ?? null;
    }
  }
  const judgements = join(path, "judgements.jsonl");
  if (existsSync(judgements)) {
    for (const j of readRecords(judgements, judgementLine)) {
      const q = entry(j.questionId);
      q.score = j.score;
      if (j.score !== null) q.points = llmMatchPoints(j.score);
      else delete q.points;
      q.judgeReplies = j.replies ?? [];
      q.judgePrediction = j.prediction ?? null;
      if (j.neutralised) q.neutralised = true;
      else delete q.neutralised;
      if (j.error) Object.assign(q, { error: j.error, failedStage: "judge" }, j.status ? { status: j.status } : {});
    }
  } else if (run.score) notes.push("no judgements.jsonl: per-question scores are not shown");

  // a score run of predictions made elsewhere: the answers it judged, from its predictions file
  // the run's copy of its predictions first (store's runInputPath), else the file its summary names
  const predictionsPath = locateRunInput(run.dir, "predictions", run.score?.config.predictions);
  if (!existsSync(traces) && run.score) {
    if (predictionsPath) {
      try {
        const predictions = run.score.config.withoutGuess === true ? (await loadPredictionsWithoutGuess(predictionsPath)).predictions : await loadPredictions(predictionsPath);
        for (const p of predictions) {
          const q = byId.get(p.questionId);
          if (q) q.answer = p.answer;
        }
      } catch {
        notes.push(`the predictions ${predictionsPath} could not be read: answers are not shown`);
      }
    } else if (namedPath(run.score.config.predictions)) notes.push(`the predictions ${namedPath(run.score.config.predictions)} are not there any more: answers are not shown`);
  }

  const framesRoot = locateRunInput(run.dir, "frames", run.answer?.config.framesRoot);
  if (framesRoot) run.framesRoot = framesRoot;
  const named = run.answer?.config.benchmark ?? run.score?.config.benchmark;
  const questions = await benchmarkQuestions(locateRunInput(run.dir, "benchmark", named), namedPath(named), notes);
  for (const q of byId.values()) {
    const known = questions?.get(q.questionId);
    if (!known) continue;
    q.category = known.category;
    q.question = known.question;
    q.groundTruth = known.answer;
    if (known.extraAnswers) q.extraAnswers = known.extraAnswers;
    q.episode ??= known.episodeHistory;
  }
  // the benchmark's order, whatever order the answers finished in; questions it lacks come last
  const position = new Map([...(questions?.keys() ?? [])].map((id, i) => [id, i]));
  for (const q of byId.values()) {
    const at = position.get(q.questionId);
    if (at !== undefined) q.position = at;
  }
  run.questions = [...byId.values()].sort((a, b) => (a.position ?? position.size) - (b.position ?? position.size));
}

/** A mean's display, or an empty string for an empty group. */
export function meanOrNull(estimate: Pick<MeanEstimate, "n"> & { mean: number | null } | undefined): number | null {
  return estimate && estimate.n > 0 && estimate.mean !== null && Number.isFinite(estimate.mean) ? estimate.mean : null;
}
