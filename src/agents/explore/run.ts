/**
 * `eqa explore`: active EQA runs. Each episode (a question in a scene, from a start state) is
 * explored by the frontier explorer (then answered by any EM-EQA agent on the collected frames,
 * OpenEQA's A-EQA baseline), by Fine-EQA, or by an active agent of the user's own (external.ts:
 * several episodes at once, each with its own agent session and environment), in an environment
 * made per scene (one process per scene for stdio environments, restarted after it fails).
 *
 * Run directory:
 * - `episodes.jsonl`: one record per finished episode (trajectory summary, stop reason, answer,
 *   failure), appended at once; a resumed run skips the episodes finished with the same inputs
 * - `trajectories/<id>.json` (`eqakit-explore-trajectory/1`: every pose with the action that led
 *   there, path length in metres and steps) and `trajectories/<id>.png` (top-down picture)
 * - `frames/<id>/`: the observations, an OpenEQA-style frame folder
 * - `predictions.json` (OpenEQA's format) and `summary.json`
 *
 * An episode fails alone, with its error recorded: a start that is not navigable, an
 * environment process that dies, hangs or sends a malformed message, a model call refused for
 * that request, an agent of the user's own that dies, hangs or replies out of protocol. An unusable model (unreachable, bad key, unknown) stops the run, and so does a
 * file that cannot be written (a full disk: an OutputError naming the file); every file is
 * written whole or not at all, and the finished episodes are kept for the resumed run.
 *
 * Active episodes file (JSON array, or `{ "episodes": [...] }`), fields in snake_case:
 * `question_id`, `question`, optional `answer`, `choices`, `category`, `scene` (`home-<seed>`
 * for the built-in simulator, the scene path for Habitat), optional `start`
 * `{ position: [x, y, z], yaw, pitch? }` (the scene's own start when absent), optional
 * `goal_position` `[x, y, z]`, `gt_path_length` (metres) and `gt_path_steps` (actions). An EXPRESS-Bench file is read as
 * is (start yaw from its quaternion, `geodesic_distance` as the ground-truth length). HM-EQA's `questions.csv` (a
 * `.csv` file) is read with the `scene_init_poses.csv` beside it, its questions asked with lettered
 * choices and scored by accuracy (`multiple-choice.ts`).
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { OutputError, UserError, canonicalJson, eqakitVersion, isUserError, outputFailure, selectShard, sha256Hex, writeFileAtomically, type Shard } from "../../core/index.js";
import { looksLikeExpressBench, looksLikeMixedSet, parseExpressBench, readJsonFile, requireRecords, validateRecords } from "../../data/index.js";
import { FrameFolderWriter, loadSharp, openEpisode, prepareImage, type Episode, type ImageOptions, type PreparedImage } from "../../episodes/index.js";
import { ModelCallError, ledgerCost, mergeCallLedgers, readCallLedger, runModelBatch, type CallEntry, sumUsage, type CallPlan, type ChatModel, type ModelSpec, type RunCost, type UsageLedger, type UsageTotals } from "../../models/index.js";
import { EnvironmentError, homeNavGrid, type AgentState, type Environment, type Home, type Point3, type SceneBounds } from "../../sim/index.js";
import { RunDirectory, linkFile, linkTree, mergeOutput, mergedRecords, openRun, readShardSet, recordParser, resultSettings, resumeItems, shardContext, shardSetting, shardWallTime, sumShardCounts, writeMergeNote, writeRecords, writeShardManifest, type ResumeRule, RUN_KIND, summaryHead, type RunSummaryHead } from "../../store/index.js";
import type { Agent } from "../types.js";
import { MIXED_AGENT_NAMES } from "../mixed/types.js";
import { traceOfFailure } from "../calls.js";
import { EXPLORER_NAMES, episodeFileName, resolveExplorer, type ExplorerName } from "./explorers.js";
import type { ActiveEpisode, ExplorationOutcome, Explorer, ExplorerPlanContext, ExplorerSettings } from "./explorer-types.js";
import { multipleChoiceAccuracy, multipleChoiceOutcome, readHmEqaEpisodes, type MultipleChoiceAccuracy } from "./multiple-choice.js";
import { reachableCoverage } from "./occupancy.js";
import { writeTrajectoryImage } from "./trajectory-image.js";

export const EXPLORE_RECORDS_FILE = "episodes.jsonl";
export const EXPLORE_TRAJECTORY_FORMAT = "eqakit-explore-trajectory/1";
const vec3 = z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]);
const episodeSchema = z.object({
  question_id: z.string().min(1),
  question: z.string().min(1),
  answer: z.string().optional(),
  choices: z.array(z.string()).optional(),
  category: z.string().optional(),
  scene: z.string().min(1),
  start: z.object({ position: vec3, yaw: z.number().finite(), pitch: z.number().finite().optional() }).optional(),
  goal_position: vec3.optional(),
  gt_path_length: z.number().finite().nonnegative().optional(),
  gt_path_steps: z.number().int().nonnegative().optional(),
});

export interface LoadActiveEpisodesOptions {
  /** Why a scene cannot be opened by the environment in use (undefined when it can): such an episode is refused with the file. */
  sceneProblem?: (scene: string) => string | undefined;
}

