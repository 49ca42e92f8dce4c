/**
 * Loopback servers that answer as today's model families do, refusing what their real APIs
 * refuse (HTTP 400 with the provider's error shape) and thinking where they think, so that a
 * request eqakit gets wrong fails here as it would against the hosted model.
 */
import type { ReceivedRequest, Script, ScriptedReply } from "./model-server.js";

export type EmulatedFamily = "openai-reasoning" | "claude-opus-4-7" | "claude-sonnet-4-5" | "gemini-2.5-flash" | "gemini-3";

/** What the emulated model says: text, or a tool call (a name and its arguments). */
export type EmulatedAnswer = string | { tool: string; args: Record<string, unknown> };

type Body = Record<string, unknown>;

/** Tokens a thinking model spends before it writes its reply. */
export const EMULATED_THINKING_TOKENS = 300;

function badRequest(protocol: "openai" | "anthropic" | "google", message: string): ScriptedReply {
  if (protocol === "anthropic") return { status: 400, body: { type: "error", error: { type: "invalid_request_error", message } } };
  if (protocol === "google") return { status: 400, body: { error: { code: 400, message, status: "INVALID_ARGUMENT" } } };
  return { status: 400, body: { error: { message, type: "invalid_request_error", param: null, code: "unsupported_parameter" } } };
}

/** The refusal a family's API gives this body, or undefined when it takes it. */
function refusal(family: EmulatedFamily, body: Body): string | undefined {
  switch (family) {
    case "openai-reasoning":
      if ("max_tokens" in body) return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
      if ("temperature" in body && body.temperature !== 1) return "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.";
      if ("top_p" in body) return "Unsupported parameter: 'top_p' is not supported with this model.";
      if ("stop" in body) return "Unsupported parameter: 'stop' is not supported with this model.";
      if ("logprobs" in body || "top_logprobs" in body) return "Unsupported parameter: 'logprobs' is not supported with this model.";
      return undefined;
    case "claude-opus-4-7":
      if ("logprobs" in body) return "logprobs: Extra inputs are not permitted";
      if ("temperature" in body && body.temperature !== 1) return "`temperature` is deprecated for this model.";
      if ("top_p" in body) return "`top_p` is deprecated for this model.";
      return undefined;
    case "claude-sonnet-4-5":
      if ("logprobs" in body) return "logprobs: Extra inputs are not permitted";
      return "temperature" in body && "top_p" in body ? "`temperature` and `top_p` cannot both be specified for this model. Please use only one." : undefined;
    case "gemini-2.5-flash":
      return undefined;
    case "gemini-3":
      return missingSignature(body);
  }
}

/** Gemini 3 refuses a model turn whose function call lost its thoughtSignature. */
function missingSignature(body: Body): string | undefined {
  const contents = (body.contents ?? []) as { role?: string; parts?: Body[] }[];
  for (const content of contents) {
    if (content.role !== "model") continue;
    if ((content.parts ?? []).some((p) => "functionCall" in p && typeof p.thoughtSignature !== "string")) {
      return "Function call is missing a thought_signature in functionCall parts.";
    }
  }
  return undefined;
}

/** Output tokens left for the reply once the model has thought (thinking shares the limit). */
function replyBudget(family: EmulatedFamily, body: Body): { thinking: number; left: number } {
  if (family === "openai-reasoning") {
    const limit = Number(body.max_completion_tokens ?? Infinity);
    return { thinking: Math.min(limit, EMULATED_THINKING_TOKENS), left: limit - EMULATED_THINKING_TOKENS };
  }
  if (family === "gemini-2.5-flash" || family === "gemini-3") {
    const config = (body.generationConfig ?? {}) as { maxOutputTokens?: number; thinkingConfig?: { thinkingBudget?: number } };
    const thinks = family === "gemini-3" || config.thinkingConfig?.thinkingBudget !== 0; // 2.5 Flash thinks unless told not to
    const thinking = thinks ? EMULATED_THINKING_TOKENS : 0;
    const limit = config.maxOutputTokens ?? Infinity;
    return { thinking: Math.min(limit, thinking), left: limit - thinking };
  }
  return { thinking: 0, left: Infinity };
}

