/**
 * eqakit as a library: the nouns a user composes, in the order data flows through them:
 * benchmark → episode → agent → prediction → judge → scores → report; exploration, generation
 * and reward models beside them. docs/library.md shows each one at work.
 *
 *   import { loadOpenEqaBenchmark, loadPredictions, resolveModel, ModelRuntime, scorePredictions } from "eqakit";
 *
 * Everything else (parsers, prompts, schedulers, file formats' internals) stays inside its
 * folder; `test/fixtures/public-api.txt` lists these names so that a change to them is deliberate.
 */

// errors a caller catches
export { UserError, OutputError } from "./core/index.js";
export { ModelCallError } from "./models/index.js";
export { EnvironmentError } from "./sim/index.js";

// the records every stage passes on
export type { Question, Prediction, Frame } from "./core/index.js";

// benchmarks and other inputs
export {
  loadOpenEqaBenchmark,
  loadQuestionSubset,
  selectQuestions,
  loadPredictions,
  type OpenEqaBenchmark,
  loadExpressBench,
  type ExpressBenchRecord,
  loadHmEqaQuestions,
  type HmEqaQuestion,
  loadAlfredTrajectories,
  loadTrajectoryLog,
  type TrajectoryLog,
  loadTagQuestions,
  type TagQuestion,
  type StructuredAnswer,
  loadRewardInstances,
  type RewardInstance,
  fetchDataset,
} from "./data/index.js";

// episodes: what an agent saw
export { FrameCache, openEpisode, type Episode } from "./episodes/index.js";

// models
export {
  ModelRuntime,
  type ModelRuntimeOptions,
  resolveModel,
  type ModelSpec,
  KNOWN_PROVIDERS,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type UsageTotals,
  loadSentenceEncoder,
  loadObjectDetector,
} from "./models/index.js";
export { ModelCallCache } from "./store/index.js";

// agents (EM-EQA) and active exploration
export {
  createAgent,
  AGENT_NAMES,
  type AgentName,
  type AgentSetup,
  type Agent,
  type AgentAnswer,
  BlindAgent,
  VlmAgent,
  SocraticAgent,
  SvmAgent,
  ConceptGraphAgent,
  RetrievalAgent,
  ExternalAgent,
  checkAgent,
  answerQuestions,
  type AnswerOptions,
  type AnswerSummary,
  loadActiveEpisodes,
  type ActiveEpisode,
  runExploration,
  ExternalActiveAgent,
  type ExploreRunOptions,
  type ExploreSummary,
  createExplorer,
  type ExplorerName,
} from "./agents/index.js";
export { HouseholdEnvironment, StdioEnvironment, runConformance, type Environment } from "./sim/index.js";

// judges and metrics: OpenEQA
export {
  scorePredictions,
  type ScoreOptions,
  type ScoreSummary,
  answerAndScore,
  type AnswerAndScoreOptions,
  judgeLlmMatch,
  type LlmMatchMode,
  llmMatchPoints,
  aggregateLlmMatch,
  openEqaEfficiency,
  abstentionAnalysis,
} from "./eval/index.js";
// judges and metrics: EXPRESS-Bench
export { judgeEac, type EacJudgement, expressMetrics, type ExpressMetrics, type ExpressEpisodeResult, scoreExploration, type ExploreScores } from "./eval/index.js";
// judges and metrics: TAG-EQA's structured judge
export {
  matchStructuredAnswers,
  type StructuredMatch,
  exactTextSimilarity,
  extractStructuredAnswer,
  scoreTagRun,
  type TagScoreSummary,
} from "./eval/index.js";
// statistics
export {
  bootstrapMean,
  type MeanEstimate,
  type BootstrapOptions,
  correlate,
  agreementMatrix,
  loadScoreSet,
} from "./eval/index.js";

// generating TAG-EQA questions
export { buildTagDataset, type TagDataset, type DatasetOptions, loadTrajectorySource, runTagAnswers, answerTagQuestions, tagSetEpisodes, type TagAnswerRun, type TagAgentPrediction, runTagBaseline, tagBaseline, type TagBaselineName } from "./generate/index.js";
export { generateHome, recordTask } from "./sim/index.js";

// reward models (EQA-RM)
export {
  scoreRewardInstances,
  type RmScoreOptions,
  type RmScoreSummary,
  benchRewardModel,
  rewardModelMetrics,
  type RewardMetrics,
  batchRewards,
  CONTRASTIVE_DEFAULTS,
  startRewardServer,
  type RewardServerOptions,
  exportRft,
  exportGrpo,
} from "./reward/index.js";

// reports and the viewer
export { loadRun, type LoadedRun, buildHtmlReport, startViewer, formatScoreSummary } from "./report/index.js";
