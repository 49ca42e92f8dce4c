import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { timingSafeEqual } from "node:crypto";
import { UserError, isLoopbackHost } from "../core/index.js";
import { CONTRASTIVE_DEFAULTS, VARIANTS, batchRewards, type BatchEvaluation, type ContrastiveParams, type Variant } from "./rewards.js";

/**
 * The reward server: OpenRLHF's remote reward-model protocol (`--remote_rm_url`).
 *
 *   POST /get_reward  {"query": [str], "prompts": [str], "labels": [str]}  →  {"rewards": [float], "scores": [float], "extra_logs": {…}}
 *
 * `query[i]` is the prompt followed by the policy's output (OpenRLHF sends both; the output
 * is what follows `prompts[i]`), `labels[i]` the instance's ground truth: the score as text
 * (`"7"`, an original evaluation), or JSON `{"score": 7, "variant": "temporal"}` naming the
 * variant the prompt shows (original, temporal, spatial, reasoning; eqakit's GRPO export
 * writes such labels). The rewards are C-GRPO's (Eqs. 3-5), the contrasts computed over the
 * request's batch. `GET /health` answers `{"status": "ok"}`.
 */
export interface RewardServerOptions {
  host?: string;
  port?: number;
  /** Required from clients as `Authorization: Bearer TOKEN`; mandatory when the host is not a loopback address. */
  token?: string;
  /** Largest request body accepted, in bytes (default 8 MiB). */
  maxBodyBytes?: number;
  /** Most items in one request (default 4096). */
  maxBatch?: number;
  contrastive?: ContrastiveParams;
}

export const SERVER_DEFAULTS = { host: "127.0.0.1", port: 5000, maxBodyBytes: 8 * 1024 * 1024, maxBatch: 4096 } as const;

export interface RewardReply {
  status: number;
  body: Record<string, unknown>;
}

class BadRequest extends Error {}

function stringList(value: unknown, field: string, length?: number): string[] {
  if (!Array.isArray(value)) throw new BadRequest(`"${field}" must be a list of strings`);
  if (length !== undefined && value.length !== length) throw new BadRequest(`"${field}" has ${value.length} items but "query" has ${length}`);
  value.forEach((v, i) => {
    if (typeof v !== "string") throw new BadRequest(`"${field}"[${i}] must be a string`);
  });
  return value as string[];
}

/** Chat-template markers trainers leave around a decoded output (`<|im_end|>`, `</s>`, …). */
const SPECIAL_TOKENS = /<\|[^|<>]{1,40}\|>|<\/s>|<s>|<eos>|<end_of_turn>/g;

/** The policy's output in a query: what follows the prompt, chat-template markers removed. */
export function responseOf(query: string, prompt: string | undefined): string {
  const output = prompt !== undefined && prompt.length > 0 && query.startsWith(prompt) ? query.slice(prompt.length) : query;
  return output.replace(SPECIAL_TOKENS, "").trim();
}

/** Reads a label: a bare score, or JSON with `score` (or `ground_truth_score`) and an optional `variant`. */
export function parseLabel(label: string, index: number): { groundTruth: number; variant: Variant } {
  const text = label.trim();
  let score: unknown = text === "" ? undefined : Number(text);
  let variant: unknown = "original";
  if (text.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BadRequest(`"labels"[${index}] is not valid JSON`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new BadRequest(`"labels"[${index}] must be a JSON object or a number`);
    const record = parsed as Record<string, unknown>;
    score = record.score ?? record.ground_truth_score;
    variant = record.variant ?? "original";
  }
  if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 10) throw new BadRequest(`"labels"[${index}] must hold a ground-truth score from 0 to 10`);
  if (typeof variant !== "string" || !(VARIANTS as readonly string[]).includes(variant)) throw new BadRequest(`"labels"[${index}] has an unknown variant; expected one of ${VARIANTS.join(", ")}`);
  return { groundTruth: score, variant: variant as Variant };
}

