/**
 * Embedded models that run offline from what `npm install` brings: the CenterNet object
 * detector (COCO) and the Universal Sentence Encoder lite, both on the tfjs WASM backend.
 */
export * from "./detector.js";
export * from "./embeddings.js";
