/**
 * `--dry-run`: the requests a run would send, built by the run's own code with a model that
 * records each request instead of sending it, then counted, estimated and priced.
 *
 * Estimates, per request:
 * - prompt tokens: the text's characters / 4, plus each image at its provider's documented
 *   cost: OpenAI (detail high) 85 + 170 per 512-px tile after fitting in 2048 px and
 *   shrinking the short side to 768 px; Anthropic width·height/750 after fitting the long side
 *   in 1568 px; Gemini 258 for an image of at most 384 px a side, else 258 per 768-px tile.
 *   An image whose size cannot be read counts as 768×768.
 * - completion tokens: the request's max tokens (after the model family's adaptation, which
 *   adds thinking) times its choices; unknown without a limit.
 * - cached: the model-call cache already holds the request's key (the key the runtime uses).
 * - dollars: the calls not cached, priced by `billedDollars` as a run's ledger is (cost.ts); under
 *   `--batch` at the batch price.
 * The recording model answers every request with a fixed reply, so calls that depend on what a
 * model says (re-asks, tool rounds, force-a-guess's blind guess) are counted as when each reply
 * is read at the first try.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ModelCallCache } from "../store/index.js";
import { billedDollars, type CallMode } from "./cost.js";
import { currentCallContext } from "./ledger.js";
import { adaptRequest } from "./families.js";
import { imageSize } from "./images.js";
import type { ModelSpec, Protocol } from "./names.js";
import { ModelRuntime, requestCacheKey, type ModelRoleOptions } from "./runtime.js";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.js";

/** An image's tokens as its provider documents them. */
export function estimateImageTokens(protocol: Protocol, width: number, height: number): number {
  switch (protocol) {
    case "openai": {
      let w = width;
      let h = height;
      const fit = Math.min(1, 2048 / Math.max(w, h));
      w *= fit;
      h *= fit;
      const shrink = Math.min(1, 768 / Math.min(w, h));
      w *= shrink;
      h *= shrink;
      return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
    }
    case "anthropic": {
      const fit = Math.min(1, 1568 / Math.max(width, height));
      return Math.ceil((width * fit * height * fit) / 750);
    }
    case "google":
      if (width <= 384 && height <= 384) return 258;
      return 258 * Math.ceil(width / 768) * Math.ceil(height / 768);
  }
}

/** Prompt tokens (characters / 4 plus images) and completion tokens (max tokens × choices, or null) of one request. */
export function estimateRequestTokens(protocol: Protocol, request: ChatRequest): { promptTokens: number; completionTokens: number | null } {
  let characters = 0;
  let imageTokens = 0;
  for (const message of request.messages) {
    if (typeof message.content === "string") characters += message.content.length;
    else {
      for (const part of message.content) {
        if (part.type === "text") characters += part.text.length;
        else {
          const size = imageSize(part.data) ?? { width: 768, height: 768 };
          imageTokens += estimateImageTokens(protocol, size.width, size.height);
        }
      }
    }
    if (message.toolCalls) characters += JSON.stringify(message.toolCalls).length;
  }
  if (request.tools) characters += JSON.stringify(request.tools).length;
  return { promptTokens: Math.ceil(characters / 4) + imageTokens, completionTokens: request.maxTokens === undefined ? null : request.maxTokens * (request.n ?? 1) };
}

/** One request a run would send. */
export interface PlannedCall {
  role: string;
  model: string;
  promptTokens: number;
  completionTokens: number | null;
  /** The model-call cache already holds its reply: it would cost nothing. */
  cached: boolean;
  /** Counted as a most (an exploration's steps, up to its budget). */
  upperBound?: boolean;
  /** Sent through a batch API (`--batch`): billed at the batch price. */
  mode: CallMode;
  /** The table row it is made for (`eqa reproduce --dry-run`), when planned in `CallPlan.forRow`. */
  row?: string;
}

