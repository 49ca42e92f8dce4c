import { z } from "zod";
import { UserError, indefinite } from "../core/index.js";

/**
 * Validates each record of a JSON array with a zod schema, failing on the first bad
 * record with an error that names the file, the record (index and id) and the field.
 */
export function validateRecords<T>(
  value: unknown,
  schema: z.ZodType<T>,
  file: string,
  what: string,
): T[] {
  if (!Array.isArray(value)) {
    throw new UserError(`expected a JSON array of ${what}, found ${describeJsonType(value)}`, { file });
  }
  const records: T[] = [];
  value.forEach((raw: unknown, index) => {
    const result = schema.safeParse(raw);
    if (!result.success) throw recordError(result.error, raw, index, file);
    records.push(result.data);
  });
  return records;
}

function recordError(error: z.ZodError, raw: unknown, index: number, file: string): UserError {
  const { message, field } = describeZodError(error, raw);
  const id = recordId(raw);
  return new UserError(message, { file, index, ...(id !== undefined ? { id } : {}), ...(field ? { field } : {}) });
}

/**
 * The first problem zod found in `raw`, as every loader reports it: the field's path (`actions.step_3.position`)
 * and what is wrong there ("is missing", "expected number, found a string", or zod's own words).
 */
export function describeZodError(error: z.ZodError, raw: unknown): { message: string; field?: string } {
  const issue = error.issues[0];
  if (!issue) return { message: "invalid value" };
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : undefined;
  return { message: issueMessage(issue, raw), ...(field ? { field } : {}) };
}

function issueMessage(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === "invalid_type") {
    const found = valueAt(raw, issue.path);
    if (found === undefined) return "is missing";
    return `expected ${issue.expected}, found ${describeJsonType(found)}`;
  }
  return issue.message;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = raw;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** A record's id for messages: its `question_id` or `id` (records without either are named by index alone). */
function recordId(raw: unknown): string | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  for (const key of ["question_id", "id"]) {
    const id = (raw as Record<string, unknown>)[key];
    if (typeof id === "string") return id;
  }
  return undefined;
}

/** Refuses a file without records: an empty selection would run nothing, report NaN and exit 0. */
export function requireRecords<T>(records: T[], file: string, what: string, hint: string): T[] {
  if (records.length === 0) throw new UserError(`the file holds no ${what}`, { file }, hint);
  return records;
}

export function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return indefinite(typeof value);
}

/** Lists at most `limit` items, saying how many more there are. */
export function firstItems(items: readonly string[], limit = 10): string {
  const shown = items.slice(0, limit).join(", ");
  return items.length > limit ? `${shown}, … (${items.length - limit} more)` : shown;
}
