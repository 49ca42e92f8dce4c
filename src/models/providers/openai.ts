import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { AdaptedRequest } from "../families.js";
import type { ChatMessage, ProviderClient, ProviderReply, ReplyStatus, TokenLogprob } from "../types.js";
import { ModelCallError } from "../errors.js";
import { postJson } from "../http.js";
import { inlineImage } from "../inline-images.js";
import { plainText } from "../messages.js";
import { parseToolArguments, withToolCalls } from "../tools.js";

const completionSchema = z.object({
  choices: z.array(
    z.object({
      message: z.object({
        content: z.string().nullable().optional(),
        refusal: z.string().nullable().optional(),
        tool_calls: z.array(z.object({ id: z.string().optional(), function: z.object({ name: z.string(), arguments: z.unknown().optional() }).loose() }).loose()).nullable().optional(),
      }).loose(),
      finish_reason: z.string().nullable().optional(),
      logprobs: z.object({
        content: z.array(z.object({ token: z.string(), logprob: z.number(), top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number() }).loose()).optional() }).loose()).nullable().optional(),
      }).loose().nullable().optional(),
    }).loose(),
  ).min(1),
  usage: z.object({
    prompt_tokens: z.number().optional(),
    completion_tokens: z.number().optional(),
    completion_tokens_details: z.object({ reasoning_tokens: z.number().optional() }).loose().nullable().optional(),
  }).loose().nullable().optional(),
}).loose();

/** OpenAI chat completions, and every server that speaks the same protocol (vLLM, Ollama, SGLang, TGI). */
export class OpenAiClient implements ProviderClient {
  constructor(private readonly spec: ModelSpec) {}

  async send(request: AdaptedRequest, signal: AbortSignal): Promise<ProviderReply> {
    const url = `${this.spec.baseURL}/chat/completions`;
    return this.parse(await postJson(url, { authorization: `Bearer ${this.spec.apiKey}` }, this.body(request), signal, this.spec.baseURL));
  }

  /** A chat-completion body as a reply (also a batch result's `response.body`). */
  parse(raw: unknown): ProviderReply {
    const parsed = completionSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ModelCallError("bad_response", `${this.spec.baseURL} answered without choices`, this.spec.baseURL);
    }
    const { choices, usage } = parsed.data;
    const calls = (choices[0]?.message.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.function.name, arguments: parseToolArguments(c.function.arguments) }));
    const reasoningTokens = usage?.completion_tokens_details?.reasoning_tokens ?? 0;
    const logprobs = choices[0]?.logprobs?.content;
    return {
      texts: choices.map((c) => c.message.content ?? null),
      ...withToolCalls(calls),
      finishReason: choices[0]?.finish_reason ?? null,
      ...replyStatus(choices[0]!.message, choices[0]?.finish_reason ?? null, reasoningTokens),
      promptTokens: usage?.prompt_tokens ?? 0,
      // completion_tokens already holds the reasoning tokens
      completionTokens: usage?.completion_tokens ?? 0,
      thinkingTokens: reasoningTokens,
      ...(logprobs ? { tokenLogprobs: logprobs.map((t): TokenLogprob => ({ token: t.token, logprob: t.logprob, top: (t.top_logprobs ?? []).map((a) => ({ token: a.token, logprob: a.logprob })) })) } : {}),
    };
  }

  /** Only the parameters the caller set are sent, as the reference scripts do. */
  body({ request, tokenLimit, thinking }: AdaptedRequest): Record<string, unknown> {
    return {
      model: this.spec.model,
      messages: request.messages.map(toOpenAiMessage),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.maxTokens !== undefined ? { [tokenLimit === "max_completion_tokens" ? "max_completion_tokens" : "max_tokens"]: request.maxTokens } : {}),
      ...(thinking?.kind === "reasoning_effort" ? { reasoning_effort: thinking.effort } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { top_p: request.topP } : {}),
      ...(request.n !== undefined ? { n: request.n } : {}),
      ...(request.stop !== undefined ? { stop: request.stop } : {}),
      ...(request.responseFormat === "json" ? { response_format: { type: "json_object" } } : {}),
      ...(request.tools && request.tools.length > 0
        ? { tools: request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })) }
        : {}),
      ...(request.toolChoice !== undefined ? { tool_choice: request.toolChoice } : {}),
      ...(request.logprobs !== undefined ? { logprobs: true, ...(request.logprobs > 0 ? { top_logprobs: request.logprobs } : {}) } : {}),
    };
  }
}

/** A refusal (the message's `refusal`), a filtered reply (`content_filter`) or a cut one (`length`). */
function replyStatus(message: { content?: string | null | undefined; refusal?: string | null | undefined }, finishReason: string | null, reasoningTokens: number): { status?: ReplyStatus; statusReason?: string } {
  if (message.refusal) return { status: "refused", statusReason: message.refusal };
  if (finishReason === "content_filter") return { status: "filtered", statusReason: "the provider's content filter withheld the reply (finish_reason content_filter)" };
  if (finishReason === "length") {
    const thinking = !message.content && reasoningTokens > 0;
    return { status: "truncated", statusReason: thinking ? `cut while thinking: the token limit was spent on ${reasoningTokens} reasoning tokens (finish_reason length)` : "cut by the token limit (finish_reason length)" };
  }
  return {};
}

function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === "tool") return { role: "tool", tool_call_id: message.toolCallId ?? "", content: plainText(message.content) };
  if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
    const text = plainText(message.content);
    return {
      role: "assistant",
      content: text.length > 0 ? text : null,
      tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
    };
  }
  if (typeof message.content === "string") return { role: message.role, content: message.content };
  if (message.role !== "user") return { role: message.role, content: plainText(message.content) };
  const parts = message.content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "image_url", image_url: { url: inlineImage(part.data, `data:${part.mediaType};base64,`) } },
  );
  return { role: "user", content: parts };
}