/** A role's planned calls, summed. */
export interface PlannedRole {
  role: string;
  model: string;
  calls: number;
  cached: number;
  /** Null when not estimated. */
  promptTokens: number | null;
  /** Null when some request has no token limit. */
  completionTokens: number | null;
  /** The calls not in the cache, priced; null without a price or a token estimate. */
  dollars: number | null;
  /** The dollars are the prompt's only: some requests set no token limit, so their output is not estimated. */
  dollarsAtLeast?: boolean;
  /** True when the count is a most (exploration stops when the model says so). */
  upperBound: boolean;
}

/** A table row's planned calls, every role summed (`eqa reproduce --dry-run`). */
export interface PlannedRow {
  row: string;
  calls: number;
  cached: number;
  /** The calls not in the cache, priced; null when a role's are not (no price, or tokens not estimated). */
  dollars: number | null;
  /** Some requests set no token limit: their output is not priced. */
  dollarsAtLeast?: boolean;
  /** Some count is a most (an exploration's steps). */
  upperBound: boolean;
}

/** The row whose calls are being planned now. */
const plannedRow = new AsyncLocalStorage<string>();

/**
 * Collects the requests a run would send. `model(spec, role)` gives a ChatModel that records
 * instead of calling; `runtime(roleOf)` a ModelRuntime whose models do the same, for code that
 * builds its models from a runtime (agents).
 */
export class CallPlan {
  readonly calls: PlannedCall[] = [];
  private readonly extra: (PlannedRole & { row?: string })[] = [];
  /** The rows planned in `forRow`, so that a row that calls no model is listed too (0 calls). */
  private readonly plannedRows: string[] = [];

  /** `batch`: the run sends its calls through a batch API (`--batch`), so they are priced at the batch price. */
  constructor(
    private readonly cache?: ModelCallCache,
    private readonly options: { batch?: boolean } = {},
  ) {}

  /** A model that records each request under `role` and replies `reply` (empty by default). */
  model(spec: ModelSpec, role: string, reply = ""): ChatModel {
    return new RecordingModel(spec, role, this.options.batch ? "batch" : "live", reply, this.cache, this.calls);
  }

  /** A runtime whose `model(spec)` records: `roleOf` names the role of the nth model asked for. */
  runtime(roleOf: (spec: ModelSpec, nth: number) => { role: string; reply?: string }): ModelRuntime {
    return new PlanningRuntime(this, roleOf);
  }

  /** Records `request` as `times` calls of `role`, counted as a most (an exploration's steps, from its budget). */
  async repeat(spec: ModelSpec, role: string, request: ChatRequest, times: number): Promise<void> {
    if (times <= 0) return;
    await this.model(spec, role).complete(request);
    const call = { ...this.calls[this.calls.length - 1]!, upperBound: true };
    this.calls.splice(this.calls.length - 1, 1, ...Array.from({ length: times }, () => ({ ...call })));
  }

  /** Calls counted without their requests (tokens not estimated). */
  addEstimate(role: PlannedRole): void {
    const row = plannedRow.getStore();
    this.extra.push(row === undefined ? role : { ...role, row });
  }

  /** Runs `work` with every call it plans counted under the table row `row` as well as under its role. */
  forRow<T>(row: string, work: () => Promise<T>): Promise<T> {
    if (!this.plannedRows.includes(row)) this.plannedRows.push(row);
    return plannedRow.run(row, work);
  }

  /** Per role and model, in the order first seen. */
  roles(env: NodeJS.ProcessEnv = process.env): PlannedRole[] {
    return [...summariseCalls(this.calls, env), ...this.extra.map(({ row: _row, ...role }) => role)];
  }

  /** Per table row planned in `forRow`, in the order planned: its calls (0 for a row that calls no model), those cached, and dollars over every role. */
  rows(env: NodeJS.ProcessEnv = process.env): PlannedRow[] {
    const names = [...new Set([...this.plannedRows, ...this.calls.map((c) => c.row), ...this.extra.map((e) => e.row)].filter((r): r is string => r !== undefined))];
    return names.map((row) => {
      const roles = [...summariseCalls(this.calls.filter((c) => c.row === row), env), ...this.extra.filter((e) => e.row === row)];
      const dollars = roles.some((r) => r.dollars === null) ? null : Math.round(roles.reduce((total, r) => total + (r.dollars ?? 0), 0) * 1e9) / 1e9;
      return {
        row,
        calls: roles.reduce((total, r) => total + r.calls, 0),
        cached: roles.reduce((total, r) => total + r.cached, 0),
        dollars,
        ...(roles.some((r) => r.dollarsAtLeast) ? { dollarsAtLeast: true } : {}),
        upperBound: roles.some((r) => r.upperBound),
      };
    });
  }
}