/**
 * Reads an active-episodes file (see the module comment) or an EXPRESS-Bench file. A file
 * without episodes, and with `sceneProblem` an episode whose scene it rejects, is a UserError
 * naming the file (and the record), so that a run never starts on them.
 */
export async function loadActiveEpisodes(file: string, options: LoadActiveEpisodesOptions = {}): Promise<ActiveEpisode[]> {
  const episodes = await readActiveEpisodes(file);
  if (options.sceneProblem) {
    for (const [index, episode] of episodes.entries()) {
      const problem = options.sceneProblem(episode.scene);
      if (problem !== undefined) throw new UserError(problem, { file, index, id: episode.questionId, field: "scene" });
    }
  }
  return episodes;
}

async function readActiveEpisodes(file: string): Promise<ActiveEpisode[]> {
  if (/\.csv$/i.test(file)) return readHmEqaEpisodes(file);
  const value = await readJsonFile(file);
  if (looksLikeMixedSet(value)) throw new UserError("is a Mixed EQA set (eqakit-mixed/1): its episodes come with a history and a present home of their own", { file }, `run it with eqa explore --agent ${MIXED_AGENT_NAMES.join(", ")}`);
  const list = Array.isArray(value) ? value : typeof value === "object" && value !== null && Array.isArray((value as { episodes?: unknown }).episodes) ? (value as { episodes: unknown[] }).episodes : undefined;
  if (list === undefined) throw new UserError("expected a JSON array of episodes (or { \"episodes\": [...] })", { file });
  requireRecords(list, file, "episodes", "--episodes takes a JSON list of at least one episode");
  if (looksLikeExpressBench(list)) {
    return parseExpressBench(list, file).map((r) => {
      const [w, , y] = r.startRotation;
      return {
        questionId: `${r.episodeId}-${r.trajectoryId}-${r.type}`,
        question: r.question,
        answer: r.answer,
        category: r.type,
        scene: r.sceneId,
        start: { position: r.startPosition, yaw: 2 * Math.atan2(y, w), pitch: 0 },
        goalPosition: r.goalPosition,
        gtPathLengthM: r.geodesicDistance,
      };
    });
  }
  const raw = validateRecords<z.infer<typeof episodeSchema>>(list, episodeSchema, file, "active episodes");
  const seen = new Set<string>();
  return raw.map((e, index) => {
    if (seen.has(e.question_id)) throw new UserError(`question_id "${e.question_id}" appears twice`, { file, index, field: "question_id" });
    seen.add(e.question_id);
    return {
      questionId: e.question_id,
      question: e.question,
      ...(e.answer !== undefined ? { answer: e.answer } : {}),
      ...(e.choices ? { choices: e.choices } : {}),
      ...(e.category ? { category: e.category } : {}),
      scene: e.scene,
      ...(e.start ? { start: { position: e.start.position, yaw: e.start.yaw, pitch: e.start.pitch ?? 0 } } : {}),
      ...(e.goal_position ? { goalPosition: e.goal_position } : {}),
      ...(e.gt_path_length !== undefined ? { gtPathLengthM: e.gt_path_length } : {}),
      ...(e.gt_path_steps !== undefined ? { gtPathSteps: e.gt_path_steps } : {}),
    };
  });
}

