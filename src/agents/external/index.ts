/**
 * Agents of the user's own: a process speaking the agent protocol (JSON-RPC 2.0 over stdio,
 * `docs/agent-protocol.md`) or a JavaScript module implementing the same methods, run by
 * eqakit like a built-in agent.
 */
export { ExternalAgent, ExternalAgentError, parseExternalAgent, isExternalAgentValue, describeExternalAgent, type ExternalAgentSpec, type ExternalAgentOptions } from "./agent.js";
export { ExternalActiveAgent, ActiveEpisodeSession, checkDecision, type ExternalActiveAgentOptions, type CheckedDecision } from "./active.js";
export type { CallbackFrames } from "./callbacks.js";
export {
  ACTIVE_ACTIONS,
  DEPTH_METRES_PER_UNIT,
  AGENT_PROTOCOL_VERSION,
  AGENT_TASK_KINDS,
  AGENT_METHODS,
  MAX_LINE_BYTES,
  agentProtocolJsonSchemas,
  type AgentTaskKind,
  type InitializeParams as AgentInitializeParams,
  type InitializeResult as AgentInitializeResult,
  type AnswerParams as AgentAnswerParams,
  type AnswerResult as AgentAnswerResult,
  type CompleteParams as AgentCompleteParams,
  type CompleteResult as AgentCompleteResult,
  type LogParams as AgentLogParams,
  type ActiveObservation as AgentActiveObservation,
  type ResetParams as AgentResetParams,
  type StepParams as AgentStepParams,
  type ActiveDecision as AgentActiveDecision,
  type ActiveAction as AgentActiveAction,
  type MemoryQueryParams as AgentMemoryQueryParams,
  type MemoryQueryResult as AgentMemoryQueryResult,
} from "./protocol.js";
export type { ModuleAgent, ModuleContext } from "./session.js";
export { checkAgent, checkTagAgent, checkModel, probeAgent, robustness, handshake, describeFailure, CHECK_MODEL_REPLY, type AgentCheck, type AgentCheckOptions } from "./check.js";
