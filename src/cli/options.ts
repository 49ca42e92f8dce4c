import { InvalidArgumentError, type Command } from "commander";
import { ModelCallCache, defaultCachePath, outputDirectoryProblem, outputFileProblem } from "../store/index.js";
import { framesPathProblem } from "../episodes/index.js";
import { ModelRuntime } from "../models/index.js";
import { parseCommandLine, type CommandLine } from "../sim/index.js";
import { isUserError } from "../core/index.js";

/** Commander parsers that reject bad values with a message naming the flag's expectation. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number of at least 1");
  return n;
}

export function nonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number of at least 0");
  return n;
}

export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a number of seconds above 0");
  return n;
}

/**
 * An output directory: created later when missing. A file in its place, or a file where one of
 * its parent folders should be, is refused while the flags are read, before any work starts.
 */
export function outputDirectory(value: string): string {
  const problem = outputDirectoryProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

/** Episode histories (`--frames`): a folder or video that is missing is refused before any model call. */
export function framesPath(value: string): string {
  const problem = framesPathProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

/** An output file: its missing folders are made when it is written; a directory in its place is refused. */
export function outputFile(value: string): string {
  const problem = outputFileProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

/**
 * A command line to start a program with (`--env-command`): split into words as a shell would,
 * without running one; shell operators, file patterns and comments are refused.
 */
export function commandLine(value: string): CommandLine {
  try {
    return parseCommandLine(value);
  } catch (error) {
    if (isUserError(error)) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

export function oneOf<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of: ${choices.join(", ")}`);
    return value as T;
  };
}

/** The flags every command that calls models shares. */
export interface ModelCallFlags {
  concurrency: number;
  maxRetries: number;
  timeout: number;
  /** A path, or false for --no-cache. */
  cache: string | boolean;
}

export interface OpenedRuntime {
  runtime: ModelRuntime;
  cachePath: string | null;
  close(): void;
}

export async function openModelRuntime(flags: ModelCallFlags): Promise<OpenedRuntime> {
  const cachePath = flags.cache === false ? null : typeof flags.cache === "string" ? flags.cache : defaultCachePath();
  const cache = cachePath ? await ModelCallCache.open(cachePath) : undefined;
  const runtime = new ModelRuntime({
    concurrency: flags.concurrency,
    maxRetries: flags.maxRetries,
    timeoutMs: flags.timeout * 1000,
    ...(cache ? { cache } : {}),
  });
  return { runtime, cachePath: cache?.path ?? null, close: () => cache?.close() };
}

export function modelCallSettings(flags: ModelCallFlags, cachePath: string | null): Record<string, unknown> {
  return { maxRetries: flags.maxRetries, timeoutSeconds: flags.timeout, cache: cachePath };
}

export function addModelCallOptions(command: Command): Command {
  return command
    .option("--concurrency <n>", "most model calls in flight per endpoint", positiveInteger, 8)
    .option("--max-retries <n>", "retries of a call on 429, 5xx, timeouts and resets", nonNegativeInteger, 5)
    .option("--timeout <seconds>", "timeout of one call", positiveSeconds, 60)
    .option("--cache <path>", "the model-call cache file (default: $XDG_CACHE_HOME/eqakit/model-calls.sqlite)")
    .option("--no-cache", "call the models even for requests already answered");
}
