import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { z } from "zod";
import { UserError } from "../core/index.js";

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

/**
 * Every complete line of a JSONL file that eqakit wrote, each checked against the schema of its
 * writer. A line that is not JSON or not of that shape is eqakit's own output gone wrong (or a
 * file edited by hand): a UserError naming the file, the line and the field, never a skip. The
 * text after the last newline is a line still being written (a run in progress), left for later.
 */
export function readRecords<S extends z.ZodType>(path: string, schema: S): z.output<S>[] {
  const text = readFileSync(path, "utf8");
  const end = text.lastIndexOf("\n") + 1;
  const records: z.output<S>[] = [];
  text
    .slice(0, end)
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new UserError(`the line is not JSON (${error instanceof Error ? error.message : String(error)})`, { file: path, line: i + 1 }, "eqakit wrote this file one JSON record a line: restore the line, or remove it and run the command again to redo that record");
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new UserError(`the record does not have the shape eqakit writes: ${issue?.message ?? "invalid"}`, { file: path, line: i + 1, ...(issue && issue.path.length > 0 ? { field: issue.path.join(".") } : {}) }, "restore the line, or remove it and run the command that wrote the file again to redo that record");
      }
      records.push(parsed.data);
    });
  return records;
}

/** A JSON file that eqakit wrote, checked against its writer's schema; undefined when absent. Unreadable: a UserError naming the file and field. */
export function readJsonFile<S extends z.ZodType>(path: string, schema: S): z.output<S> | undefined {
  if (!existsSync(path)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UserError(`the file is not JSON (${error instanceof Error ? error.message : String(error)})`, { file: path }, "eqakit writes this file whole when a stage ends: run the command that wrote it again");
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`the file does not have the shape eqakit writes: ${issue?.message ?? "invalid"}`, { file: path, ...(issue && issue.path.length > 0 ? { field: issue.path.join(".") } : {}) }, "run the command that wrote it again, or restore the file");
  }
  return parsed.data;
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
