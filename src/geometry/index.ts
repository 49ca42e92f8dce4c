/**
 * Geometry on typed arrays (xyz triples in Float32Array, no object per point): the world
 * frame and TAG-EQA's grounding frame, depth back-projection, voxel down-sampling, DBSCAN,
 * axis-aligned and oriented 3-D boxes, 3-D IoU.
 */
export * from "./frames.js";
export * from "./backproject.js";
export * from "./voxel.js";
export * from "./dbscan.js";
export * from "./boxes.js";
export * from "./grid.js";