/** The server's answer to one parsed JSON body (pure: the protocol without the transport). */
export function rewardReply(body: unknown, options: { maxBatch?: number; contrastive?: ContrastiveParams } = {}): RewardReply {
  try {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new BadRequest("the body must be a JSON object with \"query\", \"prompts\" and \"labels\"");
    const record = body as Record<string, unknown>;
    const queries = stringList(record.query, "query");
    const maxBatch = options.maxBatch ?? SERVER_DEFAULTS.maxBatch;
    if (queries.length > maxBatch) return { status: 413, body: { error: `the batch has ${queries.length} items; at most ${maxBatch} are accepted` } };
    const prompts = record.prompts === undefined || record.prompts === null ? undefined : stringList(record.prompts, "prompts", queries.length);
    if (record.labels === undefined || record.labels === null) throw new BadRequest('"labels" is missing: each item needs its ground-truth score');
    const labels = stringList(record.labels, "labels", queries.length);
    const batch: BatchEvaluation[] = queries.map((q, i) => {
      const label = parseLabel(labels[i]!, i);
      return { variant: label.variant, groundTruth: label.groundTruth, text: responseOf(q, prompts?.[i]) };
    });
    const { rewards, means } = batchRewards(batch, options.contrastive ?? CONTRASTIVE_DEFAULTS);
    const totals = rewards.map((r) => r.total);
    return {
      status: 200,
      body: {
        rewards: totals,
        scores: totals,
        extra_logs: {
          accuracy_reward: rewards.map((r) => r.accuracy),
          format_reward: rewards.map((r) => r.format),
          contrastive_reward: rewards.map((r) => (r.boosts.temporal + r.boosts.spatial + r.boosts.reasoning) / 3),
          parsed_score: rewards.map((r) => r.score ?? -1),
        },
        batch_means: means,
      },
    };
  } catch (error) {
    if (error instanceof BadRequest) return { status: 400, body: { error: error.message } };
    throw error;
  }
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

function authorised(req: IncomingMessage, token: Buffer | undefined): boolean {
  if (!token) return true;
  const header = req.headers.authorization ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]!.trim());
  return given.length === token.length && timingSafeEqual(given, token);
}

export interface RunningRewardServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Starts the reward server; refuses a non-loopback host without a token. */
export async function startRewardServer(options: RewardServerOptions = {}): Promise<RunningRewardServer> {
  const host = options.host ?? SERVER_DEFAULTS.host;
  if (!isLoopbackHost(host) && !options.token) {
    throw new UserError(`the reward server would listen on ${host}, reachable from other machines, without a token`, { field: "--host" }, "set --token (or EQA_RM_TOKEN) so clients must send Authorization: Bearer TOKEN, or keep the default host 127.0.0.1");
  }
  const token = options.token ? Buffer.from(options.token) : undefined;
  const maxBody = options.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes;
  const replyOptions = { maxBatch: options.maxBatch ?? SERVER_DEFAULTS.maxBatch, contrastive: options.contrastive ?? CONTRASTIVE_DEFAULTS };
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/health" && req.method === "GET") return send(res, 200, { status: "ok" });
    if (path !== "/get_reward") return send(res, 404, { error: `no such endpoint ${path}; POST /get_reward` });
    if (req.method !== "POST") return send(res, 405, { error: "use POST" });
    if (!authorised(req, token)) return send(res, 401, { error: "missing or wrong bearer token" });
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > maxBody) {
      send(res, 413, { error: `the body has ${declared} bytes; at most ${maxBody} are accepted` });
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBody) {
        refused = true;
        res.setHeader("connection", "close");
        send(res, 413, { error: `the body exceeds ${maxBody} bytes` });
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (refused) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
      } catch {
        return send(res, 400, { error: "the body is not valid JSON" });
      }
      try {
        const reply = rewardReply(body, replyOptions);
        send(res, reply.status, reply.body);
      } catch (error) {
        send(res, 500, { error: `internal error: ${error instanceof Error ? error.message : String(error)}` });
      }
    });
    req.on("error", () => res.destroy());
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => reject(error.code === "EADDRINUSE" ? new UserError(`port ${options.port ?? SERVER_DEFAULTS.port} on ${host} is in use`, { field: "--port" }, "choose another --port") : error));
    server.listen(options.port ?? SERVER_DEFAULTS.port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
