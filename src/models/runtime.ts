import { z } from "zod";
import { canonicalJson, sha256Hex } from "../core/index.js";
import type { ModelCallCache } from "../store/index.js";
import { EndpointScheduler } from "./scheduler.js";
import { UsageLedger } from "./usage.js";
import { currentCallContext, type CallStatus } from "./ledger.js";
import type { ModelSpec } from "./names.js";
import type { ChatModel, ChatRequest, ChatResponse, ProviderClient, ProviderReply } from "./types.js";
import { ModelCallError } from "./errors.js";
import { adaptRequest, type AdaptedRequest } from "./families.js";
import { checkImageLimits } from "./images.js";
import { imageSha256 } from "./inline-images.js";
import { OpenAiClient } from "./providers/openai.js";
import { AnthropicClient } from "./providers/anthropic.js";
import { GeminiClient } from "./providers/gemini.js";

export interface ModelRuntimeOptions {
  /** Most calls in flight at once per endpoint (default 8). */
  concurrency?: number;
  /** Retries of a retryable failure (default 5). */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds (default 60 s). */
  timeoutMs?: number;
  /** First backoff step of retries (default 500 ms). */
  retryBaseMs?: number;
  /** The model-call cache; none means every call reaches the endpoint. */
  cache?: ModelCallCache;
}

/** What a model is for in a run: the role its calls are recorded and costed under. */
export interface ModelRoleOptions {
  role: string;
}

/** A reply as the model-call cache holds it. */
export const cachedReplySchema = z.object({
  texts: z.array(z.string().nullable()).min(1),
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()), signature: z.string().optional() })).optional(),
  finishReason: z.string().nullable(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  thinkingTokens: z.number().optional(),
  tokenLogprobs: z.array(z.object({ token: z.string(), logprob: z.number(), top: z.array(z.object({ token: z.string(), logprob: z.number() })) })).optional(),
});

/**
 * Everything a run's model calls share: one scheduler per endpoint (so roles on the same
 * server share its limit), the cache, and the usage ledger.
 */
export class ModelRuntime {
  readonly usage = new UsageLedger();
  private readonly schedulers = new Map<string, EndpointScheduler>();
  private readonly options: Required<Omit<ModelRuntimeOptions, "cache">> & { cache?: ModelCallCache };

  constructor(options: ModelRuntimeOptions = {}) {
    this.options = {
      concurrency: options.concurrency ?? 8,
      maxRetries: options.maxRetries ?? 5,
      timeoutMs: options.timeoutMs ?? 60_000,
      retryBaseMs: options.retryBaseMs ?? 500,
      ...(options.cache ? { cache: options.cache } : {}),
    };
  }

  /**
   * A model of `spec` whose calls go through this runtime; each is recorded in the usage
   * ledger under `role` (the agent, captioner, judge, reward model…),
   * unless the call is made in another role's context (`inRole`).
   */
  model(spec: ModelSpec, options: ModelRoleOptions): ChatModel {
    return new ScheduledModel(spec, options.role, this.clientFor(spec), this.schedulerFor(spec), this.usage, this.options.cache);
  }

  private clientFor(spec: ModelSpec): ProviderClient {
    switch (spec.protocol) {
      case "openai":
        return new OpenAiClient(spec);
      case "anthropic":
        return new AnthropicClient(spec);
      case "google":
        return new GeminiClient(spec);
    }
  }

  private schedulerFor(spec: ModelSpec): EndpointScheduler {
    const key = `${spec.protocol} ${spec.baseURL}`;
    let scheduler = this.schedulers.get(key);
    if (!scheduler) {
      scheduler = new EndpointScheduler({
        concurrency: this.options.concurrency,
        maxRetries: this.options.maxRetries,
        timeoutMs: this.options.timeoutMs,
        retryBaseMs: this.options.retryBaseMs,
      });
      this.schedulers.set(key, scheduler);
    }
    return scheduler;
  }
}

class ScheduledModel implements ChatModel {
  readonly name: string;
  private warnedCache = false;

  constructor(
    readonly spec: ModelSpec,
    private readonly role: string,
    private readonly client: ProviderClient,
    private readonly scheduler: EndpointScheduler,
    private readonly usage: UsageLedger,
    private readonly cache: ModelCallCache | undefined,
  ) {
    this.name = spec.name;
  }

