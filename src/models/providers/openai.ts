import OpenAI from "openai";
import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { ChatMessage, ChatRequest, ProviderClient, ProviderReply } from "../types.js";
import { ModelCallError } from "../errors.js";
import { fromSdkError } from "./sdk-errors.js";

const completionSchema = z.object({
  choices: z.array(
    z.object({
      message: z.object({ content: z.string().nullable().optional() }).loose(),
      finish_reason: z.string().nullable().optional(),
    }).loose(),
  ).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).loose().nullable().optional(),
}).loose();

type OpenAiMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type OpenAiPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** OpenAI chat completions, and every server that speaks the same protocol (vLLM, Ollama, SGLang, TGI). */
export class OpenAiClient implements ProviderClient {
  private readonly client: OpenAI;

  constructor(private readonly spec: ModelSpec, timeoutMs: number) {
    this.client = new OpenAI({ apiKey: spec.apiKey, baseURL: spec.baseURL, maxRetries: 0, timeout: timeoutMs });
  }

  async send(request: ChatRequest, signal: AbortSignal): Promise<ProviderReply> {
    let raw: unknown;
    try {
      raw = await this.client.chat.completions.create(this.body(request), { signal });
    } catch (error) {
      throw fromSdkError(error, this.spec.baseURL);
    }
    const parsed = completionSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ModelCallError("bad_response", `${this.spec.baseURL} answered without choices`, this.spec.baseURL);
    }
    const { choices, usage } = parsed.data;
    return {
      texts: choices.map((c) => c.message.content ?? null),
      finishReason: choices[0]?.finish_reason ?? null,
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
    };
  }

  /** Only the parameters the caller set are sent, as the reference scripts do. */
  private body(request: ChatRequest): OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming {
    return {
      model: this.spec.model,
      messages: request.messages.map(toOpenAiMessage),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { top_p: request.topP } : {}),
      ...(request.n !== undefined ? { n: request.n } : {}),
      ...(request.stop !== undefined ? { stop: request.stop } : {}),
      ...(request.responseFormat === "json" ? { response_format: { type: "json_object" as const } } : {}),
    };
  }
}

function toOpenAiMessage(message: ChatMessage): OpenAiMessage {
  if (typeof message.content === "string") return { role: message.role, content: message.content } as OpenAiMessage;
  const parts: OpenAiPart[] = message.content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "image_url", image_url: { url: `data:${part.mediaType};base64,${Buffer.from(part.data).toString("base64")}` } },
  );
  if (message.role === "user") return { role: "user", content: parts };
  const text = parts.map((p) => (p.type === "text" ? p.text : "")).join("");
  return { role: message.role, content: text } as OpenAiMessage;
}
