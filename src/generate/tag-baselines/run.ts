/**
 * A TAG-EQA baseline answering a set (`eqa answer-tag --agent socratic-ic …`), in the same
 * resumable run folder as an agent of the user's own (`runTagAnswers`: the manifest, the ledger
 * of model calls, `answers.jsonl`, `predictions.json` for `eqa score-tag`).
 *
 * Each trajectory is prepared once, by the first of its questions to start; its questions then
 * share what was prepared. A baseline with a `preparedSchema` has each preparation appended to
 * `prepared.jsonl` (with the trace of its model calls) as it finishes, and a rerun in the folder
 * reuses it: a killed run repeats no finished preparation. A preparation that fails fails its
 * trajectory's questions (each recorded with the error) and is tried again by the next run; a
 * question whose answer fails fails alone.
 */
import { join } from "node:path";
import { z } from "zod";
import { canonicalJson, sha256Hex, type Question } from "../../core/index.js";
import type { TagQuestion } from "../../data/index.js";
import type { Episode } from "../../episodes/index.js";
import { newTrace, promptHashes, traceOfFailure, keepTraceOfFailure, type AgentAnswer, type AgentTrace } from "../../agents/index.js";
import { withCallContext, type UsageLedger } from "../../models/index.js";
import { readJsonl, type RunDirectory } from "../../store/index.js";
import type { TagAnswerContext } from "../history.js";
import { openTagAnswerRun, runTagAnswers, type AnswerTagOptions, type TagAgentEpisode, type TagAnswerAgent, type TagAnswerRun } from "../tag-agent.js";
import type { TagBaseline, TagBaselineModels, TagBaselineTrajectory } from "./types.js";

/** Where a baseline's preparations are kept in its run folder. */
export const TAG_PREPARED_FILE = "prepared.jsonl";

/** The configuration a baseline's answers are keyed by: its name, models, prompts' hashes and settings. */
export function tagBaselineConfiguration(baseline: TagBaseline<unknown>, models: TagBaselineModels): Record<string, unknown> {
  return {
    agent: baseline.name,
    model: models.llm.name,
    captioner: baseline.captions ? models.captioner.name : null,
    prompts: promptHashes(baseline.prompts),
    settings: baseline.settings ?? {},
  };
}

export interface TagBaselineAgentOptions {
  /** The run folder whose `prepared.jsonl` keeps and gives back preparations (baselines with a `preparedSchema`). */
  run?: RunDirectory;
  /** A run folder whose `prepared.jsonl` gives back preparations, read without writing to it (`--dry-run`). */
  preparedFrom?: string;
  /** Called when a trajectory's preparation is done (`reused`: read from the folder). */
  onPrepared?: (trajectory: string, reused: boolean) => void;
}

/**
 * A baseline as a `TagAnswerAgent`: each question's trajectory is prepared once (a failed
 * preparation is tried again by the next question that needs it), then the question answered.
 */
