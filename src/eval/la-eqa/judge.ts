/**
 * LA-EQA's answer judge, as its evaluation code defines it (mind-palace-laeqa/benchmark @ bc08362,
 * `eqa_evaluation.py`, `EQAEvaluation.evaluate_answer_accuracy`, through `openai_interface.py`):
 *
 * - one user message: the question, the correct answer as the question file writes it (every
 *   alternative, joined by " OR ", is one string), "extra answers that are also correct" (the
 *   reference's script never passes any, so its fixed sentence for none), and the response;
 * - GPT-4o with seed 100, max_tokens 512, temperature 0.2 ({@link LA_EQA_JUDGE_PARAMS});
 * - the reply read as JSON and its `score` converted as Python's `int()` converts it (4.7 → 4,
 *   "4" → 4, true → 1), kept as it is (no clip to 1-5); when that fails for any reason, the first
 *   character of the reply that is 1, 2, 3, 4 or 5; when there is none, the reference raises.
 *
 * eqakit's deviations: a reply with no score is a recorded, unreadable judgement (the reference
 * stops its run), left out of the aggregates and asked again by a resumed run; a failed call is a
 * recorded failure (the reference fails on an unbound variable); a question without an answer
 * (`--allow-missing`) is marked 1 without a call. The prompt is eqakit's own by default
 * (`prompts/la-eqa-judge.txt`: the same inputs and reply format, read by the same parser): the
 * repository has no licence, so its text is not shipped, and `--prompts original` sends the
 * reference's, read from the evaluation code `eqa data fetch la-eqa` downloads.
 */
import { loadPromptFile, renderPromptFile, sha256Hex } from "../../core/index.js";
import type { LaEqaQuestion } from "../../data/index.js";
import { z } from "zod";
import { addUsage, emptyUsage, type ChatModel } from "../../models/index.js";
import { markReplyShape, type MarkReplyFields } from "../judging.js";

/** The reference's judge parameters (`OpenAIInterface`: seed 100, max_tokens 512, temperature 0.2). */
export const LA_EQA_JUDGE_PARAMS = { temperature: 0.2, maxTokens: 512, seed: 100 } as const;

/** The prompt file of the judge (eqakit's own; the reference's under `--prompts original`). */
export const LA_EQA_JUDGE_PROMPT = "la-eqa-judge";

/** The mark given without a call to a question that has no answer (`--allow-missing`): the lowest. */
export const LA_EQA_NO_ANSWER_SCORE = 1;

/** What the judge is asked about one question. */
export interface LaEqaJudgeTask {
  question: LaEqaQuestion;
  /** The answer judged; null when the question has none (marked without a call). */
  answer: string | null;
  /** The exact prompt sent; null when there is no answer. */
  prompt: string | null;
  inputKey: string;
}

/** One question's judgement, as appended to `judgements.jsonl`. */
export interface LaEqaJudgement extends MarkReplyFields {
  questionId: string;
  inputKey: string;
  /** The mark as the reference reads it (an integer, not clipped); null when none could be read or the call failed. */
  score: number | null;
  judge: string;
  promptSha256: string | null;
  /** The answer judged, as sent. */
  prediction: string | null;
}

/** One line of an LA-EQA run's judgements.jsonl, as `scoreLaEqaPredictions` writes it. */
export const laEqaJudgementSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  score: z.number().nullable(),
  judge: z.string(),
  promptSha256: z.string().nullable(),
  prediction: z.string().nullable(),
  ...markReplyShape,
}) satisfies z.ZodType<LaEqaJudgement>;

/** The judge's prompt for one question: the prompt file (eqakit's or the reference's) filled with the question, the answer and the response. */
export function renderLaEqaJudgePrompt(question: LaEqaQuestion, response: string): string {
  return renderPromptFile(LA_EQA_JUDGE_PROMPT, { question: question.question, answer: question.answer, response });
}

