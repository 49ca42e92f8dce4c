import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { ChatMessage, ChatRequest, ContentPart, ProviderClient, ProviderReply } from "../types.js";
import { ModelCallError } from "../errors.js";
import { postJson } from "../http.js";
import { plainText } from "../messages.js";

/** Anthropic requires max_tokens; this is sent when the caller sets none. */
const DEFAULT_MAX_TOKENS = 1024;
const API_VERSION = "2023-06-01";

const messageSchema = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).loose().optional(),
}).loose();

/** Anthropic's Messages API. It has no seed and no n: seeds are not sent, n > 1 is refused. */
export class AnthropicClient implements ProviderClient {
  constructor(private readonly spec: ModelSpec) {}

  async send(request: ChatRequest, signal: AbortSignal): Promise<ProviderReply> {
    if ((request.n ?? 1) > 1) {
      throw new ModelCallError("bad_request", "anthropic models give one choice per call: ask for samples instead of n > 1", this.spec.baseURL);
    }
    const headers = { "x-api-key": this.spec.apiKey, "anthropic-version": API_VERSION };
    const raw = await postJson(`${this.spec.baseURL}/v1/messages`, headers, this.body(request), signal, this.spec.baseURL);
    const parsed = messageSchema.safeParse(raw);
    if (!parsed.success) throw new ModelCallError("bad_response", `${this.spec.baseURL} answered without content`, this.spec.baseURL);
    const text = parsed.data.content.filter((b) => b.type === "text").map((b) => b.text ?? "").join("");
    return {
      texts: [parsed.data.content.length > 0 ? text : null],
      finishReason: parsed.data.stop_reason ?? null,
      promptTokens: parsed.data.usage?.input_tokens ?? 0,
      completionTokens: parsed.data.usage?.output_tokens ?? 0,
    };
  }

  private body(request: ChatRequest): Record<string, unknown> {
    const system = request.messages.filter((m) => m.role === "system").map((m) => plainText(m.content)).join("\n\n");
    return {
      model: this.spec.model,
      max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
      messages: request.messages.filter((m) => m.role !== "system").map(toAnthropicMessage),
      ...(system ? { system } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { top_p: request.topP } : {}),
      ...(request.stop !== undefined ? { stop_sequences: request.stop } : {}),
    };
  }
}

function toAnthropicMessage(message: ChatMessage): Record<string, unknown> {
  const role = message.role === "assistant" ? "assistant" : "user";
  if (typeof message.content === "string") return { role, content: message.content };
  return { role, content: message.content.map(toAnthropicBlock) };
}

function toAnthropicBlock(part: ContentPart): Record<string, unknown> {
  if (part.type === "text") return { type: "text", text: part.text };
  return { type: "image", source: { type: "base64", media_type: part.mediaType, data: Buffer.from(part.data).toString("base64") } };
}
