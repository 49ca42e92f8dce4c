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
import { RunDirectory, linkFile, linkTree, mergeOutput, mergedRecords, openRun, readShardSet, recordParser, resultSettings, resumeItems, shardContext, shardSetting, shardWallTime, sumShardCounts, writeMergeNote, writeRecords, writeShardManifest, type ResumeRule } from "../../store/index.js";
import type { Agent } from "../types.js";
import { MIXED_AGENT_NAMES } from "../mixed/types.js";
import { traceOfFailure } from "../calls.js";
import type { ExternalActiveAgent } from "../external/index.js";
import { exploreExternal } from "./external.js";
import { exploreFrontier, type ExplorationResult } from "./explorer.js";
import { STOP_CHECK_ROLE, exploreFineEqa, fineEqaBudget, fineEqaPromptHashes, fineEqaRequests, type FineEqaResult } from "./fine-eqa.js";
import { exploreFineEqaReference, fineEqaReferencePromptHashes, fineEqaReferenceRequests, type FineEqaReferenceResult } from "./fine-eqa-reference.js";
import { askedQuestion, multipleChoiceAccuracy, multipleChoiceOutcome, readHmEqaEpisodes, type MultipleChoiceAccuracy } from "./multiple-choice.js";
import { reachableCoverage, type OccupancyMap } from "./occupancy.js";
import { writeTrajectoryImage } from "./trajectory-image.js";

export const EXPLORE_RECORDS_FILE = "episodes.jsonl";
export const EXPLORE_TRAJECTORY_FORMAT = "eqakit-explore-trajectory/1";
/** The built-in explorers, and `external`: an active agent of the user's own (the agent protocol). */
export type ExplorerName = "frontier" | "fine-eqa" | "fine-eqa:reference" | "external";
export const EXPLORER_NAMES = ["frontier", "fine-eqa", "fine-eqa:reference"] as const satisfies readonly ExplorerName[];

/** Whether an explorer is Fine-EQA (eqakit's or the reference mode): it answers itself with its VLM. */
export function isFineEqa(explorer: ExplorerName): boolean {
  return explorer === "fine-eqa" || explorer === "fine-eqa:reference";
}

export interface ActiveEpisode {
  questionId: string;
  question: string;
  answer?: string;
  choices?: string[];
  category?: string;
  scene: string;
  start?: AgentState;
  goalPosition?: Point3;
  /** Ground-truth path length, metres. */
  gtPathLengthM?: number;
  /** Ground-truth path length, steps (primitive actions). */
  gtPathSteps?: number;
}

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