/** An environment for one scene; `home` when it is the built-in simulator (drawn under the path). */
export interface SceneEnvironment {
  env: Environment;
  home?: Home;
}

export interface ExploreRunOptions<Episode extends ActiveEpisode = ActiveEpisode> extends ExplorerSettings {
  episodes: Episode[];
  /** The explorer, by name (`EXPLORERS`) or as itself. */
  explorer: ExplorerName | Explorer<Episode>;
  openScene: (scene: string) => Promise<SceneEnvironment>;
  outDir: string;
  /** Episodes in flight for an explorer that runs several at once, each with its own environment (default 1; the others run one at a time). */
  concurrency?: number;
  usage?: UsageLedger;
  settings?: Record<string, unknown>;
  /** Explore only this shard of the episodes (`--shard`), and write `shard.json` for `eqa merge`. */
  shard?: Shard;
  onProgress?: (done: number, total: number, failed: number) => void;
}

export interface ExploreRecord {
  questionId: string;
  inputKey: string;
  scene: string;
  /** The explorer's name. */
  explorer: string;
  answer: string | null;
  answerSource: "view" | "blind" | "agent" | "none" | null;
  stop: string | null;
  pathLengthM: number | null;
  pathLengthSteps: number | null;
  frames: number;
  explorerMsPerStep: number | null;
  /** Geodesic distance from the final position to the goal, metres (null without a goal). */
  goalDistanceM: number | null;
  /** Share of the floor reachable from the start that the exploration's map saw, in [0, 1] (the built-in simulator's homes; null elsewhere). */
  coverage?: number | null;
  /** ceᵢ of EXPRESS-Bench's reliability figures: the stop check's P(yes) for the view the answer came from (Fine-EQA; null when no check gave one). */
  confidence?: number | null;
  /** lᵢ, metres: the episode's ground-truth length, else the start-to-goal geodesic distance (null without either, or when the goal is unreachable). */
  gtPathLengthM: number | null;
  /** Multiple-choice episodes: the letter read from the answer (null when none could be read), and whether it is the answer letter. */
  choice?: string | null;
  correct?: boolean;
  details: Record<string, unknown>;
  usage: UsageTotals | null;
  error: string | null;
  finishedAt: string;
}

/** One line of an explore run's records.jsonl, as `runExploration` writes it (a record of an older version without `error` finished). */
export const exploreRecordSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  scene: z.string(),
  explorer: z.enum([...EXPLORER_NAMES, "external"]),
  answer: z.string().nullable(),
  answerSource: z.enum(["view", "blind", "agent", "none"]).nullable(),
  stop: z.string().nullable(),
  pathLengthM: z.number().nullable(),
  pathLengthSteps: z.number().nullable(),
  frames: z.number(),
  explorerMsPerStep: z.number().nullable(),
  goalDistanceM: z.number().nullable(),
  coverage: z.number().nullable().optional(),
  confidence: z.number().nullable().optional(),
  gtPathLengthM: z.number().nullable(),
  choice: z.string().nullable().optional(),
  correct: z.boolean().optional(),
  details: z.record(z.string(), z.unknown()),
  usage: z.custom<UsageTotals | null>((v) => v === null || ((v) => typeof v === "object" && v !== null && !Array.isArray(v))(v)),
  error: z.string().nullable().default(null),
  finishedAt: z.string(),
}) satisfies z.ZodType<ExploreRecord>;

export interface ExploreSummary extends RunSummaryHead<typeof RUN_KIND.explore> {
  counts: { episodes: number; finished: number; failed: number; reused: number; answered: number; blindAnswers: number };
  stops: Record<string, number>;
  metrics: {
    pathLength: { meanMetres: number | null; meanSteps: number | null };
    /** The explorer's own time per step, without environment and model calls, milliseconds. */
    explorerMsPerStep: { mean: number | null; max: number | null };
    goalDistance: { meanMetres: number | null; n: number };
    /** Share of the reachable floor seen, over the episodes that have one (`ExploreRecord.coverage`). */
    coverage: { mean: number | null; min: number | null; n: number };
    /** Multiple-choice episodes (HM-EQA): percent whose letter is the answer's. */
    multipleChoice: MultipleChoiceAccuracy;
  };
  failures: { questionId: string; error: string }[];
  usage: { episodes: UsageTotals; thisProcess: ReturnType<UsageLedger["snapshot"]> | null };
  /** Calls, tokens and dollars per role (the explorer's VLM, the answering agent, an agent's own model/complete calls, the judge), from the run's ledger of model calls (calls.jsonl). */
  cost: RunCost;
}

