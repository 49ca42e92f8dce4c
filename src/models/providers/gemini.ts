import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { ChatMessage, ChatRequest, ContentPart, ProviderClient, ProviderReply } from "../types.js";
import { ModelCallError } from "../errors.js";
import { postJson } from "../http.js";
import { plainText } from "../messages.js";

const replySchema = z.object({
  candidates: z.array(
    z.object({
      content: z.object({ parts: z.array(z.object({ text: z.string().optional() }).loose()).optional() }).loose().optional(),
      finishReason: z.string().optional(),
    }).loose(),
  ).optional(),
  promptFeedback: z.unknown().optional(),
  usageMetadata: z.object({ promptTokenCount: z.number().optional(), candidatesTokenCount: z.number().optional() }).loose().optional(),
}).loose();

/** Google's Gemini API (`models/{model}:generateContent`), over plain fetch. */
export class GeminiClient implements ProviderClient {
  constructor(private readonly spec: ModelSpec) {}

  async send(request: ChatRequest, signal: AbortSignal): Promise<ProviderReply> {
    const url = `${this.spec.baseURL}/v1beta/models/${encodeURIComponent(this.spec.model)}:generateContent`;
    const raw = await postJson(url, { "x-goog-api-key": this.spec.apiKey }, this.body(request), signal, this.spec.baseURL);
    const parsed = replySchema.safeParse(raw);
    if (!parsed.success) throw new ModelCallError("bad_response", `${this.spec.baseURL} answered an unexpected shape`, this.spec.baseURL);
    const candidates = parsed.data.candidates ?? [];
    // no candidates is Gemini's answer to a blocked prompt (with promptFeedback); otherwise a wrong server
    if (candidates.length === 0 && parsed.data.promptFeedback === undefined) {
      throw new ModelCallError("bad_response", `${this.spec.baseURL} answered without candidates`, this.spec.baseURL);
    }
    return {
      texts: candidates.length > 0 ? candidates.map((c) => c.content?.parts?.map((p) => p.text ?? "").join("") ?? null) : [null],
      finishReason: candidates[0]?.finishReason ?? null,
      promptTokens: parsed.data.usageMetadata?.promptTokenCount ?? 0,
      completionTokens: parsed.data.usageMetadata?.candidatesTokenCount ?? 0,
    };
  }

  private body(request: ChatRequest): Record<string, unknown> {
    const system = request.messages.filter((m) => m.role === "system").map((m) => plainText(m.content)).join("\n\n");
    const generationConfig = {
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.n !== undefined ? { candidateCount: request.n } : {}),
      ...(request.stop !== undefined ? { stopSequences: request.stop } : {}),
      ...(request.responseFormat === "json" ? { responseMimeType: "application/json" } : {}),
    };
    return {
      contents: request.messages.filter((m) => m.role !== "system").map(toGeminiContent),
      ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
      ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
    };
  }
}

function toGeminiContent(message: ChatMessage): Record<string, unknown> {
  const parts = typeof message.content === "string" ? [{ text: message.content }] : message.content.map(toGeminiPart);
  return { role: message.role === "assistant" ? "model" : "user", parts };
}

function toGeminiPart(part: ContentPart): Record<string, unknown> {
  if (part.type === "text") return { text: part.text };
  return { inline_data: { mime_type: part.mediaType, data: Buffer.from(part.data).toString("base64") } };
}
