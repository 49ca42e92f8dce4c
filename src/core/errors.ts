/**
 * Errors a user can cause and fix (a bad file, a bad flag, an unreachable endpoint).
 * The CLI prints their message without a stack trace and exits 2; anything else is a bug.
 */
export interface InputLocation {
  file?: string;
  /** 0-based index of the record inside the file (messages count from 1: index 3 is "record 4"). */
  index?: number;
  /** The record's id, when it has one. */
  id?: string;
  /** A field of the record, or a command-line option (`--judge`): messages call the latter an option. */
  field?: string;
  /** 1-based line of the file. */
  line?: number;
  column?: number;
}

export class UserError extends Error {
  readonly location: InputLocation;
  readonly hint: string | undefined;

  constructor(message: string, location: InputLocation = {}, hint?: string) {
    super(formatMessage(message, location, hint));
    this.name = "UserError";
    this.location = location;
    this.hint = hint;
  }
}

function formatMessage(message: string, at: InputLocation, hint?: string): string {
  const parts: string[] = [];
  if (at.file !== undefined) {
    let where = at.file;
    if (at.line !== undefined) where += `:${at.line}${at.column !== undefined ? `:${at.column}` : ""}`;
    parts.push(where);
  }
  // records count from 1 as a reader counts them; the line, when known, is named beside the file
  if (at.index !== undefined) parts.push(`record ${at.index + 1}${at.id !== undefined ? ` (id ${at.id})` : ""}`);
  else if (at.id !== undefined) parts.push(`id ${at.id}`);
  if (at.field !== undefined) parts.push(at.field.startsWith("-") ? `option ${at.field}` : `field "${at.field}"`);
  const prefix = parts.length > 0 ? `${parts.join(", ")}: ` : "";
  return `${prefix}${message}${hint ? `\n  ${hint}` : ""}`;
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}

/** A readable one-line description of any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
