import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { z } from "zod";

/** Reads a JSONL file without touching it (a run may still be appending): complete lines only. */
export function readLines<T>(path: string, parse: (value: unknown) => T | undefined): { records: T[]; skipped: number } {
  const text = readFileSync(path, "utf8");
  const end = text.lastIndexOf("\n") + 1;
  const records: T[] = [];
  let skipped = 0;
  for (const line of text.slice(0, end).split("\n")) {
    if (line.trim() === "") continue;
    let record: T | undefined;
    try {
      record = parse(JSON.parse(line));
    } catch {
      record = undefined;
    }
    if (record === undefined) skipped++;
    else records.push(record);
  }
  return { records, skipped };
}

/** A JSON file's value, undefined when absent; an unreadable file is named in `notes`. */
export function readJson(path: string, notes: string[]): unknown {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    notes.push(`${basename(path)} could not be read (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

/** A summary's mean estimate as JSON holds it (NaN is written as null). */
export const meanEstimate = z.object({ n: z.number(), mean: z.number().nullable(), stderr: z.number().nullable(), ci: z.tuple([z.number().nullable(), z.number().nullable()]), confidence: z.number() });
export const usageTotals = z.looseObject({ calls: z.number(), cacheHits: z.number(), promptTokens: z.number(), completionTokens: z.number(), thinkingTokens: z.number().default(0), cachedPromptTokens: z.number().default(0), cachedCompletionTokens: z.number().default(0), images: z.number(), retries: z.number(), failures: z.number().default(0), latencyMs: z.number().default(0) });
