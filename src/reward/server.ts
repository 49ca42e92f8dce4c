import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { timingSafeEqual } from "node:crypto";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { Hono } from "hono";
import { z } from "zod";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { UserError, isLoopbackHost } from "../core/index.js";
import { CONTRASTIVE_DEFAULTS, VARIANTS, batchRewards, type BatchEvaluation, type ContrastiveParams, type EvaluationReward, type Variant } from "./rewards.js";

/**
 * The reward server: OpenRLHF's remote reward-model protocol (`--reward.remote_url`), which the
 * adapters in `clients/python/` also speak for verl and TRL.
 *
 *   POST /get_reward  {"query": [str], "prompts": [str], "labels": [str], "groups"?: [str]}
 *     →  {"rewards": [float], "scores": [float], "full_group": [bool], "extra_logs": {…}}
 *
 * `query[i]` is the prompt followed by the policy's output (OpenRLHF decodes the whole sequence,
 * the image expanded into its pad tokens; the output is what follows the prompt once image
 * placeholders are collapsed, else what follows the last assistant-turn marker), `labels[i]` the
 * instance's ground truth: the score as text (`"7"`, an original evaluation), or JSON
 * `{"score": 7, "variant": "temporal", "group": "q17#0", "group_prompts": 4}` naming the variant
 * the prompt shows (original, temporal, spatial, reasoning), the group its samples are
 * contrasted in and how many prompts share that group (eqakit's GRPO export writes such labels).
 * `rewards` are C-GRPO's totals (Eqs. 3-5, 0 to 2 + μ); `scores` the same divided by 2 + μ, in
 * [0, 1] as OpenRLHF's dynamic filtering expects.
 *
 * Grouping. Trainers send samples one by one (OpenRLHF since 0.9) or one process's slice at a
 * time (TRL), so a request's batch is no group. With `groupSize` G (the trainer's samples per
 * prompt), each sample joins the open group of its key (the label's `group`, else the request's
 * `groups[i]`, else its prompt with image placeholders collapsed); a group is complete with
 * G × `group_prompts` samples, and then, or when `groupTimeoutMs` has passed since its first
 * sample, its contrasts are computed over its members and every request waiting on it is
 * answered. `full_group[i]` says whether sample i's group was complete. Without `groupSize` the
 * contrasts are computed over each request's batch, answered at once. `GET /health` answers
 * `{"status": "ok"}`.
 */
export interface RewardServerOptions {
  host?: string;
  port?: number;
  /** Required from clients as `Authorization: Bearer TOKEN`; mandatory when the host is not a loopback address. */
  token?: string;
  /** Largest request body accepted, in bytes (default 8 MiB, `--max-body-bytes`). */
  maxBodyBytes?: number;
  /** Most items in one request (default 4096, `--max-batch`). */
  maxBatch?: number;
  /** The trainer's samples per prompt (`--group-size`); unset: contrasts over each request's batch. */
  groupSize?: number;
  /** How long a group waits for its missing samples, in milliseconds (default 30 000, `--group-timeout`). */
  groupTimeoutMs?: number;
  contrastive?: ContrastiveParams;
}

export const SERVER_DEFAULTS = { host: "127.0.0.1", port: 5000, maxBodyBytes: 8 * 1024 * 1024, maxBatch: 4096, groupTimeoutMs: 30_000 } as const;

export interface RewardReply {
  status: number;
  body: Record<string, unknown>;
}

class BadRequest extends Error {}

const texts = z.array(z.string());

/** A request's body: OpenRLHF's `query`, `prompts` and `labels`, and eqakit's optional `groups`, one item each per sample. */
export const rewardRequestSchema = z.object({ query: texts, prompts: texts.nullish(), labels: texts.nullish(), groups: texts.nullish() });
type RewardRequest = z.infer<typeof rewardRequestSchema>;

/** The first problem of a request's lists, named as a client reads it (`"query"[1] must be a string`). */
function listProblem(error: z.ZodError, within: PropertyKey[] = []): BadRequest {
  const [field, index] = [...within, ...(error.issues[0]?.path ?? [])];
  return new BadRequest(typeof index === "number" ? `"${String(field)}"[${index}] must be a string` : `"${String(field)}" must be a list of strings`);
}

