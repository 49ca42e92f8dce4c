/**
 * EXPRESS-Bench (seed 003): the EAC grounded judge, the metrics C, C*, E_path and d_T, and the
 * scoring of an `eqa explore` run, which adds OpenEQA's LLM-Match and efficiency.
 */
export * from "./express-metrics.js";
export * from "./eac.js";
export * from "./explore-score.js";
export * from "./explore-workflow.js";
export * from "./original-prompts.js";
