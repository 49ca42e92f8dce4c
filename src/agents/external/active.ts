/**
 * An active agent of the user's own (`eqa explore --agent exec:…`): eqakit runs the episode
 * loop (src/agents/explore/external.ts) and asks the agent, through `reset` and then `step`,
 * what to do after each observation. Sessions come from a pool (one per episode in flight); an
 * episode holds its session from `reset` to its end and gives it back only when every reply
 * was good. Any failure (a crash, a timeout, a malformed or wrong reply, an unknown action)
 * kills the session and fails the episode alone, named by agent, episode and step.
 */
import { eqakitVersion } from "../../core/index.js";
import type { ImageOptions } from "../../episodes/index.js";
import { ModelCallError, type ChatModel } from "../../models/index.js";
import { keepTraceOfFailure, newTrace } from "../calls.js";
import type { AgentTrace } from "../types.js";
import { externalConfiguration } from "./agent.js";
import { completeCallback, keepLogLine, type CallbackFrames } from "./callbacks.js";
import { NO_EXPLORE_MEMORY } from "./memory.js";
import { SessionPool, type ExternalAgentSpec } from "./pool.js";
import { ACTIVE_ACTIONS, activeDecision, describeIssues, type ActiveDecision, type InitializeParams, type InitializeResult, type ResetParams, type StepParams } from "./protocol.js";
import { RpcError, RpcFailure } from "./rpc.js";
import type { AgentSession, CallContext } from "./session.js";

export interface ExternalActiveAgentOptions {
  /** The run's model (--model), lent to the agent through model/complete; absent: such calls are refused. */
  model?: ChatModel;
  /** Milliseconds eqakit waits for each reply (--agent-timeout, default 120 000). */
  timeoutMs?: number;
  /** How frames asked for in model/complete are prepared (--image-size, --image-format). */
  image?: ImageOptions;
  /** Sent with `initialize`: the episodes' step budget and the like. */
  settings?: Record<string, unknown>;
  /** The task kind the agent must support: `active` (default), or `mixed` for Mixed EQA sets, whose `reset` carries the history. */
  task?: "active" | "mixed";
}

/** A decision after `reset` or `step`, checked against the protocol. */
export type CheckedDecision = { kind: "action"; action: (typeof ACTIVE_ACTIONS)[number] } | { kind: "answer"; answer: string | null; confidence?: number } | { kind: "stop" };

/** An active agent of the user's own, a process (`exec:`) or a module; `close()` shuts its processes down. */
export class ExternalActiveAgent {
  readonly configuration: Record<string, unknown>;
  readonly timeoutMs: number;
  private readonly pool: SessionPool;

  constructor(
    readonly spec: ExternalAgentSpec,
    private readonly options: ExternalActiveAgentOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 120_000;
    const task = options.task ?? "active";
    this.configuration = { ...externalConfiguration(spec, options.model, options.image), task };
    this.pool = new SessionPool(spec, task, this.timeoutMs, { model: options.model?.name ?? null, eqakitVersion, actions: [...ACTIVE_ACTIONS], ...options.settings });
  }

  /** The agent's own name and version, once a session has been initialized. */
  get agentIdentity(): InitializeResult | undefined {
    return this.pool.identity;
  }

  /** What `initialize` sends each of its processes (`eqa agent check` sends the same). */
  initializeParams(): InitializeParams {
    return this.pool.initializeParams();
  }

  /** A session for one episode; `frames` are the episode's frames so far (for `frame` parts of model/complete). */
  async begin(episodeId: string, frames: CallbackFrames): Promise<ActiveEpisodeSession> {
    const session = await this.pool.take();
    return new ActiveEpisodeSession(this.pool, session, episodeId, frames, this.options);
  }

  /** Shuts every session down (each gets `shutdown`, then is killed if it does not exit). */
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** One episode's conversation with the agent: `reset`, then `step` after each action, then `end`. */
export class ActiveEpisodeSession {
  /** The agent's model calls, log lines and stderr during the episode. */
  readonly trace: AgentTrace;
  private readonly log: NonNullable<AgentTrace["log"]> = [];
  private modelError: ModelCallError | undefined;
  private ended = false;
  private step = 0;
  /** Milliseconds spent waiting for the agent's replies, without its model calls. */
  agentMs = 0;
  /** The longest wait for one reply, milliseconds (its model calls included). */
  slowestReplyMs = 0;
  private callbackMs = 0;
  private readonly context: CallContext;

