import { InvalidArgumentError, type Command } from "commander";
import { checkShardFolder, outputDirectoryProblem, outputFileProblem } from "../store/index.js";
import { framesPathProblem } from "../episodes/index.js";
import { parseCommandLine, type CommandLine } from "../sim/index.js";
import { formatShard, isUserError, parseShard, shardFromEnvironment, type Shard } from "../core/index.js";

/*
 * Commander parsers, each written once for every command: they reject a bad value with a
 * message naming what the flag expects. An empty value is never read as 0.
 */

function numberOf(value: string): number {
  return value.trim() === "" ? Number.NaN : Number(value);
}

/** Any finite number. */
export function finiteNumber(value: string): number {
  const n = numberOf(value);
  if (!Number.isFinite(n)) throw new InvalidArgumentError("expected a number");
  return n;
}

export function positiveInteger(value: string): number {
  const n = numberOf(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number of at least 1");
  return n;
}

/** A count, an index or a seed. */
export function nonNegativeInteger(value: string): number {
  const n = numberOf(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number of at least 0");
  return n;
}

/** A distance or tolerance: any number of at least 0, fractions included. */
export function nonNegativeNumber(value: string): number {
  const n = numberOf(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number of at least 0");
  return n;
}

/** A sample count K of a test-time scaling curve: 1, 2, 4, 8, … 1024. */
export function powerOfTwo(value: string): number {
  const n = numberOf(value);
  if (!Number.isSafeInteger(n) || n < 1 || n > 1024 || (n & (n - 1)) !== 0) throw new InvalidArgumentError("expected a power of two from 1 to 1024 (1, 2, 4, 8, 16, 32, …)");
  return n;
}

export function positiveSeconds(value: string): number {
  const n = numberOf(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a number of seconds above 0");
  return n;
}

/** A probability, a share or a confidence. */
export function unitInterval(value: string): number {
  const n = numberOf(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError("expected a number from 0 to 1");
  return n;
}

/** A TCP port to listen on; 0 lets the system choose a free one. */
export function portNumber(value: string): number {
  const n = numberOf(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("expected a port from 0 to 65535 (0: any free port)");
  return n;
}

/** A comma-separated list, each item trimmed, empty items dropped. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** A comma-separated list of `what`s, each one of `choices`. */
export function choiceList<T extends string>(what: string, choices: readonly T[]): (value: string) => T[] {
  return (value) => {
    const items = commaList(value);
    if (items.length === 0) throw new InvalidArgumentError(`expected ${what}s separated by commas: ${choices.join(", ")}`);
    const unknown = items.filter((item) => !(choices as readonly string[]).includes(item));
    if (unknown.length > 0) throw new InvalidArgumentError(`unknown ${what} ${unknown.map((u) => `"${u}"`).join(", ")}; expected ${choices.join(", ")}`);
    return items as T[];
  };
}

/** A comma-separated list of whole numbers of at least 0, each kept once, in order. */
export function nonNegativeIntegerList(value: string): number[] {
  const items = commaList(value);
  const numbers = items.map((item) => numberOf(item));
  if (items.length === 0 || numbers.some((n) => !Number.isSafeInteger(n) || n < 0)) throw new InvalidArgumentError("expected whole numbers of at least 0 separated by commas, e.g. 1,2,3");
  return [...new Set(numbers)];
}

/** Most whole numbers a range list may name (`0-9` names ten). */
const MAX_RANGE_ITEMS = 10_000;

/** Whole numbers of at least 0 as a comma-separated list of numbers and ranges (`0-9`, `1,3,5-7`), each kept once, in order. */
export function nonNegativeIntegerRanges(value: string): number[] {
  const bad = (): InvalidArgumentError => new InvalidArgumentError("expected whole numbers of at least 0 or ranges of them separated by commas, e.g. 0-9 or 1,3,5-7");
  const out: number[] = [];
  const items = commaList(value);
  if (items.length === 0) throw bad();
  for (const item of items) {
    const range = /^(\d+)-(\d+)$/.exec(item);
    const [from, to] = range ? [Number(range[1]), Number(range[2])] : [numberOf(item), numberOf(item)];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) throw bad();
    if (out.length + to - from + 1 > MAX_RANGE_ITEMS) throw new InvalidArgumentError(`names more than ${MAX_RANGE_ITEMS} numbers`);
    for (let n = from; n <= to; n++) out.push(n);
  }
  return [...new Set(out)];
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
export const commandLine: (value: string) => CommandLine = argumentParser(parseCommandLine);

/**
 * A library parser as a commander argument parser: the UserError it throws becomes commander's
 * InvalidArgumentError, less the `option FLAG: ` prefix (commander names the flag itself).
 */
export function argumentParser<T>(parse: (value: string) => T, flag?: string): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      if (!isUserError(error)) throw error;
      const prefix = flag ? `option ${flag}: ` : undefined;
      throw new InvalidArgumentError(prefix && error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message);
    }
  };
}

export function oneOf<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of: ${choices.join(", ")}`);
    return value as T;
  };
}

/** `--shard i/n`: shard i (0-based) of n. */
export const shardArgument: (value: string) => Shard = argumentParser(parseShard, "--shard");

/** `--shard i/n`, or false for `--no-shard`. */
export interface ShardFlags {
  shard?: Shard | false;
}

/** `--shard` and `--no-shard`; `items` names what is split ("questions"). */
export function addShardOption(command: Command, items: string): Command {
  return command
    .option("--shard <i/n>", `work on shard i of n (i from 0 to n-1) of the ${items}, split by a hash of each id; eqa merge joins the shards' run directories (default: a Slurm job array task's, from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)`, shardArgument)
    .option("--no-shard", `work on all the ${items}, even in a Slurm job array`);
}

/**
 * The shard to work on: --shard, else a Slurm job array task's (said on stderr), else none. A
 * run folder (`--out`) that holds another shard's run is refused, so that `sbatch --array=1`
 * (an array of one task: shard 0/1, every item) cannot fill shard 1/8's folder.
 */
export function shardFromFlags(flags: ShardFlags & { out?: string }, env: NodeJS.ProcessEnv = process.env): Shard | undefined {
  const shard = flags.shard === false ? undefined : (flags.shard ?? shardFromEnvironment(env));
  if (shard && flags.shard === undefined) {
    console.error(`shard ${formatShard(shard)} (from the Slurm job array task ${env.SLURM_ARRAY_TASK_ID}; --no-shard to work on all)`);
    if (shard.count === 1) console.error("a job array of one task works on every item; to redo one shard of a larger array give --shard i/n, or scontrol requeue its task");
  }
  if (flags.out !== undefined) checkShardFolder(flags.out, shard);
  return shard;
}
