/**
 * The EAC judge of EXPRESS-Bench (seed `003_…`): a VLM sees the question, the reference answer,
 * the agent's response and the agent's final frame, and replies with two numbers: the grounding
 * δ ∈ {0, 0.5, 1} (is the response about what the image shows) and the accuracy σ (1-5).
 *
 * The request is built as the benchmark's code builds it from its `prompt/evaluation.txt`, here
 * from eqakit's own `prompts/eac-judge.txt`, written for the same job and the same reply (the
 * benchmark's file has no licence; `eqa data fetch express-bench` downloads it and `eqa explore
 * --prompts original` sends it instead): the file's second line is the system message,
 * lines four onwards followed by `Question: …\nAnswer: …\nResponse: …\nYour mark: ` are the user
 * text, and the final frame follows as an image with its own media type (the reference labels
 * every image `image/jpeg`, even its PNG frames). No generation parameters are set (the reference
 * sends none).
 *
 * Reading the reply. The reference (`evaluation.py`, `score`) strips "Your mark:", splits on ","
 * and reads `float(first), int(second)`, then clips δ·σ and σ into [0, 5] when it averages C and
 * C*; it crashes on "1, 4.5", on "1,4 (correct)", on prose and on a reply with two marks. eqakit
 * reads, in order of preference:
 *   1. the whole reply (after removing "Your mark:") as `δ , σ`;
 *   2. else the first `δ , σ` pair of numbers anywhere in the reply (prose around it is ignored);
 *   3. else numbers labelled `grounding … δ` and `accuracy … σ` (in either order);
 *   4. else exactly two numbers in the whole reply, taken as δ then σ.
 * A number may carry a sign ("1,-2" is δ 1, σ −2, as Python reads it), be a decimal ("0.5", ".5")
 * or a fraction "a/b" (the prompt asks for "fractions"): for δ its value a/b; for σ, "a/5" means a
 * out of 5 and any other a/b its value. δ and σ are kept as given, as the reference keeps them
 * (no snapping of δ to 0, 0.5, 1; σ may be a fraction where the reference's `int` would crash);
 * the score δ·σ is clipped into [0, 5] as the reference clips it, and so is σ in C*
 * (`expressMetrics`). A mark outside those ranges is scored, clipped, and the judgement says so
 * (`clipped`). A reply holding several different `δ , σ` pairs is scored by the first (the
 * fields the reference would read first) and flagged: `marks` lists every pair found.
 * A reply with no readable mark is a failure: the judgement records the raw reply and why.
 */
import { loadPromptFile } from "../../core/index.js";
import type { ChatModel, ChatRequest, ContentPart } from "../../models/index.js";
import type { EacScores } from "./express-metrics.js";

export const EAC_PROMPT = "eac-judge";

export interface EacInput {
  question: string;
  /** The reference answer. */
  answer: string;
  /** The agent's response. */
  response: string;
  /** The agent's final frame. */
  image: { data: Uint8Array; mediaType: string };
}

export type EacJudgement =
  | ({
      status: "ok";
      /** δ·σ clipped into [0, 5], the EAC score. */
      score: number;
      raw: string;
      rule: EacParseRule;
      /** Present when δ·σ or σ lay outside [0, 5] and the metrics clip them, as the reference does. */
      clipped?: true;
      /** Present when the reply held several different marks: every one, the first scored. */
      marks?: EacScores[];
    } & EacScores)
  | { status: "failed"; raw: string; error: string };

export type EacParseRule = "exact" | "pair" | "labelled" | "two-numbers";

export type EacParse = ({ ok: true; rule: EacParseRule; clipped?: true; marks?: EacScores[] } & EacScores) | { ok: false; error: string };

/** Python's `readlines()`: lines with their line breaks (universal newlines). */
function pythonReadLines(text: string): string[] {
  const normalised = text.replace(/\r\n?/g, "\n");
  const lines = normalised.split(/(?<=\n)/);
  return lines.filter((line) => line.length > 0);
}

/** The system and user texts of the EAC request, as the benchmark builds them. */
export function eacPromptTexts(input: Pick<EacInput, "question" | "answer" | "response">): { system: string; user: string } {
  const lines = pythonReadLines(loadPromptFile(EAC_PROMPT).text);
  const system = lines[1] ?? "";
  const user = lines.slice(3).join("") + `Question: ${input.question}\nAnswer: ${input.answer}\nResponse: ${input.response}\nYour mark: `;
  return { system, user };
}

/** The chat request for one EAC judgement: system text, then user text and the final frame. */
export function buildEacRequest(input: EacInput): ChatRequest {
  const { system, user } = eacPromptTexts(input);
  const content: ContentPart[] = [
    { type: "text", text: user },
    { type: "image", data: input.image.data, mediaType: input.image.mediaType },
  ];
  return {
    messages: [
      { role: "system", content: system },
      { role: "user", content },
    ],
  };
}

