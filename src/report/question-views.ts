/**
 * What a question of each run kind shows, in the report and the viewer alike: the score it has
 * (LLM-Match's mark, TAG-EQA's structured score, or none), where its transcript is (the answering
 * agent's traces, an exploration's record), where the frames the agent used are, and the plan
 * it walked. Both read this one table, so a kind shows the same parts in both; a kind missing
 * from it shows its question, ground truth and answer only.
 */
import { TAG_ANSWERS_FILE, TAG_PREPARED_FILE } from "../generate/index.js";
import type { RunKind } from "../store/index.js";

/**
 * Where a question's transcript is read from: a file of the run's answers (by the field naming
 * the question), with the file of what was prepared once per trajectory and shared by its
 * questions (a TAG-EQA baseline's captions), or an exploration's `episodes.jsonl` with its
 * frames and trajectory.
 */
export type TranscriptSource = { file: string; idField: "questionId" | "question_id"; preparations?: string } | "exploration";

export interface QuestionView {
  /** Whether the kind answers its questions (a generated dataset holds questions only: the report gives it no answer column). */
  answers: boolean;
  /** The per-question score: LLM-Match's mark σ (1-5), TAG-EQA's structured score (1-5), or none (a run answered but not judged, a reward model's score shown as its answer). */
  score: "llm-match" | "structured" | "la-eqa" | null;
  /** Where its transcript (model calls, captions, log lines) is; null: the kind keeps none. */
  transcript: TranscriptSource | null;
  /** The frames the agent used: an episode's under the run's frames folder, an exploration's own, or none. */
  frames: "episode" | "exploration" | null;
  /** A top-down plan: an exploration's trajectory, or the simulator recording a TAG-EQA question was made from. */
  plan: "exploration" | "recording" | null;
  /** The command that scores a run of the kind answered but not judged, for the report to name. */
  scoredBy?: string;
}

/** The answering agent's `traces.jsonl` (eqa answer, eqa run; a TAG run's `answers/`). */
const TRACES: TranscriptSource = { file: "traces.jsonl", idField: "questionId" };

const NOTHING_MORE: QuestionView = { answers: true, score: null, transcript: null, frames: null, plan: null };

/** Each kind's question view, by the kind its summary or manifest names (every kind of `RUN_KINDS` has one). */
export const QUESTION_VIEWS: Readonly<Record<RunKind, QuestionView>> = {
  "llm-match": { answers: true, score: "llm-match", transcript: TRACES, frames: "episode", plan: null },
  answer: { answers: true, score: null, transcript: TRACES, frames: "episode", plan: null, scoredBy: "eqa score" },
  run: { answers: true, score: "llm-match", transcript: TRACES, frames: "episode", plan: null },
  explore: { answers: true, score: "llm-match", transcript: "exploration", frames: "exploration", plan: "exploration" },
  // LA-EQA's answers were made elsewhere: the judge's mark and reply, no transcript or frames
  "la-eqa": { answers: true, score: "la-eqa", transcript: null, frames: null, plan: null },
  // the canonical answer scored exactly; the live path on the plan and the frames seen now
  mixed: { answers: true, score: null, transcript: "exploration", frames: "exploration", plan: "exploration" },
  "tag-structured": { answers: true, score: "structured", transcript: TRACES, frames: "episode", plan: "recording" },
  // the agent's answers with their traces; a baseline's captions are its trajectory's preparation
  "answer-tag": { answers: true, score: null, transcript: { file: TAG_ANSWERS_FILE, idField: "question_id", preparations: TAG_PREPARED_FILE }, frames: "episode", plan: "recording", scoredBy: "eqa score-tag" },
  "rm-score": NOTHING_MORE,
  "rm-bench": NOTHING_MORE,
  "rm-build": NOTHING_MORE,
  "rm-review": NOTHING_MORE,
  memory: NOTHING_MORE,
  "generate-tag": { ...NOTHING_MORE, answers: false },
  "generate-mixed": { ...NOTHING_MORE, answers: false },
  reproduce: NOTHING_MORE,
  // a folder of runs is reported as each of its runs; a validation's judge calls are its traces
  demo: { ...NOTHING_MORE, transcript: TRACES },
  "tag-validate": { ...NOTHING_MORE, transcript: TRACES },
};

/** The question view of a kind; a kind the table does not name shows its question, ground truth and answer, with the traces it may hold. */
export function questionView(kind: string): QuestionView {
  return (QUESTION_VIEWS as Readonly<Record<string, QuestionView>>)[kind] ?? { ...NOTHING_MORE, transcript: TRACES };
}

/** What the viewer's pages and the report name a kind's per-question score: its column and its row. */
export function scoreLabel(view: QuestionView): { column: string; row: string; scale: string } | null {
  if (view.score === "llm-match") return { column: "σ", row: "LLM-Match σ", scale: "LLM-Match mark, 1-5 (0: no answer)" };
  if (view.score === "la-eqa") return { column: "1-5", row: "LA-EQA answer score", scale: "LA-EQA judge's mark, 1-5" };
  if (view.score === "structured") return { column: "1-5", row: "structured score (grounded)", scale: "structured score, 1-5" };
  return null;
}