/** Planned calls per role, model and mode, in the order first seen, priced as a run's ledger is. */
function summariseCalls(calls: readonly PlannedCall[], env: NodeJS.ProcessEnv): PlannedRole[] {
  const byKey = new Map<string, PlannedRole & { mode: CallMode; billedPrompt: number; billedCompletion: number | null }>();
  for (const call of calls) {
    const key = `${call.role}\u0000${call.model}\u0000${call.mode}`;
    let role = byKey.get(key);
    if (!role) byKey.set(key, (role = { role: call.mode === "batch" ? `${call.role} (batch)` : call.role, model: call.model, mode: call.mode, calls: 0, cached: 0, promptTokens: 0, completionTokens: 0, dollars: null, upperBound: false, billedPrompt: 0, billedCompletion: 0 }));
    role.calls++;
    role.promptTokens = (role.promptTokens ?? 0) + call.promptTokens;
    if (call.upperBound) role.upperBound = true;
    role.completionTokens = role.completionTokens === null || call.completionTokens === null ? null : role.completionTokens + call.completionTokens;
    if (call.cached) role.cached++;
    else {
      role.billedPrompt += call.promptTokens;
      role.billedCompletion = role.billedCompletion === null || call.completionTokens === null ? null : role.billedCompletion + call.completionTokens;
    }
  }
  return [...byKey.values()].map(({ mode, billedPrompt, billedCompletion, ...role }): PlannedRole => {
    const dollars = billedDollars(role.model, { promptTokens: billedPrompt, completionTokens: billedCompletion ?? 0 }, mode, env);
    if (dollars === null) return { ...role, dollars: null };
    return { ...role, dollars, ...(billedCompletion === null ? { dollarsAtLeast: true } : {}) };
  });
}

class PlanningRuntime extends ModelRuntime {
  private asked = 0;

  constructor(
    private readonly plan: CallPlan,
    private readonly roleOf: (spec: ModelSpec, nth: number) => { role: string; reply?: string },
  ) {
    super();
  }

  /** The role the caller names, else `roleOf`'s; the reply `roleOf` gives. */
  override model(spec: ModelSpec, options?: ModelRoleOptions): ChatModel {
    const { role, reply } = this.roleOf(spec, this.asked++);
    return this.plan.model(spec, options?.role ?? role, reply);
  }
}

class RecordingModel implements ChatModel {
  readonly name: string;

  constructor(
    readonly spec: ModelSpec,
    private readonly role: string,
    private readonly mode: CallMode,
    private readonly reply: string,
    private readonly cache: ModelCallCache | undefined,
    private readonly calls: PlannedCall[],
  ) {
    this.name = spec.name;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    // the request as the runtime would send it and key it
    const adapted = adaptRequest(this.spec.profile, request, 1);
    const cached = this.cache ? (await this.cache.get(requestCacheKey(this.spec, adapted.request, adapted.thinking))) !== undefined : false;
    // a role set where the call is made (force-a-guess's, a stop check's) wins, as in the ledger
    const row = plannedRow.getStore();
    this.calls.push({ role: currentCallContext().role ?? this.role, model: this.name, mode: this.mode, cached, ...estimateRequestTokens(this.spec.protocol, adapted.request), ...(row === undefined ? {} : { row }) });
    const texts = Array.from({ length: request.n ?? 1 }, () => this.reply);
    return { text: this.reply, texts, finishReason: "stop", usage: { promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images: 0, latencyMs: 0, retries: 0, cached } };
  }
}
