import { loadPromptFile, pythonListRepr, pythonStrip, renderPromptFile, sha256Hex, type Question } from "../../core/index.js";
import { z } from "zod";
import { addUsage, askAgain, emptyUsage, type ChatMessage, type FailedReplyStatus, type ChatModel } from "../../models/index.js";
import { markReplyShape, type MarkReplyFields } from "../judging.js";

/**
 * `compat` reproduces OpenEQA's evaluate-predictions.py to the byte; `robust` (the default)
 * keeps the prediction whole, neutralises text addressed to the judge, reads the mark in any
 * reasonable form and re-asks when it cannot.
 */
export type LlmMatchMode = "robust" | "compat";

/** The judge parameters of OpenEQA's `get_llm_match_score`. */
export const LLM_MATCH_PARAMS = { temperature: 0.2, maxTokens: 32, seed: 1234 } as const;

/** How many times robust mode asks again after a reply it cannot read. */
export const ROBUST_REASKS = 2;

export const LLM_MATCH_PROMPTS = {
  plain: "openeqa-mmbench",
  extra: "openeqa-mmbench-extra",
  reask: "llm-match-reask",
} as const;

/**
 * OpenEQA's robustness study (appendix XI, Tables VIII-IX) varies one thing of the
 * LLM-Match prompt at a time: the judge's role, or the criterion for a 5. `role=ai` and
 * `criterion=perfect` are the reference prompts themselves.
 */
export const LLM_MATCH_VARIANTS = {
  role: ["ai", "score-master", "professional"],
  criterion: ["perfect", "contains", "person", "professional"],
} as const;

export type LlmMatchVariant =
  | { kind: "role"; value: (typeof LLM_MATCH_VARIANTS.role)[number] }
  | { kind: "criterion"; value: (typeof LLM_MATCH_VARIANTS.criterion)[number] };

/** What a judgement may change from the reference: the prompt variant, the temperature. */
export interface LlmMatchJudgeOptions {
  variant?: LlmMatchVariant;
  temperature?: number;
}

/** Parses `role=score-master` or `criterion=contains`; undefined for a text that is neither. */
export function parseLlmMatchVariant(text: string): LlmMatchVariant | undefined {
  const [kind, value] = text.split("=", 2).map((s) => s.trim());
  if (kind === "role" && (LLM_MATCH_VARIANTS.role as readonly string[]).includes(value ?? "")) return { kind, value: value as LlmMatchVariant["value"] } as LlmMatchVariant;
  if (kind === "criterion" && (LLM_MATCH_VARIANTS.criterion as readonly string[]).includes(value ?? "")) return { kind, value: value as LlmMatchVariant["value"] } as LlmMatchVariant;
  return undefined;
}

export function formatLlmMatchVariant(variant: LlmMatchVariant): string {
  return `${variant.kind}=${variant.value}`;
}

/** The prompt file of a template under a variant (the reference's own file for role=ai and criterion=perfect). */
export function llmMatchPromptName(base: string, variant: LlmMatchVariant | undefined): string {
  if (!variant || (variant.kind === "role" && variant.value === "ai") || (variant.kind === "criterion" && variant.value === "perfect")) return base;
  return `${base}.${variant.kind}-${variant.value}`;
}

/** The judge's generation parameters: the reference's, with the temperature changed when asked. */
export function llmMatchParams(options: LlmMatchJudgeOptions = {}): { temperature: number; maxTokens: number; seed: number } {
  return options.temperature === undefined ? LLM_MATCH_PARAMS : { ...LLM_MATCH_PARAMS, temperature: options.temperature };
}

/** The reference's pre-processing: cut a truthy answer after its last period (it cuts "3.5 m" to "3."). */
export function referenceCut(answer: string): string {
  const end = answer.lastIndexOf(".");
  return end >= 0 && end + 1 < answer.length ? answer.slice(0, end + 1) : answer;
}

/** The exact text sent to the judge, with the template chosen as the reference chooses it. */
export function renderLlmMatchPrompt(question: Question, prediction: string, variant?: LlmMatchVariant): { promptName: string; text: string } {
  const promptName = llmMatchPromptName(question.extraAnswers === undefined ? LLM_MATCH_PROMPTS.plain : LLM_MATCH_PROMPTS.extra, variant);
  const text = renderPromptFile(promptName, {
    question: question.question,
    answer: question.answer,
    prediction,
    extra_answers: question.extraAnswers === undefined ? "None" : pythonListRepr(question.extraAnswers),
  });
  return { promptName, text };
}

