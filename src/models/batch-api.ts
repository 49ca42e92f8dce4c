/**
 * `--batch`: a run's model calls sent through the provider's batch API (OpenAI's Batch API,
 * Anthropic's Message Batches), which costs half the live price and answers within 24 hours.
 *
 * The run's own code builds the requests, so that a batch run records exactly what a live run
 * records:
 * 1. collect: the run's planning function runs with a model that looks each request up in the
 *    model-call cache (a hit is answered from it, so robust re-asks of an unreadable reply are
 *    found) and records each miss, adapted and keyed as the runtime would send it;
 * 2. submit the misses as one batch, the cache key as each request's custom_id, and write
 *    `batch.json` in the run directory before waiting;
 * 3. poll the batch every `pollSeconds` (growing to ten times that), printing its counts;
 * 4. read its results with the provider client's own parser and store every ok reply in the
 *    model-call cache under its key;
 * 5. collect again (a robust re-ask is a new request), at most three batches in all; the
 *    caller then runs as usual, every request now a cache hit.
 * A killed process loses nothing: `batch.json` names the batch not yet loaded, and the same
 * command picks it up instead of submitting another. What a batch did not answer (a request
 * that errored or expired, a reply cut, filtered or refused) is not cached: the final run asks
 * it live, at the live price, and records its failure as a run without `--batch` does.
 * Google's batch mode is not supported.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError, writeFileAtomically } from "../core/index.js";
import type { ModelCallCache } from "../store/index.js";
import { CallPlan } from "./dry-run.js";
import { ModelCallError } from "./errors.js";
import { adaptRequest } from "./families.js";
import { getJson, getText, postFile, postJson } from "./http.js";
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
  /** Tokens of every reply it gave (each billed, whatever its status). */
  usage?: BatchUsage;
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
      usage: z.object({ calls: z.number(), promptTokens: z.number(), completionTokens: z.number(), thinkingTokens: z.number() }).optional(),
    }),
  ),
});

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
    private readonly spec: ModelSpec,
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
    if (!this.requests.has(key)) this.requests.set(key, { customId: key, body: batchApi(this.spec).body(adapted) });
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
  errors: z.object({ data: z.array(z.object({ message: z.string().optional() }).loose()).optional() }).loose().nullable().optional(),
  request_counts: z.object({ total: z.number().optional(), completed: z.number().optional(), failed: z.number().optional() }).loose().nullable().optional(),
}).loose();

const openAiResultSchema = z.object({
  custom_id: z.string(),
  response: z.object({ status_code: z.number(), body: z.unknown() }).loose().nullable().optional(),
  error: z.object({ message: z.string().optional() }).loose().nullable().optional(),
}).loose();

/** OpenAI's Batch API: a JSONL file uploaded to /files, a batch over /v1/chat/completions. */
class OpenAiBatches extends OpenAiClient implements BatchApi {
  private readonly headers: Record<string, string>;

  constructor(private readonly batchSpec: ModelSpec) {
    super(batchSpec);
    this.headers = { authorization: `Bearer ${batchSpec.apiKey}` };
  }

  async submit(requests: BatchRequest[], signal: AbortSignal): Promise<string> {
    const base = this.batchSpec.baseURL;
    const lines = requests.map((r) => JSON.stringify({ custom_id: r.customId, method: "POST", url: "/v1/chat/completions", body: r.body }));
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

  async results(id: string, signal: AbortSignal): Promise<BatchResult[]> {
    const base = this.batchSpec.baseURL;
    const batch = await this.fetchBatch(id, signal);
    if (!batch.output_file_id) return [];
    const text = await getText(`${base}/files/${encodeURIComponent(batch.output_file_id)}/content`, this.headers, signal, base);
    return jsonLines(text, base).map((value) => {
      const line = openAiResultSchema.safeParse(value);
      if (!line.success) throw new ModelCallError("bad_response", `${base} gave a batch result line without custom_id`, base);
      const { custom_id: customId, response, error } = line.data;
      if (response && response.status_code >= 200 && response.status_code < 300) return { customId, body: response.body };
      return { customId, error: error?.message ?? `HTTP ${response?.status_code ?? "?"}` };
    });
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
      return result.type === "succeeded" ? { customId, body: result.message } : { customId, error: result.type };
    });
  }

  private async fetchBatch(id: string, signal: AbortSignal): Promise<z.infer<typeof anthropicBatchSchema>> {
    const base = this.batchSpec.baseURL;
    const batch = anthropicBatchSchema.safeParse(await getJson(`${base}/v1/messages/batches/${encodeURIComponent(id)}`, this.headers, signal, base));
    if (!batch.success) throw new ModelCallError("bad_response", `${base} answered without the batch's processing_status`, base);
    return batch.data;
  }
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
  /** Progress lines (submitted, status, loaded). */
  log?: (line: string) => void;
}

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
 * would make (see the top of this file). Resumes the batch `batch.json` names when it is not
 * loaded yet. An endpoint that refuses the key, cannot be reached or fails the batch stops
 * the run with a UserError; the batch stays named in `batch.json` for the next run.
 */
