/**
 * An agent of the user's own, as an eqakit `Agent`: `answerQuestions` runs it like a built-in
 * one (concurrency, resume, traces, predictions, summary). It keeps a pool of live sessions,
 * one per question in flight: a session is started and initialized when none is idle, goes
 * back to the pool after a good answer, and is killed after any failure (a crash, a timeout,
 * a malformed message, an error reply), so that a fresh one takes the next question. The
 * failure fails its question alone, with an ExternalAgentError naming the agent, the question
 * and, for a process that died, its exit code and the tail of its stderr.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { UserError, eqakitVersion, sha256Hex, type Question } from "../../core/index.js";
import type { Episode, ImageOptions } from "../../episodes/index.js";
import { ModelCallError, type ChatMessage, type ChatModel, type ContentPart } from "../../models/index.js";
import { parseCommandLine } from "../../sim/index.js";
import { imagePart, newTrace, tracedCall } from "../calls.js";
import type { Agent, AgentAnswer, AgentTrace } from "../types.js";
import {
  AGENT_PROTOCOL_VERSION,
  answerResult,
  completeParams,
  describeIssues,
  initializeResult,
  logParams,
  type AnswerParams,
  type CompleteParams,
  type CompleteResult,
  type InitializeResult,
} from "./protocol.js";
import { RpcError, RpcFailure, type AgentFailureKind } from "./rpc.js";
import { ModuleSession, ProcessSession, loadModuleAgent, type AgentSession, type CallContext } from "./session.js";

/** How to reach the agent: a command line to start (`exec:…`) or a JavaScript module to load. */
export type ExternalAgentSpec = { kind: "exec"; commandLine: string; command: string; args: string[] } | { kind: "module"; path: string };

/** True for an `--agent` value that names an agent of the user's own rather than a built-in one. */
export function isExternalAgentValue(value: string): boolean {
  return value.startsWith("exec:") || /\.(mjs|cjs|js|mts|ts)$/.test(value);
}

/**
 * Parses `--agent exec:"python3 my_agent.py --flag x"` (split as a shell would, no shell run)
 * or `--agent ./my-agent.mjs` (a module path, resolved against the working directory).
 */
export function parseExternalAgent(value: string): ExternalAgentSpec {
  if (value.startsWith("exec:")) {
    const commandLine = value.slice("exec:".length).trim();
    const { command, args } = parseCommandLine(commandLine, { field: "--agent" });
    return { kind: "exec", commandLine, command, args };
  }
  if (!isExternalAgentValue(value)) throw new UserError(`"${value}" is neither exec:COMMAND nor a JavaScript module`, { field: "--agent" }, 'give exec:"python3 my_agent.py" or ./my-agent.mjs');
  return { kind: "module", path: resolve(value) };
}

/** The spec as the user wrote it, for messages and the run's configuration. */
export function describeExternalAgent(spec: ExternalAgentSpec): string {
  return spec.kind === "exec" ? `exec:${spec.commandLine}` : spec.path;
}

/** An external agent failed on one question (or could not start). */
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

export interface ExternalAgentOptions {
  /** The run's model (--model), lent to the agent through model/complete; absent: such calls are refused. */
  model?: ChatModel;
  /** Milliseconds eqakit waits for each reply of the agent (--agent-timeout, default 120 000). */
  timeoutMs?: number;
  /** Whether questions come with their episode (the run has --frames). */
  episodes?: boolean;
  /** How frames asked for in model/complete are prepared (--image-size, --image-format). */
  image?: ImageOptions;
}

const HINT = "run the agent's command by hand to see what it prints; docs/agent-protocol.md says what it must send";

/** An agent of the user's own, a process (`exec:`) or a module, run as an EM-EQA `Agent`; `close()` shuts its processes down. */
export class ExternalAgent implements Agent {
  readonly name = "external";
  readonly needsEpisode: boolean;
  readonly configuration: Record<string, unknown>;
  private readonly idle: AgentSession[] = [];
  private readonly live = new Set<AgentSession>();
  private readonly timeoutMs: number;
  private identity: InitializeResult | undefined;
  private readonly frameLists = new WeakMap<Episode, Promise<NonNullable<AnswerParams["episode"]>["frames"]>>();

