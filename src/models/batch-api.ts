/**
 * `--batch`: a run's model calls sent through the provider's batch API (OpenAI's Batch API,
 * Anthropic's Message Batches), which costs half the live price and answers within 24 hours.
 *
 * The run's own code builds the requests, so that a batch run records exactly what a live run
 * records:
 * 1. collect: the run's planning function runs with a model that looks each request up in the
 *    model-call cache (a hit is answered from it, so robust re-asks of an unreadable reply are
 *    found) and records each miss, adapted and keyed as the runtime would send it;
 * 2. submit the misses as one batch, the cache key as each request's custom_id, split into
 *    parts when they exceed the provider's documented limits (`BATCH_LIMITS`: OpenAI 50,000
 *    requests and 200 MB a file, Anthropic 100,000 requests and 256 MB a batch), each part
 *    named in `batch.json` in the run directory as soon as it is submitted;
 * 3. poll each part every `pollSeconds` (growing to ten times that), printing its counts;
 * 4. read its results (OpenAI's output file and its error file; Anthropic's results) with the
 *    provider client's own parser and store every ok reply in the model-call cache under its
 *    key; each request that got none is recorded in `batch.json` with the reason (the
 *    provider's error, `expired`, a reply cut, filtered or refused);
 * 5. collect again (a robust re-ask is a new request), at most three batches in all; the
 *    caller then runs as usual, every request now a cache hit.
 * A killed process loses nothing: `batch.json` names every part not yet loaded, and the same
 * command polls them instead of submitting others (then submits the parts it had not reached).
 * What a batch did not answer is not cached and never batched again, in this process or a
 * resumed one: the final run asks it live, at the live price, and records its failure as a run
 * without `--batch` does.
 * Google's batch mode is not supported.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError, writeFileAtomically } from "../core/index.js";
import type { ModelCallCache } from "../store/index.js";
import { CallPlan } from "./dry-run.js";
import { ModelCallError } from "./errors.js";
import { currentCallContext, type CallRecord } from "./ledger.js";
import { adaptRequest } from "./families.js";
import { getJson, getText, postFile, postJson } from "./http.js";
import { jsonBody } from "./inline-images.js";
import type { ModelSpec } from "./names.js";
import { AnthropicClient } from "./providers/anthropic.js";
import { OpenAiClient } from "./providers/openai.js";
import { cachedReplySchema, requestCacheKey } from "./runtime.js";
import type { ChatModel, ChatRequest, ChatResponse, ProviderReply } from "./types.js";

/** The file in the run directory that names the run's batches. */
export const BATCH_FILE = "batch.json";
/** The providers whose batch API eqakit speaks. */
export const BATCH_PROVIDERS = ["openai", "anthropic"] as const;
/** Most batches a run submits (the first, then robust re-asks). */
const MAX_ROUNDS = 3;
/** Failed polls in a row that are tolerated (a dropped connection, a 5xx) before the run stops. */
const MAX_POLL_FAILURES = 5;
const REQUEST_TIMEOUT_MS = 10 * 60_000;

/** One submitted batch, as `batch.json` records it. */
export interface BatchRecord {
  provider: "openai" | "anthropic";
  id: string;
  baseURL: string;
  model: string;
  requests: number;
  createdAt: string;
  /** When its results were read into the cache; absent while it is pending. */
  loadedAt?: string;
  /** How its requests ended: ok replies cached, the rest asked live. */
  results?: { cached: number; notCached: number };
  /** The round it belongs to: 0 for the run's requests, then robust re-asks (at most three rounds). */
  round?: number;
  /** When a round's requests exceeded the provider's limits: which part of the round it is, from 1. */
  part?: { index: number; of: number };
  /** Each request it did not answer, and why (the provider's error, `expired`, a reply cut or refused): asked live. */
  failures?: BatchFailure[];
  /** Why the whole batch failed (OpenAI's validation errors), when it did. */
  failure?: string;
  /** Tokens of every reply it gave (each billed, whatever its status). */
  usage?: BatchUsage;
}

/** A request a batch did not answer: its custom_id (the request's model-call cache key) and the reason. */
export interface BatchFailure {
  customId: string;
  reason: string;
}

