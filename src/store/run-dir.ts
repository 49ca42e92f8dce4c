import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UserError, eqakitVersion, outputFailure, writeFileAtomically, removeStaleTemporaries } from "../core/index.js";
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
    const problem = outputDirectoryProblem(this.path);
    if (problem) throw new UserError(problem, { file: this.path }, "give --out a new or existing directory");
    this.existed = existsSync(this.path);
    try {
      mkdirSync(this.path, { recursive: true });
    } catch (error) {
      throw outputFailure(this.path, error);
    }
    // what an earlier process was writing when it was stopped
    if (this.existed) removeStaleTemporaries(this.path);
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

/**
 * Why `path` cannot be an output directory (a file is in its place, or in the place of one of
 * its parent folders), or undefined when it can: it is a directory or can be made one.
 */
export function outputDirectoryProblem(path: string): string | undefined {
  if (path.trim() === "") return "expected a directory path";
  let current = resolve(path);
  for (;;) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(current).isDirectory();
    } catch {
      const parent = dirname(current);
      if (parent === current) return undefined;
      current = parent;
      continue;
    }
    if (isDirectory) return undefined;
    return current === resolve(path) ? `${path} is an existing file, not a directory` : `${current} is a file, so ${path} cannot be made a directory`;
  }
}

/**
 * Why `path` cannot be an output file (a directory is in its place, or a file in the place of
 * one of its parent folders), or undefined when it can: missing folders are made when writing.
 */
export function outputFileProblem(path: string): string | undefined {
  if (path.trim() === "") return "expected a file path";
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    return outputDirectoryProblem(dirname(resolve(path)));
  }
  return isDirectory ? `${path} is a directory, not a file` : undefined;
}

/** A fresh run directory name under `runs/`, for commands run without --out. */
export function defaultRunPath(kind: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return join("runs", `${kind}-${stamp}`);
}

/** The commands run in a run directory, one record each as it ends: what a report shows as "command". */
export const COMMANDS_FILE = "commands.jsonl";

/** Flags whose values are secrets: recorded as `***`. */
const SECRET_FLAGS = new Set(["--token"]);

/**
 * Appends the command line that ran in `dir` (as `eqa …`, quoted as a shell would, secrets
 * hidden) with its exit code, eqakit's version and the time it ended. Nothing is written where
 * `dir` is not a directory (a command that wrote a file, or nothing).
 */
export function recordCommand(dir: string, args: readonly string[], exitCode: number): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch {
    return;
  }
  if (!isDirectory) return;
  const appender = new JsonlAppender(join(dir, COMMANDS_FILE));
  try {
    appender.append({ command: formatCommandLine(args), cwd: process.cwd(), exitCode, eqakitVersion, finishedAt: new Date().toISOString() });
  } finally {
    appender.close();
  }
}

/** The arguments of an `eqa` command as `eqa …`, quoted as a shell would read them back, secrets hidden. */
export function formatCommandLine(args: readonly string[]): string {
  const shown = args.map((arg, i) => (i > 0 && SECRET_FLAGS.has(args[i - 1]!) ? "***" : arg.replace(/^(--token=).*/, "$1***")));
  return `eqa ${quoteArgs(shown)}`;
}

/** Words as a POSIX shell would read them back: plain ones as they are, others in single quotes. */
function quoteArgs(args: readonly string[]): string {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}
