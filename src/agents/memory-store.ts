/**
 * A memory folder: the scene graphs of many episodes, built once by `eqa memory build
 * --benchmark` and read by the memory agents (`eqa answer --memory DIR`).
 *
 * - `memories.jsonl`: one record per episode built (appended as each finishes, so a stopped
 *   build resumes), with the build settings and their key and the scene graph's path.
 * - `memory-failures.jsonl`: the attempts that failed, each with its reason; a later success of
 *   the same episode and settings (in `memories.jsonl`) supersedes them. Kept apart so that
 *   `memories.jsonl` holds each episode once, and appended to only (never rewritten), since
 *   shards may build into one folder at once.
 * - `<settings key>/<episode_history>/scene-graph.json` (with `topdown.png` and `crops/`): a
 *   folder may hold the memories of several settings side by side.
 */
import { readFileSync } from "node:fs";
import { writeFileAtomically } from "../core/index.js";
import { join, resolve } from "node:path";
import { z } from "zod";
import { UserError, canonicalJson, resolveInside, sha256Hex } from "../core/index.js";
import { JsonlAppender, readJsonl } from "../store/index.js";
import { inferRelations, RELATIONS, type MemoryInstance, type Relation, type SceneGraph } from "./memory/index.js";
import type { MemoryBuildSettings } from "./memory-source.js";

export const MEMORY_RECORDS_FILE = "memories.jsonl";
export const MEMORY_FAILURES_FILE = "memory-failures.jsonl";

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
  /** The model call that failed the build, when one did: which call, on which frame (and object). */
  failedCall: z.object({ call: z.enum(["caption", "detect"]), frame: z.number(), instance: z.number().optional() }).optional(),
  finishedAt: z.string(),
});

/** One line of `memories.jsonl` (the report reads the folder with it). */
export { recordSchema as memoryRecordSchema };

/** One episode's build, as `memories.jsonl` keeps it. */
export type MemoryRecord = z.infer<typeof recordSchema>;

/**
 * Each episode's state under each settings key, in the order first recorded: its latest success
 * when it has one (from `memories.jsonl`, `built`), else its latest failed attempt (`failures`).
 */
export function latestMemoryRecords(built: readonly MemoryRecord[], failures: readonly MemoryRecord[]): MemoryRecord[] {
  const latest = new Map<string, MemoryRecord>();
  const key = (r: MemoryRecord): string => `${r.settingsKey}\u0000${r.episode}`;
  for (const record of failures) latest.set(key(record), record);
  // older folders kept failures in memories.jsonl too: a success stands over a failure, never the reverse
  for (const record of built) if (record.error === null || latest.get(key(record))?.error !== null) latest.set(key(record), record);
  return [...latest.values()];
}