  /**
   * One reply that is an answer. A reply cut by its token limit is asked again with twice
   * the budget while the model's `truncation_retries` allow; a cut, filtered or refused
   * reply that remains is a ModelCallError of that kind (its text kept), and is never cached.
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    checkImageLimits(this.spec, request);
    const images = countImages(request);
    for (let scale = 1, retry = 0; ; scale *= 2, retry++) {
      const adapted = adaptRequest(this.spec.profile, request, scale);
      this.usage.noteDeviations(this.name, adapted.deviations);
      const key = this.cache ? requestCacheKey(this.spec, adapted.request, adapted.thinking) : undefined;
      if (key) {
        const hit = cachedReplySchema.safeParse(await this.lookUpCache(key));
        if (hit.success) return this.respond(hit.data, { images, latencyMs: 0, retries: 0, cached: true });
      }
      const result = await this.send(adapted, images);
      const reply = result.value;
      const status = reply.status ?? "ok";
      if (status === "ok") {
        if (this.cache && key) await this.storeInCache(key, reply);
        return this.respond(reply, { images, latencyMs: result.latencyMs, retries: result.retries, cached: false });
      }
      const response = this.respond(reply, { images, latencyMs: result.latencyMs, retries: result.retries, cached: false });
      if (status === "truncated" && retry < this.spec.profile.truncationRetries) continue;
      const reason = reply.statusReason ?? status;
      throw new ModelCallError(status, `${this.name}: ${reason}`, this.spec.baseURL, undefined, undefined, { text: response.text, finishReason: reply.finishReason, usage: response.usage });
    }
  }

  private async send(adapted: AdaptedRequest, images: number): Promise<{ value: ProviderReply; latencyMs: number; retries: number }> {
    try {
      return await this.scheduler.run((signal) => this.client.send(adapted, signal));
    } catch (error) {
      const failure = error instanceof ModelCallError ? error : new ModelCallError("bad_response", String(error), this.spec.baseURL);
      this.recordCall("failed", failure.message, { promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images, latencyMs: 0, retries: failure.retries, cached: false });
      throw failure;
    }
  }

  /** Appends the call to the usage ledger, with its role and item from where it was made. */
  private recordCall(status: CallStatus, reason: string | undefined, usage: ChatResponse["usage"]): void {
    const context = currentCallContext();
    this.usage.record({
      model: this.name,
      role: context.role ?? this.role,
      endpoint: this.spec.baseURL,
      mode: "live",
      status,
      ...(reason !== undefined ? { reason } : {}),
      ...(context.item !== undefined ? { item: context.item } : {}),
      ...usage,
    });
  }

  /** A cache that cannot be read (a damaged file) is a miss, never a failed call. */
  private async lookUpCache(key: string): Promise<unknown> {
    try {
      return await this.cache?.get(key);
    } catch (error) {
      this.warnCache("read", error);
      return undefined;
    }
  }

  /** A cache that cannot be written (a full disk, a locked file) costs hits later, never this answer. */
  private async storeInCache(key: string, reply: ProviderReply): Promise<void> {
    try {
      await this.cache?.put(key, this.spec.provider, this.spec.model, reply);
    } catch (error) {
      this.warnCache("written", error);
    }
  }

  private warnCache(what: string, error: unknown): void {
    if (!this.warnedCache) process.emitWarning(`model-call cache not ${what}: ${error instanceof Error ? error.message : String(error)}`);
    this.warnedCache = true;
  }

  private respond(reply: ProviderReply, call: { images: number; latencyMs: number; retries: number; cached: boolean }): ChatResponse {
    const usage = { promptTokens: reply.promptTokens, completionTokens: reply.completionTokens, thinkingTokens: reply.thinkingTokens ?? 0, ...call };
    const status = reply.status ?? "ok";
    this.recordCall(status, status === "ok" ? undefined : (reply.statusReason ?? status), usage);
    const toolCalls = reply.toolCalls && reply.toolCalls.length > 0 ? { toolCalls: reply.toolCalls } : {};
    const logprobs = reply.tokenLogprobs ? { tokenLogprobs: reply.tokenLogprobs } : {};
    return { text: reply.texts[0] ?? null, texts: reply.texts, finishReason: reply.finishReason, usage, ...toolCalls, ...logprobs };
  }
}

function countImages(request: ChatRequest): number {
  let images = 0;
  for (const message of request.messages) {
    if (typeof message.content !== "string") images += message.content.filter((p) => p.type === "image").length;
  }
  return images;
}

/**
 * The cache key: a hash of the canonical request as sent (endpoint, model, messages with
 * images by content hash, generation parameters after the family's adaptation, thinking
 * setting, sample index).
 */
export function requestCacheKey(spec: ModelSpec, request: ChatRequest, thinking?: AdaptedRequest["thinking"]): string {
  const messages = request.messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === "string"
        ? m.content
        : m.content.map((p) => (p.type === "text" ? p : { type: "image", mediaType: p.mediaType, sha256: imageSha256(p.data) })),
    // tool fields only when present, so that keys of requests without tools are unchanged
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
    ...(m.toolName !== undefined ? { toolName: m.toolName } : {}),
  }));
  const { messages: _ignored, sampleIndex, ...params } = request;
  return sha256Hex(
    // thinking only when set, so that keys of requests without it are unchanged
    canonicalJson({ protocol: spec.protocol, baseURL: spec.baseURL, model: spec.model, messages, params, sampleIndex: sampleIndex ?? 0, ...(thinking ? { thinking } : {}) }),
  );
}
