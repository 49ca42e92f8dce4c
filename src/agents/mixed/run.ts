/**
 * Running a Mixed EQA set (`eqa explore --episodes SET/episodes.json --agent recall-explore`):
 * each episode in the built-in simulator on its home's present world (`present.json`), started at
 * the episode's start, its agent handed its home's history. A run of kind `mixed`:
 * - `mixed.jsonl`: one record per finished episode (the agent's answer in canonical form, its
 *   stop, metres and actions walked, frames seen now, history frames retrieved), appended at once;
 *   a resumed run skips the episodes finished with the same inputs
 * - `trajectories/<id>.json` (`eqakit-explore-trajectory/1`, with the history's days) and `.png`
 * - `frames/<id>/`: what the agent saw now
 * The scores (`summary.json`, `predictions.json`) are written by the workflow that runs this
 * (eval's `exploreMixedSet`). An episode fails alone, its error recorded.
 */
import { join } from "node:path";
import { rm } from "node:fs/promises";
import { z } from "zod";
import { OutputError, UserError, canonicalJson, isUserError, outputFailure, selectShard, sha256Hex, writeFileAtomically, type Shard } from "../../core/index.js";
import { canonicalMixedValue, type MixedEpisode, type MixedHome, type MixedSet } from "../../data/index.js";
import { HouseholdEnvironment, type Home } from "../../sim/index.js";
import { openRun, resultSettings, resumeItems, type ResumeRule, type RunDirectory, RUN_KIND } from "../../store/index.js";
import { EXPLORE_TRAJECTORY_FORMAT } from "../explore/run.js";
import { episodeFileName } from "../explore/explorers.js";
import { OccupancyMap } from "../explore/occupancy.js";
import { writeTrajectoryImage } from "../explore/trajectory-image.js";
import { answerMixedQuestion, type MixedOutcome } from "./agents.js";
import type { MixedAgentName, MixedHistory, RecallDay, RecalledDay } from "./types.js";
import { mixedModelConfiguration, type MixedModel } from "./model-answer.js";
import { describeExternalAgent } from "../external/index.js";
import { answerWithOwnAgent, type OwnMixedAgent } from "./own-agent.js";
import { ModelCallError, withCallContext, usageTotalsSchema, type UsageLedger, type UsageTotals } from "../../models/index.js";

export const MIXED_RECORDS_FILE = "mixed.jsonl";
/** The agents' step budget in the live environment when --max-steps is not given. */
export const MIXED_MAX_STEPS = 500;

/** One line of a mixed run's mixed.jsonl, as `runMixedEpisodes` writes it. */
export const mixedRecordSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  scene: z.string(),
  agent: z.string(),
  category: z.string(),
  historyAnswers: z.boolean(),
  answer: z.string().nullable(),
  stop: z.string().nullable(),
  pathLengthM: z.number().nullable(),
  pathLengthSteps: z.number().nullable(),
  frames: z.number(),
  historyFrames: z.array(z.object({ day: z.number(), frame: z.number() })),
  gtPathLengthM: z.number(),
  details: z.record(z.string(), z.unknown()),
  llmMatch: z.number().nullable().optional(),
  judgeReplies: z.array(z.string().nullable()).optional(),
  usage: usageTotalsSchema.nullable().optional(),
  error: z.string().nullable(),
  finishedAt: z.string(),
}) satisfies z.ZodType<MixedRecord>;

export interface MixedRecord {
  questionId: string;
  inputKey: string;
  scene: string;
  agent: string;
  category: string;
  historyAnswers: boolean;
  /** The agent's answer in canonical form (null: it could not answer). */
  answer: string | null;
  stop: string | null;
  pathLengthM: number | null;
  pathLengthSteps: number | null;
  /** Frames seen now. */
  frames: number;
  /** History frames the agent retrieved. */
  historyFrames: { day: number; frame: number }[];
  gtPathLengthM: number;
  details: Record<string, unknown>;
  /** The model-driven form: LLM-Match's mark σ (1-5; 0 for no answer) of the answer, null when judging failed. */
  llmMatch?: number | null;
  judgeReplies?: (string | null)[];
  usage?: UsageTotals | null;
  error: string | null;
  finishedAt: string;
}

/** Judges a model-driven agent's answer against the episode's answer and alternatives (LLM-Match: eval's, given by the caller). */
export type MixedJudge = {
  configuration: Record<string, unknown>;
  judge: (episode: MixedEpisode, answer: string | null) => Promise<{ score: number | null; replies: (string | null)[]; error: string | null }>;
};

/** A home of the set, ready to run: its present world and the history its agent is handed. */
export interface MixedRunHome {
  home: MixedHome;
  present: Home;
  history: MixedHistory;
}

