/**
 * A Mixed EQA run, as `eqa explore --episodes SET/episodes.json --agent NAME` does it: read the
 * set (`loadMixedSet`), each home's present world and the history its agent is handed, run every
 * episode (`runMixedEpisodes`: mixed.jsonl, trajectories/, frames/), then score exactly and write
 * `predictions.json` (OpenEQA's format, the canonical answers) and `summary.json` (kind `mixed`:
 * accuracy, SPL, wasted metres, history frames per category with intervals, and the cost from
 * the run's ledger of model calls). `mergeMixedRuns` joins the run's `--shard` folders.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { eqakitVersion, resolveInside, type Question, type Shard } from "../../core/index.js";
import { loadMixedSet, type MixedEpisode, type MixedHome, type MixedSet } from "../../data/index.js";
import { episodeFileName, MIXED_RECORDS_FILE, planModelAnswer, plannedMixedEpisodes, runMixedEpisodes, type MixedAgentName, type OwnMixedAgent, type MixedHistory, type MixedJudge, type MixedModel, type MixedRecord, type MixedRunHome, type RecallDay } from "../../agents/index.js";
import { ledgerCost, mergeCallLedgers, readCallLedger, withCallContext, type CallEntry, type ChatModel, type RunCost, type UsageLedger } from "../../models/index.js";
import { judgeLlmMatch, prepareLlmMatchTask, type LlmMatchMode } from "../openeqa/index.js";
import { readHomeFile } from "../../sim/index.js";
import { linkFile, linkTree, mergedRecords, mergeOutput, readShardSet, shardSetting, shardWallTime, sumShardCounts, writeMergeNote, writeRecords, writeShardManifest, type RunDirectory, RUN_KIND } from "../../store/index.js";
import { mixedMetrics, scoreMixedQuestion, type MixedMetrics, type MixedQuestionScore } from "./metrics.js";

/** How an agent perceives its history (generate's `loadMixedHistory` and `recallMixedDay`): given by the caller. */
export interface MixedPerception {
  history: (home: MixedHome, setDir: string, file: string) => Promise<MixedHistory>;
  recall: RecallDay;
}

export interface MixedWorkflowOptions {
  /** The set's `episodes.json`. */
  setFile: string;
  /** A built-in agent, or one of the user's own (the protocol's `mixed` kind). */
  agent: MixedAgentName | OwnMixedAgent;
  outDir: string;
  maxSteps?: number;
  observation: { width: number; height: number };
  shard?: Shard;
  settings?: Record<string, unknown>;
  onProgress?: (done: number, total: number, failed: number) => void;
  /** The model-driven form (`--model`): the agents answer in words from the frames they retrieved and saw. */
  model?: MixedModel;
  /** LLM-Match's judge (`--judge`) against the answer and its alternatives: of a model-driven agent's answers, and of the user's agent's that are not the canonical value. */
  judge?: { chat: ChatModel; mode: LlmMatchMode };
  /** The runtime's ledger of model calls. */
  usage?: UsageLedger;
}

/** LLM-Match of a model-driven agent's answer, against the episode's answer with its alternatives as OpenEQA's extra answers. */
function llmMatchJudge(judge: { chat: ChatModel; mode: LlmMatchMode }): MixedJudge {
  return {
    configuration: { judge: judge.chat.name, mode: judge.mode },
    judge: async (episode, answer) => {
      const extra = episode.alternatives.filter((a) => a !== episode.answer);
      const question = { questionId: episode.question_id, question: episode.question, answer: episode.answer, category: String(episode.category), episodeHistory: episode.scene, ...(extra.length > 0 ? { extraAnswers: extra } : {}) } as Question;
      const judged = await judgeLlmMatch(prepareLlmMatchTask(question, answer, judge.mode, judge.chat.name), judge.chat, judge.mode);
      return { score: judged.score, replies: judged.replies, error: judged.error };
    },
  };
}

