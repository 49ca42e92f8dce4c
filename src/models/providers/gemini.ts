import { z } from "zod";
import type { ModelSpec } from "../names.js";
import type { AdaptedRequest } from "../families.js";
import type { ChatMessage, ContentPart, ProviderClient, ProviderReply, ReplyStatus, TokenLogprob } from "../types.js";
import { ModelCallError } from "../errors.js";
import { postJson } from "../http.js";
import { inlineImage } from "../inline-images.js";
import { plainText } from "../messages.js";
import { parseToolArguments, withToolCalls } from "../tools.js";

const logprobCandidate = z.object({ token: z.string().optional(), logProbability: z.number().optional() }).loose();

const replySchema = z.object({
  candidates: z.array(
    z.object({
      content: z.object({
        parts: z.array(z.object({ text: z.string().optional(), thought: z.boolean().optional(), thoughtSignature: z.string().optional(), functionCall: z.object({ name: z.string(), args: z.unknown().optional() }).loose().optional() }).loose()).optional(),
      }).loose().optional(),
      finishReason: z.string().optional(),
      logprobsResult: z.object({
        chosenCandidates: z.array(logprobCandidate).optional(),
        topCandidates: z.array(z.object({ candidates: z.array(logprobCandidate).optional() }).loose()).optional(),
      }).loose().optional(),
    }).loose(),
  ).optional(),
  promptFeedback: z.object({ blockReason: z.string().optional() }).loose().optional(),
  usageMetadata: z.object({ promptTokenCount: z.number().optional(), candidatesTokenCount: z.number().optional(), thoughtsTokenCount: z.number().optional() }).loose().optional(),
}).loose();

/** Google's Gemini API (`models/{model}:generateContent`), over plain fetch. */
export class GeminiClient implements ProviderClient {
  constructor(private readonly spec: ModelSpec) {}

  async send(adapted: AdaptedRequest, signal: AbortSignal): Promise<ProviderReply> {
    const url = `${this.spec.baseURL}/v1beta/models/${encodeURIComponent(this.spec.model)}:generateContent`;
    return this.parse(await postJson(url, { "x-goog-api-key": this.spec.apiKey }, this.body(adapted), signal, this.spec.baseURL));
  }

  /** A generateContent response as a reply. */
  parse(raw: unknown): ProviderReply {
    const parsed = replySchema.safeParse(raw);
    if (!parsed.success) throw new ModelCallError("bad_response", `${this.spec.baseURL} answered an unexpected shape`, this.spec.baseURL);
    const candidates = parsed.data.candidates ?? [];
    // no candidates is Gemini's answer to a blocked prompt (with promptFeedback); otherwise a wrong server
    if (candidates.length === 0 && parsed.data.promptFeedback === undefined) {
      throw new ModelCallError("bad_response", `${this.spec.baseURL} answered without candidates`, this.spec.baseURL);
    }
    const calls = (candidates[0]?.content?.parts ?? []).flatMap((p, i) =>
      p.functionCall ? [{ id: `call_${i}`, name: p.functionCall.name, arguments: parseToolArguments(p.functionCall.args), ...(p.thoughtSignature ? { signature: p.thoughtSignature } : {}) }] : [],
    );
    const blockReason = parsed.data.promptFeedback?.blockReason;
    const logprobs = candidates[0]?.logprobsResult;
    return {
      texts: candidates.length > 0 ? candidates.map((c) => candidateText(c.content?.parts)) : [null],
      ...withToolCalls(calls),
      finishReason: candidates[0]?.finishReason ?? (blockReason ? `blocked: ${blockReason}` : null),
      ...replyStatus(candidates[0]?.finishReason, blockReason),
      promptTokens: parsed.data.usageMetadata?.promptTokenCount ?? 0,
      // thoughts are billed as output but counted apart from the candidates
      completionTokens: (parsed.data.usageMetadata?.candidatesTokenCount ?? 0) + (parsed.data.usageMetadata?.thoughtsTokenCount ?? 0),
      thinkingTokens: parsed.data.usageMetadata?.thoughtsTokenCount ?? 0,
      ...(logprobs?.chosenCandidates ? { tokenLogprobs: geminiLogprobs(logprobs.chosenCandidates, logprobs.topCandidates ?? []) } : {}),
    };
  }

