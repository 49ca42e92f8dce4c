/** Exploration for active EQA: an occupancy map from depth, frontiers and goals, and the frontier explorer. */
export * from "./occupancy.js";
export * from "./planning.js";
export * from "./explorer.js";
export * from "./fine-eqa.js";
export * from "./fine-eqa-reference.js";
export { ReferenceMaps, activeRegion, advanceExplorationPlan, explorationPlan, integrateRegion, integrateValue, nextPose, nextRegionPoint, type ExplorationPlan, type RegionExploration, type NextPose } from "./fine-eqa-reference-steps.js";
export * from "./trajectory-image.js";
export * from "./explorer-types.js";
export * from "./explorers.js";
export * from "./run.js";
export * from "./multiple-choice.js";
export * from "./scenes.js";
export * from "./external.js";
export * from "./external-check.js";
