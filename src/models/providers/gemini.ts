import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { ChatMessage, ChatRequest, ContentPart, ProviderClient, ProviderReply } from "../types.js";
import { ModelCallError, kindForStatus, networkError, retryAfterFromHeaders } from "../errors.js";
import { plainText } from "./anthropic.js";

const replySchema = z.object({
  candidates: z.array(
    z.object({
      content: z.object({ parts: z.array(z.object({ text: z.string().optional() }).loose()).optional() }).loose().optional(),
      finishReason: z.string().optional(),
    }).loose(),
  ).optional(),
  usageMetadata: z.object({ promptTokenCount: z.number().optional(), candidatesTokenCount: z.number().optional() }).loose().optional(),
}).loose();

const errorSchema = z.object({
  error: z.object({
    message: z.string().optional(),
    details: z.array(z.object({ retryDelay: z.string().optional() }).loose()).optional(),
  }).loose(),
}).loose();

/** Google's Gemini API (`models/{model}:generateContent`), over plain fetch. */
export class GeminiClient implements ProviderClient {
  constructor(private readonly spec: ModelSpec) {}

  async send(request: ChatRequest, signal: AbortSignal): Promise<ProviderReply> {
    const url = `${this.spec.baseURL}/v1beta/models/${encodeURIComponent(this.spec.model)}:generateContent`;
    let response: Response;
    let bodyText: string;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": this.spec.apiKey },
        body: JSON.stringify(this.body(request)),
        signal,
      });
      bodyText = await response.text();
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      if (name === "TimeoutError" || name === "AbortError") {
        throw new ModelCallError("timeout", `request to ${this.spec.baseURL} timed out`, this.spec.baseURL);
      }
      throw networkError(error, this.spec.baseURL);
    }
    if (!response.ok) throw this.httpError(response, bodyText);
    let json: unknown;
    try {
      json = JSON.parse(bodyText);
    } catch {
      throw new ModelCallError("bad_response", `${this.spec.baseURL} answered with invalid JSON`, this.spec.baseURL);
    }
    const parsed = replySchema.safeParse(json);
    if (!parsed.success) throw new ModelCallError("bad_response", `${this.spec.baseURL} answered an unexpected shape`, this.spec.baseURL);
    const candidates = parsed.data.candidates ?? [];
    return {
      texts: candidates.length > 0 ? candidates.map((c) => c.content?.parts?.map((p) => p.text ?? "").join("") ?? null) : [null],
      finishReason: candidates[0]?.finishReason ?? null,
      promptTokens: parsed.data.usageMetadata?.promptTokenCount ?? 0,
      completionTokens: parsed.data.usageMetadata?.candidatesTokenCount ?? 0,
    };
  }

  private httpError(response: Response, bodyText: string): ModelCallError {
    let message = bodyText.slice(0, 300);
    let retryAfterMs = retryAfterFromHeaders((h) => response.headers.get(h));
    try {
      const parsed = errorSchema.safeParse(JSON.parse(bodyText));
      if (parsed.success) {
        message = parsed.data.error.message ?? message;
        const delay = parsed.data.error.details?.find((d) => d.retryDelay)?.retryDelay;
        if (retryAfterMs === undefined && delay && /^\d+(\.\d+)?s$/.test(delay)) retryAfterMs = Number.parseFloat(delay) * 1000;
      }
    } catch {
      // a non-JSON error body: keep its first characters as the message
    }
    const endpoint = this.spec.baseURL;
    return new ModelCallError(kindForStatus(response.status), `${endpoint} answered HTTP ${response.status}: ${message}`, endpoint, response.status, retryAfterMs);
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
