/**
 * OpenEQA (seed 001): the LLM-Match judge as the reference's evaluate-predictions.py runs it,
 * its aggregate per category and source, the scoring run (`eqa score`) and answer-then-score
 * (`eqa run`), A-EQA efficiency, force-a-guess abstention (Table III) and the score sets that
 * `eqa judge-agreement` compares.
 */
export * from "./llm-match.js";
export * from "./aggregate.js";
export * from "./score-run.js";
export * from "./answer-and-score.js";
export * from "./efficiency.js";
export * from "./abstention.js";
export * from "./score-sets.js";
