export * from "./jsonl.js";
export * from "./cache.js";
export * from "./run-dir.js";
export * from "./shard.js";
