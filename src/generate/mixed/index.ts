/** Mixed EQA sets generated in the built-in simulator: days, changes while away, questions with exact answers. */
export { buildMixedSet, mixedSetStats, writeMixedSet, type MixedSetBuild, type MixedSetOptions, type MixedSetStats } from "./set.js";
export { applyChanges, startPose, CHANGE_KINDS, type Attended, type ChangeKind, type MixedChange } from "./changes.js";
export { recordDays, dayTimes, MIXED_FRAME_WIDTH, MIXED_FRAME_HEIGHT, type RecordedDay } from "./days.js";
export { truthView, rememberedView, homeSnapshot, stepSnapshot, momentStep, lastSightings, type DayLog } from "./views.js";
export { judgeCandidate, givesAnswerAway, selectEpisodes, emptyMixedFunnels, type MixedFunnel, type UnsplitEpisode } from "./select.js";
export { MIXED_FUNNEL_RULES, pastCandidates, presentCandidates, multiPastCandidates, pastPresentCandidates, type MixedCandidate, type MixedFunnelRule } from "./templates.js";
export { ViewPaths } from "./paths.js";
export type { HomeContext } from "./context.js";
export { rewriteMixedEpisodes, mixedRewriteJob } from "./rewrite.js";