/** The tokens a batch's replies used: what the provider bills, at the batch price. */
export interface BatchUsage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  thinkingTokens: number;
}

const batchFileSchema = z.object({
  batches: z.array(
    z.object({
      provider: z.enum(BATCH_PROVIDERS),
      id: z.string(),
      baseURL: z.string(),
      model: z.string(),
      requests: z.number(),
      createdAt: z.string(),
      loadedAt: z.string().optional(),
      results: z.object({ cached: z.number(), notCached: z.number() }).optional(),
      round: z.number().optional(),
      part: z.object({ index: z.number(), of: z.number() }).optional(),
      failures: z.array(z.object({ customId: z.string(), reason: z.string() })).optional(),
      failure: z.string().optional(),
      usage: z.object({ calls: z.number(), promptTokens: z.number(), completionTokens: z.number(), thinkingTokens: z.number() }).optional(),
    }),
  ),
});

/** The most one batch may hold: requests, and bytes of what is submitted. */
export interface BatchLimits {
  maxRequests: number;
  maxBytes: number;
}

/**
 * The providers' documented limits of one batch. OpenAI (API reference, Create batch): an input
 * file of up to 50,000 requests and 200 MB. Anthropic (Message Batches): up to 100,000 requests
 * and 256 MB. A MB is taken as 10^6 bytes, the smaller reading; a run whose requests exceed
 * them is split into parts that each fit, submitted one after another.
 */
export const BATCH_LIMITS: Record<(typeof BATCH_PROVIDERS)[number], BatchLimits> = {
  openai: { maxRequests: 50_000, maxBytes: 200_000_000 },
  anthropic: { maxRequests: 100_000, maxBytes: 256_000_000 },
};

/** Room left in a part for what wraps its requests (the file's multipart envelope, `{"requests":[…]}`). */
const ENVELOPE_BYTES = 64 * 1024;

/**
 * Splits requests into parts within `limits`, in order: each part holds at most
 * `maxRequests` requests and `maxBytes` bytes (each request's `size`, plus the envelope).
 * A request larger than a part alone goes alone, for the provider to refuse with its reason.
 */
