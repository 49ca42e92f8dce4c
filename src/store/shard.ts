/**
 * Sharded runs and `eqa merge`.
 *
 * A run given a shard (`--shard i/n`, or a Slurm job array task) works on its part of the items
 * (core's `selectShard`) and writes, beside its records and summary, `shard.json`
 * (`eqakit-shard/1`): its kind, index and count, every item id of the whole run in input order
 * (each shard writes the same list), the input key of each of its own items (what picks, among
 * the records a resumed directory holds, the one that stands) and the few values its summary
 * is built from beside the records (`context`).
 *
 * Merging checks that the directories are the shards of one run: each holds `shard.json` and a
 * finished `summary.json`, all of one kind, with one count and one item list, every shard index
 * exactly once, each item in the shard its id belongs to, and the same configuration apart from
 * how the processes ran (`OPERATIONAL_SETTINGS`: the shard, the cache file, concurrency,
 * retries, timeouts, batches). Anything else is refused (a UserError naming the directories),
 * before anything is written. The merged directory gets the records of every shard in input
 * order, a summary rebuilt from them by the code the commands use, and `merge.json` naming the
 * shards and the settings each ran with.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { cp, link, mkdir, readFile, readdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { UserError, canonicalJson, runOfKind, eqakitVersion, formatShard, outputFailure, shardOfId, writeFileAtomically, type Shard } from "../core/index.js";
import { readJsonl } from "./jsonl.js";
import { RunDirectory } from "./run-dir.js";
import type { KeyedRecord } from "./resume.js";
import { readRunManifest, resultSettings, writeRunManifest } from "./manifest.js";
import type { RunKind } from "./kinds.js";

export const SHARD_FILE = "shard.json";
export const SHARD_FORMAT = "eqakit-shard/1";
export const MERGE_FILE = "merge.json";
export const MERGE_FORMAT = "eqakit-merge/1";

/** Summary configuration keys that say how a process ran, not what it computed: they may differ between shards. */
export const OPERATIONAL_SETTINGS = ["shard", "cache", "concurrency", "maxRetries", "timeoutSeconds", "batch"] as const;

const manifestSchema = z.object({
  format: z.literal(SHARD_FORMAT),
  kind: z.string().min(1),
  index: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  items: z.array(z.string()),
  keys: z.record(z.string(), z.string()),
  context: z.record(z.string(), z.unknown()),
});

export type ShardManifest = z.infer<typeof manifestSchema>;

/** Writes `shard.json` of a sharded run (see the module comment). */
export async function writeShardManifest(run: RunDirectory, manifest: Omit<ShardManifest, "format">): Promise<void> {
  await run.writeJson(SHARD_FILE, { format: SHARD_FORMAT, ...manifest });
}

/**
 * Refuses to run `shard` (undefined: every item) into `dir` when `dir` holds another shard's run
 * (its `shard.json`): a job array of one task (`sbatch --array=1`, shard 0/1, every item) must
 * not write into the folder of shard 1/8, nor shard 2/8 into shard 1/8's.
 */
export function checkShardFolder(dir: string, shard: Shard | undefined): void {
  const path = join(dir, SHARD_FILE);
  if (!existsSync(path)) return;
  let parsed: ReturnType<typeof manifestSchema.safeParse>;
  try {
    parsed = manifestSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return;
  }
  if (!parsed.success) return;
  const held = { index: parsed.data.index, count: parsed.data.count };
  if (shard && held.index === shard.index && held.count === shard.count) return;
  const running = shard ? `shard ${formatShard(shard)}` : "every item (no shard)";
  throw new UserError(
    `holds shard ${formatShard(held)} of a run, not ${running}`,
    { file: dir },
    `to redo that shard give --shard ${formatShard(held)} (or scontrol requeue its array task); a job array of one task (sbatch --array=N) runs shard 0/1, every item; else give --out another folder`,
  );
}

/** `shard` as a summary's configuration records it. */
export function shardSetting(shard: Shard | undefined): Record<string, unknown> {
  return shard ? { shard: formatShard(shard) } : {};
}