export interface MixedSummary {
  kind: typeof RUN_KIND.mixed;
  eqakitVersion: string;
  createdAt: string;
  wallTimeMs: number;
  config: Record<string, unknown>;
  counts: { episodes: number; finished: number; failed: number; reused: number; answered: number; correct: number };
  metrics: MixedMetrics;
  questions: MixedQuestionScore[];
  failures: { questionId: string; error: string }[];
  cost: RunCost;
}

/** Each home of the set with its present world and history. */
async function readHomes(set: MixedSet, setFile: string, perception: MixedPerception): Promise<Map<string, MixedRunHome>> {
  const setDir = dirname(setFile);
  const homes = new Map<string, MixedRunHome>();
  for (const [index, home] of set.homes.entries()) {
    const present = await readHomeFile(resolveInside(setDir, home.present, { file: setFile, index, id: home.scene, field: "present" }));
    homes.set(home.scene, { home, present, history: await perception.history(home, setDir, setFile) });
  }
  return homes;
}

/** Runs the set with a built-in agent, scores it, writes predictions.json and summary.json. */
export async function exploreMixedSet(options: MixedWorkflowOptions, perception: MixedPerception): Promise<{ summary: MixedSummary; records: MixedRecord[]; runDir: string }> {
  const started = performance.now();
  const set = await loadMixedSet(options.setFile);
  const homes = await readHomes(set, options.setFile, perception);
  const settings = { episodes: options.setFile, ...options.settings };
  const ran = await runMixedEpisodes({ set, setFile: options.setFile, agent: options.agent, homes, recall: perception.recall, outDir: options.outDir, ...(options.model ? { model: options.model } : {}), ...(options.judge ? { judge: llmMatchJudge(options.judge) } : {}), ...(options.usage ? { usage: options.usage } : {}), ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}), observation: options.observation, settings, ...(options.shard ? { shard: options.shard } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  const config = { ...ran.configuration, ...settings, ...shardSetting(options.shard) };
  const summary = mixedSummary(ran.records, ran.episodes, { config, reused: ran.reused, wallTimeMs: performance.now() - started, calls: readCallLedger(ran.run.path) });
  await writeMixedPredictions(ran.run, ran.records);
  if (options.shard) {
    await writeShardManifest(ran.run, { kind: RUN_KIND.mixed, ...options.shard, items: set.episodes.map((e) => e.question_id), keys: Object.fromEntries(ran.records.map((r) => [r.questionId, r.inputKey])), context: {} });
  }
  await ran.run.writeJson("summary.json", summary);
  return { summary, records: ran.records, runDir: ran.run.path };
}

/**
 * What `exploreMixedSet` would do with these options (`--dry-run`), its calls recorded by the
 * planning models given as `options.model.chat` and `options.judge.chat`: the episodes whose
 * records stand already in `outDir`, and for each other one the model-driven agent's one request
 * at its most (`planModelAnswer`) and the judge's LLM-Match request on a stand-in answer. The
 * built-in program agents call no model. Reads the set and the folder, writes nothing.
 */
export async function planMixedSet(options: Omit<MixedWorkflowOptions, "onProgress" | "usage" | "settings">, perception: Pick<MixedPerception, "history">): Promise<{ episodes: number; reused: number; pending: number }> {
  const set = await loadMixedSet(options.setFile);
  const judge = options.judge ? llmMatchJudge(options.judge) : undefined;
  const planned = plannedMixedEpisodes({ set, agent: options.agent, outDir: options.outDir, observation: options.observation, ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}), ...(options.model ? { model: options.model } : {}), ...(judge ? { judge } : {}), ...(options.shard ? { shard: options.shard } : {}) });
  const histories = new Map<string, MixedHistory>();
  for (const e of planned.pending) {
    await withCallContext({ item: e.question_id }, async () => {
      if (options.model) {
        const home = set.homes.find((h) => h.scene === e.scene);
        if (!home) return;
        if (!histories.has(e.scene)) histories.set(e.scene, await perception.history(home, dirname(options.setFile), options.setFile));
        await planModelAnswer(options.model, e.question, histories.get(e.scene)!, options.observation);
      }
      await judge?.judge(e, "The answer an agent gives.");
    });
  }
  return { episodes: planned.episodes.length, reused: planned.reused, pending: planned.pending.length };
}