const NUM = String.raw`([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:\s*\/\s*(\d+(?:\.\d*)?|\.\d+))?`;
/** Where a number may start: not inside a word, a number or a fraction. */
const START = String.raw`(?<![\w.\/+-])`;

interface NumberToken {
  numerator: number;
  denominator: number | undefined;
}

function token(numerator: string | undefined, denominator: string | undefined): NumberToken {
  return { numerator: Number(numerator), denominator: denominator === undefined ? undefined : Number(denominator) };
}

function groundingValue(t: NumberToken): number {
  return t.denominator === undefined ? t.numerator : t.numerator / t.denominator;
}

function accuracyValue(t: NumberToken): number {
  if (t.denominator === undefined) return t.numerator;
  if (t.denominator === 5) return t.numerator;
  return t.numerator / t.denominator;
}

function scores(g: NumberToken, a: NumberToken): EacScores {
  return { grounding: groundingValue(g), accuracy: accuracyValue(a) };
}

const inRange = (x: number): boolean => x >= 0 && x <= 5;

function checked(mark: EacScores, rule: EacParseRule, marks?: EacScores[]): EacParse {
  const { grounding, accuracy } = mark;
  if (!Number.isFinite(grounding)) return { ok: false, error: `grounding ${grounding} is not a number` };
  if (!Number.isFinite(accuracy)) return { ok: false, error: `accuracy ${accuracy} is not a number` };
  const clipped = !inRange(grounding * accuracy) || !inRange(accuracy);
  return { ok: true, rule, grounding, accuracy, ...(clipped ? { clipped: true as const } : {}), ...(marks ? { marks } : {}) };
}

/** EAC's score of a mark: δ·σ clipped into [0, 5], as the reference clips it before averaging C. */
export function eacScore(mark: EacScores): number {
  return Math.min(5, Math.max(0, mark.grounding * mark.accuracy));
}

/** Reads an EAC reply (see the module comment for the rules). */
export function parseEacReply(reply: string): EacParse {
  const text = reply.replace(/your\s+mark\s*:/gi, " ").trim();
  const exact = new RegExp(`^${NUM}\\s*,\\s*${NUM}\\.?$`).exec(text);
  if (exact) return checked(scores(token(exact[1], exact[2]), token(exact[3], exact[4])), "exact");

  const pairs = [...text.matchAll(new RegExp(`${START}${NUM}\\s*,\\s*${NUM}(?![\\d\\/])`, "g"))].map((m) => scores(token(m[1], m[2]), token(m[3], m[4])));
  const first = pairs[0];
  if (first) {
    const different = pairs.filter((p, i) => pairs.findIndex((q) => q.grounding === p.grounding && q.accuracy === p.accuracy) === i);
    return checked(first, "pair", different.length > 1 ? different : undefined);
  }

  const g = new RegExp(`grounding[^\\d.+-]{0,40}?${NUM}`, "i").exec(text);
  const a = new RegExp(`accuracy[^\\d.+-]{0,40}?${NUM}`, "i").exec(text);
  if (g && a) return checked(scores(token(g[1], g[2]), token(a[1], a[2])), "labelled");

  const numbers = [...text.matchAll(new RegExp(`${START}${NUM}`, "g"))];
  if (numbers.length === 2) {
    const [one, two] = numbers as [RegExpMatchArray, RegExpMatchArray];
    return checked(scores(token(one[1], one[2]), token(two[1], two[2])), "two-numbers");
  }
  return { ok: false, error: numbers.length === 0 ? "no numbers in the reply" : `cannot tell grounding and accuracy apart among ${numbers.length} numbers` };
}

/**
 * Asks `model` for the EAC judgement of one answer. Errors of the call itself (an unreachable
 * endpoint) propagate; an unreadable reply is returned as a failed judgement with the raw text.
 */
export async function judgeEac(model: ChatModel, input: EacInput): Promise<EacJudgement> {
  const response = await model.complete(buildEacRequest(input));
  const raw = response.text ?? "";
  if (response.text === null) return { status: "failed", raw, error: "the model returned no text" };
  const parsed = parseEacReply(raw);
  if (!parsed.ok) return { status: "failed", raw, error: parsed.error };
  const { grounding, accuracy, rule } = parsed;
  return { status: "ok", grounding, accuracy, score: eacScore(parsed), raw, rule, ...(parsed.clipped ? { clipped: true as const } : {}), ...(parsed.marks ? { marks: parsed.marks } : {}) };
}