/** One shard's run directory, checked. */
export interface ShardRun {
  dir: string;
  manifest: ShardManifest;
  summary: { kind: string; config: Record<string, unknown>; wallTimeMs?: number; [key: string]: unknown };
}

/** The shards of one run, checked and in index order, with the run's item list. */
export interface ShardSet {
  kind: RunKind;
  shards: ShardRun[];
  items: string[];
  /** The run's configuration, without the shard (the first shard's operational settings). */
  config: Record<string, unknown>;
}

const summaryEnvelope = z.looseObject({ kind: z.string(), config: z.record(z.string(), z.unknown()), wallTimeMs: z.number().optional() });

async function readJson(dir: string, name: string, missing: string, hint: string): Promise<unknown> {
  const path = join(dir, name);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new UserError(missing, { file: dir }, hint);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UserError("is not valid JSON", { file: path }, hint);
  }
}

const MERGE_HINT = "merge the directories of runs made with --shard i/n (or in a job array)";

/** Why `dir` has no `shard.json`: it does not exist, holds an unsharded run, or holds a shard that has not finished. */
function noShardFile(dir: string, given: string): UserError {
  if (!existsSync(dir)) return new UserError("does not exist", { file: given }, MERGE_HINT);
  if (existsSync(join(dir, "summary.json"))) return new UserError("holds a run made without a shard (no shard.json)", { file: given }, MERGE_HINT);
  return new UserError(
    "holds a shard that has not finished (no shard.json yet)",
    { file: given },
    "run the shard's command again (the same command line, or scontrol requeue the array task): it resumes where it stopped and writes shard.json and summary.json when done; then merge",
  );
}

async function readShardManifest(dir: string, given: string): Promise<unknown> {
  if (!existsSync(join(dir, SHARD_FILE))) throw noShardFile(dir, given);
  return readJson(dir, SHARD_FILE, "is not a shard's run directory (no shard.json)", MERGE_HINT);
}

/** The kind of run a shard directory holds (`answer`, `llm-match`, `explore`, `memory`), read from its `shard.json`. */
export async function readShardKind(dir: string): Promise<string> {
  const value = await readShardManifest(resolve(dir), dir);
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) throw new UserError("shard.json is not an eqakit shard manifest", { file: join(dir, SHARD_FILE) });
  return parsed.data.kind;
}

function withoutOperational(config: Record<string, unknown>): Record<string, unknown> {
  const rest = { ...config };
  for (const key of OPERATIONAL_SETTINGS) delete rest[key];
  return rest;
}

