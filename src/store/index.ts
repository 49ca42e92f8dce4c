/**
 * Run folders and the model-call cache: append-only records that a run resumes from, final
 * files written whole, the manifest that every run folder carries (kind, settings, inputs,
 * checked before anything is written), shards and their merge, and the SQLite cache.
 */
export * from "./jsonl.js";
export * from "./cache.js";
export * from "./run-dir.js";
export * from "./resume.js";
export * from "./shard.js";
export * from "./manifest.js";
export * from "./kinds.js";
