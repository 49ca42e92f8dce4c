import type { Question } from "../core/index.js";
import type { Episode } from "../episodes/index.js";
import type { UsageTotals } from "../models/index.js";

/** One model call an agent made, as its trace keeps it. */
export interface TracedCall {
  /** What the call was for: answer, caption, force-guess, blind-guess. */
  role: string;
  model: string;
  /** The prompt file used and the sha256 of the exact text sent (images by their own hashes). */
  prompt: string;
  promptSha256: string;
  /** Frame indices sent with the call, if any. */
  frames?: number[];
  reply: string | null;
  cached: boolean;
  /** The call's tokens (absent in traces written by older versions): what the summary's cost is computed from, per role. */
  usage?: TracedTokens;
  /** Wall time of the call, milliseconds, retries included (0 for a cache hit; absent in older traces). */
  latencyMs?: number;
  /** The messages sent, images by content hash and frame index (absent in older traces): what a transcript shows. */
  messages?: TracedMessage[];
  /** Why the call failed (no reply, or a reply that was not an answer), when it did: an external agent may answer without it. */
  error?: string;
}

/** A message of a traced call: its text as sent, each image by its hash (and the frame it shows, when known). */
export interface TracedMessage {
  role: string;
  content: string | ({ type: "text"; text: string } | { type: "image"; sha256: string; mediaType: string; bytes: number; frame?: number })[];
  /** An assistant message's tool calls. */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** A tool message: the tool whose result it carries. */
  toolName?: string;
}

/** A call's token counts as its trace keeps them. */
export interface TracedTokens {
  promptTokens: number;
  completionTokens: number;
  thinkingTokens: number;
}

/** The image an agent sent, by content hash: what the trace needs to say which pixels were seen. */
export interface TracedImage {
  index: number;
  sha256: string;
  width: number;
  height: number;
  bytes: number;
}

/** What an agent did for one question: written to `traces.jsonl`. */
export interface AgentTrace {
  agent: string;
  /** The sampled frame indices, in the order sent. */
  frames: number[];
  images: TracedImage[];
  /** Socratic captions by frame index. */
  captions?: Record<string, string>;
  calls: TracedCall[];
  /** The agent's own answer, before force-a-guess. */
  agentAnswer: string | null;
  forceGuess?: ForceGuessTrace;
  usage: UsageTotals;
  notes: string[];
  /** The retrieval agent's tool calls, with their results. */
  toolCalls?: { round: number; name: string; arguments: Record<string, unknown>; result: string }[];
  /** The retrieval agent's retrieved observation ids. */
  retrieved?: number[];
  /** An external agent's log lines (its `log` calls), in order. */
  log?: { level: string; message: string }[];
  /** What an external agent process wrote on stderr while it answered (its tail). */
  stderr?: string;
}

export interface ForceGuessTrace {
  /** What the classifier said: the answer abstains (guess), it does not (keep), or unreadable (kept). */
  action: "guess" | "keep" | "unreadable";
  /** The blind guess that replaced the answer, when the action was guess. */
  blindAnswer?: string | null;
  /** The classifier's reply, when it could not be read. */
  reply?: string | null;
}

export interface AgentAnswer {
  /** The final answer (after force-a-guess). */
  answer: string | null;
  trace: AgentTrace;
  /** The agent's confidence in its answer, 0 to 1, when it gives one (an external agent's `confidence`). */
  confidence?: number;
}

/** An EM-EQA agent: a question (and its episode history) in, an answer and its trace out. */
export interface Agent {
  readonly name: string;
  /** False for the blind agent, which never looks at frames. */
  readonly needsEpisode: boolean;
  /** Everything that decides the answers (models, prompts, frames, parameters): a changed configuration answers anew. */
  readonly configuration: Record<string, unknown>;
  answer(question: Question, episode: Episode | undefined): Promise<AgentAnswer>;
  /** Releases what the agent holds (an external agent's processes); called once the run is done. */
  close?(): Promise<void>;
}