/** Reads and checks the shard directories of one run (see the module comment). */
export async function readShardSet(dirs: readonly string[], kind: RunKind): Promise<ShardSet> {
  if (dirs.length === 0) throw new UserError("no shard directories given", {}, "eqa merge DIR… --out DIR");
  const shards: ShardRun[] = [];
  const seen = new Set<string>();
  for (const given of dirs) {
    const dir = resolve(given);
    if (seen.has(dir)) throw new UserError("is given twice", { file: given });
    seen.add(dir);
    const value = await readShardManifest(dir, given);
    const manifest = manifestSchema.safeParse(value);
    if (!manifest.success) throw new UserError("shard.json is not an eqakit shard manifest", { file: join(given, SHARD_FILE) });
    const summary = summaryEnvelope.safeParse(await readJson(dir, "summary.json", "has no summary.json: the shard has not finished", "run the shard's command again: it resumes, then writes its summary"));
    if (!summary.success) throw new UserError("summary.json is not an eqakit run summary", { file: join(given, "summary.json") });
    if (manifest.data.kind !== kind || summary.data.kind !== kind) {
      throw new UserError(`holds ${runOfKind(manifest.data.kind)}, not ${runOfKind(kind)} like ${dirs[0]}`, { file: given }, "merge the shards of one run only");
    }
    shards.push({ dir: given, manifest: manifest.data, summary: summary.data });
  }
  const [first] = shards as [ShardRun, ...ShardRun[]];
  const names = (list: ShardRun[]): string => list.map((s) => s.dir).join(", ");
  const others = shards.filter((s) => s.manifest.count !== first.manifest.count || canonicalJson(s.manifest.items) !== canonicalJson(first.manifest.items));
  if (others.length > 0) {
    throw new UserError(`${names([first, ...others])} are not shards of one run: they split ${others[0]!.manifest.count !== first.manifest.count ? "into different numbers of shards" : "different items"}`, { file: first.dir }, "merge the shards of one run only");
  }
  const config = withoutOperational(first.summary.config);
  const differing = shards.filter((s) => canonicalJson(withoutOperational(s.summary.config)) !== canonicalJson(config));
  if (differing.length > 0) {
    const other = withoutOperational(differing[0]!.summary.config);
    const keys = [...new Set([...Object.keys(config), ...Object.keys(other)])].filter((k) => canonicalJson(config[k] ?? null) !== canonicalJson(other[k] ?? null));
    throw new UserError(`${names([first, ...differing])} were run with different configurations (${keys.join(", ")})`, { file: first.dir }, "merge the shards of one run only: same command, same inputs, only --shard differing");
  }
  const count = first.manifest.count;
  const byIndex = new Map<number, ShardRun>();
  for (const shard of shards) {
    const twin = byIndex.get(shard.manifest.index);
    if (twin) throw new UserError(`${twin.dir}, ${shard.dir} are both shard ${formatShard(shard.manifest)}`, { file: shard.dir }, "each shard once: the directories hold overlapping items");
    byIndex.set(shard.manifest.index, shard);
  }
  const missing = Array.from({ length: count }, (_v, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) {
    throw new UserError(`shard${missing.length > 1 ? "s" : ""} ${missing.map((i) => formatShard({ index: i, count })).join(", ")} of ${count} not given (given: ${names(shards)})`, {}, "run the missing shards (or point eqa merge at their directories)");
  }
  const items = first.manifest.items;
  const known = new Set(items);
  for (const shard of shards) {
    const ids = Object.keys(shard.manifest.keys);
    const expected = items.filter((id) => shardOfId(id, count) === shard.manifest.index);
    if (ids.some((id) => !known.has(id) || shardOfId(id, count) !== shard.manifest.index) || ids.length !== expected.length) {
      throw new UserError(`does not hold the items of shard ${formatShard(shard.manifest)}`, { file: shard.dir }, "merge directories written by eqakit's --shard, unchanged");
    }
  }
  const ordered = [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, s]) => s);
  return { kind, shards: ordered, items, config: { ...config, ...operationalOf(first.summary.config, true) } };
}

function operationalOf(config: Record<string, unknown>, withoutShard = false): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of OPERATIONAL_SETTINGS) if (key in config && !(withoutShard && key === "shard")) picked[key] = config[key];
  return picked;
}

/**
 * Each of a shard's items' standing record from `file` in its directory: the last one with the
 * input key its manifest names (what the shard's own last run used). A missing one is refused.
 */
export function shardRecords<T extends KeyedRecord>(shard: ShardRun, file: string, parse: (value: unknown) => T | undefined): Map<string, T> {
  const standing = new Map<string, T>();
  for (const record of readJsonl(join(shard.dir, file), parse, false).records) {
    if (shard.manifest.keys[record.questionId] === record.inputKey) standing.set(record.questionId, record);
  }
  const lacking = Object.keys(shard.manifest.keys).filter((id) => !standing.has(id));
  if (lacking.length > 0) throw new UserError(`${file} lacks the record of ${lacking.length} item(s), e.g. ${lacking[0]}`, { file: shard.dir }, "run the shard's command again: it resumes and records them");
  return standing;
}

/** The standing records of every shard (`shardRecords`), in the run's item order. */
export function mergedRecords<T extends KeyedRecord>(set: ShardSet, file: string, parse: (value: unknown) => T | undefined): T[] {
  const all = new Map<string, T>();
  for (const shard of set.shards) for (const [id, record] of shardRecords(shard, file, parse)) all.set(id, record);
  return set.items.map((id) => all.get(id)!);
}