export interface MixedRunOptions {
  set: MixedSet;
  /** The set's `episodes.json` (recorded and copied into the run). */
  setFile: string;
  /** A built-in agent, or one of the user's own (the protocol's `mixed` kind). */
  agent: MixedAgentName | OwnMixedAgent;
  /** Each home by scene. */
  homes: ReadonlyMap<string, MixedRunHome>;
  /** What an agent remembers of a day (generate's `recallMixedDay`); built once per day. */
  recall: RecallDay;
  outDir: string;
  maxSteps?: number;
  observation: { width: number; height: number };
  settings?: Record<string, unknown>;
  shard?: Shard;
  onProgress?: (done: number, total: number, failed: number) => void;
  /** The model-driven form: the user's VLM answers (`--model`). */
  model?: MixedModel;
  /** The judge of answers in words (`--judge`): a model-driven agent's, and those of an agent of the user's own that are not the canonical value. */
  judge?: MixedJudge;
  /** The runtime's ledger: every model call is recorded in the run's `calls.jsonl`. */
  usage?: UsageLedger;
}

function keyOf(options: Pick<MixedRunOptions, "agent" | "maxSteps" | "observation" | "model" | "judge">): { configuration: Record<string, unknown>; keyOf: (e: MixedEpisode) => string } {
  const agent = typeof options.agent === "string" ? options.agent : { ...options.agent.own.configuration, timeMs: options.agent.timeMs ?? null };
  const configuration = { agent, maxSteps: options.maxSteps ?? MIXED_MAX_STEPS, observation: options.observation, ...(options.model ? { model: mixedModelConfiguration(options.model) } : {}), ...(options.judge ? { judge: options.judge.configuration } : {}) };
  const config = canonicalJson(configuration);
  return { configuration, keyOf: (e) => sha256Hex(`${config}\u0000${canonicalJson(e)}`) };
}

/** How a mixed run resumes: an episode's record stands when it finished without error, for the same episode and settings. */
function recordResumeRule(episodes: readonly MixedEpisode[], key: (e: MixedEpisode) => string): ResumeRule<MixedEpisode, MixedRecord> {
  return { file: MIXED_RECORDS_FILE, schema: mixedRecordSchema, items: episodes, id: (e) => e.question_id, inputKey: key, succeeded: (r) => r.error === null };
}

/**
 * What `runMixedEpisodes` would run in `outDir` with these options (`--dry-run`): the episodes of
 * the shard, those whose records stand already, and the rest. Reads the folder, writes nothing.
 */
export function plannedMixedEpisodes(options: Pick<MixedRunOptions, "set" | "agent" | "maxSteps" | "observation" | "model" | "judge" | "outDir" | "shard">): { episodes: MixedEpisode[]; reused: number; pending: MixedEpisode[] } {
  const { keyOf: key } = keyOf(options);
  const episodes = selectShard(options.set.episodes, (e) => e.question_id, options.shard);
  const { reusable, pending } = resumeItems(options.outDir, recordResumeRule(episodes, key));
  return { episodes, reused: reusable.size, pending };
}

/** Opens the run folder (kind `mixed`) and runs every episode it does not hold; the records in the set's order. */
export async function runMixedEpisodes(options: MixedRunOptions): Promise<{ run: RunDirectory; records: MixedRecord[]; episodes: MixedEpisode[]; reused: number; configuration: Record<string, unknown> }> {
  const { configuration, keyOf: key } = keyOf(options);
  const run = await openRun({
    dir: options.outDir,
    kind: RUN_KIND.mixed,
    settings: resultSettings({ ...configuration, ...options.settings }),
    inputs: [{ name: "episodes", path: options.setFile, copy: true }],
    items: { noun: "episode", input: "episodes", flag: "--episodes", file: options.setFile, list: options.set.episodes.map((e) => ({ id: e.question_id, content: e })) },
  });
  options.usage?.attach(run.path);
  const episodes = selectShard(options.set.episodes, (e) => e.question_id, options.shard);
  const { reusable: earlier, pending } = resumeItems(run, recordResumeRule(episodes, key));
  const records = new Map(earlier);
  let failed = 0;
  options.onProgress?.(records.size, episodes.length, failed);
  const remembered = new Map<string, Promise<RecalledDay>>();
  const appender = run.appender(MIXED_RECORDS_FILE);
  try {
    for (const scene of [...new Set(pending.map((e) => e.scene))]) {
      const home = options.homes.get(scene);
      const env = home ? new HouseholdEnvironment(home.present, { ...options.observation, masks: true }) : undefined;
      for (const e of pending.filter((p) => p.scene === scene)) {
        const record = await withCallContext({ item: e.question_id }, () => runOne(options, run, e, key(e), home, env, remembered));
        appender.append(record);
        records.set(e.question_id, record);
        if (record.error !== null) failed++;
        options.onProgress?.(records.size, episodes.length, failed);
      }
    }
  } finally {
    appender.close();
  }
  return { run, records: episodes.map((e) => records.get(e.question_id)!), episodes, reused: earlier.size, configuration };
}

