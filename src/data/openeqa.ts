import { existsSync } from "node:fs";
import { z } from "zod";
import { OPENEQA_CATEGORIES, UserError, sha256Hex, type Prediction, type Question } from "../core/index.js";
import { parseJsonText, readTextFile } from "./json.js";
import { firstItems, requireRecords, validateRecords } from "./validate.js";

const questionRecord = z.object({
  question_id: z.string().min(1, "must be a non-empty string"),
  question: z.string(),
  answer: z.string(),
  category: z.string().refine((c) => (OPENEQA_CATEGORIES as readonly string[]).includes(c), {
    message: `unknown category; expected one of: ${OPENEQA_CATEGORIES.join(", ")}`,
  }),
  episode_history: z.string().min(1, "must be a non-empty string"),
  // null reads as absent: OpenEQA's scorer turns both into None, which picks the template without extra answers
  extra_answers: z.array(z.string()).nullish(),
});

const predictionRecord = z.object({
  question_id: z.string().min(1, "must be a non-empty string"),
  answer: z.string().nullable(),
});

export interface OpenEqaBenchmark {
  path: string;
  /** sha256 of the file's bytes, recorded in summaries. */
  sha256: string;
  questions: Question[];
  byId: Map<string, Question>;
}

/** Loads and validates an OpenEQA benchmark file (`open-eqa-v0.json` or any file of its shape). */
export async function loadOpenEqaBenchmark(path: string): Promise<OpenEqaBenchmark> {
  const text = await readTextFile(path);
  const value = parseJsonText(text, path);
  refuseTagEqaSet(value, path);
  const records = validateRecords(value, questionRecord, path, "questions");
  const byId = new Map<string, Question>();
  const questions = records.map((record, index): Question => {
    if (byId.has(record.question_id)) {
      throw new UserError("duplicate question id", { file: path, index, id: record.question_id, field: "question_id" });
    }
    const question: Question = {
      questionId: record.question_id,
      question: record.question,
      answer: record.answer,
      category: record.category as Question["category"],
      episodeHistory: record.episode_history,
      ...(record.extra_answers != null ? { extraAnswers: record.extra_answers } : {}),
    };
    byId.set(question.questionId, question);
    return question;
  });
  return { path, sha256: sha256Hex(text), questions, byId };
}

/**
 * A TAG-EQA set (`eqa generate tag`) is not an OpenEQA benchmark; one whose questions have no
 * observations (`episode_history` null: ALFRED trajectories) is for judges only, and is refused
 * with that reason.
 */
function refuseTagEqaSet(value: unknown, file: string): void {
  if (!Array.isArray(value)) return;
  const tag = value.findIndex((r) => typeof r === "object" && r !== null && "structured_question" in r && "program" in r);
  if (tag < 0) return;
  const idOf = (index: number): { id?: string } => {
    const id = (value[index] as { question_id?: unknown }).question_id;
    return typeof id === "string" ? { id } : {};
  };
  const isBlind = (r: unknown): boolean => typeof r === "object" && r !== null && (r as { episode_history?: unknown }).episode_history == null;
  const blind = value.filter(isBlind).length;
  if (blind > 0) {
    const first = value.findIndex(isBlind);
    throw new UserError(
      `a TAG-EQA set whose questions have no observations (episode_history is null in ${blind} of ${value.length}, as in sets made from ALFRED trajectories) is for judges only: no agent can answer it`,
      { file, index: first, ...idOf(first), field: "episode_history" },
      "score answers to it with eqa score-tag, or generate questions from simulator recordings (eqa generate tag --source sim:DIR), whose frames agents can see",
    );
  }
  throw new UserError("a TAG-EQA set is not an OpenEQA benchmark", { file, index: tag, ...idOf(tag) }, "eqa answer takes OpenEQA benchmark files; eqa demo answers TAG-EQA questions from simulator recordings");
}

/** Loads a subset file: a JSON list of question ids (like `open-eqa-v0-184-questions.json`). */
export async function loadQuestionSubset(path: string): Promise<string[]> {
  const value = parseJsonText(await readTextFile(path), path);
  const ids = validateRecords(value, z.string().min(1, "must be a non-empty question id"), path, "question ids");
  requireRecords(ids, path, "question ids", "--subset takes a JSON list of at least one question id; leave --subset out to use every question");
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) throw new UserError("duplicate question id in subset", { file: path, index, id });
    seen.add(id);
  });
  return ids;
}