export async function fillCacheByBatch(options: BatchRunOptions): Promise<BatchRunReport> {
  const api = batchApi(options.spec);
  const provider = options.spec.protocol === "anthropic" ? "anthropic" : "openai";
  const log = options.log ?? (() => undefined);
  const file = join(options.runDir, BATCH_FILE);
  const records = readBatchFile(file);
  const ours = (r: BatchRecord): boolean => r.provider === provider && r.baseURL === options.spec.baseURL && r.model === options.spec.model;
  const submitted = new Set<string>();

  const pending = records.find((r) => !r.loadedAt && ours(r));
  if (pending) {
    log(`resuming batch ${pending.id} (${pending.requests} request(s), submitted ${pending.createdAt})`);
    await finish(pending);
  }
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const collector = new BatchCollector(options.cache);
    await options.collect(collector);
    const fresh = [...collector.requests.values()].filter((r) => !submitted.has(r.customId));
    if (fresh.length === 0) break;
    const id = await call(options.spec, (signal) => api.submit(fresh, signal), "submitting the batch");
    for (const r of fresh) submitted.add(r.customId);
    const record: BatchRecord = { provider, id, baseURL: options.spec.baseURL, model: options.spec.model, requests: fresh.length, createdAt: new Date().toISOString() };
    records.push(record);
    await writeBatchFile(file, records);
    log(`submitted batch ${id}: ${fresh.length} request(s) to ${options.spec.name} (${BATCH_FILE} names it: a stopped run picks it up again)`);
    await finish(record);
  }
  const mine = records.filter(ours);
  return { provider, ids: mine.map((r) => r.id), requests: mine.reduce((n, r) => n + r.requests, 0), usage: sumBatchUsage(mine) };

  async function finish(record: BatchRecord): Promise<void> {
    const failure = await waitForBatch(api, options.spec, record, (options.pollSeconds ?? 30) * 1000, log);
    if (failure !== undefined) {
      record.loadedAt = new Date().toISOString();
      record.results = { cached: 0, notCached: record.requests };
      await writeBatchFile(file, records);
      throw new UserError(`batch ${record.id} of ${options.spec.name} failed: ${failure}`, { file }, "fix what the provider names, then run the same command again: it submits a new batch");
    }
    const results = await call(options.spec, (signal) => api.results(record.id, signal), "reading the batch's results");
    let cached = 0;
    const usage: BatchUsage = { calls: 0, promptTokens: 0, completionTokens: 0, thinkingTokens: 0 };
    for (const result of results) {
      const reply = result.body === undefined ? undefined : parsedReply(api, result.body);
      if (reply) {
        usage.calls++;
        usage.promptTokens += reply.promptTokens;
        usage.completionTokens += reply.completionTokens;
        usage.thinkingTokens += reply.thinkingTokens ?? 0;
      }
      if (reply && (reply.status ?? "ok") === "ok") {
        await options.cache.put(result.customId, options.spec.provider, options.spec.model, reply);
        cached++;
      }
    }
    record.loadedAt = new Date().toISOString();
    record.results = { cached, notCached: record.requests - cached };
    record.usage = usage;
    await writeBatchFile(file, records);
    log(`batch ${record.id}: ${cached} of ${record.requests} replies cached${cached < record.requests ? `, ${record.requests - cached} to be asked live` : ""}`);
  }
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
async function waitForBatch(api: BatchApi, spec: ModelSpec, record: BatchRecord, firstWaitMs: number, log: (line: string) => void): Promise<string | undefined> {
  let waitMs = firstWaitMs;
  let failures = 0;
  let last = "";
  for (;;) {
    let state: BatchState;
    try {
      state = await api.poll(record.id, AbortSignal.timeout(REQUEST_TIMEOUT_MS));
      failures = 0;
    } catch (error) {
      if (!(error instanceof ModelCallError) || !error.retryable || error.fatalForRun || ++failures > MAX_POLL_FAILURES) throw batchError(spec, error, `polling batch ${record.id}`);
      state = { ended: false, line: last };
    }
    if (state.line !== last) log(`batch ${record.id}: ${state.line}`);
    last = state.line;
    if (state.failure !== undefined) return state.failure;
    if (state.ended) return undefined;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    waitMs = Math.min(waitMs * 1.5, firstWaitMs * 10);
  }
}

async function call<T>(spec: ModelSpec, work: (signal: AbortSignal) => Promise<T>, what: string): Promise<T> {
  try {
    return await work(AbortSignal.timeout(REQUEST_TIMEOUT_MS));
  } catch (error) {
    throw batchError(spec, error, what);
  }
}

/** A failed batch call stops the run: the user fixes the key or the endpoint and runs again. */
function batchError(spec: ModelSpec, error: unknown, what: string): unknown {
  if (!(error instanceof ModelCallError)) return error;
  let hint = `check that ${error.endpoint} serves the batch API, then run the same command again: ${BATCH_FILE} in the run directory names the batch submitted`;
  if (error.kind === "auth") hint = `check the API key for ${spec.provider} (it was refused by ${error.endpoint})`;
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
