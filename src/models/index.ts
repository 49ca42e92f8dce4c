export * from "./types.js";
export * from "./errors.js";
export * from "./names.js";
export * from "./scheduler.js";
export * from "./usage.js";
export * from "./runtime.js";
export * from "./messages.js";
export * from "./batch.js";
