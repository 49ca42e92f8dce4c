import { join, resolve } from "node:path";
import type { z } from "zod";
import { readJsonl } from "./jsonl.js";
import { RunDirectory } from "./run-dir.js";

/** What a resumable stage appends per item: the item's id and a key of its exact inputs. */
export interface KeyedRecord {
  questionId: string;
  inputKey: string;
}

/** How a stage resumes: where its records are, what they must be, which item each stands for. */
export interface ResumeRule<Item, R> {
  /** The records file in the run folder (`traces.jsonl`, `judgements.jsonl`, …). */
  file: string;
  /** The record's schema, its writer's: a line that fails it is never reused, and its item is done again. */
  schema: z.ZodType<R>;
  /** Every item the stage is asked for, in order. */
  items: readonly Item[];
  /** The item's id, as its record names it. */
  id: (item: Item) => string;
  /** The key of the item's exact inputs and settings: a record made from other inputs is done again. */
  inputKey: (item: Item) => string;
  /** A record that stands (finished successfully); the others are done again. */
  succeeded: (record: R) => boolean;
  /** The id and input key a record carries (default: its `questionId` and `inputKey`). */
  recordKey?: (record: R) => { id: string; inputKey: string };
}

/** What an earlier, interrupted run leaves to a stage: the records that stand, and the items still to do. */
export interface Resumption<Item, R> {
  /** id → the record that stands for it. */
  reusable: Map<string, R>;
  /** The items without such a record, in the order given. */
  pending: Item[];
}

/**
 * The one resume loop of every stage: reads `rule.file` of the run folder, keeps each line its
 * schema accepts, and returns the records that can stand (finished successfully and made from
 * exactly the inputs wanted now, the last such line of an id winning) and the items left to do.
 * `from` is the open run folder (a line cut by a kill is cut off), or a folder's path for a look
 * that changes nothing (what --dry-run counts; nothing is reusable where the folder is missing).
 */
export function resumeItems<Item, R>(from: RunDirectory | string, rule: ResumeRule<Item, R>): Resumption<Item, R> {
  const parse = recordParser(rule.schema);
  const records = from instanceof RunDirectory ? from.readRecords(rule.file, parse).records : readJsonl(join(resolve(from), rule.file), parse, false).records;
  const wanted = new Map(rule.items.map((item) => [rule.id(item), rule.inputKey(item)]));
  const keyOf = rule.recordKey ?? ((record: R) => ({ id: (record as KeyedRecord).questionId, inputKey: (record as KeyedRecord).inputKey }));
  const reusable = new Map<string, R>();
  for (const record of records) {
    const { id, inputKey } = keyOf(record);
    if (rule.succeeded(record) && wanted.get(id) === inputKey) reusable.set(id, record);
  }
  return { reusable, pending: rule.items.filter((item) => !reusable.has(rule.id(item))) };
}

/**
 * A parser of one stored line by `schema`: the parsed record, or undefined when the line fails it.
 * The record keeps the line's own key order (fields the schema adds by default come after), so a
 * record written again is written as it was read.
 */
export function recordParser<R>(schema: z.ZodType<R>): (value: unknown) => R | undefined {
  return (value) => {
    const parsed = schema.safeParse(value);
    return parsed.success ? (inLineOrder(value, parsed.data) as R) : undefined;
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `parsed` with the keys of its objects in the order `read` had them; keys only `parsed` has come last. */
function inLineOrder(read: unknown, parsed: unknown): unknown {
  if (Array.isArray(read) && Array.isArray(parsed)) return parsed.map((item, i) => inLineOrder(read[i], item));
  if (!isPlainObject(read) || !isPlainObject(parsed)) return parsed;
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(read)) if (key in parsed) ordered[key] = inLineOrder(read[key], parsed[key]);
  for (const key of Object.keys(parsed)) if (!(key in ordered)) ordered[key] = parsed[key];
  return ordered;
}
