/**
 * Reproducing the seed papers' tables (`eqa reproduce`): the published rows, transcribed once
 * from the seeds with their footnotes, and the runs that put a user's model in a table beside
 * them, laid out as the paper lays it out; and the tables of eqakit's own benchmarks (Mixed EQA),
 * laid out the same way with no published row.
 */
export * from "./published.js";
export * from "./table.js";
export * from "./openeqa.js";
export * from "./eqa-rm.js";
export * from "./express.js";
export * from "./tag-eqa.js";
export * from "./openeqa-active.js";
export * from "./own-tables.js";
export * from "./mixed-eqa.js";
