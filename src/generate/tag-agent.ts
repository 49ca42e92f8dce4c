/**
 * An agent of the user's own (the agent protocol, task `tag`) answering TAG-EQA questions from
 * simulator recordings: each question goes to its `answer` with the recording's frames (world
 * poses and intrinsics, as for any EM-EQA question) and `tag` (`tagAnswerContext`: the grounding
 * frame's transform, each frame's pose in it, the agent's action history). Its replies are
 * predictions for `eqa score-tag`: a structured answer given as a JSON string is scored as it
 * is, text is read by the judge's extraction.
 *
 * A trajectory whose frames cannot be read, and a question whose answer failed (a crash, a
 * timeout, a malformed reply), fail alone: answer null, the error kept.
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { dirname, join, resolve } from "node:path";
import { canonicalJson, describeError, eqakitVersion, forEachConcurrent, sha256Hex, UserError, type OpenEqaCategory, type Question } from "../core/index.js";
import { loadTrajectoryLog, type TagQueryType, type TagQuestion, type TrajectoryLog } from "../data/index.js";
import { openEpisode, type Episode } from "../episodes/index.js";
import { traceOfFailure, type AgentAnswer, type AgentTrace } from "../agents/index.js";
import { tagAnswerContext, type TagAnswerContext } from "./history.js";
import { RUN_KIND, RunDirectory, openRun, readJsonl, resultSettings } from "../store/index.js";
import { ledgerCost, readCallLedger, withCallContext, type RunCost, type UsageLedger } from "../models/index.js";
import { RECORDING_FILE } from "./sources.js";
import { tagQuestionItems } from "../eval/index.js";

/** A trajectory's recording: its frame folder and its log (for the grounding frame and the action history). */
export interface TagAgentEpisode {
  frames: string;
  log: TrajectoryLog;
}

export interface TagAgentPrediction {
  question_id: string;
  answer: string | null;
  error?: string;
  /** The agent's confidence in its answer, when it gave one. */
  confidence?: number;
  /** What the agent did: its model calls (failed ones included), log lines, stderr and notes; null when it was never asked (no recording). */
  trace?: AgentTrace | null;
}

/** OpenEQA's category nearest to each TAG-EQA query, for agents that read OpenEQA questions. */
export const CATEGORY_OF_QUERY: Record<TagQueryType, OpenEqaCategory> = {
  listObjects: "object recognition",
  countObjects: "spatial understanding",
  countTimes: "spatial understanding",
  getState: "object state recognition",
  getProperty: "attribute recognition",
  getLocation: "object localization",
};

export interface AnswerTagOptions {
  /** Questions in flight at once (each on its own agent process of the pool; default 1). */
  concurrency?: number;
  /** Called as each question is answered or fails, with how many are done: where a run appends its records. */
  onAnswer?: (prediction: TagAgentPrediction, done: number, total: number) => void;
  /** The set's questions file, recorded (and copied when small) in a run folder's manifest. */
  questionsPath?: string;
}

/**
 * What answers a TAG-EQA question: an agent of the user's own (`ExternalAgent`, task `tag`) or a
 * built-in baseline (`tagBaselineAgent`). Its configuration decides which earlier answers a
 * rerun reuses.
 */
export interface TagAnswerAgent {
  readonly configuration: Record<string, unknown>;
  answer(question: Question, episode: Episode, extra: { tag: TagAnswerContext }): Promise<AgentAnswer>;
}

/** Asks the agent every question, `concurrency` at a time; the predictions come back in the questions' order. */
export async function answerTagQuestions(
  questions: readonly TagQuestion[],
  episodes: ReadonlyMap<string, TagAgentEpisode>,
  agent: TagAnswerAgent,
  options: AnswerTagOptions = {},
): Promise<TagAgentPrediction[]> {
  // each trajectory's recording is opened once, by the first of its questions to start
  const contexts = new Map<string, Promise<{ episode: Episode; tag: TagAnswerContext }>>();
  const contextOf = (trajectory: string): Promise<{ episode: Episode; tag: TagAnswerContext }> => {
    let context = contexts.get(trajectory);
    if (!context) {
      const source = episodes.get(trajectory);
      context = source
        ? openEpisode(source.frames, trajectory).then(async (episode) => ({ episode, tag: await tagAnswerContext(source.log, episode) }))
        : Promise.reject(new Error(`no recording of trajectory ${trajectory}`));
      context.catch(() => undefined);
      contexts.set(trajectory, context);
    }
    return context;
  };
  const predictions: TagAgentPrediction[] = new Array(questions.length);
  let done = 0;
  await forEachConcurrent(questions, options.concurrency ?? 1, async (q, index) => {
    let prediction: TagAgentPrediction;
    try {
      const { episode, tag } = await contextOf(q.trajectory);
      const question = { questionId: q.question_id, question: q.question, answer: q.answer, category: CATEGORY_OF_QUERY[q.tags.query_type], episodeHistory: q.episode_history ?? "" };
      const reply = await withCallContext({ item: q.question_id }, () => agent.answer(question, episode, { tag }));
      prediction = { question_id: q.question_id, answer: reply.answer, ...(reply.confidence !== undefined ? { confidence: reply.confidence } : {}), trace: reply.trace };
    } catch (error) {
      prediction = { question_id: q.question_id, answer: null, error: describeError(error), trace: traceOfFailure(error) };
    }
    predictions[index] = prediction;
    options.onAnswer?.(prediction, ++done, questions.length);
  });
  return predictions;
}