/** A list that must have one item per query. */
function sameLength(list: readonly string[] | null | undefined, field: string, length: number): readonly string[] | undefined {
  if (list === undefined || list === null) return undefined;
  if (list.length !== length) throw new BadRequest(`"${field}" has ${list.length} items but "query" has ${length}`);
  return list;
}

/** Chat-template markers trainers leave around a decoded output (`<|im_end|>`, `</s>`, …). */
const SPECIAL_TOKENS = /<\|[^|<>]{1,40}\|>|<\/s>|<s>|<eos>|<end_of_turn>/g;

/**
 * An image or video as chat templates expand it, collapsed to one `<image>`: Qwen2-VL,
 * Qwen2.5-VL and Qwen3-VL (`<|vision_start|>` + `<|image_pad|>`/`<|video_pad|>` × N +
 * `<|vision_end|>`), InternVL (`<img>` + `<IMG_CONTEXT>` × N + `</img>`), Gemma 3
 * (`<start_of_image>` + `<image_soft_token>` × N + `<end_of_image>`), LLaVA (`<image>` × N).
 */
const IMAGE_RUN = /<\|vision_start\|>(?:<\|(?:image|video)_pad\|>)*<\|vision_end\|>|<img>(?:<IMG_CONTEXT>)*<\/img>|<start_of_image>(?:<image_soft_token>)*<end_of_image>|(?:<image>)+/g;

/** The prompt as eqakit compares it: every image placeholder, however expanded, as one `<image>`. */
export function collapseImages(text: string): string {
  return text.includes("<") ? text.replace(IMAGE_RUN, "<image>") : text;
}

/** Where an assistant turn starts, in the chat templates of Qwen, InternVL, Llama 3, Gemma, Phi and LLaVA. */
const ASSISTANT_TURN = /<\|im_start\|>assistant\n?|<\|start_header_id\|>assistant<\|end_header_id\|>\n*|<start_of_turn>model\n?|<\|assistant\|>\n?|\bASSISTANT:|\[\/INST\]/g;

/**
 * A query split into its prompt and the policy's output, chat-template markers removed from the
 * output: what follows the prompt once both have their image placeholders collapsed; when the
 * prompt is not a prefix (or not sent), what follows the query's last assistant-turn marker;
 * else the whole query is the output.
 */
export function splitQuery(query: string, prompt: string | undefined): { prompt: string; output: string } {
  let split: { prompt: string; output: string } | undefined;
  if (prompt !== undefined && prompt.length > 0) {
    if (query.startsWith(prompt)) split = { prompt, output: query.slice(prompt.length) };
    else {
      const collapsed = collapseImages(query);
      const collapsedPrompt = collapseImages(prompt);
      if (collapsed.startsWith(collapsedPrompt)) split = { prompt, output: collapsed.slice(collapsedPrompt.length) };
    }
  }
  if (split === undefined) {
    let turnEnd = 0;
    for (const match of query.matchAll(ASSISTANT_TURN)) turnEnd = match.index + match[0].length;
    split = { prompt: query.slice(0, turnEnd), output: query.slice(turnEnd) };
  }
  return { prompt: split.prompt, output: split.output.replace(SPECIAL_TOKENS, "").trim() };
}

/** The policy's output in a query (see `splitQuery`). */
export function responseOf(query: string, prompt: string | undefined): string {
  return splitQuery(query, prompt).output;
}

/** A label as the server reads it. */
export interface RewardLabel {
  groundTruth: number;
  variant: Variant;
  /** The group the sample's contrasts are computed in (absent: the request's `groups`, else the prompt). */
  group?: string;
  /** How many prompts' samples make up the group (1 unless the label says). */
  groupPrompts: number;
}

/** A ground-truth score as a label writes it: decimal digits only (`0x7`, `1e1`, `Infinity` are no scores). */
const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)$/;

