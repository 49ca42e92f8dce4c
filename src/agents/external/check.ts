/**
 * `eqa agent check`: a conformance suite for an agent of the user's own, run before a long
 * benchmark run. It starts the agent, checks the handshake, asks a question without an episode
 * and one with a small synthetic episode (four solid-colour frames, with poses and
 * intrinsics), answering its model calls with a stand-in model that calls nothing, then (for a
 * process) sends a line that is not JSON, an unknown method and an answer with invalid params,
 * each of which a conforming agent refuses with an error reply and survives, and ends with
 * shutdown, after which the process must exit. Every check reports what it saw.
 */
import sharp from "sharp";
import { sha256Hex, type Question } from "../../core/index.js";
import type { Episode, EpisodeFrameImage } from "../../episodes/index.js";
import type { ChatModel, ChatRequest, ChatResponse } from "../../models/index.js";
import type { AgentTrace } from "../types.js";
import { ExternalAgent, type ExternalAgentSpec } from "./agent.js";
import { AGENT_PROTOCOL_VERSION, describeIssues, initializeResult, type AgentTaskKind, type InitializeResult } from "./protocol.js";
import { RpcFailure } from "./rpc.js";
import { ModuleSession, ProcessSession, loadModuleAgent, type AgentSession } from "./session.js";

export interface AgentCheck {
  name: string;
  passed: boolean;
  /** What was seen: the reply, or why the check failed. */
  detail: string;
}

export interface AgentCheckOptions {
  /** Milliseconds to wait for each reply (default 30 000). */
  timeoutMs?: number;
}

/** The stand-in model's reply to every call the agent makes during the check. */
export const CHECK_MODEL_REPLY = "A: a sofa";

/** A model that answers every call with CHECK_MODEL_REPLY, without calling anything. */
export function checkModel(): ChatModel {
  return {
    name: "eqakit/check",
    complete: (request: ChatRequest): Promise<ChatResponse> => {
      const images = request.messages.reduce((n, m) => n + (typeof m.content === "string" ? 0 : m.content.filter((p) => p.type === "image").length), 0);
      return Promise.resolve({
        text: CHECK_MODEL_REPLY,
        texts: [CHECK_MODEL_REPLY],
        finishReason: "stop",
        usage: { promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images, latencyMs: 0, retries: 0, cached: false },
      });
    },
  };
}

const FRAME_COLOURS = [
  { r: 200, g: 40, b: 40 },
  { r: 40, g: 200, b: 40 },
  { r: 40, g: 40, b: 200 },
  { r: 200, g: 200, b: 40 },
];

/** Four 64×48 solid-colour frames, one metre apart along −z, with a pinhole camera. */
function checkEpisode(): Episode {
  const camera = { width: 64, height: 48, fx: 50, fy: 50, cx: 32, cy: 24 };
  const image = async (index: number): Promise<EpisodeFrameImage> => {
    const data = await sharp({ create: { width: 64, height: 48, channels: 3, background: FRAME_COLOURS[index]! } }).png().toBuffer();
    return { index, data, mediaType: "image/png", width: 64, height: 48, sha256: sha256Hex(data) };
  };
  return {
    id: "eqakit-check",
    path: "eqakit-check",
    kind: "images",
    frameCount: FRAME_COLOURS.length,
    notes: [],
    images: (indices) => Promise.all(indices.map(image)),
    frame: (index) => Promise.resolve({ index, camera, pose: Float64Array.from([1, 0, 0, 0, 0, 1, 0, 1.5, 0, 0, 1, -index, 0, 0, 0, 1]) }),
  };
}

const QUESTION: Question = { questionId: "eqakit-check-1", question: "What is in the middle of the living room?", answer: "a sofa", category: "object recognition", episodeHistory: "eqakit-check" };

export function describeFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function answerDetail(answer: string | null, trace: AgentTrace, ms: number): string {
  const calls = trace.calls.length;
  const frames = trace.frames.length > 0 ? `, frames ${trace.frames.join(", ")}` : "";
  return `answered ${JSON.stringify(answer)} in ${Math.round(ms)} ms, ${calls} model call(s)${frames}${trace.log ? `, ${trace.log.length} log line(s)` : ""}`;
}

/** Runs the conformance suite against the agent of `spec`. */
export async function checkAgent(spec: ExternalAgentSpec, options: AgentCheckOptions = {}): Promise<AgentCheck[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const checks: AgentCheck[] = [];
  const agent = new ExternalAgent(spec, { model: checkModel(), timeoutMs, episodes: true });
  try {
    for (const [name, episode] of [
      ["answer without an episode", undefined],
      ["answer with an episode (4 frames)", checkEpisode()],
    ] as const) {
      const started = performance.now();
      try {
        const result = await agent.answer({ ...QUESTION, episodeHistory: episode ? QUESTION.episodeHistory : "" }, episode);
        if (checks.length === 0) checks.push(handshake(agent));
        checks.push({ name, passed: true, detail: answerDetail(result.answer, result.trace, performance.now() - started) });
      } catch (error) {
        if (checks.length === 0) checks.push(handshake(agent, error));
        checks.push({ name, passed: false, detail: describeFailure(error) });
      }
    }
  } finally {
    await agent.close();
  }
  if (spec.kind === "exec") checks.push(...(await robustness(spec.command, spec.args, timeoutMs)));
  return checks;
}

