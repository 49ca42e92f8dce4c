/**
 * The extraction step of TAG-EQA's judge: an LLM reads a free-text answer and writes down its
 * structure as JSON (groups of predicate, objects and value), which eqakit validates and then
 * scores itself (structured-match.ts). The paper's judge wrote a whole Python scoring program
 * (Fig. 7); eqakit asks only for the structure, so no model-written code runs.
 *
 * The request is `prompts/tag-judge-extract.txt` filled with the question and the answer
 * (temperature 0, seed 1234, up to 2,048 tokens). The reply is read defensively: the JSON may sit
 * in a code fence or among prose; Python literals (None, True, False) and trailing commas are
 * tolerated; the root may be the array of groups, an object holding it ("groups", "answer",
 * "structured_answer") or a single group; an object may be a bare type string and a position an
 * {x, y, z} object. What comes out is validated with the dataset's zod schema. On an unreadable
 * reply the judge is asked once more (`prompts/tag-judge-extract-reask.txt`, naming the problem);
 * a second failure is recorded as an invalid answer, never thrown.
 */
import { loadPromptFile, renderPromptFile } from "../../core/index.js";
import { structuredAnswerSchema, type StructuredAnswer } from "../../data/index.js";
import { addUsage, askAgain, emptyUsage, type ChatMessage, type ChatModel, type UsageTotals } from "../../models/index.js";

export const TAG_EXTRACT_PROMPTS = { extract: "tag-judge-extract", reask: "tag-judge-extract-reask" } as const;
export const TAG_EXTRACT_PARAMS = { temperature: 0, maxTokens: 2048, seed: 1234 } as const;

export type StructureParse = { ok: true; answer: StructuredAnswer } | { ok: false; error: string };

export interface Extraction {
  /** "structured": the prediction was already a structured answer; "empty": nothing to extract; "judge": extracted by the LLM. */
  source: "structured" | "empty" | "judge";
  /** null when the judge's replies could not be read (an invalid answer). */
  answer: StructuredAnswer | null;
  replies: (string | null)[];
  error: string | null;
  usage: UsageTotals;
}

export function renderExtractionPrompt(question: string, answer: string): string {
  return renderPromptFile(TAG_EXTRACT_PROMPTS.extract, { question, answer });
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function coercePosition(value: unknown): unknown {
  const r = record(value);
  if (r && "x" in r && "y" in r && "z" in r) return [r.x, r.y, r.z].map(Number);
  if (Array.isArray(value) && value.length === 3) return value.map((v) => (typeof v === "string" && v.trim() !== "" ? Number(v) : v));
  return value ?? null;
}

function coerceObject(value: unknown): unknown {
  if (typeof value === "string") return { type: value, caption: null, position: null };
  const r = record(value);
  if (!r) return value;
  return { ...r, caption: r.caption ?? null, position: coercePosition(r.position) };
}

function coerceGroup(value: unknown): unknown {
  const r = record(value);
  if (!r) return value;
  const objects = Array.isArray(r.objects) ? r.objects.map(coerceObject) : r.objects ?? [];
  return { ...r, predicate: r.predicate ?? "", objects, value: r.value === undefined ? null : r.value };
}

/** The structured answer a parsed JSON value stands for, leniently shaped, or why it is none. */
export function coerceStructuredAnswer(value: unknown): StructureParse {
  let groups: unknown = value;
  const root = record(value);
  if (root) {
    const inner = root.groups ?? root.answer ?? root.structured_answer;
    groups = Array.isArray(inner) ? inner : "objects" in root || "predicate" in root ? [root] : value;
  }
  if (!Array.isArray(groups)) return { ok: false, error: "the JSON is not an array of groups" };
  const result = structuredAnswerSchema.safeParse(groups.map(coerceGroup));
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, error: `group ${issue?.path.map(String).join(".") ?? "?"}: ${issue?.message ?? "invalid"}` };
  }
  return { ok: true, answer: result.data };
}

/** Balanced JSON-looking spans of `text`, each starting at a `[` or `{`, string-aware. */
function bracketSpans(text: string): string[] {
  const spans: string[] = [];
  for (let start = 0; start < text.length && spans.length < 20; start++) {
    const open = text[start];
    if (open !== "[" && open !== "{") continue;
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === "[" || c === "{") depth++;
      else if (c === "]" || c === "}") {
        depth--;
        if (depth === 0) {
          spans.push(text.slice(start, i + 1));
          start = i;
          break;
        }
      }
    }
  }
  return spans;
}

function parseJsonLenient(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const fixed = text
      .replace(/\bNone\b/g, "null")
      .replace(/\bTrue\b/g, "true")
      .replace(/\bFalse\b/g, "false")
      .replace(/,\s*([\]}])/g, "$1");
    return JSON.parse(fixed);
  }
}

/** Reads a structured answer from a judge's reply (see the module comment). */
export function parseStructuredReply(reply: string | null): StructureParse {
  if (reply === null || reply.trim() === "") return { ok: false, error: "the reply is empty" };
  const fenced = [...reply.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)].map((m) => m[1]!);
  const candidates = [...fenced, reply.trim(), ...bracketSpans(reply)];
  let firstError: string | undefined;
  for (const candidate of candidates) {
    let value: unknown;
    try {
      value = parseJsonLenient(candidate.trim());
    } catch {
      continue;
    }
    const parsed = coerceStructuredAnswer(value);
    if (parsed.ok) return parsed;
    firstError ??= parsed.error;
  }
  return { ok: false, error: firstError ?? "no JSON found in the reply" };
}

/**
 * A prediction that is already a structured answer: a JSON value of the schema, or a string
 * holding one (as the whole string). Undefined for free text.
 */
export function structuredPrediction(answer: unknown): StructuredAnswer | undefined {
  let value = answer;
  if (typeof answer === "string") {
    const text = answer.trim();
    if (!text.startsWith("[") && !text.startsWith("{")) return undefined;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(value) && !record(value)) return undefined;
  const parsed = coerceStructuredAnswer(value);
  return parsed.ok ? parsed.answer : undefined;
}

/**
 * Extracts the structure of a free-text answer with `judge`. Errors of the call itself (an
 * unreachable endpoint) propagate; unreadable replies give `answer: null` with the reason.
 */
export async function extractStructuredAnswer(judge: ChatModel, question: string, answer: string): Promise<Extraction> {
  const extraction: Extraction = { source: "judge", answer: null, replies: [], error: null, usage: emptyUsage() };
  if (answer.trim() === "") return { ...extraction, source: "empty", answer: [] };
  let messages: ChatMessage[] = [{ role: "user", content: renderExtractionPrompt(question, answer) }];
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await judge.complete({ messages: [...messages], ...TAG_EXTRACT_PARAMS });
    addUsage(extraction.usage, response.usage);
    extraction.replies.push(response.text);
    const parsed = parseStructuredReply(response.text);
    if (parsed.ok) return { ...extraction, answer: parsed.answer, error: null };
    extraction.error = parsed.error;
    messages = askAgain(messages, response.text, renderPromptFile(TAG_EXTRACT_PROMPTS.reask, { error: parsed.error }));
  }
  extraction.error = `the judge's replies could not be read as a structured answer (asked twice): ${extraction.error}`;
  return extraction;
}

/** sha256 of each extraction prompt file, for summaries. */
export function extractionPromptHashes(): Record<string, string> {
  return Object.fromEntries(Object.values(TAG_EXTRACT_PROMPTS).map((name) => [name, loadPromptFile(name).sha256]));
}