/** Reads a label: a bare score, or JSON with `score` (or `ground_truth_score`), optional `variant`, `group`, `group_prompts`. */
export function parseLabel(label: string, index: number): RewardLabel {
  const text = label.trim();
  let score: unknown = DECIMAL.test(text) ? Number(text) : undefined;
  let variant: unknown = "original";
  let group: unknown;
  let groupPrompts: unknown = 1;
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
    group = record.group;
    groupPrompts = record.group_prompts ?? 1;
  }
  if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 10) throw new BadRequest(`"labels"[${index}] must hold a ground-truth score from 0 to 10`);
  if (typeof variant !== "string" || !(VARIANTS as readonly string[]).includes(variant)) throw new BadRequest(`"labels"[${index}] has an unknown variant; expected one of ${VARIANTS.join(", ")}`);
  if (group !== undefined && group !== null && (typeof group !== "string" || group === "")) throw new BadRequest(`"labels"[${index}] has a "group" that is not a non-empty string`);
  if (typeof groupPrompts !== "number" || !Number.isSafeInteger(groupPrompts) || groupPrompts < 1) throw new BadRequest(`"labels"[${index}] has a "group_prompts" that is not a whole number of at least 1`);
  return { groundTruth: score, variant: variant as Variant, ...(typeof group === "string" ? { group } : {}), groupPrompts };
}

/** One sample of a request, read and checked. */
interface RequestItem {
  evaluation: BatchEvaluation;
  /** The group key (empty when the server does not group). */
  key: string;
  groupPrompts: number;
}

/** Reads a request body into its samples, or the reply that refuses it. */
function readRequest(body: unknown, maxBatch: number, grouped: boolean): RequestItem[] | RewardReply {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new BadRequest("the body must be a JSON object with \"query\", \"prompts\" and \"labels\"");
  // the batch's size is checked before the other fields, so an oversized batch is always a 413
  const queries = rewardRequestSchema.shape.query.safeParse((body as Record<string, unknown>).query);
  if (!queries.success) throw listProblem(queries.error, ["query"]);
  if (queries.data.length > maxBatch) return { status: 413, body: { error: `the batch has ${queries.data.length} items; at most ${maxBatch} are accepted` } };
  const parsed = rewardRequestSchema.safeParse(body);
  if (!parsed.success) throw listProblem(parsed.error);
  const request: RewardRequest = parsed.data;
  const n = request.query.length;
  const prompts = sameLength(request.prompts, "prompts", n);
  const groups = sameLength(request.groups, "groups", n);
  const labels = sameLength(request.labels, "labels", n);
  if (labels === undefined) throw new BadRequest('"labels" is missing: each item needs its ground-truth score');
  return request.query.map((q, i) => {
    const label = parseLabel(labels[i]!, i);
    const split = splitQuery(q, prompts?.[i]);
    const key = grouped ? (label.group ?? groups?.[i] ?? collapseImages(split.prompt)) : "";
    return { evaluation: { variant: label.variant, groundTruth: label.groundTruth, text: split.output }, key, groupPrompts: label.groupPrompts };
  });
}

/** What the server answers for rewards computed with their groups' completeness. */
function rewardBody(rewards: readonly EvaluationReward[], fullGroup: readonly boolean[], contrastive: ContrastiveParams, means?: Record<Variant, number | null>): Record<string, unknown> {
  const totals = rewards.map((r) => r.total);
  const scale = 2 + contrastive.mu;
  return {
    rewards: totals,
    scores: totals.map((t) => Math.min(1, Math.max(0, t / scale))),
    full_group: fullGroup,
    extra_logs: {
      accuracy_reward: rewards.map((r) => r.accuracy),
      format_reward: rewards.map((r) => r.format),
      contrastive_reward: rewards.map((r) => (r.boosts.temporal + r.boosts.spatial + r.boosts.reasoning) / 3),
      parsed_score: rewards.map((r) => r.score ?? -1),
      full_group: fullGroup.map((f) => (f ? 1 : 0)),
    },
    ...(means ? { batch_means: means } : {}),
  };
}

/**
 * The server's answer to one parsed JSON body without grouping (pure: the protocol without the
 * transport): the contrasts over the request's batch; `full_group` is true for every sample.
 */
export function rewardReply(body: unknown, options: { maxBatch?: number; contrastive?: ContrastiveParams } = {}): RewardReply {
  try {
    const items = readRequest(body, options.maxBatch ?? SERVER_DEFAULTS.maxBatch, false);
    if (!Array.isArray(items)) return items;
    const contrastive = options.contrastive ?? CONTRASTIVE_DEFAULTS;
    const { rewards, means } = batchRewards(items.map((i) => i.evaluation), contrastive);
    return { status: 200, body: rewardBody(rewards, rewards.map(() => true), contrastive, means) };
  } catch (error) {
    if (error instanceof BadRequest) return { status: 400, body: { error: error.message } };
    throw error;
  }
}