/** The last frame an episode recorded (Fine-EQA answers from it; the EAC judge sees it), or undefined. */
export function lastFramePath(runDir: string, record: Pick<ExploreRecord, "questionId" | "frames">): string | undefined {
  if (record.frames < 1) return undefined;
  return join(runDir, "frames", episodeFileName(record.questionId), `${String(record.frames - 1).padStart(5, "0")}-rgb.png`);
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** An episode's input key: a resumed run reuses only episodes explored with the same explorer, models, budget, images and prompts. */
function exploreKey(explorer: Explorer<never>, options: { vlm: string | null; answerer: Record<string, unknown> | null; activeAgent?: { configuration: Record<string, unknown> }; episodeTimeMs?: number; maxSteps?: number; image?: ImageOptions }): { configuration: Record<string, unknown>; keyOf: (e: ActiveEpisode) => string } {
  const prompts = explorer.promptHashes();
  const configuration = {
    explorer: explorer.name,
    ...(options.activeAgent ? { agent: options.activeAgent.configuration, episodeTimeMs: options.episodeTimeMs ?? null } : {}),
    vlm: options.vlm,
    answerer: options.answerer,
    maxSteps: options.maxSteps ?? null,
    image: options.image ?? {},
    ...(prompts ? { prompts } : {}),
  };
  const configKey = canonicalJson(configuration);
  return { configuration, keyOf: (e) => sha256Hex(`${configKey}\u0000${canonicalJson(e)}`) };
}

/** What `eqa explore --dry-run` plans from. */
export interface ExplorePlanOptions<Episode extends ActiveEpisode = ActiveEpisode> extends ExplorerPlanContext {
  episodes: Episode[];
  explorer: ExplorerName | Explorer<Episode>;
  outDir: string;
  /** The judge of `--judge`: an LLM-Match and an EAC call per episode. */
  judge?: ModelSpec;
  /** false: the judge makes no EAC call (`--no-eac`). */
  eac?: boolean;
  /** The user's own agent: its configuration is part of each episode's key. */
  activeAgent?: { configuration: Record<string, unknown> };
  episodeTimeMs?: number;
  /** Only this shard of the episodes. */
  shard?: Shard;
}

/** What `eqa explore --dry-run` counts beside the calls. */
export interface ExplorePlan {
  episodes: number;
  /** Episodes the run directory already holds. */
  reused: number;
  pending: number;
  /** Fine-EQA: the most steps of the pending episodes; null when a scene's budget is unknown (no --max-steps, a scene only its environment knows). */
  steps: number | null;
}

/**
 * `eqa explore --dry-run`: the calls of every episode the run directory does not hold, as a most.
 * Fine-EQA asks its VLM for the question's regions, then at each step at most a stop check and a
 * region check, and once for the answer: its requests are built by its own code, with a blank
 * observation of the run's size, and repeated up to the episode's step budget. The frontier
 * explorer calls no model; its answering agent answers once per episode from the frames the
 * exploration collects, and the judge judges once per episode (counted, not estimated). A blind, multi-frame VLM or Socratic answering agent is planned on a stand-in recording (blank
 * frames of the observation's size, one per step of the budget, of which it samples its K): its
 * requests, tokens and dollars are then those of a recording that long; the scene-graph agents'
 * (built from depth, poses and masks) are counted once per episode, their tokens unknown.
 * Starts no environment and writes nothing.
 */
export async function planExploration<Episode extends ActiveEpisode>(options: ExplorePlanOptions<Episode>, plan: CallPlan): Promise<ExplorePlan> {
  const explorer = resolveExplorer(options.explorer);
  const { keyOf } = exploreKey(explorer, { ...options, vlm: options.vlm?.name ?? null, answerer: options.answerer?.agent.configuration ?? null });
  const episodes = selectShard(options.episodes, (e) => e.questionId, options.shard);
  const { reusable: earlier, pending } = resumeItems(options.outDir, exploreResumeRule(episodes, keyOf));
  const steps = await explorer.plan(pending, options, plan);
  if (options.judge && episodes.length > 0) {
    plan.addEstimate({ role: "judge", model: options.judge.name, calls: (options.eac === false ? 1 : 2) * episodes.length, cached: 0, promptTokens: null, completionTokens: null, dollars: null, upperBound: true });
  }
  return { episodes: episodes.length, reused: earlier.size, pending: pending.length, steps };
}

/** Runs every episode (see the module comment); returns the summary and the records in input order. */
export async function runExploration<Episode extends ActiveEpisode>(options: ExploreRunOptions<Episode>): Promise<{ summary: ExploreSummary; records: ExploreRecord[]; runDir: string }> {
  const started = performance.now();
  const explorer = resolveExplorer(options.explorer);
  // the folder's manifest: kind explore, the explorer's configuration and the command's settings (not the judge of --judge: judging a run is a stage of it)
  const explored = exploreKey(explorer, { ...options, vlm: options.vlm?.model.name ?? null, answerer: options.answerer?.agent.configuration ?? null });
  const episodesFile = options.settings?.episodes;
  const run = await openRun({
    dir: options.outDir,
    kind: RUN_KIND.explore,
    settings: resultSettings({ ...explored.configuration, ...options.settings }),
    inputs: typeof episodesFile === "string" ? [{ name: "episodes", path: episodesFile, copy: true }] : [],
    items: { noun: "episode", input: "episodes", flag: "--episodes", ...(typeof episodesFile === "string" ? { file: episodesFile } : {}), list: options.episodes.map((e) => ({ id: e.questionId, content: e })) },
  });
  options.usage?.attach(run.path);
  const { configuration, keyOf } = exploreKey(explorer, { ...options, vlm: options.vlm?.model.name ?? null, answerer: options.answerer?.agent.configuration ?? null });
  const episodes = selectShard(options.episodes, (e) => e.questionId, options.shard);
  const wanted = new Map(episodes.map((e) => [e.questionId, keyOf(e)]));
  const resumed = resumeItems(run, exploreResumeRule(episodes, keyOf));
  const earlier = resumed.reusable;
  const records = new Map(earlier);
  // Episodes of one scene run together, so that one environment serves them all.
  const pending = resumed.pending.map((e, i) => ({ e, i })).sort((a, b) => a.e.scene.localeCompare(b.e.scene) || a.i - b.i).map((x) => x.e);
  let failed = 0;
  options.onProgress?.(records.size, episodes.length, failed);

  // Environments not in use, by scene: an episode takes one of its scene (or opens one) and
  // gives it back; episodes run sorted by scene, so opening one closes those of other scenes.
  const idle: { scene: string; opened: SceneEnvironment }[] = [];
  const close = async (env: Environment): Promise<void> => {
    await env.close().catch(() => undefined);
  };
  const takeEnvironment = async (scene: string): Promise<{ scene: string; opened: SceneEnvironment }> => {
    const same = idle.findIndex((x) => x.scene === scene);
    if (same >= 0) return idle.splice(same, 1)[0]!;
    await Promise.all(idle.splice(0).map((x) => close(x.opened.env)));
    return { scene, opened: await options.openScene(scene) };
  };
  const base = (e: Episode): ExploreRecord => ({
    questionId: e.questionId,
    inputKey: keyOf(e),
    scene: e.scene,
    explorer: explorer.name,
    answer: null,
    answerSource: null,
    stop: null,
    pathLengthM: null,
    pathLengthSteps: null,
    frames: 0,
    explorerMsPerStep: null,
    goalDistanceM: null,
    gtPathLengthM: e.gtPathLengthM ?? null,
    details: {},
    usage: null,
    error: null,
    finishedAt: new Date().toISOString(),
  });

  const appender = run.appender(EXPLORE_RECORDS_FILE);
  try {
    await runModelBatch<Episode, ExploreRecord>({
      items: pending,
      concurrency: explorer.concurrent ? (options.concurrency ?? 1) : 1,
      models: [...(options.vlm ? [options.vlm.spec] : []), ...(options.answerer?.models ?? [])],
      itemId: (e) => e.questionId,
      failed: (e, error): ExploreRecord => ({ ...base(e), error: `model call failed: ${error.message}` }),
      finished: (e, record) => {
        appender.append(record);
        records.set(e.questionId, record);
        if (record.error !== null) failed++;
        options.onProgress?.(records.size, episodes.length, failed);
      },
      work: async (e): Promise<ExploreRecord> => {
        const name = episodeFileName(e.questionId);
        const framesDir = run.file(join("frames", name));
        let taken: { scene: string; opened: SceneEnvironment } | undefined;
        let broken = false;
        try {
          taken = await takeEnvironment(e.scene);
          const { env, home } = taken.opened;
          if (e.start && !(await env.isNavigable(e.start.position))) {
            throw new UserError(`the start position (${e.start.position.join(", ")}) is not navigable in scene ${e.scene}`, { id: e.questionId, field: "start" });
          }
          await env.reset(e.start);
          await rm(framesDir, { recursive: true, force: true }).catch((error: unknown) => {
            throw outputFailure(framesDir, error);
          });
          const outcome = await explorer.explore(e, { ...explorerSettings(options), env, framesDir });
          const last = outcome.positions[outcome.positions.length - 1]?.state;
          const goalDistanceM = e.goalPosition && last ? await env.geodesicDistance(last.position, e.goalPosition) : null;
          const start = outcome.positions[0]?.state;
          // without a ground-truth length, the start-to-goal geodesic distance stands for it (EXPRESS-Bench's lᵢ)
          const gtPathLengthM = e.gtPathLengthM ?? (e.goalPosition && start ? await env.geodesicDistance(start.position, e.goalPosition) : null);
          const from = outcome.positions[0]?.state.position;
          const coverage = home && from ? (reachableCoverage(outcome.map, homeNavGrid(home), from)?.share ?? null) : null;
          await writeTrajectory(run, name, e, outcome, home);
          return {
            ...base(e),
            answer: outcome.answer,
            answerSource: outcome.answerSource,
            stop: outcome.stop,
            pathLengthM: outcome.pathLengthM,
            pathLengthSteps: outcome.pathLengthSteps,
            frames: outcome.frames,
            explorerMsPerStep: outcome.explorerMsPerStep,
            goalDistanceM: goalDistanceM !== null && Number.isFinite(goalDistanceM) ? goalDistanceM : null,
            gtPathLengthM: gtPathLengthM !== null && Number.isFinite(gtPathLengthM) ? gtPathLengthM : null,
            coverage,
            ...(outcome.confidence !== undefined ? { confidence: outcome.confidence } : {}),
            details: outcome.details,
            usage: outcome.usage,
            ...multipleChoiceOutcome(e, outcome.answer),
          };
        } catch (error) {
          // an unusable model or an unwritable file stops the run: they are not this episode's failure
          if (error instanceof ModelCallError || error instanceof OutputError) throw error;
          if (error instanceof EnvironmentError && error.kind !== "remote") broken = true;
          if (isUserError(error)) {
            // an agent of the user's own that failed keeps what it did: its model calls, log lines and stderr
            const trace = traceOfFailure(error);
            return { ...base(e), error: error.message, ...(trace ? { details: { trace }, usage: trace.usage } : {}) };
          }
          throw error;
        } finally {
          if (taken && broken) await close(taken.opened.env);
          else if (taken) idle.push(taken);
        }
      },
    });
  } finally {
    appender.close();
    await Promise.all(idle.splice(0).map((x) => close(x.opened.env)));
  }

  const ordered = episodes.map((e) => records.get(e.questionId) as ExploreRecord);
  await writeExplorePredictions(run, ordered);
  const context = { model: options.vlm?.spec.name ?? options.answerer?.models[0]?.name ?? null, role: options.vlm ? "explorer" : "agent" };
  const summary = exploreSummary(ordered, { config: { ...configuration, ...options.settings, ...shardSetting(options.shard) }, reused: earlier.size, wallTimeMs: performance.now() - started, usage: options.usage?.snapshot() ?? null, calls: readCallLedger(run.path), ...context });
  if (options.shard) {
    await writeShardManifest(run, { kind: RUN_KIND.explore, ...options.shard, items: options.episodes.map((e) => e.questionId), keys: Object.fromEntries(wanted), context });
  }
  await run.writeJson("summary.json", summary);
  return { summary, records: ordered, runDir: run.path };
}

async function writeExplorePredictions(run: RunDirectory, records: readonly ExploreRecord[]): Promise<void> {
  await run.writeJson(
    "predictions.json",
    records.filter((r) => r.error === null).map((r) => ({ question_id: r.questionId, answer: r.answer, explorer: r.explorer, path_length_m: r.pathLengthM, path_length_steps: r.pathLengthSteps })),
  );
}

const exploreContextSchema = z.object({ model: z.string().nullable(), role: z.string() });

/** What an exploration's summary is built from beside its records. */
interface ExploreSummaryInputs extends z.infer<typeof exploreContextSchema> {
  config: Record<string, unknown>;
  reused: number;
  wallTimeMs: number;
  usage: ReturnType<UsageLedger["snapshot"]> | null;
  /** The run's ledger of model calls. */
  calls: readonly CallEntry[];
}

/**
 * `eqa merge` of `eqa explore --shard` runs: episodes.jsonl holds every shard's standing records
 * in the episodes file's order, trajectories/ and frames/ each episode's files (hard-linked when
 * on one file system, else copied); predictions.json and summary.json are written as one
 * unsharded run writes them. Judgements (`--judge`) are not merged: judge the merged run.
 */
export async function mergeExploreRuns(dirs: readonly string[], outDir: string): Promise<{ summary: ExploreSummary; records: ExploreRecord[]; runDir: string }> {
  const set = await readShardSet(dirs, RUN_KIND.explore);
  const context = shardContext(set.shards[0]!, set.kind, exploreContextSchema);
  const records = mergedRecords(set, EXPLORE_RECORDS_FILE, recordParser(exploreRecordSchema));
  const run = mergeOutput(outDir, set);
  const home = new Map(set.shards.flatMap((s) => Object.keys(s.manifest.keys).map((id) => [id, s.dir] as const)));
  for (const r of records) {
    const name = episodeFileName(r.questionId);
    const from = home.get(r.questionId)!;
    for (const file of [join("trajectories", `${name}.json`), join("trajectories", `${name}.png`)]) {
      if (existsSync(join(from, file))) await linkFile(join(from, file), run.file(file));
    }
    if (existsSync(join(from, "frames", name))) await linkTree(join(from, "frames", name), run.file(join("frames", name)));
  }
  await writeRecords(run, EXPLORE_RECORDS_FILE, records);
  await writeExplorePredictions(run, records);
  const summary = exploreSummary(records, { config: set.config, reused: sumShardCounts(set, "reused"), wallTimeMs: shardWallTime(set), usage: null, calls: await mergeCallLedgers(dirs, run.path), ...context });
  await writeMergeNote(run, set);
  await run.writeJson("summary.json", summary);
  return { summary, records, runDir: run.path };
}

/** An exploration's summary from its records (those of one run, or of merged shards). */
function exploreSummary(ordered: readonly ExploreRecord[], inputs: ExploreSummaryInputs): ExploreSummary {
  const done = ordered.filter((r) => r.error === null);
  const stops: Record<string, number> = {};
  for (const r of done) stops[r.stop ?? "none"] = (stops[r.stop ?? "none"] ?? 0) + 1;
  const perStep = done.flatMap((r) => (r.explorerMsPerStep !== null ? [r.explorerMsPerStep] : []));
  const goals = done.flatMap((r) => (r.goalDistanceM !== null ? [r.goalDistanceM] : []));
  const covered = done.flatMap((r) => (typeof r.coverage === "number" ? [r.coverage] : []));
  const episodes = sumUsage(done.flatMap((r) => (r.usage ? [r.usage] : [])));
  return {
    ...summaryHead(RUN_KIND.explore, inputs.wallTimeMs, inputs.config),
    counts: {
      episodes: ordered.length,
      finished: done.length,
      failed: ordered.length - done.length,
      reused: inputs.reused,
      answered: done.filter((r) => r.answer !== null).length,
      blindAnswers: done.filter((r) => r.answerSource === "blind").length,
    },
    stops,
    metrics: {
      pathLength: { meanMetres: mean(done.flatMap((r) => (r.pathLengthM !== null ? [r.pathLengthM] : []))), meanSteps: mean(done.flatMap((r) => (r.pathLengthSteps !== null ? [r.pathLengthSteps] : []))) },
      explorerMsPerStep: { mean: mean(perStep), max: perStep.length > 0 ? Math.max(...perStep) : null },
      goalDistance: { meanMetres: mean(goals), n: goals.length },
      coverage: { mean: mean(covered), min: covered.length > 0 ? Math.min(...covered) : null, n: covered.length },
      multipleChoice: multipleChoiceAccuracy(done),
    },
    failures: ordered.filter((r) => r.error !== null).map((r) => ({ questionId: r.questionId, error: r.error ?? "" })),
    usage: { episodes, thisProcess: inputs.usage },
    cost: ledgerCost(inputs.calls),
  };
}

async function writeTrajectory(run: RunDirectory, name: string, e: ActiveEpisode, o: ExplorationOutcome, home: Home | undefined): Promise<void> {
  const trajectory = {
    format: EXPLORE_TRAJECTORY_FORMAT,
    questionId: e.questionId,
    scene: e.scene,
    pathLengthM: o.pathLengthM,
    pathLengthSteps: o.pathLengthSteps,
    frames: o.frames,
    steps: o.positions.map((p, step) => ({ step, action: p.action, success: p.success, position: p.state.position, yaw: p.state.yaw, pitch: p.state.pitch, ...(p.via ? { via: p.via } : {}) })),
  };
  await writeFileAtomically(run.file(join("trajectories", `${name}.json`)), `${JSON.stringify(trajectory)}\n`);
  await writeTrajectoryImage(run.file(join("trajectories", `${name}.png`)), {
    map: o.map,
    path: o.positions.flatMap((p) => [...(p.via ?? []), [p.state.position[0], p.state.position[2]] as [number, number]]),
    ...(home ? { home } : {}),
  });
}

/** How an exploration resumes: an episode's record stands when it finished, explored with the same settings. */
function exploreResumeRule<Episode extends ActiveEpisode>(episodes: readonly Episode[], keyOf: (episode: Episode) => string): ResumeRule<Episode, ExploreRecord> {
  return { file: EXPLORE_RECORDS_FILE, schema: exploreRecordSchema, items: episodes, id: (e) => e.questionId, inputKey: keyOf, succeeded: (r) => r.error === null };
}

/** What a run gives its explorer beside the episode's environment and frame folder. */
function explorerSettings(options: ExplorerSettings): ExplorerSettings {
  const { vlm, answerer, activeAgent, episodeTimeMs, maxSteps, image } = options;
  return { ...(vlm ? { vlm } : {}), ...(answerer ? { answerer } : {}), ...(activeAgent ? { activeAgent } : {}), ...(episodeTimeMs !== undefined ? { episodeTimeMs } : {}), ...(maxSteps !== undefined ? { maxSteps } : {}), ...(image ? { image } : {}) };
}

/**
 * The scene file the Habitat bridge loads for a scene id: a `.glb` path as it is; an HM3D scene
 * folder such as EXPRESS-Bench's `hm3d/train/00006-HkseAnWCgqk` becomes
 * `hm3d/train/00006-HkseAnWCgqk/HkseAnWCgqk.basis.glb`, as the benchmark's `main.py` builds it.
 */
export function habitatSceneFile(scene: string): string {
  if (scene.endsWith(".glb")) return scene;
  const folder = scene.replace(/\/+$/, "");
  const name = folder.split("/").pop() ?? folder;
  const dash = name.indexOf("-");
  return `${folder}/${dash >= 0 ? name.slice(dash + 1) : name}.basis.glb`;
}
