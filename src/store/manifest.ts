/**
 * The run manifest: what a run folder holds and how it was made, written to `manifest.json`
 * (`eqakit-run-manifest/1`) by every command that writes a run folder, through {@link openRun}.
 *
 * - `kind`: the kind of run, one of {@link RUN_KINDS} (kinds.ts), the kind its summary names
 *   where it has one.
 * - `command`, `cwd`, `eqakitVersion`: the command line that last opened the folder (secrets
 *   hidden), where it ran, and with which eqakit.
 * - `settings` and `settingsHash`: what decides the results (models, judge, mode, prompt
 *   variant, parameters, frames, seeds …), never how the process ran (concurrency, the cache
 *   file, retries, timeouts, batches, the shard, endpoints' addresses). `resultSettings` takes
 *   them out of a summary's configuration.
 * - `inputs`: every input by absolute path, with the SHA-256 and size of each file; a small
 *   file the run depends on (predictions, a question subset; at most {@link COPY_LIMIT_BYTES})
 *   is copied to `inputs/<name><ext>` so that the run reads the same after its inputs move.
 * - `items`: the questions (episodes, instances) the run was given, each id with a hash of what
 *   it asks (its text, ground truth, episode …): question sets reuse ids (a generated set's
 *   `home-1-heat-clean-q05` is another question with another `--per-trajectory`), so ids alone
 *   cannot tell a folder's set from another.
 *
 * Opening checks before anything is written (no folder made, no temporary removed, no record
 * touched): a folder holding a run of another kind, or of the same kind made with other
 * settings, is a UserError naming the folder, its kind and the first setting that differs; so is
 * a folder given a question of an id it holds that asks something else ({@link RunItems}). A
 * folder written before manifests existed is recognised by its summary's kind or its record
 * files ({@link inferRunKind}) and resumes when the kind matches. An empty or new folder is
 * fine. Inputs may change between runs of one folder (updated predictions): the records' input
 * keys decide what is done again, as before, and the manifest names the latest inputs.
 *
 * Readers find an input through {@link runInputPath}: the run's copy when it has one, else the
 * path the manifest names, else a path a summary recorded, read relative to the folder the
 * command ran in.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { copyFile, mkdir, rm } from "node:fs/promises";
import { createHash } from "node:crypto";
import { extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { UserError, canonicalJson, eqakitVersion, outputFailure, runOfKind, sha256Hex, writeFileAtomically, type Question } from "../core/index.js";
import { readJsonl } from "./jsonl.js";
import { isRunKind, recogniseRunKind, type RunKind } from "./kinds.js";
import { COMMANDS_FILE, RunDirectory, formatCommandLine, outputDirectoryProblem } from "./run-dir.js";

export const RUN_MANIFEST_FILE = "manifest.json";
export const RUN_MANIFEST_FORMAT = "eqakit-run-manifest/1";
/** The folder of a run that holds its copies of small inputs. */
export const RUN_INPUTS_FOLDER = "inputs";
/** Inputs up to this size (bytes) are copied into the run folder when the run asks for a copy. */
export const COPY_LIMIT_BYTES = 20 * 1024 * 1024;

const inputSchema = z.object({
  /** What the input is to the run: `predictions`, `benchmark`, `subset`, `questions`, `frames` … */
  name: z.string().min(1),
  /** Absolute path when the run was opened. */
  path: z.string(),
  type: z.enum(["file", "directory"]),
  /** SHA-256 of a file's bytes; null for a directory. */
  sha256: z.string().nullable(),
  bytes: z.number().int().nonnegative().nullable(),
  /** The run's own copy, relative to the run folder, or null when none was kept. */
  copy: z.string().nullable(),
});

export const runManifestSchema = z.object({
  format: z.literal(RUN_MANIFEST_FORMAT),
  kind: z.string().min(1),
  eqakitVersion: z.string(),
  command: z.string().nullable(),
  cwd: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  settings: z.record(z.string(), z.unknown()),
  settingsHash: z.string(),
  inputs: z.array(inputSchema),
  /** Run folders inside this one, relative to it (a demo's dataset and runs). */
  parts: z.array(z.string()).optional(),
  /** The items the run was given (questions, episodes, instances): id → {@link itemHash} of what it asks. */
  items: z.record(z.string(), z.string()).optional(),
});

