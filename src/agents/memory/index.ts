/**
 * The object-centric memory of an episode (OpenEQA's Sparse Voxel Map and ConceptGraphs
 * baselines, TAG-EQA's structured baselines): object views from instance masks and the
 * embedded detector, merged into global instances with 3-D boxes, captions and geometric
 * relations, written as a scene graph.
 */
export * from "./types.js";
export * from "./views.js";
export * from "./merge.js";
export * from "./relations.js";
export * from "./build.js";
export * from "./boxes.js";
export * from "./render.js";
export * from "./truth.js";