/** The memory records of a folder (both files), each episode once per settings key (`latestMemoryRecords`). */
export function readMemoryRecords(dir: string, repair = false): MemoryRecord[] {
  const read = (file: string): MemoryRecord[] =>
    readJsonl(join(dir, file), (value) => {
      const parsed = recordSchema.safeParse(value);
      return parsed.success ? parsed.data : undefined;
    }, repair).records;
  return latestMemoryRecords(read(MEMORY_RECORDS_FILE), read(MEMORY_FAILURES_FILE));
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
  // imported memories were built elsewhere: no settings of this run apply to them
  const mine = records.filter((r) => r.settingsKey === key || r.settingsKey === IMPORTED_KEY);
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

/** The settings key of memories imported from elsewhere (`eqa memory import`). */
export const IMPORTED_KEY = "imported";

const point = z.array(z.number().finite()).length(3);
const conceptGraphObject = z
  .object({
    id: z.number().int().nonnegative().optional(),
    object_tag: z.string().min(1).optional(),
    label: z.string().min(1).optional(),
    object_caption: z.string().optional(),
    caption: z.string().optional(),
    bbox_center: point.optional(),
    bbox_extent: point.optional(),
  })
  .loose();
const conceptGraphRelation = z.object({ subject: z.number().int(), relation: z.enum(RELATIONS), object: z.number().int() });
const conceptGraphFile = z.union([
  z.array(conceptGraphObject),
  z.object({ objects: z.union([z.array(conceptGraphObject), z.record(z.string(), conceptGraphObject)]), relations: z.array(conceptGraphRelation).optional() }).loose(),
  z.record(z.string(), conceptGraphObject),
]);

/**
 * A scene graph from a ConceptGraphs-style JSON (see docs/memory.md): objects with a tag, a
 * caption, and an axis-aligned box as centre and extent, in an object map (`{"object_1": …}`,
 * as ConceptGraphs' object JSON is), a list, or `{"objects": …, "relations": […]}`. Without
 * relations, they are inferred from the boxes as for a built memory.
 */
export function parseConceptGraphsJson(value: unknown, episode: string, file: string): SceneGraph {
  const parsed = conceptGraphFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`not a ConceptGraphs-style scene graph: ${issue.path.join(".") || "(top)"}: ${issue.message}`, { file }, "see docs/memory.md for the objects' fields (object_tag, object_caption, bbox_center, bbox_extent)");
  }
  const data = parsed.data;
  type Item = z.infer<typeof conceptGraphObject>;
  const wrapped = !Array.isArray(data) && "objects" in data && typeof data.objects === "object" && data.objects !== null && !("object_tag" in data);
  const objects = (wrapped ? (data as { objects: Item[] | Record<string, Item> }).objects : data) as Item[] | Record<string, Item>;
  const list = Array.isArray(objects) ? objects : Object.values(objects);
  const given = wrapped && Array.isArray((data as { relations?: unknown }).relations) ? (data as { relations: Relation[] }).relations : undefined;
  const ids = new Map<number, number>();
  const instances: MemoryInstance[] = list.map((o, i) => {
    const label = o.object_tag ?? o.label;
    if (!label) throw new UserError(`object ${i} has no object_tag or label`, { file, index: i, field: "object_tag" }, "give each object an object_tag");
    if (o.id !== undefined) ids.set(o.id, i);
    const caption = (o.object_caption ?? o.caption ?? "").trim() || label;
    const instance: MemoryInstance = { id: i, label, caption, captionSource: caption === label ? "label" : "captioner", views: [], bestView: 0, pointCount: 0 };
    if (o.bbox_center && o.bbox_extent) {
      const c = o.bbox_center as [number, number, number];
      const e = o.bbox_extent.map((x) => Math.abs(x) / 2);
      instance.center = c;
      instance.box = { min: [c[0] - e[0]!, c[1] - e[1]!, c[2] - e[2]!], max: [c[0] + e[0]!, c[1] + e[1]!, c[2] + e[2]!] };
    }
    return instance;
  });
  const hasPositions = instances.length > 0 && instances.every((i) => i.box !== undefined);
  const relations = given
    ? given.map((r, k) => {
        const subject = ids.get(r.subject) ?? r.subject;
        const object = ids.get(r.object) ?? r.object;
        if (!instances[subject] || !instances[object]) throw new UserError(`relation ${k} names an object that is not in the file`, { file, index: k, field: "relations" }, "relations name objects by their id");
        return { subject, relation: r.relation, object };
      })
    : hasPositions
      ? inferRelations(instances)
      : [];
  return {
    format: "eqakit-scene-graph/1",
    episode,
    world: "as the imported file gives it (not converted)",
    hasPositions,
    frames: [],
    skippedPoses: 0,
    detector: null,
    captioner: null,
    instances,
    relations,
    agentPositions: [],
    notes: [`imported from ${file}: ${instances.length} objects${given ? "" : hasPositions ? ", relations inferred from their boxes" : ""}`, ...(hasPositions ? [] : ["positions are missing: some imported objects have no box"])],
  };
}

/** Adds an imported scene graph to a memory folder, as the episode's memory for every run. */
export async function importMemory(dir: string, graph: SceneGraph, source: string): Promise<string> {
  const path = resolve(dir);
  const relative = join(IMPORTED_KEY, graph.episode);
  const file = join(resolveInside(path, relative, { field: "--episode" }), "scene-graph.json");
  await writeFileAtomically(file, `${JSON.stringify(graph, null, 2)}\n`);
  const appender = new JsonlAppender(join(path, MEMORY_RECORDS_FILE));
  try {
    appender.append({ episode: graph.episode, settingsKey: IMPORTED_KEY, settings: { source }, graph: relative, instances: graph.instances.length, seconds: 0, error: null, finishedAt: new Date().toISOString() } satisfies MemoryRecord);
  } finally {
    appender.close();
  }
  return file;
}