export type RunManifest = z.infer<typeof runManifestSchema>;
export type RunInputRecord = z.infer<typeof inputSchema>;

/** An input of a run as a command names it. */
export interface RunInput {
  name: string;
  path: string;
  /** Keep a copy in the run folder when the file is at most {@link COPY_LIMIT_BYTES}. */
  copy?: boolean;
}

/** What a command declares of the run it writes: checked against the folder before anything is written. */
export interface RunContract {
  dir: string;
  kind: RunKind;
  /** The settings that decide the results (see `resultSettings`); JSON values. */
  settings: Record<string, unknown>;
  inputs?: readonly RunInput[];
  /** Run folders this one holds, relative to it. */
  parts?: readonly string[];
  /** The questions (episodes, instances) the run is given: a folder holding one of the same id that asks something else is refused. */
  items?: RunItems;
}

/**
 * The items a run is given, each with what it asks: a question's text, ground truth, category
 * and episode; an episode's question and scene; an instance's question, answer and trace.
 */
export interface RunItems {
  /** What the items are, in messages: `question`, `episode`, `instance`. */
  noun: string;
  /** The file they were read from, as the user gave it, and the flag that gives it (`--questions`). */
  file?: string;
  flag?: string;
  /** The name of the run's input that holds them (`questions`, `benchmark`): the folder's own set is named from it. */
  input?: string;
  /** Each item with what it asks, or with its hash already made (a merged run's, from its shards' manifests). */
  list: readonly ({ id: string; content: unknown } | { id: string; hash: string })[];
}

/** A benchmark's questions (OpenEQA's format) as the items of a run: each by its id, with its text, ground truth, category and episode. */
export function questionItems(questions: readonly Question[], file?: string): RunItems {
  return { noun: "question", input: "benchmark", flag: "--benchmark", ...(file !== undefined ? { file } : {}), list: questions.map((q) => ({ id: q.questionId, content: q })) };
}

/** Hex digits of an item's hash kept in the manifest: enough to tell two questions apart, short enough for a benchmark of thousands. */
const ITEM_HASH_CHARS = 16;

/** The hash of what an item asks, as a manifest keeps it. */
export function itemHash(content: unknown): string {
  return sha256Hex(canonicalJson(content)).slice(0, ITEM_HASH_CHARS);
}

function hashOf(item: RunItems["list"][number]): string {
  return "hash" in item ? item.hash : itemHash(item.content);
}

/** Configuration keys that say how a process ran or where its inputs were, not what it computed. */
export const NON_RESULT_SETTINGS = [
  "shard",
  "cache",
  "concurrency",
  "maxRetries",
  "timeoutSeconds",
  "batch",
  "out",
  "benchmark",
  "subset",
  "predictions",
  "questions",
  "questionsPath",
  "predictionsPath",
  "episodes",
  "framesRoot",
  "frames",
] as const;

/** Keys dropped at any depth: where a model is served is not what it computes. */
const DEEP_NON_RESULT = new Set(["baseURL"]);

/**
 * The result-deciding part of a run's configuration (as its summary records it): without
 * {@link NON_RESULT_SETTINGS} at the top and endpoints' addresses anywhere, and without the
 * keys given in `drop`. Undefined values are left out, so the result is plain JSON.
 */
export function resultSettings(config: Record<string, unknown>, drop: readonly string[] = []): Record<string, unknown> {
  const dropped = new Set<string>([...NON_RESULT_SETTINGS, ...drop]);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) if (!dropped.has(key) && value !== undefined) out[key] = withoutDeep(value);
  return JSON.parse(canonicalJson(out)) as Record<string, unknown>;
}

function withoutDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDeep);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (!DEEP_NON_RESULT.has(key) && v !== undefined) out[key] = withoutDeep(v);
  return out;
}

/** The `eqa …` command line whose work opens runs, within `withRunCommandLine`. */
const commandScope = new AsyncLocalStorage<string>();

/**
 * Runs `work` as the `eqa` command of `args`: the manifests of the run folders it opens name that
 * command line. Runs opened outside it (a library's own calls) name none, whatever ran before.
 */
export function withRunCommandLine<T>(args: readonly string[], work: () => T): T {
  return commandScope.run(formatCommandLine(args), work);
}