/** Where each answer is appended as it comes: a rerun in the same folder asks only what is not there. */
export const TAG_ANSWERS_FILE = "answers.jsonl";

/**
 * One line of `answers.jsonl`: the prediction with its trace, and the key of what was asked (the
 * agent's configuration, the question): a rerun reuses only answers of the same agent and settings.
 */
const answerRecord = z.object({ question_id: z.string(), answer: z.string().nullable(), error: z.string().optional(), inputKey: z.string().optional() });

/** What an answer was asked with: the agent's configuration (its command or module, model, image settings) and the question. */
function tagAnswerKey(agent: Pick<TagAnswerAgent, "configuration">): (q: TagQuestion) => string {
  const configKey = canonicalJson(agent.configuration);
  return (q) => sha256Hex(`${configKey}\u0000${q.question_id}\u0000${q.question}`);
}

export interface TagAnswerRun {
  /** Every question's prediction, in the questions' order (null answers where the agent failed). */
  predictions: TagAgentPrediction[];
  failures: TagAgentPrediction[];
  /** Answers kept from an earlier run in the folder. */
  reused: number;
  /** The agent's model/complete calls, from the folder's ledger of model calls (every process's). */
  cost: RunCost;
}

/**
 * `answerTagQuestions` as a resumable run in `dir`: each answer is appended to `answers.jsonl`
 * as it comes, a rerun asks only the questions without an answer (the failed ones again), and
 * `predictions.json` (for `eqa score-tag`) and `agent-failures.json` are written at the end. A
 * folder holding answers to questions the set does not have is refused (`UserError`).
 */
export async function runTagAnswers(
  questions: readonly TagQuestion[],
  episodes: ReadonlyMap<string, TagAgentEpisode>,
  agent: TagAnswerAgent,
  dir: string | RunDirectory,
  options: AnswerTagOptions & { onResume?: (reused: number, toAsk: number) => void; usage?: UsageLedger } = {},
): Promise<TagAnswerRun> {
  // `eqa demo` opens the folder of its agent's run itself
  const run = typeof dir === "string" ? await openTagAnswerRun(dir, agent.configuration, questions, options.questionsPath) : dir;
  options.usage?.attach(run.path);
  const keyOf = tagAnswerKey(agent);
  const keys = new Map(questions.map((q) => [q.question_id, keyOf(q)]));
  const kept = keptAnswers(run, questions, keys);
  const asked = questions.filter((q) => !kept.has(q.question_id));
  if (kept.size > 0) options.onResume?.(kept.size, asked.length);
  const reused = kept.size;
  const records = run.appender(TAG_ANSWERS_FILE);
  try {
    const answered = await answerTagQuestions(asked, episodes, agent, {
      ...options,
      onAnswer: (prediction, done, total) => {
        records.append({ ...prediction, inputKey: keys.get(prediction.question_id), finishedAt: new Date().toISOString() });
        options.onAnswer?.(prediction, done, total);
      },
    });
    for (const p of answered) kept.set(p.question_id, p);
  } finally {
    records.close();
  }
  const predictions = questions.map((q) => kept.get(q.question_id)!);
  const failures = predictions.filter((p) => p.error !== undefined);
  await run.writeJson("predictions.json", predictions.map((p) => ({ question_id: p.question_id, answer: p.answer })));
  await run.writeJson("agent-failures.json", failures.map((f) => ({ question_id: f.question_id, answer: f.answer, error: f.error })));
  const cost = ledgerCost(readCallLedger(run.path));
  await run.writeJson("summary.json", { kind: RUN_KIND["answer-tag"], eqakitVersion, createdAt: new Date().toISOString(), counts: { questions: predictions.length, answered: predictions.filter((p) => p.answer !== null).length, failed: failures.length, reused }, usage: { thisProcess: options.usage?.snapshot() ?? null }, cost });
  return { predictions, failures, reused, cost };
}