  body({ request, thinking }: AdaptedRequest): Record<string, unknown> {
    const system = request.messages.filter((m) => m.role === "system").map((m) => plainText(m.content)).join("\n\n");
    const generationConfig = {
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.n !== undefined ? { candidateCount: request.n } : {}),
      ...(request.stop !== undefined ? { stopSequences: request.stop } : {}),
      ...(request.responseFormat === "json" ? { responseMimeType: "application/json" } : {}),
      ...(thinking?.kind === "gemini-budget" ? { thinkingConfig: { thinkingBudget: thinking.budgetTokens } } : {}),
      ...(thinking?.kind === "gemini-level" ? { thinkingConfig: { thinkingLevel: thinking.level } } : {}),
      ...(request.logprobs !== undefined ? { responseLogprobs: true, ...(request.logprobs > 0 ? { logprobs: request.logprobs } : {}) } : {}),
    };
    return {
      contents: mergeFunctionResponses(request.messages.filter((m) => m.role !== "system").map(toGeminiContent)),
      ...(request.tools && request.tools.length > 0
        ? { tools: [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })) }] }
        : {}),
      ...(request.toolChoice !== undefined ? { toolConfig: { functionCallingConfig: { mode: GEMINI_TOOL_MODE[request.toolChoice] } } } : {}),
      ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
      ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
    };
  }
}

/** Gemini's chosen tokens, each with the top candidates at its position. */
function geminiLogprobs(chosen: z.infer<typeof logprobCandidate>[], top: { candidates?: z.infer<typeof logprobCandidate>[] | undefined }[]): TokenLogprob[] {
  return chosen.map((c, i) => ({
    token: c.token ?? "",
    logprob: c.logProbability ?? 0,
    top: (top[i]?.candidates ?? []).map((a) => ({ token: a.token ?? "", logprob: a.logProbability ?? 0 })),
  }));
}

const GEMINI_TOOL_MODE = { auto: "AUTO", required: "ANY", none: "NONE" } as const;

/** A candidate's text: its text parts joined (thoughts left out); null when it has only function calls or nothing. */
function candidateText(allParts: { text?: string | undefined; thought?: boolean | undefined; functionCall?: unknown }[] | undefined): string | null {
  if (!allParts) return null;
  const parts = allParts.filter((p) => p.thought !== true);
  if (parts.length > 0 && parts.every((p) => p.functionCall !== undefined)) return null;
  return parts.map((p) => p.text ?? "").join("");
}

const REFUSED = new Set(["SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT"]);
const FILTERED = new Set(["RECITATION", "IMAGE_RECITATION", "LANGUAGE"]);

/** A prompt blocked before any candidate, a candidate stopped for safety (refused), recitation (filtered) or MAX_TOKENS (cut). */
function replyStatus(finishReason: string | undefined, blockReason: string | undefined): { status?: ReplyStatus; statusReason?: string } {
  if (blockReason) return { status: "refused", statusReason: `the prompt was blocked (promptFeedback.blockReason ${blockReason})` };
  if (finishReason === undefined) return {};
  if (REFUSED.has(finishReason)) return { status: "refused", statusReason: `the reply was stopped (finishReason ${finishReason})` };
  if (FILTERED.has(finishReason)) return { status: "filtered", statusReason: `the reply was withheld (finishReason ${finishReason})` };
  if (finishReason === "MAX_TOKENS") return { status: "truncated", statusReason: "cut by the token limit (finishReason MAX_TOKENS)" };
  return {};
}

interface GeminiContent {
  role: "user" | "model";
  parts: Record<string, unknown>[];
  functionResponses?: boolean;
}

/** Consecutive function responses travel in one content, as Gemini expects after a turn of parallel calls. */
function mergeFunctionResponses(contents: GeminiContent[]): Record<string, unknown>[] {
  const merged: GeminiContent[] = [];
  for (const content of contents) {
    const last = merged[merged.length - 1];
    if (content.functionResponses && last?.functionResponses) last.parts = [...last.parts, ...content.parts];
    else merged.push({ ...content });
  }
  return merged.map(({ role, parts }) => ({ role, parts }));
}

function toGeminiContent(message: ChatMessage): GeminiContent {
  if (message.role === "tool") {
    const text = plainText(message.content);
    let response: unknown;
    try {
      response = JSON.parse(text);
    } catch {
      response = text;
    }
    const wrapped = response !== null && typeof response === "object" && !Array.isArray(response) ? response : { result: response };
    return { role: "user", parts: [{ functionResponse: { name: message.toolName ?? "", response: wrapped } }], functionResponses: true };
  }
  if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
    const text = plainText(message.content);
    // each call goes back with its thoughtSignature: Gemini 3 refuses a turn that lost it
    return { role: "model", parts: [...(text.length > 0 ? [{ text }] : []), ...message.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.arguments }, ...(c.signature ? { thoughtSignature: c.signature } : {}) }))] };
  }
  const parts = typeof message.content === "string" ? [{ text: message.content }] : message.content.map(toGeminiPart);
  return { role: message.role === "assistant" ? "model" : "user", parts };
}

function toGeminiPart(part: ContentPart): Record<string, unknown> {
  if (part.type === "text") return { text: part.text };
  return { inline_data: { mime_type: part.mediaType, data: inlineImage(part.data) } };
}