  constructor(
    readonly spec: ExternalAgentSpec,
    private readonly options: ExternalAgentOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.needsEpisode = options.episodes ?? false;
    this.configuration = {
      agent: this.name,
      external: describeExternalAgent(spec),
      ...(spec.kind === "module" ? { moduleSha256: moduleHash(spec.path) } : {}),
      model: options.model?.name ?? "none",
      protocolVersion: AGENT_PROTOCOL_VERSION,
      ...(options.image ? { image: options.image } : {}),
    };
  }

  /** The agent's own name and version, once a session has been initialized. */
  get agentIdentity(): InitializeResult | undefined {
    return this.identity;
  }

  private label(): string {
    return this.identity ? `agent ${this.identity.name}` : `agent ${describeExternalAgent(this.spec)}`;
  }

  private failure(error: unknown, method: string, question?: string): ExternalAgentError {
    const where = question !== undefined ? ` on question ${question}` : ` in ${method}`;
    if (error instanceof RpcFailure) return new ExternalAgentError(error.kind, `${this.label()} failed${where}: ${error.message}`, HINT);
    if (error instanceof ExternalAgentError) return error;
    throw error;
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
        { protocolVersion: AGENT_PROTOCOL_VERSION, task: "em-eqa", settings: { model: this.options.model?.name ?? null, timeoutMs: this.timeoutMs, eqakitVersion } },
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
      if (result.supports && !result.supports.includes("em-eqa")) throw new RpcFailure("malformed", `initialize: the agent supports ${result.supports.join(", ") || "no task"}, not em-eqa`);
      this.identity ??= result;
      return session;
    } catch (error) {
      this.discard(session);
      throw this.failure(error, "initialize");
    }
  }

  private discard(session: AgentSession): void {
    session.kill();
    this.live.delete(session);
  }

  async answer(question: Question, episode: Episode | undefined): Promise<AgentAnswer> {
    // the episode is read before a session is taken: an unreadable one fails the question, not the process
    const params: AnswerParams = {
      question: { id: question.questionId, text: question.question, ...(question.category ? { category: question.category } : {}) },
      episode: episode ? { id: episode.id, path: episode.path, kind: episode.kind, frameCount: episode.frameCount, frames: await this.frameList(episode) } : null,
      budget: { timeoutMs: this.timeoutMs },
    };
    const session = this.idle.pop() ?? (await this.start());
    const trace: AgentTrace = newTrace(this.identity?.name ?? this.name);
    const log: NonNullable<AgentTrace["log"]> = [];
    let modelError: ModelCallError | undefined;
    const context: CallContext = {
      request: async (method, params) => {
        if (method === "log") {
          this.onLog(params, log);
          return null;
        }
        if (method !== "model/complete") throw new RpcError(-32601, `unknown method ${method}`);
        try {
          return await this.complete(params, trace, episode);
        } catch (error) {
          if (error instanceof ModelCallError) {
            modelError ??= error;
            throw new RpcError(-32002, `the model call failed: ${error.message}`);
          }
          throw error;
        }
      },
      notify: (method, params) => {
        if (method === "log") this.onLog(params, log);
      },
    };
    let raw: unknown;
    try {
      raw = await session.call("answer", params, this.timeoutMs, context);
    } catch (error) {
      this.discard(session);
      if (modelError) throw modelError;
      throw this.failure(error, "answer", question.questionId);
    }
    const stderr = session.takeStderr();
    const parsed = answerResult.safeParse(raw);
    if (!parsed.success) {
      this.discard(session);
      throw this.failure(new RpcFailure("malformed", `the answer does not match the protocol: ${describeIssues(parsed.error)}`), "answer", question.questionId);
    }
    this.idle.push(session);
    if (modelError) throw modelError;
    trace.agentAnswer = parsed.data.answer;
    if (this.identity) trace.notes.push(`${this.identity.name} version ${this.identity.version}`);
    if (log.length > 0) trace.log = log;
    if (stderr !== "") trace.stderr = stderr;
    if (parsed.data.confidence !== undefined) trace.notes.push(`confidence ${parsed.data.confidence}`);
    return { answer: parsed.data.answer, trace };
  }

  private onLog(params: unknown, log: NonNullable<AgentTrace["log"]>): void {
    const parsed = logParams.safeParse(params);
    if (parsed.success) log.push({ level: parsed.data.level ?? "info", message: parsed.data.message });
    else log.push({ level: "warning", message: `an unreadable log call: ${describeIssues(parsed.error)}` });
  }

  private async complete(raw: unknown, trace: AgentTrace, episode: Episode | undefined): Promise<CompleteResult> {
    const parsed = completeParams.safeParse(raw);
    if (!parsed.success) throw new RpcError(-32602, `invalid params: ${describeIssues(parsed.error)}`);
    const model = this.options.model;
    if (!model) throw new RpcError(-32001, "no model: the run was started without --model");
    const params: CompleteParams = parsed.data;
    const frames: number[] = [];
    const messages: ChatMessage[] = [];
    for (const message of params.messages) {
      if (typeof message.content === "string") {
        messages.push({ role: message.role, content: message.content });
        continue;
      }
      const parts: ContentPart[] = [];
      for (const part of message.content) {
        if (part.type === "text") parts.push(part);
        else if (part.type === "image") parts.push({ type: "image", data: Buffer.from(part.data, "base64"), mediaType: part.mediaType });
        else {
          if (!episode) throw new RpcError(-32602, "a frame part, and the question has no episode");
          if (part.index >= episode.frameCount) throw new RpcError(-32602, `frame ${part.index} is outside the episode (frames 0-${episode.frameCount - 1})`);
          const [image] = await episode.images([part.index], this.options.image);
          parts.push(imagePart(image!));
          frames.push(part.index);
          if (!trace.images.some((i) => i.index === image!.index)) trace.images.push({ index: image!.index, sha256: image!.sha256, width: image!.width, height: image!.height, bytes: image!.data.byteLength });
        }
      }
      messages.push({ role: message.role, content: parts });
    }
    const { messages: _, purpose, ...generation } = params;
    const response = await tracedCall(trace, model, purpose ?? "answer", `agent:${trace.agent}`, { messages, ...generation }, frames.length > 0 ? frames : undefined);
    if (frames.length > 0) trace.frames.push(...frames);
    return { text: response.text, finishReason: response.finishReason, cached: response.usage.cached, usage: { promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens } };
  }

  /** Every frame of the episode with its file, pose and intrinsics where known (read once per episode). */
  private frameList(episode: Episode): Promise<NonNullable<AnswerParams["episode"]>["frames"]> {
    let list = this.frameLists.get(episode);
    if (!list) {
      list = (async () => {
        const frames: NonNullable<AnswerParams["episode"]>["frames"] = [];
        for (let index = 0; index < episode.frameCount; index++) {
          const frame = await episode.frame(index);
          frames.push({
            index,
            ...(frame.rgbPath !== undefined ? { path: resolve(frame.rgbPath) } : {}),
            ...(frame.timestamp !== undefined ? { timestamp: frame.timestamp } : {}),
            ...(frame.pose !== undefined ? { pose: frame.pose === null ? null : Array.from(frame.pose) } : {}),
            ...(frame.camera ? { camera: { ...frame.camera } } : {}),
          });
        }
        return frames;
      })();
      this.frameLists.set(episode, list);
    }
    return list;
  }

  /** Shuts every session down (each gets `shutdown`, then is killed if it does not exit). */
  async close(): Promise<void> {
    const sessions = [...this.live];
    this.idle.length = 0;
    this.live.clear();
    await Promise.all(sessions.map((s) => s.shutdown(Math.min(this.timeoutMs, 5000))));
  }
}

function moduleHash(path: string): string | null {
  try {
    return sha256Hex(readFileSync(path));
  } catch {
    return null;
  }
}
