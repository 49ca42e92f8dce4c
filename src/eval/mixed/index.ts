/** Mixed EQA: exact scores per category with intervals, LA-EQA's SPL, and the run's workflow (run, score, merge). */
export * from "./metrics.js";
export * from "./workflow.js";
