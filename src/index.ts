/**
 * eqakit as a library: everything the `eqa` command does is importable from here.
 *
 *   import { loadOpenEqaBenchmark, loadPredictions, resolveModel, ModelRuntime, scorePredictions } from "eqakit";
 */
export * from "./core/index.js";
export * from "./data/index.js";
export * from "./store/index.js";
export * from "./episodes/index.js";
export * from "./geometry/index.js";
export * from "./models/index.js";
export * from "./agents/index.js";
export * from "./eval/index.js";
export * from "./reward/index.js";
export * from "./report/index.js";
export * from "./sim/index.js";