export function splitBatch<T>(requests: readonly T[], limits: BatchLimits, size: (request: T) => number): T[][] {
  const budget = Math.max(1, limits.maxBytes - Math.min(ENVELOPE_BYTES, Math.floor(limits.maxBytes / 8)));
  const parts: T[][] = [];
  let part: T[] = [];
  let bytes = 0;
  for (const request of requests) {
    const n = size(request);
    if (part.length > 0 && (part.length >= limits.maxRequests || bytes + n > budget)) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(request);
    bytes += n;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** Refuses a model whose provider has no batch API eqakit speaks (exit 2). */
export function checkBatchSupport(spec: ModelSpec, flag = "--judge"): void {
  if (spec.protocol === "google") {
    throw new UserError(`--batch is not supported for ${spec.name}: Google's batch mode is not implemented`, { field: flag }, `--batch works with openai/… (and OpenAI-compatible servers with /files and /batches) and anthropic/… models; drop --batch to call ${spec.name} live`);
  }
}

/** A batch request: its custom_id (the cache key) and the body the live endpoint would get. */
interface BatchRequest {
  customId: string;
  body: Record<string, unknown>;
  /** The item (question, episode) it was first asked for, for the run's ledger. */
  item?: string;
}

/**
 * A call plan whose models answer cache hits from the cache and record each miss as a batch
 * request (replying `reply` meanwhile, as a dry run does). Give it to a run's planning function.
 */
export class BatchCollector extends CallPlan {
  readonly requests = new Map<string, BatchRequest>();

  constructor(private readonly batchCache: ModelCallCache) {
    super(batchCache);
  }

  override model(spec: ModelSpec, _role: string, reply = ""): ChatModel {
    return new CollectingModel(spec, reply, this.batchCache, this.requests);
  }
}

class CollectingModel implements ChatModel {
  readonly name: string;

  constructor(
    readonly spec: ModelSpec,
    private readonly reply: string,
    private readonly cache: ModelCallCache,
    private readonly requests: Map<string, BatchRequest>,
  ) {
    this.name = spec.name;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    // the first attempt, as the runtime sends and keys it
    const adapted = adaptRequest(this.spec.profile, request, 1);
    const key = requestCacheKey(this.spec, adapted.request, adapted.thinking);
    const hit = cachedReplySchema.safeParse(await this.cache.get(key));
    const usage = { promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images: 0, latencyMs: 0, retries: 0, cached: hit.success };
    if (hit.success) return { text: hit.data.texts[0] ?? null, texts: hit.data.texts, finishReason: hit.data.finishReason, usage };
    if (!this.requests.has(key)) {
      const { item } = currentCallContext();
      this.requests.set(key, { customId: key, body: batchApi(this.spec).body(adapted), ...(item !== undefined ? { item } : {}) });
    }
    return { text: this.reply, texts: Array.from({ length: request.n ?? 1 }, () => this.reply), finishReason: "stop", usage };
  }
}

/** How a batch stands after a poll. */
interface BatchState {
  ended: boolean;
  /** The provider's status and counts, for the progress line. */
  line: string;
  /** A batch that ended without results (OpenAI's failed validation): why. */
  failure?: string;
}

/** One line of a batch's results: the reply body of a request that succeeded, or why it did not. */
interface BatchResult {
  customId: string;
  body?: unknown;
  error?: string;
}

interface BatchApi {
  body(adapted: Parameters<OpenAiClient["body"]>[0]): Record<string, unknown>;
  /** The bytes a request adds to what is submitted (a line of OpenAI's file, an entry of Anthropic's POST). */
  size(request: BatchRequest): number;
  parse(raw: unknown): ProviderReply;
  submit(requests: BatchRequest[], signal: AbortSignal): Promise<string>;
  poll(id: string, signal: AbortSignal): Promise<BatchState>;
  results(id: string, signal: AbortSignal): Promise<BatchResult[]>;
}

function batchApi(spec: ModelSpec): BatchApi {
  checkBatchSupport(spec);
  return spec.protocol === "anthropic" ? new AnthropicBatches(spec) : new OpenAiBatches(spec);
}

const openAiBatchSchema = z.object({
  id: z.string(),
  status: z.string(),
  output_file_id: z.string().nullable().optional(),
  error_file_id: z.string().nullable().optional(),
  errors: z.object({ data: z.array(z.object({ message: z.string().optional() }).loose()).optional() }).loose().nullable().optional(),
  request_counts: z.object({ total: z.number().optional(), completed: z.number().optional(), failed: z.number().optional() }).loose().nullable().optional(),
}).loose();

const openAiResultSchema = z.object({
  custom_id: z.string(),
  response: z.object({ status_code: z.number(), body: z.unknown() }).loose().nullable().optional(),
  error: z.object({ code: z.string().nullable().optional(), message: z.string().nullable().optional() }).loose().nullable().optional(),
}).loose();

/** `{"error": {"message", "code"}}` of a failed request's response body (OpenAI's error shape). */
const openAiErrorBodySchema = z.object({ error: z.object({ message: z.string().optional(), code: z.string().nullable().optional(), type: z.string().nullable().optional() }).loose() }).loose();

/** Why a line of OpenAI's output or error file is no reply: the request's error code and message, or its HTTP status and the body's error. */
function openAiFailure(line: z.infer<typeof openAiResultSchema>): string {
  const { response, error } = line;
  if (error) return [error.code, error.message].filter((s) => s).join(": ") || "failed without a reason";
  const body = openAiErrorBodySchema.safeParse(response?.body);
  const detail = body.success ? [body.data.error.code ?? body.data.error.type, body.data.error.message].filter((s) => s).join(": ") : "";
  return `HTTP ${response?.status_code ?? "?"}${detail ? `: ${detail}` : ""}`;
}

/** OpenAI's Batch API: a JSONL file uploaded to /files, a batch over /v1/chat/completions. */
class OpenAiBatches extends OpenAiClient implements BatchApi {
  private readonly headers: Record<string, string>;

  constructor(private readonly batchSpec: ModelSpec) {
    super(batchSpec);
    this.headers = { authorization: `Bearer ${batchSpec.apiKey}` };
  }

  size(request: BatchRequest): number {
    return jsonBody(openAiLine(request)).length + 1;
  }

  async submit(requests: BatchRequest[], signal: AbortSignal): Promise<string> {
    const base = this.batchSpec.baseURL;
    const lines = requests.map((r) => JSON.stringify(openAiLine(r)));
    const file = z.object({ id: z.string() }).loose().safeParse(
      await postFile(`${base}/files`, this.headers, { purpose: "batch" }, { field: "file", name: "eqakit-batch.jsonl", type: "application/jsonl", content: `${lines.join("\n")}\n` }, signal, base),
    );
    if (!file.success) throw new ModelCallError("bad_response", `${base}/files answered without a file id`, base);
    const batch = openAiBatchSchema.safeParse(await postJson(`${base}/batches`, this.headers, { input_file_id: file.data.id, endpoint: "/v1/chat/completions", completion_window: "24h" }, signal, base));
    if (!batch.success) throw new ModelCallError("bad_response", `${base}/batches answered without a batch id`, base);
    return batch.data.id;
  }

  async poll(id: string, signal: AbortSignal): Promise<BatchState> {
    const batch = await this.fetchBatch(id, signal);
    const counts = batch.request_counts;
    const line = `${batch.status}, ${counts?.completed ?? 0} of ${counts?.total ?? "?"} done, ${counts?.failed ?? 0} failed`;
    const ended = ["completed", "failed", "expired", "cancelled"].includes(batch.status);
    const failure = batch.status === "failed" && !batch.output_file_id ? (batch.errors?.data ?? []).map((e) => e.message ?? "").filter((m) => m).join("; ") || "the batch failed" : undefined;
    return { ended, line, ...(failure ? { failure } : {}) };
  }

  /** The output file's lines, then the error file's (requests that failed, or were left when the batch expired). */
  async results(id: string, signal: AbortSignal): Promise<BatchResult[]> {
    const base = this.batchSpec.baseURL;
    const batch = await this.fetchBatch(id, signal);
    const results: BatchResult[] = [];
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (!fileId) continue;
      const text = await getText(`${base}/files/${encodeURIComponent(fileId)}/content`, this.headers, signal, base);
      for (const value of jsonLines(text, base)) {
        const line = openAiResultSchema.safeParse(value);
        if (!line.success) throw new ModelCallError("bad_response", `${base} gave a batch result line without custom_id`, base);
        const { custom_id: customId, response } = line.data;
        if (response && response.status_code >= 200 && response.status_code < 300 && !line.data.error) results.push({ customId, body: response.body });
        else results.push({ customId, error: openAiFailure(line.data) });
      }
    }
    return results;
  }

  private async fetchBatch(id: string, signal: AbortSignal): Promise<z.infer<typeof openAiBatchSchema>> {
    const base = this.batchSpec.baseURL;
    const batch = openAiBatchSchema.safeParse(await getJson(`${base}/batches/${encodeURIComponent(id)}`, this.headers, signal, base));
    if (!batch.success) throw new ModelCallError("bad_response", `${base} answered without the batch's status`, base);
    return batch.data;
  }
}

const anthropicBatchSchema = z.object({
  id: z.string(),
  processing_status: z.string(),
  results_url: z.string().nullable().optional(),
  request_counts: z.record(z.string(), z.number()).optional(),
}).loose();

const anthropicResultSchema = z.object({
  custom_id: z.string(),
  result: z.object({ type: z.string(), message: z.unknown().optional(), error: z.unknown().optional() }).loose(),
}).loose();

/** Anthropic's Message Batches: the requests in one POST, JSONL results at results_url. */
class AnthropicBatches extends AnthropicClient implements BatchApi {
  private readonly headers: Record<string, string>;

  constructor(private readonly batchSpec: ModelSpec) {
    super(batchSpec);
    this.headers = { "x-api-key": batchSpec.apiKey, "anthropic-version": "2023-06-01" };
  }

  size(request: BatchRequest): number {
    return jsonBody({ custom_id: request.customId, params: request.body }).length + 1;
  }

  async submit(requests: BatchRequest[], signal: AbortSignal): Promise<string> {
    const base = this.batchSpec.baseURL;
    const batch = anthropicBatchSchema.safeParse(
      await postJson(`${base}/v1/messages/batches`, this.headers, { requests: requests.map((r) => ({ custom_id: r.customId, params: r.body })) }, signal, base),
    );
    if (!batch.success) throw new ModelCallError("bad_response", `${base}/v1/messages/batches answered without a batch id`, base);
    return batch.data.id;
  }

  async poll(id: string, signal: AbortSignal): Promise<BatchState> {
    const batch = await this.fetchBatch(id, signal);
    const counts = Object.entries(batch.request_counts ?? {}).map(([name, n]) => `${n} ${name}`).join(", ");
    return { ended: batch.processing_status === "ended", line: `${batch.processing_status}${counts ? `, ${counts}` : ""}` };
  }

  async results(id: string, signal: AbortSignal): Promise<BatchResult[]> {
    const base = this.batchSpec.baseURL;
    const batch = await this.fetchBatch(id, signal);
    if (!batch.results_url) return [];
    const text = await getText(batch.results_url, this.headers, signal, base);
    return jsonLines(text, base).map((value) => {
      const line = anthropicResultSchema.safeParse(value);
      if (!line.success) throw new ModelCallError("bad_response", `${base} gave a batch result line without custom_id`, base);
      const { custom_id: customId, result } = line.data;
      return result.type === "succeeded" ? { customId, body: result.message } : { customId, error: anthropicFailure(result) };
    });
  }

  private async fetchBatch(id: string, signal: AbortSignal): Promise<z.infer<typeof anthropicBatchSchema>> {
    const base = this.batchSpec.baseURL;
    const batch = anthropicBatchSchema.safeParse(await getJson(`${base}/v1/messages/batches/${encodeURIComponent(id)}`, this.headers, signal, base));
    if (!batch.success) throw new ModelCallError("bad_response", `${base} answered without the batch's processing_status`, base);
    return batch.data;
  }
}

/** `{"type": "error", "error": {"type", "message"}}`, the error of an `errored` result. */
const anthropicErrorSchema = z.object({ error: z.object({ type: z.string().optional(), message: z.string().optional() }).loose() }).loose();

/**
 * Why an Anthropic result is no reply: `errored` with the request's error type and message,
 * `expired` (the batch reached its 24 hours first), `canceled`.
 */
function anthropicFailure(result: z.infer<typeof anthropicResultSchema>["result"]): string {
  if (result.type === "expired") return "expired: the batch ended (24 hours) before this request was processed";
  if (result.type !== "errored") return result.type;
  const error = anthropicErrorSchema.safeParse(result.error);
  const detail = error.success ? [error.data.error.type, error.data.error.message].filter((s) => s).join(": ") : "";
  return `errored${detail ? `: ${detail}` : ""}`;
}

/** A request as a line of OpenAI's batch input file. */
function openAiLine(request: BatchRequest): Record<string, unknown> {
  return { custom_id: request.customId, method: "POST", url: "/v1/chat/completions", body: request.body };
}

/** " (part 1 of 3)" after a batch's id when its round was split into parts. */
function partLabel(record: BatchRecord): string {
  return record.part ? ` (part ${record.part.index} of ${record.part.of})` : "";
}

/**
 * Each request of a batch's results that gave no usable reply, and why: the provider's error
 * (OpenAI's error file, Anthropic's errored, expired and canceled results), a reply that could
 * not be read, or one that was not an answer (cut by the token limit, filtered, refused).
 */
function batchFailures(api: BatchApi, results: readonly BatchResult[]): BatchFailure[] {
  const failures: BatchFailure[] = [];
  for (const result of results) {
    if (result.body === undefined) {
      failures.push({ customId: result.customId, reason: result.error ?? "no reply" });
      continue;
    }
    const reply = parsedReply(api, result.body);
    if (!reply) failures.push({ customId: result.customId, reason: "the reply could not be read" });
    else if ((reply.status ?? "ok") !== "ok") failures.push({ customId: result.customId, reason: `${reply.status}: ${reply.statusReason ?? reply.finishReason ?? ""}`.replace(/: $/, "") });
  }
  return failures;
}

/** "2 expired, 1 HTTP 500": how many failures share each reason's first words, for the progress line. */
function countReasons(failures: readonly BatchFailure[]): string {
  const counts = new Map<string, number>();
  for (const f of failures) {
    const head = f.reason.split(":")[0]!;
    counts.set(head, (counts.get(head) ?? 0) + 1);
  }
  return [...counts].map(([reason, n]) => `${n} ${reason}`).join(", ");
}

function jsonLines(text: string, endpoint: string): unknown[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw new ModelCallError("bad_response", `${endpoint} gave a batch result line that is not JSON: ${line.slice(0, 120)}`, endpoint);
      }
    });
}