export function tagBaselineAgent(
  baseline: TagBaseline<unknown>,
  models: TagBaselineModels,
  questions: readonly TagQuestion[],
  episodes: ReadonlyMap<string, TagAgentEpisode>,
  options: TagBaselineAgentOptions = {},
): TagAnswerAgent & { close(): void } {
  const configuration = tagBaselineConfiguration(baseline, models);
  const configKey = canonicalJson(configuration);
  const byId = new Map(questions.map((q) => [q.question_id, q]));
  const keyOf = (trajectory: string, source: TagAgentEpisode): string => sha256Hex(`${configKey}\u0000${trajectory}\u0000${canonicalJson(source.log)}`);
  const stored = new Map<string, unknown>();
  const schema = baseline.preparedSchema;
  const from = options.run?.file(TAG_PREPARED_FILE) ?? (options.preparedFrom !== undefined ? join(options.preparedFrom, TAG_PREPARED_FILE) : undefined);
  if (schema && from !== undefined) {
    // a run folder repairs a cut last line; a folder only read is left as it is
    for (const record of readJsonl(from, (value) => preparedRecord(value), options.run !== undefined).records) {
      const parsed = schema.safeParse(record.prepared);
      if (parsed.success) stored.set(record.key, parsed.data);
    }
  }
  const appender = schema && options.run ? options.run.appender(TAG_PREPARED_FILE) : undefined;
  const preparing = new Map<string, Promise<unknown>>();
  const prepared = (trajectory: TagBaselineTrajectory, source: TagAgentEpisode): Promise<unknown> => {
    let promise = preparing.get(trajectory.id);
    if (!promise) {
      const key = keyOf(trajectory.id, source);
      if (stored.has(key)) {
        promise = Promise.resolve(stored.get(key));
        options.onPrepared?.(trajectory.id, true);
      } else {
        const trace = newTrace(`${baseline.name}:prepare`);
        promise = withCallContext({ item: `prepare:${trajectory.id}` }, () => baseline.prepare(trajectory, models, trace)).then(
          (result) => {
            appender?.append({ trajectory: trajectory.id, key, prepared: result, trace, finishedAt: new Date().toISOString() });
            options.onPrepared?.(trajectory.id, false);
            return result;
          },
          (error: unknown) => {
            // the next question of the trajectory prepares again
            preparing.delete(trajectory.id);
            if (typeof error === "object" && error !== null && traceOfFailure(error) === null) keepTraceOfFailure(error, trace);
            throw error;
          },
        );
      }
      preparing.set(trajectory.id, promise);
    }
    return promise;
  };
  return {
    configuration,
    close: () => appender?.close(),
    async answer(question: Question, episode: Episode, extra: { tag: TagAnswerContext }): Promise<AgentAnswer> {
      const q = byId.get(question.questionId);
      if (!q) throw new Error(`question ${question.questionId} is not in the set the baseline was given`);
      const source = episodes.get(q.trajectory);
      if (!source) throw new Error(`no recording of trajectory ${q.trajectory}`);
      const trajectory: TagBaselineTrajectory = { id: q.trajectory, episode, log: source.log, tag: extra.tag };
      const ready = await prepared(trajectory, source);
      const reply = await baseline.answer(q, ready, trajectory, models);
      return { answer: reply.answer, trace: reply.trace };
    },
  };
}

/** One line of `prepared.jsonl` as a rerun reads it (the preparation itself is read by the baseline's schema). */
const preparedLine = z.object({ key: z.string(), prepared: z.unknown() });

function preparedRecord(value: unknown): { key: string; prepared: unknown } | undefined {
  const parsed = preparedLine.safeParse(value);
  return parsed.success ? { key: parsed.data.key, prepared: parsed.data.prepared } : undefined;
}

export interface TagBaselineRunOptions extends AnswerTagOptions {
  usage?: UsageLedger;
  onResume?: (reused: number, toAsk: number) => void;
  onPrepared?: (trajectory: string, reused: boolean) => void;
}

/**
 * `runTagAnswers` with a baseline: the folder `dir` is an answer-tag run whose settings are the
 * baseline's configuration; preparations are kept in `prepared.jsonl` (see the module comment).
 */
export async function runTagBaseline(
  baseline: TagBaseline<unknown>,
  models: TagBaselineModels,
  questions: readonly TagQuestion[],
  episodes: ReadonlyMap<string, TagAgentEpisode>,
  dir: string,
  options: TagBaselineRunOptions = {},
): Promise<TagAnswerRun> {
  const run = await openTagAnswerRun(dir, tagBaselineConfiguration(baseline, models), questions, options.questionsPath);
  const agent = tagBaselineAgent(baseline, models, questions, episodes, { run, ...(options.onPrepared ? { onPrepared: options.onPrepared } : {}) });
  try {
    return await runTagAnswers(questions, episodes, agent, run, options);
  } finally {
    agent.close();
  }
}

/** The trace of a preparation, as `prepared.jsonl` keeps it (for readers of the folder). */
export type TagPreparedRecord = { trajectory: string; key: string; prepared: unknown; trace: AgentTrace; finishedAt: string };
