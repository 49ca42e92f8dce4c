import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, truncateSync, writeSync } from "node:fs";
import { outputFailure } from "../core/index.js";
import { dirname } from "node:path";

export interface JsonlContents<T> {
  records: T[];
  /** Lines that were not valid JSON (a write cut by a kill leaves at most one, at the end). */
  damagedLines: number;
}

/**
 * Reads a JSONL file written by {@link JsonlAppender}. A last line without its newline is
 * what a killed process leaves behind: it is ignored, and cut off so appends start clean
 * (unless `repair` is false: a look that must change nothing, as --dry-run takes).
 */
export function readJsonl<T>(path: string, parse: (value: unknown) => T | undefined, repair = true): JsonlContents<T> {
  if (!existsSync(path)) return { records: [], damagedLines: 0 };
  const text = readUpToSize(path).toString("utf8");
  const end = text.lastIndexOf("\n") + 1;
  if (repair && end < text.length) truncateSync(path, Buffer.byteLength(text.slice(0, end)));
  const records: T[] = [];
  let damagedLines = end < text.length ? 1 : 0;
  for (const line of text.slice(0, end).split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      damagedLines++;
      continue;
    }
    const record = parse(value);
    if (record === undefined) damagedLines++;
    else records.push(record);
  }
  return { records, damagedLines };
}

/**
 * The bytes `path` held when opened: a file that grows meanwhile, or a device that never ends
 * (a records file linked to /dev/full or /dev/zero), reads as what its size says.
 */
function readUpToSize(path: string): Buffer {
  const fd = openSync(path, "r");
  try {
    const bytes = Buffer.alloc(fstatSync(fd).size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return bytes.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Appends one JSON record a line, each written at once, so a kill loses nothing finished. */
export class JsonlAppender {
  private fd: number | undefined;
  /** Bytes in the file after the last whole line. */
  private size = 0;

  constructor(readonly path: string) {}

  /** Appends one line; a write the disk refuses is undone (no half line is left) and thrown as an OutputError. */
  append(record: unknown): void {
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.path), { recursive: true });
        this.fd = openSync(this.path, "a");
        this.size = fstatSync(this.fd).size;
      }
      for (let written = 0; written < line.length; ) written += writeSync(this.fd, line, written);
      this.size += line.length;
    } catch (error) {
      if (this.fd !== undefined) {
        try {
          ftruncateSync(this.fd, this.size);
        } catch {
          // the file keeps a torn last line, which the reader ignores and cuts off
        }
      }
      throw outputFailure(this.path, error);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
