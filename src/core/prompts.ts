import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "./hash.js";
import { packageRoot } from "./package.js";
import { pythonFormat, pythonStrip } from "./python-format.js";

/** A prompt file from `prompts/`, with the hash that summaries record. */
export interface PromptFile {
  name: string;
  /** The file's exact text. */
  text: string;
  sha256: string;
  /** Where the text was read from, when not eqakit's own `prompts/` (see `replacePromptFile`). */
  source?: string;
}

const loaded = new Map<string, PromptFile>();
const replaced = new Map<string, PromptFile>();

/**
 * Sends `text` wherever eqakit sends its prompt `name`, for the rest of the process: a
 * benchmark's original prompt that cannot be shipped, downloaded by `eqa data fetch` (`eqa
 * explore --prompts original`). The prompt hashes that summaries and resume keys record follow.
 */
export function replacePromptFile(name: string, text: string, source: string): PromptFile {
  const prompt = { name, text, sha256: sha256Hex(text), source };
  replaced.set(name, prompt);
  return prompt;
}

/** Undoes every `replacePromptFile`: eqakit's own prompts again. */
export function restorePromptFiles(): void {
  replaced.clear();
}

export function loadPromptFile(name: string): PromptFile {
  let prompt = replaced.get(name) ?? loaded.get(name);
  if (!prompt) {
    const text = readFileSync(join(packageRoot, "prompts", `${name}.txt`), "utf8");
    prompt = { name, text, sha256: sha256Hex(text) };
    loaded.set(name, prompt);
  }
  return prompt;
}

/**
 * A prompt file filled as OpenEQA's scripts fill theirs: the file's text stripped of
 * surrounding white space, then Python's `str.format` with the given fields.
 */
export function renderPromptFile(name: string, fields: Record<string, string>): string {
  return pythonFormat(pythonStrip(loadPromptFile(name).text), fields);
}