interface GroupMember {
  evaluation: BatchEvaluation;
  settle(reward: EvaluationReward, full: boolean): void;
}

interface OpenGroup {
  expected: number;
  members: GroupMember[];
  timer: NodeJS.Timeout;
}

/**
 * Samples held by group key until their group is complete or its time is up. A group that
 * reaches its size closes at once; a later sample of the same key opens the next group (the
 * next step's rollouts of the same prompt).
 */
export class RewardGroups {
  private readonly open = new Map<string, OpenGroup>();

  constructor(
    private readonly groupSize: number,
    private readonly timeoutMs: number,
    private readonly contrastive: ContrastiveParams,
  ) {}

  /** Adds a sample; resolves with its reward once its group is answered. */
  add(key: string, groupPrompts: number, evaluation: BatchEvaluation): Promise<{ reward: EvaluationReward; full: boolean }> {
    return new Promise((resolve) => {
      let group = this.open.get(key);
      if (!group) {
        const created: OpenGroup = { expected: this.groupSize * groupPrompts, members: [], timer: setTimeout(() => this.close(key, created), this.timeoutMs) };
        group = created;
        this.open.set(key, group);
      }
      group.members.push({ evaluation, settle: (reward, full) => resolve({ reward, full }) });
      if (group.members.length >= group.expected) this.close(key, group);
    });
  }

  /** Samples waiting for their group. */
  get waiting(): number {
    let n = 0;
    for (const g of this.open.values()) n += g.members.length;
    return n;
  }

  /** Answers every open group as it stands (when the server stops). */
  flush(): void {
    for (const [key, group] of [...this.open]) this.close(key, group);
  }

  private close(key: string, group: OpenGroup): void {
    if (this.open.get(key) !== group) return;
    this.open.delete(key);
    clearTimeout(group.timer);
    const full = group.members.length >= group.expected;
    const { rewards } = batchRewards(group.members.map((m) => m.evaluation), this.contrastive);
    group.members.forEach((m, i) => m.settle(rewards[i]!, full));
  }
}

/** The server's answer to one parsed JSON body with grouping: waits for the samples' groups. */
export async function groupedRewardReply(body: unknown, groups: RewardGroups, options: { maxBatch?: number; contrastive?: ContrastiveParams } = {}): Promise<RewardReply> {
  let items: RequestItem[] | RewardReply;
  try {
    items = readRequest(body, options.maxBatch ?? SERVER_DEFAULTS.maxBatch, true);
  } catch (error) {
    if (error instanceof BadRequest) return { status: 400, body: { error: error.message } };
    throw error;
  }
  if (!Array.isArray(items)) return items;
  const results = await Promise.all(items.map((item) => groups.add(item.key, item.groupPrompts, item.evaluation)));
  return { status: 200, body: rewardBody(results.map((r) => r.reward), results.map((r) => r.full), options.contrastive ?? CONTRASTIVE_DEFAULTS) };
}

/** The name in a `Host` header, without its port. */
function hostName(header: string): string {
  if (header.startsWith("[")) return header.slice(0, header.indexOf("]") + 1);
  const colon = header.indexOf(":");
  return colon === -1 || header.indexOf(":", colon + 1) !== -1 ? header : header.slice(0, colon);
}

function authorised(header: string | undefined, token: Buffer | undefined): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!match) return false;
  const given = Buffer.from(match[1]!.trim());
  return given.length === token.length && timingSafeEqual(given, token);
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

/** How much of an oversized body is read and dropped before the 413: this many times the cap, at least `DRAIN_MIN_BYTES`. */
const DRAIN_FACTOR = 4;
const DRAIN_MIN_BYTES = 64 * 1024 * 1024;

/**
 * Answers an oversized body with 413 so that every client reads it. Python's http.client (and
 * urllib, and most standard-library clients) writes the whole body before reading a reply: a
 * server that answers and closes mid-body resets the connection, and the client sees
 * BrokenPipeError instead of the 413. So the rest of the body is read and dropped, up to
 * `DRAIN_FACTOR` times the cap (then the connection is cut, as nothing a client would send in
 * good faith is that large), and only then the 413 is sent and the connection closed.
 */