  constructor(
    private readonly pool: SessionPool,
    private readonly session: AgentSession,
    private readonly episodeId: string,
    frames: CallbackFrames,
    options: ExternalActiveAgentOptions,
  ) {
    this.trace = newTrace(pool.identity?.name ?? "external");
    if (pool.identity) this.trace.notes.push(`${pool.identity.name} version ${pool.identity.version}`);
    this.context = {
      request: async (method, params) => {
        if (method === "log") {
          keepLogLine(params, this.log);
          return null;
        }
        const started = performance.now();
        try {
          if (method === "memory/query") throw new RpcError(-32003, NO_EXPLORE_MEMORY);
          if (method !== "model/complete") throw new RpcError(-32601, `unknown method ${method}`);
          return await completeCallback(params, this.trace, options.model, frames, options.image);
        } catch (error) {
          if (error instanceof ModelCallError) {
            this.modelError ??= error;
            throw new RpcError(-32002, `the model call failed: ${error.message}`);
          }
          throw error;
        } finally {
          this.callbackMs += performance.now() - started;
        }
      },
      notify: (method, params) => {
        if (method === "log") keepLogLine(params, this.log);
      },
    };
  }

  /** Starts the episode: its first observation; resolves to the agent's first decision. */
  reset(params: ResetParams): Promise<CheckedDecision> {
    return this.call("reset", params);
  }

  /** The observation after an action; resolves to the agent's next decision. */
  next(params: StepParams): Promise<CheckedDecision> {
    this.step = params.observation.step;
    return this.call("step", params);
  }

  private async call(method: "reset" | "step", params: unknown): Promise<CheckedDecision> {
    const where = `in episode ${this.episodeId} at step ${this.step}`;
    if (this.ended) throw new Error(`${method} after the episode ended`);
    const started = performance.now();
    const callbacks = this.callbackMs;
    let raw: unknown;
    try {
      raw = await this.session.call(method, params, this.pool.timeoutMs, this.context);
    } catch (error) {
      this.fail();
      throw this.failure(error, where);
    } finally {
      const waited = performance.now() - started;
      this.agentMs += waited - (this.callbackMs - callbacks);
      this.slowestReplyMs = Math.max(this.slowestReplyMs, waited);
    }
    // a model the run cannot use stops the run; any other failed call was the agent's to handle, and its decision stands
    if (this.modelError?.fatalForRun) {
      this.fail();
      throw this.failure(this.modelError, where);
    }
    if (this.modelError) {
      this.trace.notes.push(`a model/complete call failed at step ${this.step} (${this.modelError.message}); the agent decided without it`);
      this.modelError = undefined;
    }
    const decision = checkDecision(raw);
    if (typeof decision === "string") {
      this.fail();
      throw this.failure(new RpcFailure("malformed", `the reply to ${method} ${decision}`), where);
    }
    return decision;
  }

  /** The error that ends the episode, naming the agent (a model the run cannot use: the model's error), its trace kept with it. */
  private failure(error: unknown, where: string): Error {
    const failure = this.modelError?.fatalForRun ? this.modelError : this.pool.failure(error, where, this.modelError);
    keepTraceOfFailure(failure, this.trace);
    return failure;
  }

  private fail(): void {
    this.ended = true;
    this.finishTrace();
    this.pool.discard(this.session);
  }

  private finishTrace(): void {
    if (this.log.length > 0) this.trace.log = this.log;
    const stderr = this.session.takeStderr();
    if (stderr !== "") this.trace.stderr = (this.trace.stderr ?? "") + stderr;
  }

  /** Ends the episode: the session goes back to the pool for the next one (or is killed when `failed`). */
  end(failed = false): void {
    if (this.ended) return;
    if (failed) {
      this.fail();
      return;
    }
    this.ended = true;
    this.finishTrace();
    this.pool.give(this.session);
  }
}

/** The reply to `reset` or `step` as a decision, or what is wrong with it (a sentence's end: "names an unknown action …"). */
export function checkDecision(raw: unknown): CheckedDecision | string {
  if (typeof raw === "object" && raw !== null) {
    const fields = raw as Record<string, unknown>;
    const given = ["action", "answer", "stop"].filter((k) => k in fields);
    if (given.length > 1) return `gives ${given.join(" and ")}: give one of action, answer or stop`;
    if (typeof fields.action === "string" && !(ACTIVE_ACTIONS as readonly string[]).includes(fields.action)) {
      return `names an unknown action ${JSON.stringify(fields.action)} (the environment offers ${ACTIVE_ACTIONS.join(", ")})`;
    }
  }
  const parsed = activeDecision.safeParse(raw);
  if (!parsed.success) return `does not match the protocol (an action, an answer or stop): ${JSON.stringify(raw)?.slice(0, 200) ?? "nothing"}: ${describeIssues(parsed.error)}`;
  const d: ActiveDecision = parsed.data;
  if ("action" in d) return { kind: "action", action: d.action };
  if ("answer" in d) return { kind: "answer", answer: d.answer, ...(d.confidence !== undefined ? { confidence: d.confidence } : {}) };
  return { kind: "stop" };
}
