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
}

const loaded = new Map<string, PromptFile>();

export function loadPromptFile(name: string): PromptFile {
  let prompt = loaded.get(name);
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
