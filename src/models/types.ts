import type { AdaptedRequest } from "./families.js";
import type { ModelSpec } from "./names.js";

/**
 * A piece of a message: text, or an image as bytes with its media type. An image's bytes are
 * not to be changed once a request has held them: their base64 and sha256 are kept beside
 * them for the next request that sends them.
 */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; data: Uint8Array; mediaType: string };

export interface ChatMessage {
  /** "tool" carries the result of a tool call back to the model (`toolCallId`, `toolName`). */
  role: "system" | "user" | "assistant" | "tool";
  /** A plain string is sent as a plain string, as the reference tools do. */
  content: string | ContentPart[];
  /** An assistant message's tool calls, as the model made them (sent back in the provider's own format). */
  toolCalls?: ToolCall[];
  /** A tool message: the id of the call it answers. */
  toolCallId?: string;
  /** A tool message: the name of the tool that was called (Gemini matches results by name). */
  toolName?: string;
}

/** A tool the model may call: a name, what it does, and its arguments as a JSON Schema object. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A call the model asked for: arguments parsed from JSON (an unparsable string stays under `_raw`). */
export interface ToolCall {
  /** The provider's id (Gemini gives none: eqakit numbers the calls `call_0`, `call_1`, …). */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Gemini's thoughtSignature of the call: sent back with the model's turn, as Gemini 3 requires. */
  signature?: string;
}

export interface GenerationParams {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  seed?: number;
  /** Number of choices in one call (providers without it refuse n > 1). */
  n?: number;
  stop?: string[];
  responseFormat?: "text" | "json";
  /** Tools the model may call, sent in the provider's native format. */
  tools?: ToolDefinition[];
  /** Whether the model may (auto), must (required) or must not (none) call a tool. */
  toolChoice?: "auto" | "required" | "none";
  /**
   * Ask for the log-probability of each token of the reply, with this many most likely
   * alternatives at each position (0: the chosen tokens' only). Not sent to families that
   * return none (Anthropic, OpenAI's reasoning models): a recorded deviation.
   */
  logprobs?: number;
}

/** One token of a reply with its log-probability, and the most likely tokens at its position (when asked for). */
export interface TokenLogprob {
  token: string;
  logprob: number;
  top: { token: string; logprob: number }[];
}

export interface ChatRequest extends GenerationParams {
  messages: ChatMessage[];
  /**
   * Which sample this is when the same request is asked several times: part of the cache
   * key, so repeated samples stay independent. Defaults to 0.
   */
  sampleIndex?: number;
}

/** What one call cost, as recorded per call and summed per run. */
export interface CallUsage {
  promptTokens: number;
  /** Every output token billed, thinking included. */
  completionTokens: number;
  /** Of completionTokens, those spent thinking (reasoning tokens) before the reply. */
  thinkingTokens: number;
  images: number;
  latencyMs: number;
  retries: number;
  cached: boolean;
}

/**
 * Whether a reply is an answer: `ok`, or cut by its token limit (`truncated`), withheld by a
 * content filter (`filtered`), or declined by the model (`refused`).
 */
export type ReplyStatus = "ok" | "truncated" | "filtered" | "refused";

export interface ChatResponse {
  /** The first choice's text; null when the model returned no text. */
  text: string | null;
  /** Every choice's text, in order. */
  texts: (string | null)[];
  /** The provider's own finish reason, as it sent it. */
  finishReason: string | null;
  usage: CallUsage;
  /** The first choice's tool calls, when the model made some. */
  toolCalls?: ToolCall[];
  /** The first choice's tokens with their log-probabilities, when asked for (`logprobs`) and returned. */
  tokenLogprobs?: TokenLogprob[];
}

/** The one interface every model call goes through. */
export interface ChatModel {
  /** `provider/model`, as the user wrote it (the spec's name). */
  readonly name: string;
  /** What the model is and where it is called: what a run records of it (`describeModel`), keys its cache by and prices its calls with. */
  readonly spec: ModelSpec;
  complete(request: ChatRequest): Promise<ChatResponse>;
}

/**
 * A model as a run's settings, contract and dry run know it: its spec alone. A `ChatModel` is
 * one; so is `{ spec }` where no model is called.
 */
export type ModelRef = Pick<ChatModel, "spec">;

/** What a provider returns for one attempt, before usage bookkeeping. */
export interface ProviderReply {
  texts: (string | null)[];
  /** The first choice's tool calls, when any. */
  toolCalls?: ToolCall[];
  finishReason: string | null;
  /** Absent means ok (replies cached by older versions were all taken as ok). */
  status?: ReplyStatus;
  /** Why the reply is not ok, in words (the refusal's text, the filter, the limit). */
  statusReason?: string;
  promptTokens: number;
  /** Every output token billed, thinking included (Gemini counts thoughts apart: they are added here). */
  completionTokens: number;
  /** Of completionTokens, those spent thinking, where the provider says. */
  thinkingTokens?: number;
  /** The first choice's tokens with their log-probabilities, when returned. */
  tokenLogprobs?: TokenLogprob[];
}

/** One provider's wire protocol: a single attempt, no retries (the scheduler retries). */
export interface ProviderClient {
  /** Sends a request already adapted to the model's family (families.ts). */
  send(request: AdaptedRequest, signal: AbortSignal): Promise<ProviderReply>;
}