/**
 * Opens `dir` as an answer-tag run folder: its settings are the agent's configuration, the
 * questions file its input, the questions its items (refused when it holds another kind of run,
 * other settings, or other questions under the same ids).
 */
export function openTagAnswerRun(dir: string, configuration: Record<string, unknown>, questions: readonly TagQuestion[], questionsPath?: string): Promise<RunDirectory> {
  return openRun({ dir, kind: RUN_KIND["answer-tag"], settings: resultSettings(configuration), inputs: questionsPath ? [{ name: "questions", path: questionsPath, copy: true }] : [], items: tagQuestionItems(questions, questionsPath) });
}

/**
 * The answers a rerun of `configuration`'s agent in the answer-tag folder `dir` would keep (the
 * latest of each question, not failed, asked with the same settings), read without touching
 * the folder: what `--dry-run` leaves out.
 */
export function keptTagAnswers(dir: string, questions: readonly TagQuestion[], configuration: Record<string, unknown>): Map<string, string | null> {
  const keyOf = tagAnswerKey({ configuration });
  const keys = new Map(questions.map((q) => [q.question_id, keyOf(q)]));
  const kept = new Map<string, string | null>();
  const parse = (value: unknown) => {
    const parsed = answerRecord.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  };
  for (const record of readJsonl(join(dir, TAG_ANSWERS_FILE), parse, false).records) {
    if (record.error === undefined && record.inputKey !== undefined && record.inputKey === keys.get(record.question_id)) kept.set(record.question_id, record.answer);
    else kept.delete(record.question_id);
  }
  return kept;
}

/** The latest answer of each question in the folder, less the failed ones and those asked of another agent or with other settings. */
function keptAnswers(run: RunDirectory, questions: readonly TagQuestion[], keys: ReadonlyMap<string, string>): Map<string, TagAgentPrediction> {
  const ids = new Set(questions.map((q) => q.question_id));
  const { records } = run.readRecords(TAG_ANSWERS_FILE, (value) => {
    const parsed = answerRecord.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  });
  const kept = new Map<string, TagAgentPrediction>();
  for (const [index, record] of records.entries()) {
    if (!ids.has(record.question_id)) {
      throw new UserError("the output folder holds answers to a question this set does not have", { file: run.file(TAG_ANSWERS_FILE), index, id: record.question_id }, "give --out a new folder, or the questions file the folder's answers came from");
    }
    if (record.error === undefined && record.inputKey === keys.get(record.question_id)) kept.set(record.question_id, { question_id: record.question_id, answer: record.answer });
    else kept.delete(record.question_id);
  }
  return kept;
}

/**
 * The recordings of a TAG-EQA set's trajectories: each question's frame folder (its
 * `episode_history`, relative to the set's directory) and the `trajectory.json` beside it whose
 * `frames` names that folder. A question without observations (an ALFRED set) or a recording
 * that is not there is a `UserError` naming the file and record.
 */
export async function tagSetEpisodes(questions: readonly TagQuestion[], questionsPath: string): Promise<Map<string, TagAgentEpisode>> {
  const episodes = new Map<string, TagAgentEpisode>();
  const datasetDir = dirname(questionsPath);
  for (const [index, q] of questions.entries()) {
    if (episodes.has(q.trajectory)) continue;
    const where = { file: questionsPath, index, id: q.question_id, field: "episode_history" };
    if (!q.episode_history) throw new UserError("the question has no observations (episode_history is null): such a set is for judges only", where, "agents answer sets made from simulator recordings (eqa generate tag --source sim:DIR); score this one with eqa score-tag");
    const frames = resolve(datasetDir, q.episode_history);
    const logFile = join(dirname(frames), RECORDING_FILE);
    if (!existsSync(logFile)) throw new UserError(`no ${RECORDING_FILE} beside the frame folder ${frames}`, where, "keep the recordings where eqa generate tag found them");
    const log = await loadTrajectoryLog(logFile);
    if (log.id !== q.trajectory || !log.frames || resolve(dirname(logFile), log.frames) !== frames) throw new UserError(`${logFile} is not the recording of trajectory ${q.trajectory} with these frames`, where);
    episodes.set(q.trajectory, { frames, log });
  }
  return episodes;
}
