import { loadPromptFile, pythonFormat, type PromptFile } from "../core/index.js";
import type { ContentPart } from "../models/index.js";

/** The paper's prompts (seed 004, appendix D), byte for byte. */
export const RM_PROMPTS = {
  /** "Rejective Finetuning Dataset Generation Prompt Guideline": the evaluator without the ground truth. */
  evaluator: "eqa-rm-evaluator",
  /** "Benchmark Dataset Generation Prompt Guideline": step 1, diverse responses. */
  response: "eqa-rm-response-generation",
  /** "Ground Truth Score Generation Prompt Guideline": step 2, scores with the ground truth. */
  groundTruth: "eqa-rm-ground-truth-scoring",
} as const;

export type RmPromptName = (typeof RM_PROMPTS)[keyof typeof RM_PROMPTS];

const FRAMES_LINE = "Video Frames (attached)\n";

/**
 * The reasoning trace as the paper's tables print it: each step a double-quoted string,
 * steps separated by ", " (`"step one", "step two"`), i.e. the JSON list without brackets.
 */
export function formatReasoningTrace(steps: readonly string[]): string {
  return steps.map((s) => JSON.stringify(s)).join(", ");
}

/**
 * One user message: the prompt's text with its fields filled (Python `str.format`, as the
 * file is written), the keyframes placed right after the "Video Frames (attached)" line
 * (after the whole text for a prompt without it).
 */
export function promptContent(name: RmPromptName, fields: Record<string, string>, images: readonly ContentPart[]): ContentPart[] {
  const prompt = loadPromptFile(name);
  const text = pythonFormat(prompt.text, fields);
  const at = text.indexOf(FRAMES_LINE);
  if (images.length === 0) return [{ type: "text", text }];
  if (at === -1) return [{ type: "text", text }, ...images];
  const cut = at + FRAMES_LINE.length;
  return [{ type: "text", text: text.slice(0, cut) }, ...images, { type: "text", text: text.slice(cut) }];
}

export function rmPrompt(name: RmPromptName): PromptFile {
  return loadPromptFile(name);
}

/** sha256 of each prompt file used, for summaries. */
export function rmPromptHashes(names: readonly RmPromptName[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, loadPromptFile(n).sha256]));
}