export interface BatchRunOptions {
  spec: ModelSpec;
  /** Where the results go, and where the final run finds them. */
  cache: ModelCallCache;
  /** The run directory: `batch.json` is written there. */
  runDir: string;
  /** Runs the run's planning function with the collector's models. */
  collect: (collector: BatchCollector) => Promise<unknown>;
  /** Seconds between polls at first (default 30); the wait grows to ten times that. */
  pollSeconds?: number;
  /** Smaller limits than the provider's documented ones (`BATCH_LIMITS`), e.g. an OpenAI-compatible server's (`--batch-max-requests`, `--batch-max-mb`). */
  limits?: Partial<BatchLimits>;
  /** Progress lines (submitted, status, loaded). */
  log?: (line: string) => void;
  /** Each reply of a batch as it is loaded, a call for the run's ledger (billed at the batch price). */
  onCall?: (call: BatchCall) => void;
}

/** A batch's reply as a call of the run's ledger: its role is the caller's to name. */
export type BatchCall = Omit<CallRecord, "role">;

/** What the run's summary records of its batches. */
export interface BatchRunReport {
  provider: "openai" | "anthropic";
  /** Every batch the run directory holds, oldest first. */
  ids: string[];
  /** Requests submitted in those batches. */
  requests: number;
  /** Tokens of their replies, summed (billed at the batch price: cost.ts BATCH_PRICE_FACTOR). */
  usage: BatchUsage;
}