/** Reads `manifest.json` of `dir`, or undefined when it has none; one that cannot be read is a UserError. */
export function readRunManifest(dir: string): RunManifest | undefined {
  const path = join(resolve(dir), RUN_MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UserError("is not valid JSON", { file: path }, "restore the file, or give --out a new folder");
  }
  const parsed = runManifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`is not an eqakit run manifest (${issue?.path.join(".") || "format"}: ${issue?.message ?? "invalid"})`, { file: path }, "restore the file, or give --out a new folder");
  }
  return parsed.data;
}

/**
 * The kind of run in `dir` when it has no manifest (written by an earlier eqakit): its
 * summary's `kind`, else the kind whose record files it holds; undefined for a missing or
 * empty folder, or one of files eqakit does not know.
 */
export function inferRunKind(dir: string): RunKind | undefined {
  const path = resolve(dir);
  const manifest = readRunManifest(path);
  if (manifest) return isRunKind(manifest.kind) ? manifest.kind : undefined;
  for (const name of ["summary.json", "bench.json"]) {
    const kind = summaryKind(join(path, name));
    if (kind) return kind;
  }
  return recogniseRunKind(path);
}

function summaryKind(file: string): RunKind | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof value === "object" && value !== null && "kind" in value && typeof value.kind === "string" && isRunKind(value.kind)) return value.kind;
  } catch {
    // no summary, or one that is being written: the record files decide
  }
  return undefined;
}

/** The first setting (a dotted path) whose value differs between `a` and `b`, with both values; undefined when none does. */
export function firstDifferingSetting(a: Record<string, unknown>, b: Record<string, unknown>): { path: string; was: unknown; now: unknown } | undefined {
  const left = flatten(a);
  const right = flatten(b);
  const keys = [...new Set([...left.keys(), ...right.keys()])].sort();
  for (const key of keys) {
    const was = left.get(key);
    const now = right.get(key);
    if (canonicalJson(was ?? null) !== canonicalJson(now ?? null)) return { path: key, was, now };
  }
  return undefined;
}