async function writeMixedPredictions(run: RunDirectory, records: readonly MixedRecord[]): Promise<void> {
  await run.writeJson("predictions.json", records.filter((r) => r.error === null).map((r) => ({ question_id: r.questionId, answer: r.answer, agent: r.agent, path_length_m: r.pathLengthM, path_length_steps: r.pathLengthSteps })));
}

/** A run's summary from its records (those of one run, or of merged shards) and the set's episodes. */
export function mixedSummary(records: readonly MixedRecord[], episodes: readonly MixedEpisode[], inputs: { config: Record<string, unknown>; reused: number; wallTimeMs: number; calls: readonly CallEntry[] }): MixedSummary {
  const byId = new Map(episodes.map((e) => [e.question_id, e]));
  const scores = records.flatMap((r) => {
    const episode = byId.get(r.questionId);
    return episode ? [scoreMixedQuestion(r, episode)] : [];
  });
  const done = records.filter((r) => r.error === null);
  return {
    kind: RUN_KIND.mixed,
    eqakitVersion,
    createdAt: new Date().toISOString(),
    wallTimeMs: Math.round(inputs.wallTimeMs),
    config: inputs.config,
    counts: { episodes: records.length, finished: done.length, failed: records.length - done.length, reused: inputs.reused, answered: done.filter((r) => r.answer !== null).length, correct: scores.filter((s) => s.correct).length },
    metrics: mixedMetrics(scores),
    questions: scores,
    failures: records.filter((r) => r.error !== null).map((r) => ({ questionId: r.questionId, error: r.error ?? "" })),
    cost: ledgerCost(inputs.calls),
  };
}

function asRecord(value: unknown): MixedRecord | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Partial<MixedRecord>;
  return typeof r.questionId === "string" && typeof r.inputKey === "string" ? { ...(r as MixedRecord), error: r.error ?? null } : undefined;
}

/**
 * `eqa merge` of the `--shard` folders of a mixed run: mixed.jsonl with every shard's standing
 * records in the set's order, each episode's trajectory and frames (hard-linked when on one file
 * system, else copied), predictions.json and summary.json as one unsharded run writes them.
 */
export async function mergeMixedRuns(dirs: readonly string[], outDir: string): Promise<{ summary: MixedSummary; records: MixedRecord[]; runDir: string }> {
  const shardSet = await readShardSet(dirs, RUN_KIND.mixed);
  const records = mergedRecords(shardSet, MIXED_RECORDS_FILE, asRecord);
  const setFile = typeof shardSet.config.episodes === "string" ? shardSet.config.episodes : "";
  const set = await loadMixedSet(setFile);
  const run = mergeOutput(outDir, shardSet);
  const from = new Map(shardSet.shards.flatMap((s) => Object.keys(s.manifest.keys).map((id) => [id, s.dir] as const)));
  for (const r of records) {
    const name = episodeFileName(r.questionId);
    const dir = from.get(r.questionId)!;
    for (const file of [join("trajectories", `${name}.json`), join("trajectories", `${name}.png`)]) if (existsSync(join(dir, file))) await linkFile(join(dir, file), run.file(file));
    if (existsSync(join(dir, "frames", name))) await linkTree(join(dir, "frames", name), run.file(join("frames", name)));
  }
  await writeRecords(run, MIXED_RECORDS_FILE, records);
  await writeMixedPredictions(run, records);
  const summary = mixedSummary(records, set.episodes, { config: shardSet.config, reused: sumShardCounts(shardSet, "reused"), wallTimeMs: shardWallTime(shardSet), calls: await mergeCallLedgers(dirs, run.path) });
  await writeMergeNote(run, shardSet);
  await run.writeJson("summary.json", summary);
  return { summary, records, runDir: run.path };
}