/** A server script for `family`: refuses what it refuses, then answers with `answer(request)`. */
export function emulate(family: EmulatedFamily, answer: (request: ReceivedRequest) => EmulatedAnswer): Script {
  return (request) => {
    const body = (request.body ?? {}) as Body;
    const protocol = family.startsWith("claude") ? "anthropic" : family.startsWith("gemini") ? "google" : "openai";
    const refused = refusal(family, body);
    if (refused) return badRequest(protocol, refused);
    const reply = answer(request);
    const { thinking, left } = replyBudget(family, body);
    const cut = left <= 0;
    if (protocol === "openai") return openAiBody(reply, thinking, cut);
    if (protocol === "anthropic") return anthropicBody(reply);
    return geminiBody(reply, thinking, cut, family === "gemini-3");
  };
}

function openAiBody(reply: EmulatedAnswer, thinking: number, cut: boolean): ScriptedReply {
  const message = typeof reply === "string" || cut
    ? { role: "assistant", content: cut ? "" : reply }
    : { role: "assistant", content: null, tool_calls: [{ id: "call_emulated", type: "function", function: { name: reply.tool, arguments: JSON.stringify(reply.args) } }] };
  const finish = cut ? "length" : typeof reply === "string" ? "stop" : "tool_calls";
  const completion = cut ? thinking : thinking + 5;
  return { body: { id: "chatcmpl-emulated", object: "chat.completion", created: 0, model: "emulated", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 40, completion_tokens: completion, total_tokens: 40 + completion, completion_tokens_details: { reasoning_tokens: thinking } } } };
}

function anthropicBody(reply: EmulatedAnswer): ScriptedReply {
  const content = typeof reply === "string" ? [{ type: "text", text: reply }] : [{ type: "tool_use", id: "toolu_emulated", name: reply.tool, input: reply.args }];
  return { body: { id: "msg_emulated", type: "message", role: "assistant", model: "emulated", content, stop_reason: typeof reply === "string" ? "end_turn" : "tool_use", stop_sequence: null, usage: { input_tokens: 40, output_tokens: 5 } } };
}

function geminiBody(reply: EmulatedAnswer, thinking: number, cut: boolean, signs: boolean): ScriptedReply {
  const part = typeof reply === "string" ? { text: cut ? "" : reply } : { functionCall: { name: reply.tool, args: reply.args }, ...(signs ? { thoughtSignature: "c2lnbmF0dXJl" } : {}) };
  const parts = cut ? [] : [part];
  const usageMetadata = { promptTokenCount: 40, candidatesTokenCount: cut ? 0 : 5, thoughtsTokenCount: thinking, totalTokenCount: 45 + thinking };
  return { body: { candidates: [{ content: { role: "model", parts }, finishReason: cut ? "MAX_TOKENS" : "STOP", index: 0 }], usageMetadata } };
}

/**
 * The Gemini API's HTTP 429 `RESOURCE_EXHAUSTED`, as Google sends it (ai.google.dev rate limits;
 * google.rpc error details). `per-minute`: the free tier's requests-per-minute quota, with a
 * `QuotaFailure` naming it and a `RetryInfo` delay; `no-allowance`: a quota whose limit is 0
 * (the plan has none of this model), no retry given.
 */
export function geminiQuotaExceeded(kind: "per-minute" | "no-allowance", retryDelay = "2s"): ScriptedReply {
  const model = "gemini-2.5-flash";
  const quotaValue = kind === "per-minute" ? "10" : "0";
  const message =
    "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n" +
    `* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: ${quotaValue}, model: ${model}` +
    (kind === "per-minute" ? `\nPlease retry in ${retryDelay}.` : "");
  const details: Body[] = [
    {
      "@type": "type.googleapis.com/google.rpc.QuotaFailure",
      violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", quotaDimensions: { location: "global", model }, quotaValue }],
    },
    { "@type": "type.googleapis.com/google.rpc.Help", links: [{ description: "Learn more about Gemini API quotas", url: "https://ai.google.dev/gemini-api/docs/rate-limits" }] },
    ...(kind === "per-minute" ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay }] : []),
  ];
  return { status: 429, body: { error: { code: 429, message, status: "RESOURCE_EXHAUSTED", details } } };
}
