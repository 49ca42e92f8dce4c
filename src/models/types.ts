/** A piece of a message: text, or an image as bytes with its media type. */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; data: Uint8Array; mediaType: string };

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  /** A plain string is sent as a plain string, as the reference tools do. */
  content: string | ContentPart[];
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
  completionTokens: number;
  images: number;
  latencyMs: number;
  retries: number;
  cached: boolean;
}

export interface ChatResponse {
  /** The first choice's text; null when the model returned no text. */
  text: string | null;
  /** Every choice's text, in order. */
  texts: (string | null)[];
  finishReason: string | null;
  usage: CallUsage;
}

/** The one interface every model call goes through. */
export interface ChatModel {
  /** `provider/model`, as the user wrote it. */
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
}

/** What a provider returns for one attempt, before usage bookkeeping. */
export interface ProviderReply {
  texts: (string | null)[];
  finishReason: string | null;
  promptTokens: number;
  completionTokens: number;
}

/** One provider's wire protocol: a single attempt, no retries (the scheduler retries). */
export interface ProviderClient {
  send(request: ChatRequest, signal: AbortSignal): Promise<ProviderReply>;
}