async function runOne(options: MixedRunOptions, run: RunDirectory, e: MixedEpisode, inputKey: string, home: MixedRunHome | undefined, env: HouseholdEnvironment | undefined, remembered: Map<string, Promise<RecalledDay>>): Promise<MixedRecord> {
  const agentName = typeof options.agent === "string" ? options.agent : describeExternalAgent(options.agent.own.spec);
  const base: MixedRecord = { questionId: e.question_id, inputKey, scene: e.scene, agent: agentName, category: e.category, historyAnswers: e.history_answers, answer: null, stop: null, pathLengthM: null, pathLengthSteps: null, frames: 0, historyFrames: [], gtPathLengthM: e.gt_path_length, details: {}, error: null, finishedAt: new Date().toISOString() };
  const name = episodeFileName(e.question_id);
  const framesDir = run.file(join("frames", name));
  try {
    if (!home || !env) throw new UserError(`no home ${e.scene} in the set`, { id: e.question_id, field: "scene" });
    const start = { position: e.start.position, yaw: e.start.yaw, pitch: e.start.pitch ?? 0 };
    if (!(await env.isNavigable(start.position))) throw new UserError(`the start position (${start.position.join(", ")}) is not navigable in the present home of ${e.scene}`, { id: e.question_id, field: "start" });
    await env.reset(start);
    await rm(framesDir, { recursive: true, force: true }).catch((error: unknown) => {
      throw outputFailure(framesDir, error);
    });
    const recall = (day: number): Promise<RecalledDay> => {
      const k = `${e.scene}\u0000${day}`;
      const lived = home.history.days.find((d) => d.day === day);
      if (!lived) return Promise.reject(new UserError(`the history of ${e.scene} has no day ${day}`, { id: e.question_id, field: "program" }));
      if (!remembered.has(k)) remembered.set(k, options.recall(home.history, lived));
      return remembered.get(k)!;
    };
    const maxSteps = options.maxSteps ?? MIXED_MAX_STEPS;
    const outcome =
      typeof options.agent === "string"
        ? await answerMixedQuestion(options.agent, { questionId: e.question_id, question: e.question, program: e.program }, { env, start, history: home.history, recall, framesDir, maxSteps, ...(options.model ? { model: options.model } : {}) })
        : await answerWithOwnAgent(options.agent, { questionId: e.question_id, question: e.question, category: e.category, scene: e.scene }, { env, start, history: home.history, framesDir, maxSteps });
    await writeMixedTrajectory(run, name, e, outcome, home, env);
    // an answer of the user's own agent that is the canonical value is scored exactly; the judge reads any other
    const exact = typeof options.agent !== "string" && outcome.answer !== null && canonicalMixedValue(outcome.answer) === canonicalMixedValue(e.answer_value);
    const judged = options.judge && !exact ? await options.judge.judge(e, outcome.answer) : undefined;
    return {
      ...base,
      answer: outcome.answer,
      stop: outcome.stop,
      pathLengthM: outcome.pathLengthM,
      pathLengthSteps: outcome.pathLengthSteps,
      frames: outcome.frames,
      historyFrames: outcome.historyFrames,
      details: outcome.details,
      ...(outcome.usage ? { usage: outcome.usage } : {}),
      ...(judged ? { llmMatch: judged.score, judgeReplies: judged.replies, ...(judged.error !== null ? { error: `judge: ${judged.error}` } : {}) } : {}),
      finishedAt: new Date().toISOString(),
    };
  } catch (error) {
    // an unusable model or an unwritable file stops the run: they are not this episode's failure
    if (error instanceof OutputError || error instanceof ModelCallError) throw error;
    if (isUserError(error)) return { ...base, error: error.message };
    throw error;
  }
}

async function writeMixedTrajectory(run: RunDirectory, name: string, e: MixedEpisode, o: MixedOutcome, home: MixedRunHome, env: HouseholdEnvironment): Promise<void> {
  const trajectory = {
    format: EXPLORE_TRAJECTORY_FORMAT,
    questionId: e.question_id,
    scene: e.scene,
    pathLengthM: o.pathLengthM,
    pathLengthSteps: o.pathLengthSteps,
    frames: o.frames,
    history: home.history.days.map((d) => ({ day: d.day, when: d.when, actions: d.actions.length })),
    historyFrames: o.historyFrames,
    steps: o.steps.map((s, step) => ({ step, action: s.action, success: s.success, position: s.state.position, yaw: s.state.yaw, pitch: s.state.pitch })),
  };
  await writeFileAtomically(run.file(join("trajectories", `${name}.json`)), `${JSON.stringify(trajectory)}\n`);
  await writeTrajectoryImage(run.file(join("trajectories", `${name}.png`)), {
    map: o.map ?? new OccupancyMap(await env.bounds()),
    path: o.steps.map((s) => [s.state.position[0], s.state.position[2]] as [number, number]),
    home: home.present,
  });
}