export function prepareLaEqaJudgeTask(question: LaEqaQuestion, answer: string | null, judge: string): LaEqaJudgeTask {
  const prompt = answer === null ? null : renderLaEqaJudgePrompt(question, answer);
  const inputKey = sha256Hex(JSON.stringify([judge, question.questionId, prompt, LA_EQA_JUDGE_PARAMS]));
  return { question, answer, prompt, inputKey };
}

/** A judgement of `task` with no mark yet. */
export function pendingLaEqaJudgement(task: LaEqaJudgeTask, judge: string): LaEqaJudgement {
  return {
    questionId: task.question.questionId,
    inputKey: task.inputKey,
    score: null,
    judge,
    promptSha256: task.prompt === null ? null : sha256Hex(task.prompt),
    prediction: task.answer,
    replies: [],
    error: null,
    usage: emptyUsage(),
    finishedAt: "",
  };
}

/** Asks the judge for one question's mark; a reply it cannot read is a recorded, unreadable judgement, never a throw. */
export async function judgeLaEqa(task: LaEqaJudgeTask, judge: ChatModel): Promise<LaEqaJudgement> {
  const judgement = pendingLaEqaJudgement(task, judge.name);
  if (task.prompt === null) {
    judgement.score = LA_EQA_NO_ANSWER_SCORE;
  } else {
    const response = await judge.complete({ messages: [{ role: "user", content: task.prompt }], ...LA_EQA_JUDGE_PARAMS });
    addUsage(judgement.usage, response.usage);
    judgement.replies.push(response.text);
    judgement.score = parseLaEqaScore(response.text) ?? null;
    if (judgement.score === null) {
      judgement.error = "the judge's reply held no score (no JSON score and no digit 1-5)";
      judgement.unreadable = true;
    }
  }
  judgement.finishedAt = new Date().toISOString();
  return judgement;
}

/** The prompt's hash as a run's configuration records it (eqakit's file, or the reference's under `--prompts original`). */
export function laEqaPromptHashes(): Record<string, string> {
  const prompt = loadPromptFile(LA_EQA_JUDGE_PROMPT);
  return { [prompt.source ? `${LA_EQA_JUDGE_PROMPT} (original)` : LA_EQA_JUDGE_PROMPT]: prompt.sha256 };
}

/**
 * The mark in a judge's reply, read as the reference reads it: `int(json.loads(reply)["score"])`,
 * else the first character of the reply among 1-5; undefined where the reference raises.
 */
export function parseLaEqaScore(reply: string | null): number | undefined {
  if (reply === null) return undefined; // json.loads(None) and iterating None both raise
  const parsed = pythonJsonLoads(reply);
  if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null && !Array.isArray(parsed.value) && Object.hasOwn(parsed.value, "score")) {
    const score = pythonInt((parsed.value as Record<string, unknown>).score);
    if (score !== undefined) return score;
  }
  for (const char of reply) if ("12345".includes(char)) return Number(char);
  return undefined;
}

/**
 * Python's `json.loads`: JSON, plus the bare NaN, Infinity and -Infinity it also accepts. Those
 * are read as null: `int()` fails on all three as on None, so the score read is the same.
 */
function pythonJsonLoads(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(replaceNonFiniteTokens(text)) };
  } catch {
    return { ok: false };
  }
}

/** `text` with NaN, Infinity and -Infinity outside strings replaced by null (where JSON puts a value, as Python reads them). */
function replaceNonFiniteTokens(text: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === "\\") out += text[++i] ?? "";
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    const token = ["-Infinity", "Infinity", "NaN"].find((t) => text.startsWith(t, i));
    if (token) {
      out += "null";
      i += token.length - 1;
    } else {
      out += char;
    }
  }
  return out;
}

/** Python's `int(value)` for a value `json.loads` returns; undefined where it raises. */
function pythonInt(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return Number.isFinite(value) ? Math.trunc(value) + 0 : undefined;
  if (typeof value === "string") {
    // int(str): surrounding white space, a sign, digits with single underscores between them
    const text = value.trim();
    if (!/^[+-]?[0-9]+(?:_[0-9]+)*$/.test(text)) return undefined;
    return Number(text.replace(/_/g, "")) + 0;
  }
  return undefined;
}
