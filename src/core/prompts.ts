import { AsyncLocalStorage } from "node:async_hooks";
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
  /** Where the text was read from, when not eqakit's own `prompts/` (see `withPromptFiles`). */
  source?: string;
}

const loaded = new Map<string, PromptFile>();
/** The prompts sent in place of eqakit's within a `withPromptFiles` call, by name. */
const scoped = new AsyncLocalStorage<ReadonlyMap<string, PromptFile>>();

/** A prompt's text read from elsewhere (a benchmark's original that cannot be shipped), to send in place of eqakit's prompt `name`. */
export function promptFileFrom(name: string, text: string, source: string): PromptFile {
  return { name, text, sha256: sha256Hex(text), source };
}

/**
 * Runs `work` with `prompts` sent wherever eqakit sends its prompts of the same names (`eqa
 * explore --prompts original`), and their hashes in what summaries and resume keys record. The
 * replacement holds for what `work` does, awaits included, and nothing else: another run in the
 * same process, before, after or at the same time, sends eqakit's own.
 */
export function withPromptFiles<T>(prompts: readonly PromptFile[], work: () => T): T {
  if (prompts.length === 0) return work();
  return scoped.run(new Map(prompts.map((p) => [p.name, p])), work);
}

export function loadPromptFile(name: string): PromptFile {
  const replaced = scoped.getStore()?.get(name);
  if (replaced) return replaced;
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
