/**
 * Reward modelling for EQA (EQA-RM, seed 004): the generative reward model and its
 * test-time scaling, the reward-model benchmark run and its metrics (accuracy within a
 * tolerance, RMSE), EQARewardBench-style data building, rejective fine-tuning and C-GRPO
 * exports, C-GRPO's rewards and the reward server.
 */
export * from "./parse.js";
export * from "./aggregate.js";
export * from "./prompts.js";
export * from "./keyframes.js";
export * from "./evaluate.js";
export * from "./score-run.js";
export * from "./bench-run.js";
export * from "./curves.js";
export * from "./rewards.js";
export * from "./augment.js";
export * from "./server.js";
export * from "./export.js";
export * from "./csv.js";
export * from "./build.js";
export * from "./format.js";
export * from "./metrics.js";