/** The reference's `parse_score`: an all-digit reply, or the integer after "Your mark:" up to the line's end. */
export function parseMarkCompat(reply: string | null): number | undefined {
  if (reply === null) return undefined; // the reference crashes on a reply without text
  if (/^\p{Nd}+$/u.test(reply)) return pythonInt(reply);
  const tag = "Your mark:";
  const start = reply.indexOf(tag);
  if (start === -1) return undefined;
  const newline = reply.indexOf("\n", start);
  const segment = newline === -1 ? reply.slice(start) : reply.slice(start, newline);
  return pythonInt(segment.split(tag).join(""));
}

/**
 * Python's `int(text)`: surrounding white space, a sign, `_` between digits, and any Unicode
 * decimal digits (`int("٤")` is 4, as is `int("４")`).
 */
function pythonInt(text: string): number | undefined {
  const trimmed = pythonStrip(text);
  if (!/^[+-]?\p{Nd}+(?:_\p{Nd}+)*$/u.test(trimmed)) return undefined;
  let ascii = "";
  for (const char of trimmed) {
    if (char === "_" || char === "+") continue;
    ascii += char === "-" ? "-" : String(decimalDigitValue(char));
  }
  return Number.parseInt(ascii, 10);
}

/** Unicode encodes every set of decimal digits as one contiguous run from 0 to 9. */
function decimalDigitValue(digit: string): number {
  const code = digit.codePointAt(0)!;
  let before = 0;
  while (/^\p{Nd}$/u.test(String.fromCodePoint(code - before - 1))) before++;
  return before % 10;
}

const MARK = String.raw`([1-5])(?:\.0+)?(?![0-9]|[.,][0-9])`;
const OUT_OF_FIVE = String.raw`(?:\s*(?:\/|out\s+of)\s*5(?![0-9]))?`;
const LABELLED_MARK = new RegExp(
  String.raw`\b(?:your\s+)?(?:mark|score|rating|grade)\b\s*(?:is\s*)?[:=\-]?\s*\(?\s*${MARK}${OUT_OF_FIVE}`,
  "gi",
);
const BARE_MARK = new RegExp(String.raw`^\(?\s*${MARK}${OUT_OF_FIVE}\s*\)?\.?$`, "i");
const FRACTION_MARK = new RegExp(String.raw`(?<![0-9.])${MARK}\s*(?:\/|out\s+of)\s*5(?![0-9])`, "gi");

/**
 * Reads a mark from 1 to 5 in any reasonable form: `Your mark: 4`, `4`, `**4**`, `Mark: 4/5`,
 * `Score: 4 out of 5`. Several different marks, or none, is unreadable.
 */
