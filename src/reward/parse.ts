/**
 * Reading what models write: the reward model's `<critique>…</critique><score>N</score>`
 * (EQA-RM's evaluator output) and a responder's `<reasoning_trace><think>…</think>…
 * </reasoning_trace><predicted_answer>…</predicted_answer>` (EQARewardBench's step 1).
 */

/** The reward model's reading of one reply. */
export interface ParsedEvaluation {
  /** The score, 0-10; null when the reply has none usable (then `error` says why). */
  score: number | null;
  critique: string | null;
  /**
   * The reply follows the structure exactly: one `<critique>…</critique>` followed by one
   * `<score>…</score>` holding only a number (C-GRPO's format reward R_f).
   */
  wellFormed: boolean;
  error?: string;
}

export const SCORE_MIN = 0;
export const SCORE_MAX = 10;

/**
 * A score tag's content (trimmed): a number, optionally "Score:" before it, "/10" or "out of 10"
 * and a full stop after it. Every optional part starts with a character that is not a space, so
 * no two `\s*` compete for the same spaces (which made a long run of spaces quadratic).
 */
const SCORE_CONTENT = /^(?:score\s*[:=]?\s*)?([-+]?\d+(?:\.\d+)?)(?:\s*(?:\/|out\s+of)\s*10)?(?:\s*\.)?$/i;

/**
 * Parses an evaluation robustly: tags in any case and with spaces inside (`< score >`),
 * markdown or brackets around the number (`**7**`, `[7]`), `7/10`, `7 out of 10`, `Score: 7`, a last
 * `<score>` left open by a reply cut at its token limit. The last `<score>` holding just a
 * score wins (a model that first echoes the template's placeholder, "[Your final 1-10
 * weighted score …]", then answers, is read right; the placeholder alone is no score). A reply with no score, or a
 * score outside 0-10, is a failure with the reason in `error`.
 */
export function parseEvaluation(reply: string | null): ParsedEvaluation {
  if (reply === null || reply.trim() === "") return { score: null, critique: null, wellFormed: false, error: "empty reply" };
  const critique = lastTagContent(reply, "critique");
  const scores = tagContents(reply, "score");
  let scoreText: string | undefined;
  for (let i = scores.length - 1; i >= 0; i--) {
    const match = SCORE_CONTENT.exec(scores[i]!.replace(/^\[|\]$/g, "").trim());
    if (match) {
      scoreText = match[1]!;
      break;
    }
  }
  const wellFormed = isWellFormed(reply);
  if (scoreText === undefined) {
    return { score: null, critique, wellFormed: false, error: scores.length === 0 ? "no <score> tag in the reply" : "no score number inside <score>" };
  }
  const score = Number(scoreText);
  if (!Number.isFinite(score) || score < SCORE_MIN || score > SCORE_MAX) {
    return { score: null, critique, wellFormed: false, error: `score ${scoreText} is outside 0-10` };
  }
  return { score, critique, wellFormed };
}

/**
 * `<critique>` then `<score>`, each exactly once and closed, the score a bare number 0-10.
 * Read in one pass: the critique ends at its first `</critique>` (a later one would put a
 * closing tag inside the critique, which is not well formed either way).
 */
export function isWellFormed(reply: string): boolean {
  const start = reply.length - reply.trimStart().length;
  if (!reply.startsWith("<critique>", start)) return false;
  const contentStart = start + "<critique>".length;
  const contentEnd = reply.indexOf("</critique>", contentStart);
  if (contentEnd === -1) return false;
  const critique = reply.slice(contentStart, contentEnd);
  if (critique.includes("<critique>") || critique.includes("<score>") || critique.includes("</score>") || critique.trim().length === 0) return false;
  const match = WELL_FORMED_SCORE.exec(reply.slice(contentEnd + "</critique>".length).trim());
  if (!match) return false;
  const score = Number(match[1]);
  return score >= SCORE_MIN && score <= SCORE_MAX;
}

const WELL_FORMED_SCORE = /^<score>\s*(\d+(?:\.\d+)?)\s*<\/score>$/;

const tagPatterns = new Map<string, { open: RegExp; close: RegExp }>();

function patternsFor(tag: string): { open: RegExp; close: RegExp } {
  let patterns = tagPatterns.get(tag);
  if (!patterns) {
    patterns = { open: new RegExp(`<\\s*${tag}\\s*>`, "gi"), close: new RegExp(`<\\s*/\\s*${tag}\\s*>`, "gi") };
    tagPatterns.set(tag, patterns);
  }
  return patterns;
}

/**
 * The contents of every `<tag>…</tag>` (case and inner spaces ignored); a last unclosed one runs
 * to the end. An opening tag followed by another opening tag before any closing one is skipped.
 * Linear: the opening and closing tags are each found in one scan, then walked together.
 */
export function tagContents(text: string, tag: string): string[] {
  const { open, close } = patternsFor(tag);
  const opens = positions(text, open);
  if (opens.length === 0) return [];
  const closes = positions(text, close);
  const contents: string[] = [];
  let c = 0;
  let o = 0;
  while (o < opens.length) {
    const start = opens[o]!.end;
    while (c < closes.length && closes[c]!.start < start) c++;
    const end = closes[c];
    const nextOpen = opens[o + 1];
    if (end && (nextOpen === undefined || end.start < nextOpen.start)) {
      contents.push(stripMarkdown(text.slice(start, end.start)));
      while (o < opens.length && opens[o]!.start < end.end) o++;
    } else if (nextOpen === undefined) {
      contents.push(stripMarkdown(text.slice(start)));
      break;
    } else {
      o++;
    }
  }
  return contents;
}

function positions(text: string, pattern: RegExp): { start: number; end: number }[] {
  const found: { start: number; end: number }[] = [];
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) found.push({ start: match.index, end: pattern.lastIndex });
  return found;
}

function lastTagContent(text: string, tag: string): string | null {
  const all = tagContents(text, tag);
  return all.length === 0 ? null : all[all.length - 1]!;
}

function stripMarkdown(text: string): string {
  return text.replace(/\*\*|__|`/g, "").trim();
}

/** A responder's reply read as a reasoning trace and a predicted answer. */
export interface ParsedResponse {
  reasoningTrace: string[];
  predictedAnswer: string | null;
  error?: string;
}

/**
 * Parses a reply to the response-generation prompt: each `<think>` block is one step (empty
 * ones dropped), looked for inside `<reasoning_trace>` when there is one; the answer is the
 * `<predicted_answer>` (an unclosed one runs to the end).
 */
export function parseAgentResponse(reply: string | null): ParsedResponse {
  if (reply === null || reply.trim() === "") return { reasoningTrace: [], predictedAnswer: null, error: "empty reply" };
  const traceBlock = tagContents(reply, "reasoning_trace")[0] ?? reply;
  const steps = tagContents(traceBlock, "think").filter((s) => s.length > 0);
  const answers = tagContents(reply, "predicted_answer").filter((s) => s.length > 0);
  const predictedAnswer = answers.length > 0 ? answers[answers.length - 1]! : null;
  const errors: string[] = [];
  if (steps.length === 0) errors.push("no <think> step");
  if (predictedAnswer === null) errors.push("no <predicted_answer>");
  return { reasoningTrace: steps, predictedAnswer, ...(errors.length > 0 ? { error: errors.join(", ") } : {}) };
}
