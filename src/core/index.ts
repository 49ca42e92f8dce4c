export * from "./errors.js";
export * from "./hash.js";
export * from "./random.js";
export * from "./package.js";
export * from "./prompts.js";
export * from "./types.js";
export * from "./paths.js";
export * from "./concurrency.js";
