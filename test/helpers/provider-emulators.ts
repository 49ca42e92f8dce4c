/**
 * Loopback servers that answer as today's model families do, refusing what their real APIs
 * refuse (HTTP 400 with the provider's error shape) and thinking where they think, so that a
 * request eqakit gets wrong fails here as it would against the hosted model.
 */
import { anthropicReply, openAiReply, startModelServer, type ModelServer, type ReceivedRequest, type Script, type ScriptedReply } from "./model-server.js";

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

/** What becomes of one request of a batch: answered, failed with an HTTP error, or left undone when the batch expired. */
export type BatchFate = "ok" | "expired" | { status: number; type: string; message: string };

export interface BatchEmulatorOptions {
  /** The reply text of a request (its body as the batch holds it, the same as a live request's). */
  answer: (body: Body) => string;
  /** What becomes of a request in a batch (default: answered). Live requests are always answered. */
  fate?: (body: Body) => BatchFate;
  /** The provider's limits of one batch, enforced as its API does (default: the documented ones). */
  limits?: { maxRequests: number; maxBytes: number };
  /** While false, every batch stays in progress; once true, a batch ends at its second poll. */
  release?: boolean;
}

export interface BatchEmulator {
  script: Script;
  /** Batches created, in order: their requests' custom_ids and the bytes submitted. */
  batches: Map<string, { customIds: string[]; bytes: number }>;
  release: { value: boolean };
  /** Live requests answered (requests the run did not get from a batch). */
  live: number;
}

interface HeldRequest {
  customId: string;
  body: Body;
}

/**
 * OpenAI's Batch API as its API reference describes it: a JSONL input file uploaded to
 * `/v1/files` (purpose `batch`, at most `maxBytes`), a batch over `/v1/chat/completions` from
 * it (at most `maxRequests` lines, else the batch fails validation), polled at
 * `/v1/batches/{id}`; once ended, answered requests are lines of the output file and failed
 * ones lines of the error file (`response.status_code` ≥ 400 with the error body; requests
 * left when the batch expired: `error.code` `batch_expired`), the batch `expired` when any was.
 */