function refuseBody(req: IncomingMessage, res: ServerResponse, message: string, maxBody: number, received = 0): void {
  const bound = Math.max(maxBody * DRAIN_FACTOR, DRAIN_MIN_BYTES);
  let drained = received;
  let answered = false;
  const answer = (): void => {
    if (answered) return;
    answered = true;
    res.setHeader("connection", "close");
    send(res, 413, { error: message });
  };
  if (Number(req.headers["content-length"] ?? "0") > bound) {
    // too large to be worth reading: answer now (a client reading while it writes sees it)
    answer();
    req.resume();
    return;
  }
  req.removeAllListeners("data");
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > bound && !answered) {
      answer();
      req.destroy();
    }
  });
  req.on("end", answer);
  req.resume();
}

/** The request body as parsed JSON, or `undefined` once an oversized body has been refused (the 413 is sent on the raw response). */
function readJsonBody(req: IncomingMessage, res: ServerResponse, maxBody: number): Promise<{ json: unknown } | { invalid: true } | undefined> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > maxBody) {
    refuseBody(req, res, `the body has ${declared} bytes; at most ${maxBody} are accepted (--max-body-bytes)`, maxBody);
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBody) {
        refused = true;
        chunks.length = 0;
        refuseBody(req, res, `the body exceeds ${maxBody} bytes; at most ${maxBody} are accepted (--max-body-bytes)`, maxBody, size);
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (refused) return;
      try {
        resolve({ json: JSON.parse(Buffer.concat(chunks, size).toString("utf8")) as unknown });
      } catch {
        resolve({ invalid: true });
      }
    });
    req.on("error", () => {
      res.destroy();
      resolve(undefined);
    });
  });
}

interface RewardAppOptions {
  token: Buffer | undefined;
  maxBody: number;
  replyOptions: { maxBatch: number; contrastive: ContrastiveParams };
  groups: RewardGroups | undefined;
}

/** The server's routes: `GET /health`, `POST /get_reward`; every reply JSON. */
function rewardApp(options: RewardAppOptions): Hono<{ Bindings: HttpBindings }> {
  const { token, maxBody, replyOptions, groups } = options;
  const app = new Hono<{ Bindings: HttpBindings }>();
  // Without a token, only a loopback Host is served: a web page whose name was rebound to
  // 127.0.0.1 (DNS rebinding) sends its own name as Host.
  app.use(async (c, next) => {
    const host = c.env.incoming.headers.host;
    if (!token && host !== undefined && !isLoopbackHost(hostName(host))) {
      c.env.incoming.resume();
      return c.json({ error: `requests for host ${host} are refused: the server has no token` }, 403, { connection: "close" });
    }
    await next();
  });
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.post("/get_reward", async (c) => {
    if (!authorised(c.req.header("authorization"), token)) return c.json({ error: "missing or wrong bearer token" }, 401);
    const body = await readJsonBody(c.env.incoming, c.env.outgoing, maxBody);
    if (body === undefined) return RESPONSE_ALREADY_SENT;
    if ("invalid" in body) return c.json({ error: "the body is not valid JSON" }, 400);
    try {
      const reply = groups ? await groupedRewardReply(body.json, groups, replyOptions) : rewardReply(body.json, replyOptions);
      return c.json(reply.body, reply.status as ContentfulStatusCode);
    } catch (error) {
      return c.json({ error: `internal error: ${error instanceof Error ? error.message : String(error)}` }, 500);
    }
  });
  app.all("/get_reward", (c) => c.json({ error: "use POST" }, 405));
  app.notFound((c) => c.json({ error: `no such endpoint ${c.req.path}; POST /get_reward` }, 404));
  return app;
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
  const groups = options.groupSize === undefined ? undefined : new RewardGroups(options.groupSize, options.groupTimeoutMs ?? SERVER_DEFAULTS.groupTimeoutMs, replyOptions.contrastive);
  const handle = getRequestListener(rewardApp({ token, maxBody, replyOptions, groups }).fetch);
  const server = createServer(handle);
  // `Expect: 100-continue` (curl's way with bodies over 1 MB): an oversized body is refused
  // before the client sends it; anything else is told to go on.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (req.url?.split("?")[0] === "/get_reward" && authorised(req.headers.authorization, token) && declared > maxBody) {
      res.setHeader("connection", "close");
      return send(res, 413, { error: `the body has ${declared} bytes; at most ${maxBody} are accepted (--max-body-bytes)` });
    }
    res.writeContinue();
    void handle(req, res);
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
        groups?.flush();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