/**
 * Fills the model-call cache through the provider's batch API with every request the run
 * would make (see the top of this file). Resumes every batch `batch.json` names that is not
 * loaded yet. An endpoint that refuses the key, cannot be reached or fails a batch stops the
 * run with a UserError saying what `batch.json` names for the next run (the parts submitted and
 * not yet read, or nothing).
 */
export async function fillCacheByBatch(options: BatchRunOptions): Promise<BatchRunReport> {
  const api = batchApi(options.spec);
  const provider = options.spec.protocol === "anthropic" ? "anthropic" : "openai";
  const log = options.log ?? (() => undefined);
  const file = join(options.runDir, BATCH_FILE);
  const records = readBatchFile(file);
  const ours = (r: BatchRecord): boolean => r.provider === provider && r.baseURL === options.spec.baseURL && r.model === options.spec.model;
  const limits = { ...BATCH_LIMITS[provider], ...options.limits };
  // A request a batch did not answer is asked live, never batched again: so a resumed run
  // sends its pending batches' failures where an uninterrupted run sends them.
  const submitted = new Set<string>(records.filter(ours).flatMap((r) => (r.failures ?? []).map((f) => f.customId)));
  /** What the ledger's batch calls say of each request this process collected: its images and item. */
  const collected = new Map<string, { images: number; item?: string }>();

  let round = 0;
  const pending = records.filter((r) => !r.loadedAt && ours(r));
  if (pending.length > 0) {
    for (const record of pending) log(`resuming batch ${record.id}${partLabel(record)} (${record.requests} request(s), submitted ${record.createdAt})`);
    for (const record of pending) await finish(record);
    // the round the stopped run was in: over once every part of it was submitted
    const last = records.filter(ours).at(-1)!;
    round = (last.round ?? 0) + (last.part === undefined || last.part.index === last.part.of ? 1 : 0);
  }
  for (; round < MAX_ROUNDS; round++) {
    const collector = new BatchCollector(options.cache);
    await options.collect(collector);
    for (const r of collector.requests.values()) collected.set(r.customId, { images: bodyImages(r.body), ...(r.item !== undefined ? { item: r.item } : {}) });
    const fresh = [...collector.requests.values()].filter((r) => !submitted.has(r.customId));
    if (fresh.length === 0) break;
    const parts = splitBatch(fresh, limits, (r) => api.size(r));
    const submittedNow: BatchRecord[] = [];
    for (const [index, part] of parts.entries()) {
      const what = parts.length > 1 ? `submitting part ${index + 1} of ${parts.length} of the batch` : "submitting the batch";
      const id = await call(options.spec, (signal) => api.submit(part, signal), what, records.filter((r) => ours(r) && !r.loadedAt));
      for (const r of part) submitted.add(r.customId);
      const record: BatchRecord = {
        provider,
        id,
        baseURL: options.spec.baseURL,
        model: options.spec.model,
        requests: part.length,
        createdAt: new Date().toISOString(),
        round,
        ...(parts.length > 1 ? { part: { index: index + 1, of: parts.length } } : {}),
      };
      records.push(record);
      submittedNow.push(record);
      await writeBatchFile(file, records);
      log(`submitted batch ${id}${partLabel(record)}: ${part.length} request(s) to ${options.spec.name} (${BATCH_FILE} names it: a stopped run picks it up again)`);
    }
    for (const record of submittedNow) await finish(record);
  }
  const mine = records.filter(ours);
  return { provider, ids: mine.map((r) => r.id), requests: mine.reduce((n, r) => n + r.requests, 0), usage: sumBatchUsage(mine) };

  async function finish(record: BatchRecord): Promise<void> {
    const failure = await waitForBatch(api, options.spec, record, (options.pollSeconds ?? 30) * 1000, log, records.filter((r) => ours(r) && !r.loadedAt));
    if (failure !== undefined) {
      record.loadedAt = new Date().toISOString();
      record.results = { cached: 0, notCached: record.requests };
      record.failure = failure;
      await writeBatchFile(file, records);
      throw new UserError(`batch ${record.id}${partLabel(record)} of ${options.spec.name} failed: ${failure}`, { file }, "fix what the provider names, then run the same command again: it submits a new batch for the requests it held");
    }
    const results = await call(options.spec, (signal) => api.results(record.id, signal), "reading the batch's results", records.filter((r) => ours(r) && !r.loadedAt));
    let cached = 0;
    const usage: BatchUsage = { calls: 0, promptTokens: 0, completionTokens: 0, thinkingTokens: 0 };
    for (const result of results) {
      const reply = result.body === undefined ? undefined : parsedReply(api, result.body);
      if (reply) {
        usage.calls++;
        usage.promptTokens += reply.promptTokens;
        usage.completionTokens += reply.completionTokens;
        usage.thinkingTokens += reply.thinkingTokens ?? 0;
        const status = reply.status ?? "ok";
        // images and item known for the requests this process collected (a batch resumed from batch.json: 0, none)
        const known = collected.get(result.customId);
        options.onCall?.({
          model: options.spec.name,
          endpoint: options.spec.baseURL,
          mode: "batch",
          cached: false,
          status,
          ...(status !== "ok" ? { reason: reply.statusReason ?? status } : {}),
          ...(known?.item !== undefined ? { item: known.item } : {}),
          promptTokens: reply.promptTokens,
          completionTokens: reply.completionTokens,
          thinkingTokens: reply.thinkingTokens ?? 0,
          images: known?.images ?? 0,
          retries: 0,
          latencyMs: 0,
        });
      }
      if (reply && (reply.status ?? "ok") === "ok") {
        await options.cache.put(result.customId, options.spec.provider, options.spec.model, reply);
        cached++;
      }
    }
    record.loadedAt = new Date().toISOString();
    record.results = { cached, notCached: record.requests - cached };
    const failures = batchFailures(api, results);
    if (failures.length > 0) record.failures = failures;
    for (const f of failures) submitted.add(f.customId);
    record.usage = usage;
    await writeBatchFile(file, records);
    log(`batch ${record.id}${partLabel(record)}: ${cached} of ${record.requests} replies cached${cached < record.requests ? `, ${record.requests - cached} to be asked live${failures.length > 0 ? ` (${countReasons(failures)}; each reason in ${BATCH_FILE})` : ""}` : ""}`);
  }
}