/** The merged run's directory: a new or empty one, none of the shards. */
export function mergeOutput(out: string, set: ShardSet): RunDirectory {
  const path = resolve(out);
  if (set.shards.some((s) => resolve(s.dir) === path)) throw new UserError("is one of the shards", { file: out }, "give --out a new directory");
  if (existsSync(path) && statSync(path).isDirectory() && readdirSync(path).length > 0) throw new UserError("already holds files", { file: out }, "give --out a new or empty directory");
  return new RunDirectory(out);
}

/** Writes a records file whole, one JSON record a line. */
export async function writeRecords(run: RunDirectory, file: string, records: readonly unknown[]): Promise<void> {
  await writeFileAtomically(run.file(file), records.map((r) => `${JSON.stringify(r)}\n`).join(""));
}

/**
 * Writes `merge.json` (the shards merged and the operational settings each ran with) and the
 * merged run's `manifest.json`: the shards' kind and settings (those of the first shard's
 * manifest, or its configuration's for shards written before manifests), the shards as inputs.
 */
export async function writeMergeNote(run: RunDirectory, set: ShardSet): Promise<void> {
  const first = readRunManifest(set.shards[0]!.dir);
  // the questions the shards were given (each shard's manifest holds the whole set's)
  const items: Record<string, string> = {};
  for (const shard of set.shards) Object.assign(items, readRunManifest(shard.dir)?.items);
  await writeRunManifest(run, {
    kind: set.kind,
    settings: first?.settings ?? resultSettings(set.config),
    inputs: set.shards.map((s) => ({ name: `shard ${formatShard(s.manifest)}`, path: s.dir })),
    ...(Object.keys(items).length > 0 ? { items: { noun: "item", list: Object.entries(items).map(([id, hash]) => ({ id, hash })) } } : {}),
  });
  await run.writeJson(MERGE_FILE, {
    format: MERGE_FORMAT,
    eqakitVersion,
    kind: set.kind,
    items: set.items.length,
    shards: set.shards.map((s) => ({ dir: resolve(s.dir), shard: formatShard(s.manifest), items: Object.keys(s.manifest.keys).length, settings: operationalOf(s.summary.config) })),
  });
}

/** The values a kind's summary is built from beside the records (`context` of shard.json), as `schema` reads them. */
export function shardContext<T>(shard: ShardRun, kind: string, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(shard.manifest.context);
  if (!parsed.success) throw new UserError(`shard.json's context is not that of ${runOfKind(kind)}`, { file: join(shard.dir, SHARD_FILE) }, "merge directories written by eqakit's --shard, unchanged");
  return parsed.data;
}

/** The sum over the shards of a count of their summaries (`counts.reused`). */
export function sumShardCounts(set: ShardSet, name: string): number {
  return set.shards.reduce((sum, s) => {
    const counts = s.summary.counts;
    const value = typeof counts === "object" && counts !== null ? (counts as Record<string, unknown>)[name] : undefined;
    return sum + (typeof value === "number" ? value : 0);
  }, 0);
}

/** The sum of the shards' wall times, milliseconds. */
export function shardWallTime(set: ShardSet): number {
  return set.shards.reduce((sum, s) => sum + (s.summary.wallTimeMs ?? 0), 0);
}

/**
 * Puts the tree `from` at `to` (a folder of frames, trajectories): each file hard-linked when
 * both are on one file system, copied otherwise. A file that cannot be written is an OutputError.
 */
export async function linkTree(from: string, to: string): Promise<void> {
  try {
    await mkdir(to, { recursive: true });
    for (const entry of await readdir(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) await linkTree(source, target);
      else await linkFile(source, target);
    }
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw outputFailure(to, error);
  }
}

/** Puts the file `from` at `to`: hard-linked when both are on one file system, copied otherwise. */
export async function linkFile(from: string, to: string): Promise<void> {
  try {
    await mkdir(dirname(to), { recursive: true });
    await link(from, to).catch(() => cp(from, to));
  } catch (error) {
    throw outputFailure(to, error);
  }
}