/** Starts the agent, asks `initialize` and shuts it down: its identity (what it supports), or why it failed. */
export async function probeAgent(spec: ExternalAgentSpec, options: AgentCheckOptions = {}): Promise<InitializeResult | string> {
  let session: AgentSession;
  if (spec.kind === "exec") session = new ProcessSession(spec.command, spec.args);
  else {
    const loaded = await loadModuleAgent(spec.path);
    if (typeof loaded === "string") return loaded;
    session = new ModuleSession(loaded);
  }
  try {
    const raw = await session.call("initialize", { protocolVersion: AGENT_PROTOCOL_VERSION, task: "em-eqa", settings: {} }, options.timeoutMs ?? 30_000, { request: () => Promise.resolve(null), notify: () => {} });
    const parsed = initializeResult.safeParse(raw);
    return parsed.success ? parsed.data : `initialize: the reply does not match the protocol: ${describeIssues(parsed.error)}`;
  } catch (error) {
    return describeFailure(error);
  } finally {
    await session.shutdown(5000);
  }
}

/** The `initialize` check from what the agent answered (or the error that stopped it). */
export function handshake(agent: { agentIdentity: InitializeResult | undefined }, error?: unknown): AgentCheck {
  const identity = agent.agentIdentity;
  if (identity) return { name: "initialize", passed: true, detail: `${identity.name} ${identity.version} (protocol ${identity.protocolVersion ?? `not given, taken as ${AGENT_PROTOCOL_VERSION}`}; supports ${identity.supports?.join(", ") ?? "em-eqa"})` };
  return { name: "initialize", passed: false, detail: describeFailure(error) };
}

/**
 * Malformed input, an unknown method, invalid params (to `answer` for em-eqa, `step` for active)
 * and shutdown, on a fresh process.
 */
export async function robustness(command: string, args: readonly string[], timeoutMs: number, task: AgentTaskKind = "em-eqa"): Promise<AgentCheck[]> {
  const checks: AgentCheck[] = [];
  const session = new ProcessSession(command, args);
  const noCallbacks = { request: () => Promise.resolve(null), notify: () => {} };
  const alive = async (): Promise<string | undefined> => {
    try {
      await session.call("initialize", { protocolVersion: AGENT_PROTOCOL_VERSION, task, settings: {} }, timeoutMs, noCallbacks);
      return undefined;
    } catch (error) {
      return describeFailure(error);
    }
  };
  try {
    const first = await session.call("initialize", { protocolVersion: AGENT_PROTOCOL_VERSION, task, settings: {} }, timeoutMs, noCallbacks).catch((error: unknown) => error);
    if (first instanceof Error || !initializeResult.safeParse(first).success) {
      return [{ name: "malformed input", passed: false, detail: `the agent did not start: ${describeFailure(first)}` }];
    }

    let parseError: { code: number; message: string } | undefined;
    session.rpc.onStrayError = (error) => (parseError ??= error);
    session.rpc.sendLine("this line is not JSON");
    const dead = await alive();
    checks.push(
      dead
        ? { name: "malformed input", passed: false, detail: `after a line that is not JSON: ${dead}` }
        : { name: "malformed input", passed: true, detail: parseError ? `refused with error ${parseError.code} (${parseError.message}) and kept working` : "ignored it and kept working (a JSON-RPC parse error reply, code -32700, is expected)" },
    );

    checks.push(await refusal(session, "unknown method", "eqakit/no-such-method", {}, timeoutMs, noCallbacks, alive));
    checks.push(task === "active" ? await refusal(session, "invalid params", "step", { observation: 42 }, timeoutMs, noCallbacks, alive) : await refusal(session, "invalid params", "answer", { question: 42 }, timeoutMs, noCallbacks, alive));

    const started = performance.now();
    try {
      const result = await session.call("shutdown", {}, timeoutMs, noCallbacks);
      const exited = await Promise.race([session.closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 5000))]);
      checks.push(
        exited
          ? { name: "shutdown", passed: result === null, detail: result === null ? `replied null and exited in ${Math.round(performance.now() - started)} ms` : `replied ${JSON.stringify(result)} (null expected)` }
          : { name: "shutdown", passed: false, detail: "replied but did not exit within 5 s (it was killed)" },
      );
    } catch (error) {
      checks.push({ name: "shutdown", passed: false, detail: describeFailure(error) });
    }
  } finally {
    session.kill();
  }
  return checks;
}

async function refusal(
  session: ProcessSession,
  name: string,
  method: string,
  params: unknown,
  timeoutMs: number,
  callbacks: Parameters<ProcessSession["call"]>[3],
  alive: () => Promise<string | undefined>,
): Promise<AgentCheck> {
  try {
    const result = await session.call(method, params, timeoutMs, callbacks);
    return { name, passed: false, detail: `${method} with ${JSON.stringify(params)} was answered ${JSON.stringify(result)}; an error reply is expected` };
  } catch (error) {
    if (!(error instanceof RpcFailure) || error.kind !== "remote") return { name, passed: false, detail: describeFailure(error) };
    const dead = await alive();
    if (dead) return { name, passed: false, detail: `refused, then: ${dead}` };
    return { name, passed: true, detail: `refused (${error.message.replace(/^.*failed in the agent: /, "")}) and kept working` };
  }
}