export function parseMarkRobust(reply: string | null): number | undefined {
  if (reply === null) return undefined;
  const text = reply.replace(/[*_`#]/g, "").trim();
  const bare = BARE_MARK.exec(text);
  if (bare) return Number(bare[1]);
  for (const pattern of [LABELLED_MARK, FRACTION_MARK]) {
    const marks = new Set([...text.matchAll(pattern)].map((m) => Number(m[1])));
    if (marks.size === 1) return [...marks][0];
    if (marks.size > 1) return undefined;
  }
  return undefined;
}

const ADDRESSES_JUDGE: RegExp[] = [
  /\byour\s+(?:mark|score|turn)\s*:?(?:\s*[0-9]+(?:\s*\/\s*[0-9]+)?)?/gi,
  /\b(?:mark|score|grade|rating)\s*[:=]\s*[0-9]+(?:\s*\/\s*[0-9]+)?/gi,
  /\bextra\s+answers\s*:/gi,
  /\b(?:ignore|disregard|forget|override)\b[^.!?\n]{0,60}?\b(?:instructions?|prompts?|rules|guidelines|above)\b/gi,
  /\b(?:give|assign|output|award|rate)\b[^.!?\n]{0,40}?\b(?:mark|score|grade|rating)\b(?:[^.!?\n]{0,20}?\b[0-9]+\b)?/gi,
  /\byou\s+are\s+(?:an?\s+)?(?:ai\s+assistant|evaluator|grader|judge|marker)\b/gi,
  /\b(?:rate|grade|mark|score)\s+(?:this|it|me|the\s+(?:response|answer|prediction))\b[^.!?\n]{0,20}?\b[0-9]+\b/gi,
];

const NEUTRALISED = "[text addressed to the grader removed]";

/**
 * Robust mode treats the prediction as untrusted: it is put on one line (so it cannot start
 * lines of its own that look like the prompt's), and text that addresses the judge is
 * replaced. `neutralised` says whether anything but line breaks was changed.
 */
export function neutralisePrediction(prediction: string): { text: string; neutralised: boolean } {
  let text = prediction.replace(/\s*[\r\n\u2028\u2029]+\s*/g, " ").trim();
  let neutralised = false;
  for (const pattern of ADDRESSES_JUDGE) {
    text = text.replace(pattern, () => {
      neutralised = true;
      return NEUTRALISED;
    });
  }
  return { text, neutralised };
}

/** One question's LLM-Match judgement, as appended to `judgements.jsonl`. */
export interface LlmMatchJudgement extends MarkReplyFields {
  questionId: string;
  /** The mark (1-5 when read; the raw integer in compat mode), 0 for a null answer, null on failure. */
  score: number | null;
  mode: LlmMatchMode;
  judge: string;
  /** Identifies the exact inputs: a resumed run reuses a judgement only when this matches. */
  inputKey: string;
  promptName: string | null;
  /** sha256 of the exact prompt text sent. */
  promptSha256: string | null;
  /** The prediction as sent to the judge (after the reference's cut, or neutralised). */
  prediction: string | null;
  /** Robust mode changed text in the prediction that addressed the judge. */
  neutralised: boolean;
}

/** One line of an LLM-Match run's judgements.jsonl, as `scorePredictions` writes it (usage totals an older version lacks are 0). */
export const llmMatchJudgementSchema = z.looseObject({
  questionId: z.string(),
  score: z.number().nullable(),
  mode: z.enum(["robust", "compat"]),
  judge: z.string(),
  inputKey: z.string(),
  promptName: z.string().nullable(),
  promptSha256: z.string().nullable(),
  prediction: z.string().nullable(),
  neutralised: z.boolean(),
  ...markReplyShape,
}) satisfies z.ZodType<LlmMatchJudgement>;

/** What the judge is asked about one question: everything needed to call it or to skip it. */
export interface LlmMatchTask {
  question: Question;
  /** The prediction as sent, or null when there is no answer to judge (scores 0 without a call). */
  prediction: string | null;
  neutralised: boolean;
  promptName: string | null;
  prompt: string | null;
  inputKey: string;
  /** The judge's parameters (the reference's unless a temperature was given). */
  params?: { temperature: number; maxTokens: number; seed: number };
}

export function prepareLlmMatchTask(question: Question, answer: string | null, mode: LlmMatchMode, judge: string, options: LlmMatchJudgeOptions = {}): LlmMatchTask {
  let prediction: string | null = answer;
  let neutralised = false;
  if (mode === "compat") {
    if (answer) prediction = referenceCut(answer);
  } else if (answer !== null) {
    const cleaned = neutralisePrediction(answer);
    // an empty answer is no answer: it scores as the reference scores None, without a call
    prediction = cleaned.text === "" ? null : cleaned.text;
    neutralised = cleaned.neutralised;
  }
  const rendered = prediction === null ? null : renderLlmMatchPrompt(question, prediction, options.variant);
  const params = llmMatchParams(options);
  const inputKey = sha256Hex(JSON.stringify([judge, mode, question.questionId, rendered?.text ?? null, params]));
  return { question, prediction, neutralised, promptName: rendered?.promptName ?? null, prompt: rendered?.text ?? null, inputKey, params };
}

/** A judgement of `task` with no mark yet: what judging fills in, or a failure records. */
export function pendingJudgement(task: LlmMatchTask, judge: string, mode: LlmMatchMode): LlmMatchJudgement {
  return {
    questionId: task.question.questionId,
    score: null,
    mode,
    judge,
    inputKey: task.inputKey,
    promptName: task.promptName,
    promptSha256: task.prompt === null ? null : sha256Hex(task.prompt),
    prediction: task.prediction,
    neutralised: task.neutralised,
    replies: [],
    error: null,
    usage: emptyUsage(),
    finishedAt: "",
  };
}

/** Asks the judge for one question's mark; never throws for a reply it cannot read (that is a recorded failure). */
export async function judgeLlmMatch(task: LlmMatchTask, judge: ChatModel, mode: LlmMatchMode): Promise<LlmMatchJudgement> {
  const judgement = pendingJudgement(task, judge.name, mode);
  if (task.prompt === null) {
    judgement.score = 0;
  } else {
    let messages: ChatMessage[] = [{ role: "user", content: task.prompt }];
    const parse = mode === "compat" ? parseMarkCompat : parseMarkRobust;
    const attempts = mode === "compat" ? 1 : 1 + ROBUST_REASKS;
    for (let attempt = 0; attempt < attempts && judgement.score === null; attempt++) {
      if (attempt > 0) messages = askAgain(messages, judgement.replies[attempt - 1] ?? null, loadPromptFile(LLM_MATCH_PROMPTS.reask).text.trim());
      const response = await judge.complete({ messages: [...messages], ...(task.params ?? LLM_MATCH_PARAMS) });
      addUsage(judgement.usage, response.usage);
      judgement.replies.push(response.text);
      judgement.score = parse(response.text) ?? null;
    }
    if (judgement.score === null) {
      judgement.error = `the judge's reply could not be read as a mark${attempts > 1 ? ` (asked ${attempts} times)` : ""}`;
      judgement.unreadable = true;
    }
  }
  judgement.finishedAt = new Date().toISOString();
  return judgement;
}
