/**
 * Shards: one of `count` parts of a run's items, so that a cluster job array runs a benchmark
 * as `count` independent processes whose run directories `eqa merge` joins.
 *
 * An item belongs to shard `index` (0-based: 0 … count−1) when the first 48 bits of the
 * SHA-256 of its id (question id, episode id), read as a number, leave `index` modulo `count`.
 * The partition depends on the id alone: adding or removing other items never moves an item to
 * another shard, and a shard re-run alone (after a node failed) gets exactly the items it had.
 * Shards hold count⁻¹ of the items on average, with binomial spread (184 questions over 8 shards:
 * 23 ± 4.5 each); splitting by position in a sorted list would balance exactly but would move
 * items whenever the list changes.
 *
 * A Slurm job array gives the shard through the environment: with `SLURM_ARRAY_TASK_ID` and
 * `SLURM_ARRAY_TASK_COUNT` set, the index is `(SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) /
 * SLURM_ARRAY_TASK_STEP` (minimum 0 and step 1 when unset), so `--array=1-8` and `--array=0-7`
 * both run shards 0 … 7. An array whose tasks are not one range with one step (`--array=1,5,9`:
 * Slurm gives every task MIN 1, MAX 9, STEP 1 and COUNT 3) is refused in every task, the first
 * one included, since `SLURM_ARRAY_TASK_MAX` ≠ MIN + (COUNT − 1) · STEP: the environment does
 * not list the ids, so the tasks cannot be mapped to shards one by one.
 */
import { UserError } from "./errors.js";
import { sha256Hex } from "./hash.js";

export interface Shard {
  /** 0-based: 0 … count−1. */
  index: number;
  count: number;
}

/** The shard (0 … count−1) the item with this id belongs to. */
export function shardOfId(id: string, count: number): number {
  return Number.parseInt(sha256Hex(id).slice(0, 12), 16) % count;
}

/** The items of `shard`, in their order; all of them without a shard. */
export function selectShard<T>(items: readonly T[], idOf: (item: T) => string, shard: Shard | undefined): T[] {
  if (!shard) return [...items];
  return items.filter((item) => shardOfId(idOf(item), shard.count) === shard.index);
}

/** `i/n` as `--shard` writes it. */
export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** Why `i/n` is not a shard, or undefined when it is one. */
export function shardProblem(index: number, count: number): string | undefined {
  if (!Number.isSafeInteger(count) || count < 1) return "expected i/n with n a whole number of at least 1";
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) return `expected i/n with i from 0 to ${count - 1} (shards count from 0)`;
  return undefined;
}

/** Reads `i/n` (0-based i); a malformed value is a UserError naming `field`. */
export function parseShard(value: string, field = "--shard"): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const index = match ? Number(match[1]) : Number.NaN;
  const count = match ? Number(match[2]) : Number.NaN;
  const problem = match ? shardProblem(index, count) : "expected i/n, e.g. 0/8 (shards count from 0)";
  if (problem) throw new UserError(`${problem}, got "${value}"`, { field });
  return { index, count };
}

const SLURM_HINT = "give the job array a range without gaps (sbatch --array=0-7 or 1-8), or pass --shard i/n (or --no-shard)";

/** The shard a Slurm job array task runs (see the module comment), or undefined outside a job array. */
export function shardFromEnvironment(env: NodeJS.ProcessEnv = process.env): Shard | undefined {
  const id = env.SLURM_ARRAY_TASK_ID;
  const countText = env.SLURM_ARRAY_TASK_COUNT;
  if (id === undefined || id === "" || countText === undefined || countText === "") return undefined;
  const whole = (name: string, text: string | undefined, fallback: number): number => {
    if (text === undefined || text === "") return fallback;
    const n = Number(text);
    if (!Number.isSafeInteger(n)) throw new UserError(`${name} is "${text}", not a whole number`, { field: name }, SLURM_HINT);
    return n;
  };
  const count = whole("SLURM_ARRAY_TASK_COUNT", countText, 1);
  const offset = whole("SLURM_ARRAY_TASK_ID", id, 0) - whole("SLURM_ARRAY_TASK_MIN", env.SLURM_ARRAY_TASK_MIN, 0);
  const step = whole("SLURM_ARRAY_TASK_STEP", env.SLURM_ARRAY_TASK_STEP, 1);
  const index = step > 0 && offset % step === 0 ? offset / step : Number.NaN;
  const min = whole("SLURM_ARRAY_TASK_MIN", env.SLURM_ARRAY_TASK_MIN, 0);
  const max = whole("SLURM_ARRAY_TASK_MAX", env.SLURM_ARRAY_TASK_MAX, min + (count - 1) * step);
  if (max !== min + (count - 1) * step) {
    throw new UserError(`the job array's ${count} tasks (${min} to ${max}) are not one range with one step (${step})`, { field: "SLURM_ARRAY_TASK_ID" }, SLURM_HINT);
  }
  if (shardProblem(index, count) !== undefined) {
    throw new UserError(`the job array task ${id} is not one of ${count} consecutive tasks`, { field: "SLURM_ARRAY_TASK_ID" }, SLURM_HINT);
  }
  return { index, count };
}