/** The images a request's body holds (OpenAI's `image_url` parts, Anthropic's `image` blocks). */
function bodyImages(body: Record<string, unknown>): number {
  return (JSON.stringify(body).match(/"type":"(image_url|image)"/g) ?? []).length;
}

function sumBatchUsage(records: readonly BatchRecord[]): BatchUsage {
  const total: BatchUsage = { calls: 0, promptTokens: 0, completionTokens: 0, thinkingTokens: 0 };
  for (const { usage } of records) {
    if (!usage) continue;
    total.calls += usage.calls;
    total.promptTokens += usage.promptTokens;
    total.completionTokens += usage.completionTokens;
    total.thinkingTokens += usage.thinkingTokens;
  }
  return total;
}

function parsedReply(api: BatchApi, body: unknown): ProviderReply | undefined {
  try {
    return api.parse(body);
  } catch (error) {
    if (error instanceof ModelCallError) return undefined;
    throw error;
  }
}

/** Polls until the batch ends; returns why it failed, when it ended without results. */
async function waitForBatch(api: BatchApi, spec: ModelSpec, record: BatchRecord, firstWaitMs: number, log: (line: string) => void, pending: readonly BatchRecord[]): Promise<string | undefined> {
  let waitMs = firstWaitMs;
  let failures = 0;
  let last = "";
  for (;;) {
    let state: BatchState;
    try {
      state = await api.poll(record.id, AbortSignal.timeout(REQUEST_TIMEOUT_MS));
      failures = 0;
    } catch (error) {
      if (!(error instanceof ModelCallError) || !error.retryable || error.fatalForRun || ++failures > MAX_POLL_FAILURES) throw batchError(spec, error, `polling batch ${record.id}`, pending);
      state = { ended: false, line: last };
    }
    if (state.line !== last) log(`batch ${record.id}${partLabel(record)}: ${state.line}`);
    last = state.line;
    if (state.failure !== undefined) return state.failure;
    if (state.ended) return undefined;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    waitMs = Math.min(waitMs * 1.5, firstWaitMs * 10);
  }
}