/** The benchmark's questions restricted to a subset, in the subset's order. */
export function selectQuestions(benchmark: OpenEqaBenchmark, subset: string[] | undefined, subsetPath = "subset"): Question[] {
  if (!subset) return benchmark.questions;
  const unknown = subset.filter((id) => !benchmark.byId.has(id));
  if (unknown.length > 0) {
    throw new UserError(
      `${unknown.length} question id(s) of the subset are not in the benchmark ${benchmark.path}: ${firstItems(unknown)}`,
      { file: subsetPath },
    );
  }
  return subset.map((id) => benchmark.byId.get(id) as Question);
}

/** Loads predictions in OpenEQA's results format `[{"question_id", "answer"}]`; other fields are ignored. */
export async function loadPredictions(path: string): Promise<Prediction[]> {
  const records = validateRecords(parseJsonText(await readTextFile(path), path), predictionRecord, path, "predictions");
  const seen = new Set<string>();
  return records.map((record, index) => {
    if (seen.has(record.question_id)) {
      throw new UserError("duplicate prediction for this question id", { file: path, index, id: record.question_id, field: "question_id" });
    }
    seen.add(record.question_id);
    return { questionId: record.question_id, answer: record.answer };
  });
}

export interface PairedPrediction {
  question: Question;
  /** The agent's answer; null when it gave none or (with allowMissing) none was in the file. */
  answer: string | null;
  missing: boolean;
}

export interface PairingOptions {
  benchmark: OpenEqaBenchmark;
  predictionsPath: string;
  /** Score questions without a prediction as a null answer instead of refusing. */
  allowMissing?: boolean;
}

export interface Pairing {
  pairs: PairedPrediction[];
  /** Predictions for benchmark questions outside the selected subset. */
  outsideSubset: number;
}

/** Pairs each selected question with its prediction, refusing predictions for unknown ids. */
export function pairPredictions(questions: Question[], predictions: Prediction[], options: PairingOptions): Pairing {
  const { benchmark, predictionsPath } = options;
  const unknown = predictions.filter((p) => !benchmark.byId.has(p.questionId)).map((p) => p.questionId);
  if (unknown.length > 0) {
    throw new UserError(
      `${unknown.length} prediction(s) for question ids not in the benchmark ${benchmark.path}: ${firstItems(unknown)}`,
      { file: predictionsPath },
      "check that the predictions and the benchmark (--benchmark) are of the same version",
    );
  }
  const byId = new Map(predictions.map((p) => [p.questionId, p]));
  const missing = questions.filter((q) => !byId.has(q.questionId)).map((q) => q.questionId);
  if (missing.length > 0 && !options.allowMissing) {
    throw new UserError(
      `${missing.length} of ${questions.length} benchmark question(s) have no prediction: ${firstItems(missing)}`,
      { file: predictionsPath },
      "pass --allow-missing to score them as a null answer (0 points, as the reference scores None), or --subset to score fewer questions",
    );
  }
  const selected = new Set(questions.map((q) => q.questionId));
  const pairs = questions.map((question) => {
    const prediction = byId.get(question.questionId);
    return { question, answer: prediction ? prediction.answer : null, missing: prediction === undefined };
  });
  return { pairs, outsideSubset: predictions.filter((p) => !selected.has(p.questionId)).length };
}

export interface QuestionSelection {
  benchmark: OpenEqaBenchmark;
  /** The benchmark's questions, or the subset's in its order. */
  questions: Question[];
  subsetPath?: string;
}

/** Loads a benchmark (by default the one `eqa data fetch openeqa` wrote) and applies a subset file. */
export async function loadQuestionSelection(options: { benchmark?: string; subset?: string; defaultBenchmark: string }): Promise<QuestionSelection> {
  const path = options.benchmark ?? options.defaultBenchmark;
  if (!options.benchmark && !existsSync(path)) {
    throw new UserError("no benchmark given, and the OpenEQA benchmark has not been downloaded", { file: path }, "run `eqa data fetch openeqa`, or pass --benchmark FILE");
  }
  const benchmark = await loadOpenEqaBenchmark(path);
  requireRecords(benchmark.questions, path, "questions", "--benchmark takes an OpenEQA benchmark file with at least one question");
  const subset = options.subset ? await loadQuestionSubset(options.subset) : undefined;
  return { benchmark, questions: selectQuestions(benchmark, subset, options.subset), ...(options.subset ? { subsetPath: options.subset } : {}) };
}