export interface ExploreRunOptions {
  episodes: ActiveEpisode[];
  explorer: ExplorerName;
  openScene: (scene: string) => Promise<SceneEnvironment>;
  outDir: string;
  /** Fine-EQA's VLM. */
  vlm?: { model: ChatModel; spec: ModelSpec };
  /** frontier: the EM-EQA agent answering from the collected frames (none: exploration only). */
  answerer?: { agent: Agent; models: ModelSpec[] };
  /** external: the active agent of the user's own (with `explorer: "external"`). */
  activeAgent?: ExternalActiveAgent;
  /** external: each episode's wall-time budget, milliseconds (--episode-time). */
  episodeTimeMs?: number;
  /** external: episodes in flight, each with its own agent session and environment (default 1; the built-in explorers run one at a time). */
  concurrency?: number;
  /** frontier: most actions; fine-eqa: a fixed step budget instead of the area rule. */
  maxSteps?: number;
  image?: ImageOptions;
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
  explorer: ExplorerName;
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

export interface ExploreSummary {
  kind: "explore";
  eqakitVersion: string;
  createdAt: string;
  wallTimeMs: number;
  config: Record<string, unknown>;
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

/** The file name an episode's trajectory and frame folder take (characters outside [A-Za-z0-9._-] become _; so do the dots of `.` and `..`, which name folders already). */
export function episodeFileName(id: string): string {
  const name = id.replace(/[^A-Za-z0-9._-]/g, "_");
  return name === "." || name === ".." ? name.replaceAll(".", "_") : name;
}

/** The last frame an episode recorded (Fine-EQA answers from it; the EAC judge sees it), or undefined. */
export function lastFramePath(runDir: string, record: Pick<ExploreRecord, "questionId" | "frames">): string | undefined {
  if (record.frames < 1) return undefined;
  return join(runDir, "frames", episodeFileName(record.questionId), `${String(record.frames - 1).padStart(5, "0")}-rgb.png`);
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

interface ExplorationOutcome {
  answer: string | null;
  answerSource: ExploreRecord["answerSource"];
  stop: string;
  positions: { action: string | null; success: boolean; state: AgentState; via?: [number, number][] }[];
  pathLengthM: number;
  pathLengthSteps: number;
  frames: number;
  explorerMsPerStep: number;
  map: OccupancyMap;
  usage: UsageTotals | null;
  details: Record<string, unknown>;
  /** ceᵢ: the stop check's P(yes) for the view the answer came from (its last check with a confidence), when the explorer asks one. */
  confidence?: number | null;
}

/** What either Fine-EQA mode's result tells the run, with the mode's own `details` recorded beside. */
function fineEqaOutcome(r: FineEqaResult | FineEqaReferenceResult, details: Record<string, unknown>): ExplorationOutcome {
  return {
    answer: r.answer,
    answerSource: r.answerSource,
    stop: r.stop,
    positions: r.steps.map((s) => ({ action: s.action ?? null, success: s.success, state: s.state, ...(s.via ? { via: s.via } : {}) })),
    pathLengthM: r.pathLengthM,
    pathLengthSteps: r.pathLengthSteps,
    frames: r.frames,
    explorerMsPerStep: r.explorerMsPerStep,
    map: r.map,
    usage: r.trace.usage,
    details,
  };
}

async function exploreEpisode(options: ExploreRunOptions, episode: ActiveEpisode, env: Environment, framesDir: string): Promise<ExplorationOutcome> {
  if (options.explorer === "external") {
    if (!options.activeAgent) throw new Error("the external explorer needs its activeAgent");
    const r = await exploreExternal(options.activeAgent, episode, env, framesDir, { ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}), ...(options.episodeTimeMs !== undefined ? { timeMs: options.episodeTimeMs } : {}), ...(options.image ? { image: options.image } : {}) });
    return {
      answer: r.answer,
      answerSource: r.stop === "answered" ? "agent" : "none",
      stop: r.stop,
      positions: r.steps,
      pathLengthM: r.pathLengthM,
      pathLengthSteps: r.pathLengthSteps,
      frames: r.frames,
      explorerMsPerStep: r.agentMsPerStep,
      map: r.map,
      usage: r.trace.usage,
      details: { actions: r.pathLengthSteps, moves: r.moves, failedActions: r.failedActions, trace: r.trace },
      confidence: r.confidence,
    };
  }
  if (isFineEqa(options.explorer)) {
    if (!options.vlm) throw new UserError(`the ${options.explorer} explorer needs a vision-language model`, { field: "--model" });
    const fineOptions = {
      question: askedQuestion(episode),
      framesDir,
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      ...(options.image ? { image: options.image } : {}),
    };
    if (options.explorer === "fine-eqa:reference") {
      const r = await exploreFineEqaReference(env, options.vlm.model, fineOptions);
      const details = { regions: r.regions, explorationSteps: r.explorationSteps, budget: r.budget, observation: r.observation, valueUpdates: r.valueUpdates, regionPoints: r.regionPoints, moves: r.moves, finalMove: r.finalMove, badReplies: r.badReplies, calls: r.trace.calls };
      return fineEqaOutcome(r, details);
    }
    const r = await exploreFineEqa(env, options.vlm.model, fineOptions);
    const details = { regions: r.regions, roundsByRegion: r.roundsByRegion, explorationSteps: r.explorationSteps, budget: r.budget, badReplies: r.badReplies, stopChecks: r.stopChecks, calls: r.trace.calls };
    return { ...fineEqaOutcome(r, details), confidence: [...r.stopChecks].reverse().find((c) => c.confidence !== null)?.confidence ?? null };
  }
  const writer = new FrameFolderWriter(framesDir);
  // The writer numbers frames in call order: one write at a time, in the order observed.
  // A refused write (a full disk) ends the exploration at the next observation.
  let writing: Promise<void> = Promise.resolve();
  let refused: { error: unknown } | undefined;
  let r: ExplorationResult;
  try {
    r = await exploreFrontier(env, {
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      onObservation: (_i, obs) => {
        if (refused) throw refused.error;
        writing = writing.then(async () => {
          if (!refused) await writer.write(obs);
        }).catch((error: unknown) => {
          refused ??= { error };
        });
      },
    });
  } finally {
    await writing;
  }
  if (refused) throw refused.error;
  let answer: string | null = null;
  let usage: UsageTotals | null = null;
  const details: Record<string, unknown> = { goals: r.goals.length, replans: r.replans, actions: r.actions, moves: r.moves };
  if (options.answerer) {
    const opened = await openEpisode(framesDir, episodeFileName(episode.questionId));
    const question = { questionId: episode.questionId, question: askedQuestion(episode), answer: episode.answer ?? "", category: episode.category ?? "", episodeHistory: episodeFileName(episode.questionId) };
    const answered = await options.answerer.agent.answer(question as Parameters<Agent["answer"]>[0], opened);
    answer = answered.answer;
    usage = answered.trace.usage;
    details.trace = answered.trace;
  }
  return {
    answer,
    answerSource: options.answerer ? "agent" : "none",
    stop: r.stop,
    positions: r.steps.map((s) => ({ action: s.action ?? null, success: s.success, state: s.state })),
    pathLengthM: r.pathLengthM,
    pathLengthSteps: r.pathLengthSteps,
    frames: writer.frames,
    explorerMsPerStep: r.explorerMsPerStep,
    map: r.map,
    usage,
    details,
  };
}

/** An episode's input key: a resumed run reuses only episodes explored with the same explorer, models, budget and images. */
function exploreKey(options: { explorer: ExplorerName; vlm: string | null; answerer: Record<string, unknown> | null; activeAgent?: { configuration: Record<string, unknown> }; episodeTimeMs?: number; maxSteps?: number; image?: ImageOptions }): { configuration: Record<string, unknown>; keyOf: (e: ActiveEpisode) => string } {
  const configuration = {
    explorer: options.explorer,
    ...(options.activeAgent ? { agent: options.activeAgent.configuration, episodeTimeMs: options.episodeTimeMs ?? null } : {}),
    vlm: options.vlm,
    answerer: options.answerer,
    maxSteps: options.maxSteps ?? null,
    image: options.image ?? {},
    ...(options.explorer === "fine-eqa" ? { prompts: fineEqaPromptHashes() } : {}),
    ...(options.explorer === "fine-eqa:reference" ? { prompts: fineEqaReferencePromptHashes() } : {}),
  };
  const configKey = canonicalJson(configuration);
  return { configuration, keyOf: (e) => sha256Hex(`${configKey}\u0000${canonicalJson(e)}`) };
}

/** What `eqa explore --dry-run` plans from. */
export interface ExplorePlanOptions {
  episodes: ActiveEpisode[];
  explorer: ExplorerName;
  outDir: string;
  /** Fine-EQA's VLM. */
  vlm?: ModelSpec;
  /** frontier: the EM-EQA agent answering from the collected frames (built on the plan's runtime); `fresh` builds another like it, so that each episode is planned with an agent that has described no frame yet. */
  answerer?: { agent: Agent; models: ModelSpec[]; fresh?: () => Agent };
  /** The judge of `--judge`: an LLM-Match and an EAC call per episode. */
  judge?: ModelSpec;
  /** false: the judge makes no EAC call (`--no-eac`). */
  eac?: boolean;
  /** external: the active agent (its configuration is part of each episode's key). */
  activeAgent?: { configuration: Record<string, unknown> };
  episodeTimeMs?: number;
  maxSteps?: number;
  image?: ImageOptions;
  /** The observations' size in pixels (the VLM is shown them, prepared as `image` says). */
  observation: { width: number; height: number };
  /** A scene's bounds when they can be had without starting anything (the built-in simulator): Fine-EQA's budget comes from them. */
  sceneBounds?: (scene: string) => Promise<SceneBounds | undefined>;
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
export async function planExploration(options: ExplorePlanOptions, plan: CallPlan): Promise<ExplorePlan> {
  const { keyOf } = exploreKey({ ...options, vlm: options.vlm?.name ?? null, answerer: options.answerer?.agent.configuration ?? null });
  const episodes = selectShard(options.episodes, (e) => e.questionId, options.shard);
  const { reusable: earlier, pending } = resumeItems(options.outDir, exploreResumeRule(episodes, keyOf));
  let steps: number | null = 0;
  if (isFineEqa(options.explorer) && options.vlm) {
    const sharp = await loadSharp();
    const blank = await sharp({ create: { width: options.observation.width, height: options.observation.height, channels: 3, background: "#808080" } }).png().toBuffer();
    const image = await prepareImage(blank, options.image);
    for (const e of pending) {
      const bounds = options.maxSteps === undefined ? await options.sceneBounds?.(e.scene) : undefined;
      const budget = options.maxSteps ?? (bounds ? fineEqaBudget(bounds) : undefined);
      if (budget === undefined) steps = null;
      else if (steps !== null) steps += budget;
      await plan.repeat(options.vlm, "explorer", fineEqaRequests.regions(e.question), 1);
      await plan.repeat(options.vlm, STOP_CHECK_ROLE, fineEqaRequests.stopCheck(e.question, image), budget ?? 1);
      await plan.repeat(options.vlm, "explorer", fineEqaRequests.viewRegion(image), Math.max(0, (budget ?? 1) - 1));
      if (options.explorer === "fine-eqa:reference") {
        // each step at most: the lettered direction, the worth of the view, the region's point (3 candidates)
        const steps = Math.max(0, (budget ?? 1) - 1);
        await plan.repeat(options.vlm, "explorer", fineEqaReferenceRequests.direction(e.question, image, 3), steps);
        await plan.repeat(options.vlm, "explorer", fineEqaReferenceRequests.worth(e.question, image), steps);
        await plan.repeat(options.vlm, "explorer", fineEqaReferenceRequests.regionPoint("kitchen", image, 3), steps);
      }
      // the answer from a view, or the blind answer when the budget runs out: one of the two
      await plan.repeat(options.vlm, "explorer", fineEqaRequests.answer(e.question, image), 1);
    }
  }
  const answerer = options.answerer;
  if (options.explorer === "frontier" && answerer && pending.length > 0) {
    if (STAND_IN_ANSWERERS.has(answerer.agent.name)) {
      // the frames are not known before exploring: the agent answers from a stand-in recording of blank frames of the run's size, as long as the step budget allows
      const recording = await blankRecording(options.observation, (options.maxSteps ?? FRONTIER_MAX_STEPS) + 1);
      for (const e of pending) {
        await (answerer.fresh?.() ?? answerer.agent).answer({ questionId: e.questionId, question: askedQuestion(e), answer: e.answer ?? "", category: e.category ?? "", episodeHistory: recording.id } as Parameters<Agent["answer"]>[0], recording);
      }
    } else {
      plan.addEstimate({ role: "agent", model: answerer.models[0]?.name ?? answerer.agent.name, calls: pending.length, cached: 0, promptTokens: null, completionTokens: null, dollars: null, upperBound: false });
    }
  }
  if (options.judge && episodes.length > 0) {
    plan.addEstimate({ role: "judge", model: options.judge.name, calls: (options.eac === false ? 1 : 2) * episodes.length, cached: 0, promptTokens: null, completionTokens: null, dollars: null, upperBound: true });
  }
  return { episodes: episodes.length, reused: earlier.size, pending: pending.length, steps };
}

/** The frontier explorer's step budget when --max-steps is not given. */
export const FRONTIER_MAX_STEPS = 500;
/** Answering agents whose requests depend only on the frames' images (not on depth, poses or masks): `eqa explore --dry-run` plans them on a stand-in recording. */
export const STAND_IN_ANSWERERS: ReadonlySet<string> = new Set(["blind", "vlm", "socratic"]);

/**
 * An episode of `frames` plain frames of the observation's size, each of its own colour (an agent
 * that describes each image once, as the socratic agent does, is asked about every frame); only
 * the frames an agent samples are made, each once.
 */
async function blankRecording(observation: { width: number; height: number }, frames: number): Promise<Episode> {
  const sharp = await loadSharp();
  const prepared = new Map<string, Promise<PreparedImage>>();
  const frame = (index: number, image: ImageOptions | undefined): Promise<PreparedImage> => {
    const key = `${index}\u0000${canonicalJson(image ?? {})}`;
    if (!prepared.has(key)) {
      const colour = { r: index & 255, g: (index >> 8) & 255, b: 128 };
      prepared.set(key, sharp({ create: { width: observation.width, height: observation.height, channels: 3, background: colour } }).png().toBuffer().then((png) => prepareImage(png, image)));
    }
    return prepared.get(key)!;
  };
  return {
    id: "stand-in-recording",
    path: "stand-in-recording",
    kind: "images",
    frameCount: frames,
    notes: [],
    images: (indices, image) => Promise.all(indices.map(async (index) => ({ ...(await frame(index, image)), index }))),
    frame: () => Promise.reject(new Error("a stand-in recording has no geometry")),
  };
}

/** Runs every episode (see the module comment); returns the summary and the records in input order. */
export async function runExploration(options: ExploreRunOptions): Promise<{ summary: ExploreSummary; records: ExploreRecord[]; runDir: string }> {
  const started = performance.now();
  // the folder's manifest: kind explore, the explorer's configuration and the command's settings (not the judge of --judge: judging a run is a stage of it)
  const explored = exploreKey({ ...options, vlm: options.vlm?.model.name ?? null, answerer: options.answerer?.agent.configuration ?? null });
  const episodesFile = options.settings?.episodes;
  const run = await openRun({
    dir: options.outDir,
    kind: "explore",
    settings: resultSettings({ ...explored.configuration, ...options.settings }),
    inputs: typeof episodesFile === "string" ? [{ name: "episodes", path: episodesFile, copy: true }] : [],
    items: { noun: "episode", input: "episodes", flag: "--episodes", ...(typeof episodesFile === "string" ? { file: episodesFile } : {}), list: options.episodes.map((e) => ({ id: e.questionId, content: e })) },
  });
  options.usage?.attach(run.path);
  const { configuration, keyOf } = exploreKey({ ...options, vlm: options.vlm?.model.name ?? null, answerer: options.answerer?.agent.configuration ?? null });
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
  const base = (e: ActiveEpisode): ExploreRecord => ({
    questionId: e.questionId,
    inputKey: keyOf(e),
    scene: e.scene,
    explorer: options.explorer,
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
    await runModelBatch<ActiveEpisode, ExploreRecord>({
      items: pending,
      concurrency: options.explorer === "external" ? (options.concurrency ?? 1) : 1,
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
          const outcome = await exploreEpisode(options, e, env, framesDir);
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
    await writeShardManifest(run, { kind: "explore", ...options.shard, items: options.episodes.map((e) => e.questionId), keys: Object.fromEntries(wanted), context });
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
  const set = await readShardSet(dirs, "explore");
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
    kind: "explore",
    eqakitVersion,
    createdAt: new Date().toISOString(),
    wallTimeMs: Math.round(inputs.wallTimeMs),
    config: inputs.config,
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
function exploreResumeRule(episodes: readonly ActiveEpisode[], keyOf: (episode: ActiveEpisode) => string): ResumeRule<ActiveEpisode, ExploreRecord> {
  return { file: EXPLORE_RECORDS_FILE, schema: exploreRecordSchema, items: episodes, id: (e) => e.questionId, inputKey: keyOf, succeeded: (r) => r.error === null };
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
