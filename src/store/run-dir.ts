import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeFileAtomically } from "../data/index.js";
import { JsonlAppender, readJsonl, type JsonlContents } from "./jsonl.js";

/**
 * A run directory: appended JSONL records of finished work, and final JSON outputs
 * written atomically. Running again in the same directory resumes.
 */
export class RunDirectory {
  readonly path: string;
  /** True when the directory already existed: the run resumes. */
  readonly existed: boolean;

  constructor(path: string) {
    this.path = resolve(path);
    this.existed = existsSync(this.path);
    mkdirSync(this.path, { recursive: true });
  }

  file(name: string): string {
    return join(this.path, name);
  }

  appender(name: string): JsonlAppender {
    return new JsonlAppender(this.file(name));
  }

  readRecords<T>(name: string, parse: (value: unknown) => T | undefined): JsonlContents<T> {
    return readJsonl(this.file(name), parse);
  }

  async writeJson(name: string, value: unknown): Promise<void> {
    await writeFileAtomically(this.file(name), `${JSON.stringify(value, null, 2)}\n`);
  }
}

/** A fresh run directory name under `runs/`, for commands run without --out. */
export function defaultRunPath(kind: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return join("runs", `${kind}-${stamp}`);
}