export function openAiBatchEmulator(options: BatchEmulatorOptions): BatchEmulator {
  const limits = options.limits ?? { maxRequests: 50_000, maxBytes: 200_000_000 };
  const files = new Map<string, string>();
  const held = new Map<string, HeldRequest[]>();
  const polls = new Map<string, number>();
  const emulator: BatchEmulator = { script: () => ({}), batches: new Map(), release: { value: options.release ?? true }, live: 0 };
  const fate = (body: Body): BatchFate => options.fate?.(body) ?? "ok";
  emulator.script = (request) => {
    const { method, path } = request;
    if (method === "POST" && path === "/v1/files") {
      const start = request.rawBody.indexOf("\r\n\r\n", request.rawBody.indexOf('name="file"'));
      const content = request.rawBody.slice(start + 4, request.rawBody.lastIndexOf("\r\n--"));
      const bytes = Buffer.byteLength(content);
      if (bytes > limits.maxBytes) return { status: 400, body: { error: { message: `File is too large: ${bytes} bytes, the limit of a batch input file is ${limits.maxBytes}`, type: "invalid_request_error", param: "file", code: null } } };
      const id = `file-${files.size + 1}`;
      files.set(id, content);
      return { body: { id, object: "file", purpose: "batch", bytes } };
    }
    if (method === "POST" && path === "/v1/batches") {
      const body = request.body as { input_file_id: string };
      const content = files.get(body.input_file_id) ?? "";
      const lines = content.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { custom_id: string; body: Body });
      const id = `batch_${emulator.batches.size + 1}`;
      emulator.batches.set(id, { customIds: lines.map((l) => l.custom_id), bytes: Buffer.byteLength(content) });
      held.set(id, lines.map((l) => ({ customId: l.custom_id, body: l.body })));
      return { body: { id, object: "batch", status: "validating", input_file_id: body.input_file_id, output_file_id: null, error_file_id: null } };
    }
    const batch = /^\/v1\/batches\/([^/]+)$/.exec(path);
    if (method === "GET" && batch) {
      const id = batch[1]!;
      const requests = held.get(id) ?? [];
      const n = (polls.get(id) ?? 0) + 1;
      polls.set(id, n);
      if (requests.length > limits.maxRequests) {
        return { body: { id, object: "batch", status: "failed", output_file_id: null, error_file_id: null, errors: { object: "list", data: [{ code: "too_many_requests", message: `The batch input file has ${requests.length} requests; at most ${limits.maxRequests} are allowed.`, line: null }] } } };
      }
      const done = emulator.release.value && n >= 2;
      const fates = requests.map((r) => fate(r.body));
      const failed = fates.filter((f) => f !== "ok").length;
      const status = !done ? "in_progress" : fates.includes("expired") ? "expired" : "completed";
      return {
        body: {
          id,
          object: "batch",
          status,
          output_file_id: done && failed < requests.length ? `out-${id}` : null,
          error_file_id: done && failed > 0 ? `err-${id}` : null,
          request_counts: { total: requests.length, completed: done ? requests.length - failed : 0, failed: done ? failed : 0 },
        },
      };
    }
    const content = /^\/v1\/files\/(out|err)-([^/]+)\/content$/.exec(path);
    if (method === "GET" && content) {
      const lines = (held.get(content[2]!) ?? []).flatMap((r, i): Body[] => {
        const f = fate(r.body);
        const id = `batch_req_${i}`;
        if (content[1] === "out") return f === "ok" ? [{ id, custom_id: r.customId, response: { status_code: 200, request_id: `req_${i}`, body: openAiReply(options.answer(r.body)).body }, error: null }] : [];
        if (f === "ok") return [];
        if (f === "expired") return [{ id, custom_id: r.customId, response: null, error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." } }];
        return [{ id, custom_id: r.customId, response: { status_code: f.status, request_id: `req_${i}`, body: { error: { message: f.message, type: f.type, param: null, code: null } } }, error: null }];
      });
      return { body: lines.map((l) => JSON.stringify(l)).join("\n") + (lines.length > 0 ? "\n" : "") };
    }
    if (method === "POST" && path === "/v1/chat/completions") {
      emulator.live++;
      return openAiReply(options.answer(request.body as Body));
    }
    return { status: 404, body: { error: { message: `no route ${method} ${path}` } } };
  };
  return emulator;
}

/**
 * Anthropic's Message Batches as its API reference describes them: the requests in one POST
 * (at most `maxRequests` requests and `maxBytes` bytes, else 413 `request_too_large`), polled
 * at `/v1/messages/batches/{id}`, results as JSONL at `results_url`, each `succeeded`,
 * `errored` (with the request's error), or `expired` (the batch's 24 hours ran out first).
 */
export function anthropicBatchEmulator(options: BatchEmulatorOptions): BatchEmulator {
  const limits = options.limits ?? { maxRequests: 100_000, maxBytes: 256_000_000 };
  const held = new Map<string, HeldRequest[]>();
  const polls = new Map<string, number>();
  const emulator: BatchEmulator = { script: () => ({}), batches: new Map(), release: { value: options.release ?? true }, live: 0 };
  const fate = (body: Body): BatchFate => options.fate?.(body) ?? "ok";
  emulator.script = (request) => {
    const { method, path } = request;
    if (method === "POST" && path === "/v1/messages/batches") {
      const requests = (request.body as { requests: { custom_id: string; params: Body }[] }).requests;
      const bytes = Buffer.byteLength(request.rawBody);
      if (requests.length > limits.maxRequests || bytes > limits.maxBytes) {
        return { status: 413, body: { type: "error", error: { type: "request_too_large", message: `Request exceeds the maximum allowed number of bytes or requests (${bytes} bytes, ${requests.length} requests).` } } };
      }
      const id = `msgbatch_${emulator.batches.size + 1}`;
      emulator.batches.set(id, { customIds: requests.map((r) => r.custom_id), bytes });
      held.set(id, requests.map((r) => ({ customId: r.custom_id, body: r.params })));
      return { body: { id, type: "message_batch", processing_status: "in_progress", request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 }, results_url: null } };
    }
    const batch = /^\/v1\/messages\/batches\/([^/]+)$/.exec(path);
    if (method === "GET" && batch) {
      const id = batch[1]!;
      const requests = held.get(id) ?? [];
      const n = (polls.get(id) ?? 0) + 1;
      polls.set(id, n);
      const ended = emulator.release.value && n >= 2;
      const fates = requests.map((r) => fate(r.body));
      const count = (kind: "ok" | "expired" | "errored"): number => (ended ? fates.filter((f) => (kind === "errored" ? typeof f === "object" : f === kind)).length : 0);
      return {
        body: {
          id,
          type: "message_batch",
          processing_status: ended ? "ended" : "in_progress",
          request_counts: { processing: ended ? 0 : requests.length, succeeded: count("ok"), errored: count("errored"), canceled: 0, expired: count("expired") },
          results_url: ended ? `http://${request.headers.host}/v1/messages/batches/${id}/results` : null,
        },
      };
    }
    const results = /^\/v1\/messages\/batches\/([^/]+)\/results$/.exec(path);
    if (method === "GET" && results) {
      const lines = (held.get(results[1]!) ?? []).map((r) => {
        const f = fate(r.body);
        if (f === "ok") return { custom_id: r.customId, result: { type: "succeeded", message: anthropicReply(options.answer(r.body)).body } };
        if (f === "expired") return { custom_id: r.customId, result: { type: "expired" } };
        return { custom_id: r.customId, result: { type: "errored", error: { type: "error", error: { type: f.type, message: f.message } } } };
      });
      return { body: lines.map((l) => JSON.stringify(l)).join("\n") };
    }
    if (method === "POST" && path === "/v1/messages") {
      emulator.live++;
      return anthropicReply(options.answer(request.body as Body));
    }
    return { status: 404, body: { type: "error", error: { type: "not_found_error", message: `no route ${method} ${path}` } } };
  };
  return emulator;
}

/**
 * An OpenAI batch emulator behind a loopback server: every request, live or in a batch, is
 * answered with `reply`; `liveJudgeCalls` counts the judge's requests (`isJudge`) that came live
 * rather than in a batch.
 */
export async function startOpenAiBatchServer(reply: (request: ReceivedRequest) => string, isJudge: (request: ReceivedRequest) => boolean): Promise<{ emulator: BatchEmulator; server: ModelServer; liveJudgeCalls: () => number }> {
  const emulator = openAiBatchEmulator({ answer: (body) => reply({ method: "POST", path: "/v1/chat/completions", headers: {}, rawBody: JSON.stringify(body), body }) });
  let live = 0;
  const server = await startModelServer((request, index) => {
    if (request.path === "/v1/chat/completions" && isJudge(request)) live++;
    return emulator.script(request, index);
  });
  return { emulator, server, liveJudgeCalls: () => live };
}
