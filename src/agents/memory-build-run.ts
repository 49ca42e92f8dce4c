import { existsSync } from "node:fs";
import { join } from "node:path";
import { OutputError, isUserError } from "../core/index.js";
import { openEpisode, resolveEpisodePath } from "../episodes/index.js";
import { ModelCallError } from "../models/index.js";
import { RUN_KIND, openRun } from "../store/index.js";
import { MemoryCallError, writeMemory } from "./memory/index.js";
import { buildEpisodeMemory, memoryBuildSettings, type MemorySourceOptions } from "./memory-source.js";
import { MEMORY_FAILURES_FILE, MEMORY_RECORDS_FILE, memoryPath, memorySettingsKey, readMemoryRecords, type MemoryRecord } from "./memory-store.js";

export interface MemoryFolderBuild {
  /** Episode histories, in order (already the shard's). */
  episodes: readonly string[];
  framesRoot: string;
  outDir: string;
  options: Omit<MemorySourceOptions, "memoryDir">;
  onProgress?: (progress: { done: number; total: number; failed: number; episode: string }) => void;
}

export interface MemoryFolderResult {
  dir: string;
  settingsKey: string;
  built: number;
  reused: number;
  failed: { episode: string; error: string }[];
}

/**
 * Builds every episode's memory into a memory folder (see memory-store.ts), resumably: an
 * episode already built with the same settings is kept. An episode that fails (its frames
 * unreadable, a model call that fails for good: its reason names the call and the frame) is
 * recorded with its reason and the build goes on; the next run builds it again. A file that
 * cannot be written stops it (OutputError).
 */
export async function buildMemoryFolder(build: MemoryFolderBuild): Promise<MemoryFolderResult> {
  // a memory folder keeps the builds of several settings side by side (each under its settings key): only its kind is checked
  const run = await openRun({ dir: build.outDir, kind: RUN_KIND.memory, settings: {}, inputs: [{ name: "frames", path: build.framesRoot }] });
  const settings = memoryBuildSettings(build.options);
  const settingsKey = memorySettingsKey(settings);
  const done = new Set(
    readMemoryRecords(run.path, true)
      .filter((r) => r.settingsKey === settingsKey && r.error === null && r.graph !== null && existsSync(join(run.path, r.graph, "scene-graph.json")))
      .map((r) => r.episode),
  );
  const result: MemoryFolderResult = { dir: run.path, settingsKey, built: 0, reused: 0, failed: [] };
  const appender = run.appender(MEMORY_RECORDS_FILE);
  // failed attempts apart: a later success supersedes them, and memories.jsonl holds each episode once
  const failures = run.appender(MEMORY_FAILURES_FILE);
  const total = build.episodes.length;
  let finished = 0;
  try {
    for (const id of build.episodes) {
      if (done.has(id)) {
        result.reused++;
        build.onProgress?.({ done: ++finished, total, failed: result.failed.length, episode: id });
        continue;
      }
      const started = performance.now();
      const record = (fields: Pick<MemoryRecord, "graph" | "instances" | "error" | "failedCall">): MemoryRecord => ({ episode: id, settingsKey, settings: { ...settings }, ...fields, seconds: Math.round(performance.now() - started) / 1000, finishedAt: new Date().toISOString() });
      try {
        const path = resolveEpisodePath(build.framesRoot, id, { field: "episode_history" });
        if (!path) throw new OutputlessFailure(`episode history "${id}" not found under ${build.framesRoot}`);
        const episode = await openEpisode(path, id);
        const { graph, mapPoints } = await buildEpisodeMemory(episode, build.options);
        const relative = memoryPath(settingsKey, id);
        await writeMemory(join(run.path, relative), graph, mapPoints, episode);
        appender.append(record({ graph: relative, instances: graph.instances.length, error: null }));
        result.built++;
      } catch (error) {
        if (error instanceof OutputError) throw error;
        if (!(error instanceof OutputlessFailure || error instanceof ModelCallError || isUserError(error))) throw error;
        const reason = error instanceof ModelCallError ? `${error.message} (${error.endpoint}, after ${error.retries} retries)` : error.message;
        const failedCall = error instanceof MemoryCallError ? { call: error.call, frame: error.frame, ...(error.instance !== undefined ? { instance: error.instance } : {}) } : undefined;
        failures.append(record({ graph: null, instances: null, error: reason, ...(failedCall ? { failedCall } : {}) }));
        result.failed.push({ episode: id, error: reason });
      }
      build.onProgress?.({ done: ++finished, total, failed: result.failed.length, episode: id });
    }
  } finally {
    appender.close();
    failures.close();
  }
  return result;
}

/** An episode that cannot be built for a reason that is not a bug. */
class OutputlessFailure extends Error {}
