/** Mixed EQA agents: the history they are handed, views of what they perceived, and the built-in program agents. */
export * from "./types.js";
export { asksAboutNow, lookFor, showsAny, type LookFor } from "./needs.js";
export { graphSnapshot, historyView, logSnapshot, momentStep, presentOnlyView, seenOverRemembered } from "./views.js";
export { LiveWalk, type WalkStep } from "./walk.js";
export { answerMixedQuestion, type MixedAgentContext, type MixedOutcome, type MixedQuestion } from "./agents.js";
export { MIXED_MAX_STEPS, MIXED_RECORDS_FILE, plannedMixedEpisodes, runMixedEpisodes, type MixedRecord, type MixedRunHome, type MixedRunOptions } from "./run.js";
export { MIXED_ANSWER_PROMPT, answerWithModel, planModelAnswer, mixedModelConfiguration, type MixedModel } from "./model-answer.js";
export type { MixedJudge } from "./run.js";
export { answerWithOwnAgent, protocolHistory, type OwnMixedAgent } from "./own-agent.js";
