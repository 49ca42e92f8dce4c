import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { AdaptedRequest } from "../families.js";
import type { ChatMessage, ContentPart, ProviderClient, ProviderReply, ReplyStatus } from "../types.js";
import { ModelCallError } from "../errors.js";
import { postJson } from "../http.js";
import { inlineImage } from "../inline-images.js";
import { plainText } from "../messages.js";
import { parseToolArguments, withToolCalls } from "../tools.js";

/** Anthropic requires max_tokens; this is sent when the caller sets none. */
const DEFAULT_MAX_TOKENS = 1024;
const API_VERSION = "2023-06-01";

const messageSchema = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional(), id: z.string().optional(), name: z.string().optional(), input: z.unknown().optional() }).loose()),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).loose().optional(),
}).loose();

/** Anthropic's Messages API. It has no seed and no n: seeds are not sent, n > 1 is refused. */
export class AnthropicClient implements ProviderClient {
  constructor(private readonly spec: ModelSpec) {}

  async send(adapted: AdaptedRequest, signal: AbortSignal): Promise<ProviderReply> {
    if ((adapted.request.n ?? 1) > 1) {
      throw new ModelCallError("bad_request", "anthropic models give one choice per call: ask for samples instead of n > 1", this.spec.baseURL);
    }
    const headers = { "x-api-key": this.spec.apiKey, "anthropic-version": API_VERSION };
    return this.parse(await postJson(`${this.spec.baseURL}/v1/messages`, headers, this.body(adapted), signal, this.spec.baseURL));
  }

  /** A message as a reply (also a message batch's succeeded `result.message`). */
  parse(raw: unknown): ProviderReply {
    const parsed = messageSchema.safeParse(raw);
    if (!parsed.success) throw new ModelCallError("bad_response", `${this.spec.baseURL} answered without content`, this.spec.baseURL);
    const text = parsed.data.content.filter((b) => b.type === "text").map((b) => b.text ?? "").join("");
    const calls = parsed.data.content
      .filter((b) => b.type === "tool_use")
      .map((b, i) => ({ id: b.id ?? `call_${i}`, name: b.name ?? "", arguments: parseToolArguments(b.input) }));
    const hasText = parsed.data.content.some((b) => b.type === "text");
    return {
      texts: [parsed.data.content.length > 0 && (hasText || calls.length === 0) ? text : null],
      ...withToolCalls(calls),
      finishReason: parsed.data.stop_reason ?? null,
      ...replyStatus(parsed.data.stop_reason ?? null, text),
      promptTokens: parsed.data.usage?.input_tokens ?? 0,
      completionTokens: parsed.data.usage?.output_tokens ?? 0,
    };
  }

  body({ request, thinking }: AdaptedRequest): Record<string, unknown> {
    const system = request.messages.filter((m) => m.role === "system").map((m) => plainText(m.content)).join("\n\n");
    return {
      model: this.spec.model,
      max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
      messages: mergeToolResults(request.messages.filter((m) => m.role !== "system").map(toAnthropicMessage)),
      ...(system ? { system } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { top_p: request.topP } : {}),
      ...(request.stop !== undefined ? { stop_sequences: request.stop } : {}),
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) } : {}),
      ...(request.toolChoice !== undefined ? { tool_choice: { type: ANTHROPIC_TOOL_CHOICE[request.toolChoice] } } : {}),
      ...(thinking?.kind === "anthropic-budget" ? { thinking: { type: "enabled", budget_tokens: thinking.budgetTokens } } : {}),
      ...(thinking?.kind === "anthropic-adaptive" ? { thinking: { type: "adaptive" }, output_config: { effort: thinking.effort } } : {}),
    };
  }
}

/** `refusal` (declined by the model's safety layer), `max_tokens` or a full context window (cut). */
function replyStatus(stopReason: string | null, text: string): { status?: ReplyStatus; statusReason?: string } {
  if (stopReason === "refusal") return { status: "refused", statusReason: `the model declined to answer (stop_reason refusal)${text ? `: ${text.slice(0, 200)}` : ""}` };
  if (stopReason === "max_tokens") return { status: "truncated", statusReason: "cut by the token limit (stop_reason max_tokens)" };
  if (stopReason === "model_context_window_exceeded") return { status: "truncated", statusReason: "cut by the model's context window (stop_reason model_context_window_exceeded)" };
  return {};
}

const ANTHROPIC_TOOL_CHOICE = { auto: "auto", required: "any", none: "none" } as const;

interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | Record<string, unknown>[];
  /** A user message made of tool results only: consecutive ones are merged, as the API requires. */
  toolResults?: boolean;
}

function mergeToolResults(messages: AnthropicMessage[]): Record<string, unknown>[] {
  const merged: AnthropicMessage[] = [];
  for (const message of messages) {
    const last = merged[merged.length - 1];
    if (message.toolResults && last?.toolResults && Array.isArray(last.content) && Array.isArray(message.content)) {
      last.content = [...last.content, ...message.content];
    } else merged.push({ ...message });
  }
  return merged.map(({ role, content }) => ({ role, content }));
}

function toAnthropicMessage(message: ChatMessage): AnthropicMessage {
  if (message.role === "tool") {
    return { role: "user", content: [{ type: "tool_result", tool_use_id: message.toolCallId ?? "", content: plainText(message.content) }], toolResults: true };
  }
  if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
    const text = plainText(message.content);
    return {
      role: "assistant",
      content: [...(text.length > 0 ? [{ type: "text", text }] : []), ...message.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.arguments }))],
    };
  }
  const role = message.role === "assistant" ? "assistant" : "user";
  if (typeof message.content === "string") return { role, content: message.content };
  return { role, content: message.content.map(toAnthropicBlock) };
}

function toAnthropicBlock(part: ContentPart): Record<string, unknown> {
  if (part.type === "text") return { type: "text", text: part.text };
  return { type: "image", source: { type: "base64", media_type: part.mediaType, data: inlineImage(part.data) } };
}