/** One call to the batch API; `pending` are the batches `batch.json` names that are not loaded yet (the next run polls them). */
async function call<T>(spec: ModelSpec, work: (signal: AbortSignal) => Promise<T>, what: string, pending: readonly BatchRecord[]): Promise<T> {
  try {
    return await work(AbortSignal.timeout(REQUEST_TIMEOUT_MS));
  } catch (error) {
    throw batchError(spec, error, what, pending);
  }
}

/** A failed batch call stops the run: the user fixes the key or the endpoint and runs again. */
function batchError(spec: ModelSpec, error: unknown, what: string, pending: readonly BatchRecord[]): unknown {
  if (!(error instanceof ModelCallError)) return error;
  const named =
    pending.length === 0
      ? "no batch of this run is waiting at the provider, so it submits what is not answered yet"
      : `${BATCH_FILE} in the run directory names the batch${pending.length > 1 ? "es" : ""} submitted and not yet read (${pending.map((r) => r.id).join(", ")}), which it polls instead of submitting ${pending.length > 1 ? "them" : "it"} again`;
  let hint = `check that ${error.endpoint} serves the batch API, then run the same command again: ${named}`;
  if (error.kind === "auth") hint = `check the API key for ${spec.provider} (it was refused by ${error.endpoint}), then run the same command again: ${named}`;
  if (error.kind === "bad_request") hint = `the provider refused the request as it was sent; run the same command again once fixed: ${named}`;
  return new UserError(`the batch API of ${spec.name} cannot be used (${what}): ${error.message}`, {}, hint);
}

function readBatchFile(file: string): BatchRecord[] {
  if (!existsSync(file)) return [];
  let parsed;
  try {
    parsed = batchFileSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) throw new UserError(`${BATCH_FILE} is not a batch file eqakit wrote`, { file }, "remove it to submit a new batch (a batch it named is then not picked up)");
  return parsed.data.batches.map((r) => ({ ...r }));
}

async function writeBatchFile(file: string, records: BatchRecord[]): Promise<void> {
  await writeFileAtomically(file, `${JSON.stringify({ batches: records }, null, 2)}\n`);
}
