export * from "./llm-match.js";
export * from "./stats.js";
export * from "./aggregate.js";
export * from "./score-run.js";
export * from "./answer-and-score.js";
