/**
 * The judging loop a score run shares (LLM-Match, LA-EQA's judge, the structured TAG judge): the
 * judgements an earlier run in the folder left are reused by the run's resume rule, the others
 * are judged over `runModelBatch` and appended to the records file as each finishes. A failed
 * call or an unreadable reply is the question's record; an unusable judge stops the run.
 */
import { z } from "zod";
import type { JudgeUnreadable } from "../core/index.js";
import { failedReplyStatusSchema, runModelBatch, usageTotalsSchema, type FailedReplyStatus, type ModelCallError, type ModelSpec, type RunCost, type UsageLedger, type UsageTotals } from "../models/index.js";
import { resumeItems, type ResumeRule, type RunDirectory } from "../store/index.js";

/** The fields a judge's mark record ends with (LLM-Match's, LA-EQA's): its replies, why it has no mark, its usage, when it finished. */
export interface MarkReplyFields {
  /** Raw replies, the first and any re-asks. */
  replies: (string | null)[];
  error: string | null;
  /** Why the judge's reply was not a mark, when it was cut, filtered or refused. */
  status?: FailedReplyStatus;
  /**
   * The judge replied, but no mark could be read (after any re-asks): a failure of the judge,
   * counted apart from failed calls, left out of the aggregates, and asked again on the next run.
   */
  unreadable?: true;
  usage: UsageTotals;
  finishedAt: string;
}

/** {@link MarkReplyFields} as zod reads them, spread last into each judgement's schema (a schema's order is the order a parsed record's keys are written in). */
export const markReplyShape = {
  replies: z.array(z.string().nullable()),
  error: z.string().nullable(),
  status: failedReplyStatusSchema.optional(),
  unreadable: z.literal(true).optional(),
  usage: usageTotalsSchema,
  finishedAt: z.string(),
};

/** What a score run is given to judge: the benchmark, the questions scored and their predictions, with the files they came from. */
export interface ScoreInputs<Benchmark, Q, P> {
  benchmark: Benchmark;
  /** The questions to score (the benchmark's, or a subset's). */
  questions: Q[];
  subsetPath?: string;
  predictions: P[];
  predictionsPath: string;
}

/** A question the judge failed on, as a summary lists it. */
export interface ScoreFailure {
  questionId: string;
  error: string;
  /** Set when the judge's reply was cut, filtered or refused. */
  status?: FailedReplyStatus;
  replies: (string | null)[];
}

/** The counts a judged score run's summary gives (LLM-Match's, LA-EQA's), beside its own. */
export interface MarkCounts {
  /** scored + failed + judgeUnreadable = questions. */
  questions: number;
  scored: number;
  /** Judgements whose call failed (no reply to read). */
  failed: number;
  /** Judgements whose reply held no readable mark: the judge's failure, not the answer's. */
  judgeUnreadable: number;
  missingPredictions: number;
  noAnswer: number;
  reused: number;
  predictionsOutsideSubset: number;
}

/** What a judged score run's summary ends with: its failures, its usage and its cost. */
export interface MarkSummaryTail {
  /** Judge replies that were not marks, by status (truncated, filtered, refused). */
  replyStatuses: Partial<Record<FailedReplyStatus, number>>;
  failures: ScoreFailure[];
  /** The questions whose judge reply held no readable mark, left out of the aggregates. */
  judgeUnreadable: JudgeUnreadable;
  usage: { judgements: UsageTotals; thisProcess: ReturnType<UsageLedger["snapshot"]> | null };
  /** Calls, tokens and dollars of the judge, from the run's ledger of model calls (calls.jsonl). */
  cost: RunCost;
}

/** How far a score run's judging is. */
export interface JudgingProgress {
  done: number;
  total: number;
  /** Judgements whose call failed. */
  failed: number;
  /** Judgements whose reply held no readable mark (the judge's failure, counted apart). */
  unreadable: number;
  /** Judgements taken from an earlier, interrupted run in the same directory. */
  reused: number;
}

/** What a judgement came to, as the progress counts it. */
export type JudgingOutcome = "scored" | "failed" | "unreadable";

/** A judge's outcome read from its mark: none, with the reply unreadable or the call failed. */
export function markOutcome(judgement: { score: number | null; unreadable?: true }): JudgingOutcome {
  if (judgement.score !== null) return "scored";
  return judgement.unreadable ? "unreadable" : "failed";
}

export interface JudgingOptions<Task, J> {
  run: RunDirectory;
  /** The records file, the tasks in order and what makes a judgement stand. */
  resume: ResumeRule<Task, J>;
  judge: (task: Task) => Promise<J>;
  /** The record of a task whose call failed for good. */
  failed: (task: Task, error: ModelCallError) => J;
  outcome: (judgement: J) => JudgingOutcome;
  /** The judge's spec, named when a call shows the configuration is wrong (none for a judge without a model). */
  models: readonly ModelSpec[];
  /** Tasks judged at once (default 8). */
  concurrency?: number;
  onProgress?: (progress: JudgingProgress) => void;
}

export interface JudgingResult<J> {
  /** One judgement per task, in the tasks' order. */
  judgements: J[];
  /** How many came from the earlier run. */
  reused: number;
}

/** Judges the tasks the run folder has no standing judgement for, appending each as it finishes. */
export async function runJudging<Task, J>(options: JudgingOptions<Task, J>): Promise<JudgingResult<J>> {
  const { run, resume } = options;
  const { reusable: earlier, pending } = resumeItems(run, resume);
  const judgements = new Map<string, J>(earlier);
  const progress: JudgingProgress = { done: earlier.size, total: resume.items.length, failed: 0, unreadable: 0, reused: earlier.size };
  options.onProgress?.({ ...progress });
  const appender = run.appender(resume.file);
  try {
    await runModelBatch({
      items: pending,
      concurrency: options.concurrency ?? 8,
      work: options.judge,
      failed: options.failed,
      finished: (task, judgement) => {
        appender.append(judgement);
        judgements.set(resume.id(task), judgement);
        progress.done++;
        const outcome = options.outcome(judgement);
        if (outcome === "unreadable") progress.unreadable++;
        else if (outcome === "failed") progress.failed++;
        options.onProgress?.({ ...progress });
      },
      models: options.models,
      itemId: resume.id,
    });
  } finally {
    appender.close();
  }
  return { judgements: resume.items.map((task) => judgements.get(resume.id(task))!), reused: earlier.size };
}
