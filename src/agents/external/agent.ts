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
import { UserError, eqakitVersion, isUserError, sha256Hex, type Question } from "../../core/index.js";
import type { Episode, ImageOptions } from "../../episodes/index.js";
import { ModelCallError, type ChatModel } from "../../models/index.js";
import { parseCommandLine } from "../../sim/index.js";
import { keepTraceOfFailure, newTrace } from "../calls.js";
import type { Agent, AgentAnswer, AgentTrace } from "../types.js";
import type { MemorySource } from "../memory-source.js";
import { completeCallback, keepLogLine } from "./callbacks.js";
import { NO_MEMORY, queryMemory } from "./memory.js";
import { ExternalAgentError, SessionPool, describeExternalAgent, type ExternalAgentSpec } from "./pool.js";
import { AGENT_PROTOCOL_VERSION, answerResult, describeIssues, type AnswerParams, type InitializeParams, type InitializeResult } from "./protocol.js";
import { RpcError, RpcFailure } from "./rpc.js";
import type { CallContext } from "./session.js";

export { ExternalAgentError, describeExternalAgent, type ExternalAgentSpec } from "./pool.js";

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

export interface ExternalAgentOptions {
  /** The run's model (--model), lent to the agent through model/complete; absent: such calls are refused. */
  model?: ChatModel;
  /** Milliseconds eqakit waits for each reply of the agent (--agent-timeout, default 120 000). */
  timeoutMs?: number;
  /** Whether questions come with their episode (the run has --frames). */
  episodes?: boolean;
  /** How frames asked for in model/complete are prepared (--image-size, --image-format). */
  image?: ImageOptions;
  /** The memory folder of --memory DIR, which answers memory/query (absent: the call is refused, saying why). */
  memory?: MemorySource;
  /** The task kind the agent is initialized for: em-eqa (default), or tag for TAG-EQA questions (answer with `tag`). */
  task?: "em-eqa" | "tag";
}

/** An agent of the user's own, a process (`exec:`) or a module, run as an EM-EQA `Agent`; `close()` shuts its processes down. */
export class ExternalAgent implements Agent {
  readonly name = "external";
  readonly needsEpisode: boolean;
  readonly configuration: Record<string, unknown>;
  private readonly pool: SessionPool;
  private readonly timeoutMs: number;
  private readonly frameLists = new WeakMap<Episode, Promise<NonNullable<AnswerParams["episode"]>["frames"]>>();

  constructor(
    readonly spec: ExternalAgentSpec,
    private readonly options: ExternalAgentOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.needsEpisode = options.episodes ?? false;
    this.configuration = externalConfiguration(spec, options.model, options.image, options.memory);
    this.pool = new SessionPool(spec, options.task ?? "em-eqa", this.timeoutMs, { model: options.model?.name ?? null, eqakitVersion });
  }

  /** The agent's own name and version, once a session has been initialized. */
  get agentIdentity(): InitializeResult | undefined {
    return this.pool.identity;
  }

  /** What `initialize` sends each of its processes (`eqa agent check` sends the same). */
  initializeParams(): InitializeParams {
    return this.pool.initializeParams();
  }