function flatten(value: unknown, prefix = "", out = new Map<string, unknown>()): Map<string, unknown> {
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [key, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${key}` : key, out);
  } else if (prefix !== "") out.set(prefix, value);
  return out;
}

function shown(value: unknown): string {
  return value === undefined ? "not set" : JSON.stringify(value);
}

/**
 * Checks that `contract.dir` can hold the run `contract` declares (see the module comment)
 * and returns the manifest it holds, if any. Writes nothing.
 */
export function checkRun(contract: Pick<RunContract, "dir" | "kind" | "settings" | "items">): RunManifest | undefined {
  const path = resolve(contract.dir);
  const problem = outputDirectoryProblem(path);
  if (problem) throw new UserError(problem, { file: path }, "give --out a new or existing directory");
  if (!existsSync(path)) return undefined;
  const manifest = readRunManifest(path);
  const kind = manifest?.kind ?? inferRunKind(path);
  if (kind === undefined) return undefined;
  if (kind !== contract.kind) {
    throw new UserError(`holds a run of kind ${kind}, not ${contract.kind}: nothing was written`, { file: path }, `give --out a new folder (${runOfKind(kind)} is kept as it is)`);
  }
  if (manifest) {
    const settings = JSON.parse(canonicalJson(contract.settings)) as Record<string, unknown>;
    if (manifest.settingsHash !== settingsHash(settings)) {
      const diff = firstDifferingSetting(manifest.settings, settings);
      const model = diff ? differingModel(manifest.settings, settings, diff.path) : undefined;
      const what = model?.what ?? (diff ? `${diff.path} is ${shown(diff.was)} there, ${shown(diff.now)} now` : "its settings differ");
      const resume = model?.resume ?? `run with the settings in ${join(path, RUN_MANIFEST_FILE)}`;
      throw new UserError(`holds a run of kind ${kind} made with other settings (${what}): nothing was written`, { file: path }, `give --out a new folder, or ${resume} to resume`);
    }
    if (contract.items) checkItems(path, manifest, contract.items);
  }
  return manifest;
}

/**
 * Refuses items whose id the folder holds with other content: a question set that reuses the
 * folder's ids for other questions. Items the folder has not seen are fine (a larger set, the
 * rest of a benchmark), and so are items it has that the set leaves out (a subset).
 */
function checkItems(path: string, manifest: RunManifest, items: RunItems): void {
  const held = manifest.items;
  if (!held) return;
  const changed = items.list.filter((item) => held[item.id] !== undefined && held[item.id] !== hashOf(item));
  if (changed.length === 0) return;
  const more = changed.length > 1 ? ` (and ${changed.length - 1} more of the ${items.list.length})` : "";
  const from = items.input ? manifest.inputs.find((input) => input.name === items.input) : undefined;
  const own = from ? (from.copy ? join(path, from.copy) : from.path) : undefined;
  throw new UserError(
    `holds a run of kind ${manifest.kind} over other ${items.noun}s: the ${items.noun} of this id ${items.file ? `in ${items.file} ` : ""}is not the one there${more}: nothing was written`,
    { file: path, id: changed[0]!.id },
    `a set that reuses ids for other ${items.noun}s is another set: give --out a new folder for it, or give ${items.flag ? `${items.flag} ` : ""}${own ?? `the ${items.noun}s the folder was made with`} to resume`,
  );
}

/** The flag that sets the model a settings key names (`score.judge` → `--judge`), as the user gives it. */
const MODEL_FLAGS: Readonly<Record<string, string>> = { judge: "--judge", model: "--model", captioner: "--captioner", responder: "--responder", scorer: "--scorer" };

/** A model as summaries and settings record it (`describeModel`): `provider/model` with its family and options. */
const describedModel = z.object({ name: z.string(), provider: z.string(), model: z.string(), family: z.string() });

function valueAt(settings: Record<string, unknown>, keys: readonly string[]): unknown {
  let value: unknown = settings;
  for (const key of keys) value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * A differing setting inside a model's description (`judge.family`), named as the user knows
 * the model: `the judge is openai/gpt-4o there, anthropic/claude-sonnet-4-5 now`, and how to
 * resume (`run with --judge openai/gpt-4o`); undefined when `path` is not in a model.
 */
function differingModel(was: Record<string, unknown>, now: Record<string, unknown>, path: string): { what: string; resume: string } | undefined {
  const keys = path.split(".");
  for (let end = keys.length - 1; end > 0; end--) {
    const at = keys.slice(0, end);
    const before = describedModel.safeParse(valueAt(was, at));
    const after = describedModel.safeParse(valueAt(now, at));
    if (!before.success && !after.success) continue;
    const key = at.at(-1)!;
    // `eqa run` keeps its stages' settings apart: the judge of its score stage is `score.judge`
    const role = `the ${key === "model" ? "model" : key.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}${at.length > 1 ? ` (${at.join(".")})` : ""}`;
    const wasName = before.success ? before.data.name : "not set";
    const nowName = after.success ? after.data.name : "not set";
    const what =
      wasName === nowName
        ? `${role} ${wasName} is set up otherwise: its ${keys.slice(end).join(".")} is ${shown(valueAt(was, keys))} there, ${shown(valueAt(now, keys))} now`
        : `${role} is ${wasName} there, ${nowName} now`;
    const flag = MODEL_FLAGS[key];
    const resume = !flag ? `run with ${role} as there` : before.success ? `run with ${flag} ${wasName}${wasName === nowName ? " and its options as there" : ""}` : `run without ${flag}`;
    return { what, resume };
  }
  return undefined;
}

/** The hash of a run's settings as a manifest keeps it. */
export function settingsHash(settings: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(settings));
}

/**
 * Opens the run folder of `contract`: checks it ({@link checkRun}, before anything is
 * written), then makes it, copies the small inputs in and writes `manifest.json`. Opening it
 * again in the same process with the same contract is a no-op beyond refreshing the manifest.
 */
export async function openRun(contract: RunContract): Promise<RunDirectory> {
  const earlier = checkRun(contract);
  const run = new RunDirectory(contract.dir);
  await writeRunManifest(run, contract, earlier);
  return run;
}

/**
 * The run folder `dir` of a `kind` run, for a stage that adds to it (`eqa explore --judge`
 * judging the exploration in place): it must hold a run of that kind already.
 */
export function reopenRun(dir: string, kind: RunKind): RunDirectory {
  const path = resolve(dir);
  const held = existsSync(path) ? inferRunKind(path) : undefined;
  if (held !== kind) throw new UserError(held ? `holds a run of kind ${held}, not ${kind}: nothing was written` : `holds no ${kind} run`, { file: path }, `give the folder of ${runOfKind(kind)}`);
  return new RunDirectory(path);
}

/**
 * Writes `manifest.json` of the open run folder `run` for `contract` (its inputs hashed, the
 * small ones copied in), keeping the creation time of `earlier`, the manifest it held.
 */
export async function writeRunManifest(run: RunDirectory, contract: Omit<RunContract, "dir">, earlier?: RunManifest): Promise<void> {
  const inputs: RunInputRecord[] = [];
  const taken = new Set<string>();
  for (const input of contract.inputs ?? []) inputs.push(await recordInput(run, input, taken));
  const settings = JSON.parse(canonicalJson(contract.settings)) as Record<string, unknown>;
  const now = new Date().toISOString();
  // the items of earlier runs stay: a subset run in the folder later does not forget the rest
  const given = contract.items ? Object.fromEntries(contract.items.list.map((item) => [item.id, hashOf(item)])) : undefined;
  const items = given || earlier?.items ? sortedRecord({ ...earlier?.items, ...given }) : undefined;
  const manifest: RunManifest = {
    format: RUN_MANIFEST_FORMAT,
    kind: contract.kind,
    eqakitVersion,
    command: commandScope.getStore() ?? null,
    cwd: process.cwd(),
    createdAt: earlier?.createdAt ?? now,
    updatedAt: now,
    settings,
    settingsHash: settingsHash(settings),
    inputs,
    ...(contract.parts && contract.parts.length > 0 ? { parts: [...contract.parts] } : {}),
    ...(items ? { items } : {}),
  };
  await run.writeJson(RUN_MANIFEST_FILE, manifest);
}

function sortedRecord(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function recordInput(run: RunDirectory, input: RunInput, taken: Set<string>): Promise<RunInputRecord> {
  const path = resolve(input.path);
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return { name: input.name, path, type: "file", sha256: null, bytes: null, copy: null };
  }
  if (stats.isDirectory()) return { name: input.name, path, type: "directory", sha256: null, bytes: null, copy: null };
  const sha256 = await fileSha256(path);
  let copy: string | null = null;
  const inside = relative(run.path, path);
  if (!inside.startsWith("..") && !isAbsolute(inside)) copy = inside.split(sep).join("/");
  else if (input.copy && stats.size <= COPY_LIMIT_BYTES) {
    let name = `${input.name}${extname(path)}`;
    for (let i = 2; taken.has(name); i++) name = `${input.name}-${i}${extname(path)}`;
    taken.add(name);
    copy = `${RUN_INPUTS_FOLDER}/${name}`;
    const target = join(run.path, RUN_INPUTS_FOLDER, name);
    try {
      await mkdir(join(run.path, RUN_INPUTS_FOLDER), { recursive: true });
      await rm(target, { force: true });
      await copyFile(path, target);
    } catch (error) {
      throw outputFailure(target, error);
    }
  }
  return { name: input.name, path, type: "file", sha256, bytes: stats.size, copy };
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Where a reader finds the input `name` of the run in `dir`: the run's copy when it keeps one,
 * else the path its manifest names when that file is still there, else `recorded` (the path a
 * summary holds, as typed): as it is when absolute, else relative to the folder the commands
 * ran in (`manifest.json`, `commands.jsonl`), then to the current folder. Undefined when none exists.
 */
export function runInputPath(dir: string, name: string, recorded?: string): string | undefined {
  const root = resolve(dir);
  let manifest: RunManifest | undefined;
  try {
    manifest = readRunManifest(root);
  } catch {
    manifest = undefined;
  }
  const input = manifest?.inputs.find((i) => i.name === name);
  if (input?.copy && existsSync(join(root, input.copy))) return join(root, input.copy);
  if (input && existsSync(input.path)) return input.path;
  if (recorded === undefined || recorded === "") return undefined;
  if (isAbsolute(recorded)) return existsSync(recorded) ? recorded : undefined;
  const bases = [...(manifest ? [manifest.cwd] : []), ...commandFolders(root), process.cwd()];
  for (const base of bases) {
    const candidate = resolve(base, recorded);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The folders the commands of a run ran in, latest first (`commands.jsonl`). */
function commandFolders(dir: string): string[] {
  const records = readJsonl(join(dir, COMMANDS_FILE), (v) => (typeof v === "object" && v !== null && "cwd" in v && typeof v.cwd === "string" ? v.cwd : undefined), false).records;
  return [...new Set(records.reverse())];
}
