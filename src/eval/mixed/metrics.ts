/**
 * Scores of a Mixed EQA run, per category and overall, each with its bootstrap interval
 * (`bootstrapMean`): accuracy (the agent's canonical answer equal to `answer_value` after
 * `canonicalMixedValue`, no judge; an episode that failed or was not answered is wrong); SPL as
 * LA-EQA computes it, on the questions that need the present; metres walked on the questions the
 * history answers (wasted exploration); history frames retrieved; metres walked.
 */
import { canonicalMixedValue, MIXED_CATEGORIES, type MixedEpisode } from "../../data/index.js";
import type { MixedRecord } from "../../agents/index.js";
import { bootstrapMean } from "../stats.js";
import { llmMatchPoints } from "../openeqa/index.js";
import { laEqaSpl } from "../la-eqa/index.js";

/**
 * SPL of one question as LA-EQA computes it: success × min(1, L_gt / max(d, 0.01)); a question
 * without a best path (the history answers it) scores success × 1 when the agent moved at most
 * 0.01 m, else 0.
 */
export function mixedSpl(success: number, gtPathLengthM: number, walkedM: number): number {
  return success * laEqaSpl(gtPathLengthM > 0 ? gtPathLengthM : null, walkedM);
}

/** Whether a canonical answer is the episode's. */
export function mixedAnswerCorrect(answer: string | null, episode: Pick<MixedEpisode, "answer_value">): boolean {
  return answer !== null && canonicalMixedValue(answer) === canonicalMixedValue(episode.answer_value);
}

/** One question's scores. */
export interface MixedQuestionScore {
  questionId: string;
  category: string;
  correct: boolean;
  /** 100 right, 0 wrong; a judged answer's LLM-Match points. */
  points: number;
  /** On a question that needs the present; null on one the history answers. */
  spl: number | null;
  /** Metres walked on a question the history answers; null on one that needs the present. */
  wastedM: number | null;
  walkedM: number | null;
  historyFrames: number;
  failed: boolean;
}

/**
 * One question's scores. A program agent's canonical answer is right or wrong (exact match); a
 * model-driven agent's words are judged by LLM-Match (`record.llmMatch`, σ 1-5): its points
 * (100·(σ−1)/4) are the accuracy, and σ = 5 counts as right; SPL weighs the path by the points.
 */
export function scoreMixedQuestion(record: MixedRecord, episode: MixedEpisode): MixedQuestionScore {
  const failed = record.error !== null;
  const judged = record.llmMatch !== undefined;
  const points = failed ? 0 : judged ? (record.llmMatch === null || record.llmMatch === undefined ? 0 : llmMatchPoints(record.llmMatch)) : mixedAnswerCorrect(record.answer, episode) ? 100 : 0;
  const correct = points === 100;
  const walked = record.pathLengthM;
  return {
    questionId: record.questionId,
    category: episode.category,
    correct,
    points,
    spl: episode.history_answers ? null : mixedSpl(points / 100, episode.gt_path_length, walked ?? 0),
    wastedM: episode.history_answers && walked !== null ? walked : null,
    walkedM: walked,
    historyFrames: record.historyFrames.length,
    failed,
  };
}

/** A mean with its interval, or null over no question. */
export interface MixedEstimate {
  n: number;
  mean: number;
  stderr: number;
  ci: [number, number];
}

function estimate(values: readonly number[]): MixedEstimate | null {
  if (values.length === 0) return null;
  const e = bootstrapMean(values);
  const round = (v: number): number => Math.round(v * 1e4) / 1e4;
  return { n: e.n, mean: round(e.mean), stderr: round(e.stderr), ci: [round(e.ci[0]), round(e.ci[1])] };
}

/** A figure overall and per category. */
export interface MixedFigure {
  overall: MixedEstimate | null;
  byCategory: Record<string, MixedEstimate | null>;
}

function figure(scores: readonly MixedQuestionScore[], value: (s: MixedQuestionScore) => number | null): MixedFigure {
  const of = (list: readonly MixedQuestionScore[]): number[] => list.flatMap((s) => {
    const v = value(s);
    return v === null ? [] : [v];
  });
  const categories = [...new Set([...MIXED_CATEGORIES, ...scores.map((s) => s.category)])];
  return { overall: estimate(of(scores)), byCategory: Object.fromEntries(categories.map((c) => [c, estimate(of(scores.filter((s) => s.category === c)))])) };
}

export interface MixedMetrics {
  /** Percent of questions answered right (failed and unanswered ones wrong); a judged run's LLM-Match points. */
  accuracy: MixedFigure;
  /** LA-EQA's SPL (0-1) on the questions that need the present. */
  spl: MixedFigure;
  /** Metres walked on the questions the history answers. */
  wastedMetres: MixedFigure;
  /** History frames the agent retrieved per question. */
  historyFrames: MixedFigure;
  /** Metres walked per question. */
  pathLength: MixedFigure;
}

export function mixedMetrics(scores: readonly MixedQuestionScore[]): MixedMetrics {
  return {
    accuracy: figure(scores, (s) => s.points),
    spl: figure(scores, (s) => (s.failed ? 0 : s.spl)),
    wastedMetres: figure(scores, (s) => (s.failed ? null : s.wastedM)),
    historyFrames: figure(scores, (s) => (s.failed ? null : s.historyFrames)),
    pathLength: figure(scores, (s) => (s.failed ? null : s.walkedM)),
  };
}
