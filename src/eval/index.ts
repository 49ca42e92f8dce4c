/**
 * Judges and metrics, grouped by the benchmark that defines them: `openeqa/` (LLM-Match,
 * efficiency, abstention), `express/` (EAC, C / C* / E_path / d_T), `tag-eqa/` (structured
 * grounded matching), `la-eqa/` (LA-EQA's 1-5 judge and SPL). The statistics they share sit
 * here: bootstrap means and intervals (stats.ts) and agreement between judges (agreement.ts).
 * Reward-model metrics live in `reward/`.
 */
export * from "./stats.js";
export * from "./agreement.js";
export * from "./openeqa/index.js";
export * from "./express/index.js";
export * from "./tag-eqa/index.js";
export * from "./la-eqa/index.js";
export * from "./mixed/index.js";
