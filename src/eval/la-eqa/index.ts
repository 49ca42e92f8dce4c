/** LA-EQA (Long-term Active EQA): its answer judge and SPL as its evaluation code defines them, and the scoring run of `eqa score`. */
export * from "./judge.js";
export * from "./spl.js";
export * from "./original-prompt.js";
export * from "./score-run.js";
