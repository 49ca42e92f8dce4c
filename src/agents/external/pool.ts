/**
 * A pool of live sessions of one external agent, for one task kind: a session is started and
 * initialized when none is idle, goes back to the pool after a good reply, and is killed after
 * any failure (a crash, a timeout, a malformed message, an error reply), so that a fresh one
 * takes the next item. Failures become ExternalAgentErrors naming the agent and the item.
 */
import { UserError } from "../../core/index.js";
import { AGENT_PROTOCOL_VERSION, describeIssues, initializeResult, type AgentTaskKind, type InitializeParams, type InitializeResult } from "./protocol.js";
import { RpcError, RpcFailure, type AgentFailureKind } from "./rpc.js";
import { ModuleSession, ProcessSession, loadModuleAgent, type AgentSession } from "./session.js";

/** How to reach the agent: a command line to start (`exec:…`) or a JavaScript module to load. */
export type ExternalAgentSpec = { kind: "exec"; commandLine: string; command: string; args: string[] } | { kind: "module"; path: string };

/** The spec as the user wrote it, for messages and the run's configuration. */
export function describeExternalAgent(spec: ExternalAgentSpec): string {
  return spec.kind === "exec" ? `exec:${spec.commandLine}` : spec.path;
}

/** An external agent failed on one item (or could not start). */
export class ExternalAgentError extends UserError {
  constructor(
    readonly kind: AgentFailureKind,
    message: string,
    hint?: string,
  ) {
    super(message, {}, hint);
    this.name = "ExternalAgentError";
  }
}

/** Milliseconds a starting agent has to answer `initialize`, at least (loading a model's weights takes time). */
const AGENT_START_TIMEOUT_MS = 600_000;

const HINT = "run the agent's command by hand to see what it prints; docs/agent-protocol.md says what it must send";

export class SessionPool {
  private readonly idle: AgentSession[] = [];
  private readonly live = new Set<AgentSession>();
  private identityResult: InitializeResult | undefined;

  constructor(
    readonly spec: ExternalAgentSpec,
    private readonly task: AgentTaskKind,
    /** Milliseconds eqakit waits for each reply. */
    readonly timeoutMs: number,
    /** The run's settings sent with `initialize`. */
    private readonly settings: Record<string, unknown>,
  ) {}

  /** The agent's own name and version, once a session has been initialized. */
  get identity(): InitializeResult | undefined {
    return this.identityResult;
  }

  /** `agent NAME` (its initialize name) or the spec as written. */
  label(): string {
    return this.identityResult ? `agent ${this.identityResult.name}` : `agent ${describeExternalAgent(this.spec)}`;
  }

  /**
   * An RpcFailure as an ExternalAgentError naming the agent and `where` ("on question q1", "in
   * episode e1 at step 3"), and the model call that failed before it, if one did; other errors pass through.
   */
  failure(error: unknown, where: string, modelError?: Error): ExternalAgentError {
    if (error instanceof RpcFailure) {
      const model = modelError && !error.message.includes(modelError.message) ? ` (its model/complete call had failed: ${modelError.message})` : "";
      return new ExternalAgentError(error.kind, `${this.label()} failed ${where}: ${error.message}${model}`, HINT);
    }
    if (error instanceof ExternalAgentError) return error;
    throw error;
  }

  /** What `initialize` sends each new session: the task and the run's settings (its model, the timeout per reply, eqakit's version, …). */
  initializeParams(): InitializeParams {
    return { protocolVersion: AGENT_PROTOCOL_VERSION, task: this.task, settings: { ...this.settings, timeoutMs: this.timeoutMs } };
  }

  /** An idle session, or a new one, started and initialized. */
  async take(): Promise<AgentSession> {
    return this.idle.pop() ?? (await this.start());
  }

  /** Puts a session that replied well back in the pool. */
  give(session: AgentSession): void {
    this.idle.push(session);
  }

  /** Kills a session after a failure: the next item gets a fresh one. */
  discard(session: AgentSession): void {
    session.kill();
    this.live.delete(session);
  }

  private async start(): Promise<AgentSession> {
    let session: AgentSession;
    if (this.spec.kind === "exec") {
      session = new ProcessSession(this.spec.command, this.spec.args);
    } else {
      const loaded = await loadModuleAgent(this.spec.path);
      if (typeof loaded === "string") throw new UserError(loaded, { file: this.spec.path, field: "--agent" });
      session = new ModuleSession(loaded);
    }
    this.live.add(session);
    try {
      const raw = await session.call(
        "initialize",
        this.initializeParams(),
        // an agent loads its weights before it can answer `initialize`: that may take minutes
        Math.max(this.timeoutMs, AGENT_START_TIMEOUT_MS),
        { request: (m) => Promise.reject(new RpcError(-32601, `${m} is not available during initialize`)), notify: () => {} },
      );
      const parsed = initializeResult.safeParse(raw);
      if (!parsed.success) throw new RpcFailure("malformed", `initialize: the reply does not match the protocol: ${describeIssues(parsed.error)}`);
      const result = parsed.data;
      if (result.protocolVersion !== undefined && result.protocolVersion.split(".")[0] !== AGENT_PROTOCOL_VERSION) {
        throw new RpcFailure("malformed", `initialize: the agent speaks protocol ${result.protocolVersion}, eqakit ${AGENT_PROTOCOL_VERSION}`);
      }
      const supports = result.supports ?? ["em-eqa"];
      if (!supports.includes(this.task)) throw new RpcFailure("malformed", `initialize: the agent supports ${supports.join(", ") || "no task"}, not ${this.task}`);
      this.identityResult ??= result;
      return session;
    } catch (error) {
      this.discard(session);
      throw this.failure(error, "in initialize");
    }
  }

  /** Shuts every session down (each gets `shutdown`, then is killed if it does not exit). */
  async close(): Promise<void> {
    const sessions = [...this.live];
    this.idle.length = 0;
    this.live.clear();
    await Promise.all(sessions.map((s) => s.shutdown(Math.min(this.timeoutMs, 5000))));
  }
}