  /** `extra.tag`: for a TAG-EQA question, the grounding frame and the action history (`tagAnswerContext` in src/generate). */
  async answer(question: Question, episode: Episode | undefined, extra: { tag?: AnswerParams["tag"] } = {}): Promise<AgentAnswer> {
    // the episode is read before a session is taken: an unreadable one fails the question, not the process
    const params: AnswerParams = {
      question: { id: question.questionId, text: question.question, ...(question.category ? { category: question.category } : {}) },
      episode: episode ? { id: episode.id, path: episode.path, kind: episode.kind, frameCount: episode.frameCount, frames: await this.frameList(episode) } : null,
      ...(extra.tag ? { tag: extra.tag } : {}),
      budget: { timeoutMs: this.timeoutMs },
    };
    const where = `on question ${question.questionId}`;
    const session = await this.pool.take();
    const identity = this.pool.identity;
    const trace: AgentTrace = newTrace(identity?.name ?? this.name);
    const log: NonNullable<AgentTrace["log"]> = [];
    let modelError: ModelCallError | undefined;
    const context: CallContext = {
      request: async (method, params) => {
        if (method === "log") {
          keepLogLine(params, log);
          return null;
        }
        if (method === "memory/query") return this.queryMemory(params, question, episode, trace);
        if (method !== "model/complete") throw new RpcError(-32601, `unknown method ${method}`);
        try {
          return await completeCallback(params, trace, this.options.model, episode, this.options.image);
        } catch (error) {
          if (error instanceof ModelCallError) {
            modelError ??= error;
            throw new RpcError(-32002, `the model call failed: ${error.message}`);
          }
          throw error;
        }
      },
      notify: (method, params) => {
        if (method === "log") keepLogLine(params, log);
      },
    };
    if (identity) trace.notes.push(`${identity.name} version ${identity.version}`);
    // the agent's log lines and stderr stay in the trace, whether it answers or fails
    const keepOutput = (): void => {
      if (log.length > 0) trace.log = log;
      const stderr = session.takeStderr();
      if (stderr !== "") trace.stderr = stderr;
    };
    let raw: unknown;
    try {
      raw = await session.call("answer", params, this.timeoutMs, context);
    } catch (error) {
      keepOutput();
      this.pool.discard(session);
      throw this.failedAnswer(error, where, modelError, trace);
    }
    keepOutput();
    const parsed = answerResult.safeParse(raw);
    if (!parsed.success) {
      this.pool.discard(session);
      throw this.failedAnswer(new RpcFailure("malformed", `the answer does not match the protocol: ${describeIssues(parsed.error)}`), where, modelError, trace);
    }
    this.pool.give(session);
    // a model the run cannot use stops the run; any other failed call was the agent's to handle, and its answer stands
    if (modelError?.fatalForRun) throw this.failedAnswer(modelError, where, modelError, trace);
    if (modelError) trace.notes.push(`a model/complete call failed (${modelError.message}); the agent answered without it`);
    trace.agentAnswer = parsed.data.answer;
    if (parsed.data.confidence !== undefined) trace.notes.push(`confidence ${parsed.data.confidence}`);
    return { answer: parsed.data.answer, trace, ...(parsed.data.confidence !== undefined ? { confidence: parsed.data.confidence } : {}) };
  }

  /**
   * The error that fails a question the agent did not answer, its trace kept with it: the
   * agent's failure, naming it, with the model call that failed before (when one did); a model
   * the run cannot use (no credits, a wrong key) is the model's error, which stops the run.
   */
  private failedAnswer(error: unknown, where: string, modelError: ModelCallError | undefined, trace: AgentTrace): Error {
    const failure = modelError?.fatalForRun ? modelError : this.pool.failure(error, where, modelError);
    keepTraceOfFailure(failure, trace);
    return failure;
  }

  private async queryMemory(params: unknown, question: Question, episode: Episode | undefined, trace: AgentTrace): Promise<unknown> {
    const memory = this.options.memory;
    if (!memory) throw new RpcError(-32003, NO_MEMORY);
    // the memory's own notes go to the trace; its frames are not frames the agent was shown
    const scratch = newTrace(trace.agent);
    let graph;
    try {
      graph = await memory.graph(question.episodeHistory, episode, scratch);
    } catch (error) {
      if (isUserError(error)) throw new RpcError(-32003, `no memory for episode ${question.episodeHistory}: ${error.message}`);
      throw error;
    }
    for (const note of scratch.notes) if (!trace.notes.includes(note)) trace.notes.push(note);
    return queryMemory(graph, params);
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
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** What a run records of an external agent, so that a resumed run reuses only what the same agent made. */
export function externalConfiguration(spec: ExternalAgentSpec, model: ChatModel | undefined, image: ImageOptions | undefined, memory?: MemorySource): Record<string, unknown> {
  return {
    agent: "external",
    external: describeExternalAgent(spec),
    ...(spec.kind === "module" ? { moduleSha256: moduleHash(spec.path) } : {}),
    model: model?.name ?? "none",
    protocolVersion: AGENT_PROTOCOL_VERSION,
    ...(image ? { image } : {}),
    ...(memory ? { memory: memory.configuration } : {}),
  };
}

function moduleHash(path: string): string | null {
  try {
    return sha256Hex(readFileSync(path));
  } catch {
    return null;
  }
}
