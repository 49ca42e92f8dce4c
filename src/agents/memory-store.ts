/**
 * A memory folder: the scene graphs of many episodes, built once by `eqa memory build
 * --benchmark` and read by the memory agents (`eqa answer --memory DIR`).
 *
 * - `memories.jsonl`: one record per episode built (appended as each finishes, so a stopped
 *   build resumes), with the build settings and their key, the scene graph's path, or the
 *   reason the episode failed.
 * - `<settings key>/<episode_history>/scene-graph.json` (with `topdown.png` and `crops/`): a
 *   folder may hold the memories of several settings side by side.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { UserError, canonicalJson, resolveInside, sha256Hex } from "../core/index.js";
import { readJsonl } from "../store/index.js";
import type { SceneGraph } from "./memory/index.js";
import type { MemoryBuildSettings } from "./memory-source.js";

export const MEMORY_RECORDS_FILE = "memories.jsonl";

/** The key of a build's settings: memories are reused only under the same key. */
export function memorySettingsKey(settings: MemoryBuildSettings): string {
  return sha256Hex(canonicalJson(settings)).slice(0, 16);
}

/** Where an episode's memory lives, relative to the folder. */
export function memoryPath(settingsKey: string, episode: string): string {
  return join(settingsKey, episode);
}

const recordSchema = z.object({
  episode: z.string(),
  settingsKey: z.string(),
  settings: z.record(z.string(), z.unknown()),
  graph: z.string().nullable(),
  instances: z.number().nullable(),
  seconds: z.number(),
  error: z.string().nullable(),
  finishedAt: z.string(),
});

/** One episode's build, as `memories.jsonl` keeps it. */
export type MemoryRecord = z.infer<typeof recordSchema>;

export function readMemoryRecords(dir: string, repair = false): MemoryRecord[] {
  return readJsonl(join(dir, MEMORY_RECORDS_FILE), (value) => {
    const parsed = recordSchema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }, repair).records;
}

/** The settings that differ, as "name: this run's value, the folder's value". */
export function settingsDifferences(wanted: MemoryBuildSettings, built: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(wanted)) {
    const a = canonicalJson(value);
    const b = canonicalJson(built[name] ?? null);
    if (a !== b) out.push(`${name} ${a} here, ${b} in the folder`);
  }
  return out;
}

/** The memories of one settings key in a folder. */
export class MemoryFolder {
  constructor(
    readonly path: string,
    private readonly settingsKey: string,
    private readonly records: ReadonlyMap<string, MemoryRecord>,
  ) {}

  async graph(episode: string): Promise<SceneGraph> {
    const record = this.records.get(episode);
    if (!record) throw new UserError(`episode ${episode} has no memory in ${this.path} built with this run's settings`, { file: join(this.path, MEMORY_RECORDS_FILE) }, "build it with eqa memory build --benchmark FILE --frames DIR --out DIR and the same options");
    if (record.error !== null || record.graph === null) throw new UserError(`the memory of episode ${episode} failed to build: ${record.error ?? "no scene graph"}`, { file: join(this.path, MEMORY_RECORDS_FILE) }, "run eqa memory build again: it builds the failed episodes");
    const file = join(resolveInside(this.path, record.graph, { file: join(this.path, MEMORY_RECORDS_FILE) }), "scene-graph.json");
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new UserError(`cannot read the memory of episode ${episode}: ${(error as Error).message}`, { file }, "run eqa memory build again");
    }
    try {
      return JSON.parse(text) as SceneGraph;
    } catch {
      throw new UserError(`the memory of episode ${episode} is not JSON`, { file }, "run eqa memory build again");
    }
  }
}

/**
 * Opens a memory folder for a run with these settings; refuses, with the differences, a folder
 * whose memories were all built with other settings.
 */
export function openMemoryFolder(dir: string, settings: MemoryBuildSettings): MemoryFolder {
  const path = resolve(dir);
  const records = readMemoryRecords(path);
  if (records.length === 0) throw new UserError(`${path} holds no memories (no ${MEMORY_RECORDS_FILE})`, { field: "--memory" }, "build them with eqa memory build --benchmark FILE --frames DIR --out DIR");
  const key = memorySettingsKey(settings);
  const mine = records.filter((r) => r.settingsKey === key);
  if (mine.length === 0) {
    const built = records[records.length - 1]!;
    throw new UserError(
      `the memories in ${path} were built with other settings than this run asks for: ${settingsDifferences(settings, built.settings).join("; ")}`,
      { field: "--memory" },
      "give eqa answer the options the memories were built with, or build them again with this run's options",
    );
  }
  const latest = new Map<string, MemoryRecord>();
  // a later success stands over an earlier failure; a later failure does not undo a success
  for (const record of mine) if (record.error === null || !latest.has(record.episode) || latest.get(record.episode)!.error !== null) latest.set(record.episode, record);
  return new MemoryFolder(path, key, latest);
}
