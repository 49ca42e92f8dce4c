/**
 * TAG-EQA (seed 002): structured grounded scoring. The judge LLM extracts an answer's structure,
 * eqakit matches it against the truth itself (Hungarian assignment over groups and objects),
 * `eqa score-tag` runs it over predictions, and the judge is validated against perturbed answers.
 */
export * from "./hungarian.js";
export * from "./structured-match.js";
export * from "./structured-extract.js";
export * from "./structured-run.js";
export * from "./structured-validate.js";
