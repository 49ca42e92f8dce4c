/**
 * `eqa agent check`: a conformance suite for an agent of the user's own, run before a long
 * benchmark run. EM-EQA: it starts the agent, checks the handshake, asks a question without an
 * episode and one with a small synthetic episode (four solid-colour frames, with poses and
 * intrinsics), answering its model calls with a stand-in model that calls nothing. TAG: one
 * question about the same episode with its grounding frame and an action history. Then (for a
 * process) it sends a line that is not JSON, an unknown method and a request with invalid
 * params, each of which a conforming agent refuses with an error reply and survives, and ends
 * with shutdown, after which the process must exit. Every process is sent `initialize` once,
 * with the settings a run sends. Every check reports what it saw.
 */
import sharp from "sharp";
import { sha256Hex, type Question } from "../../core/index.js";
import type { Episode, EpisodeFrameImage } from "../../episodes/index.js";
import { resolveModel, type ChatModel, type ChatRequest, type ChatResponse } from "../../models/index.js";
import type { AgentTrace } from "../types.js";
import { ExternalActiveAgent } from "./active.js";
import { ExternalAgent, type ExternalAgentSpec } from "./agent.js";
import { AGENT_PROTOCOL_VERSION, describeIssues, initializeResult, type AnswerParams, type InitializeParams, type InitializeResult } from "./protocol.js";
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
  // an OpenAI-protocol model on a closed local port: nothing is ever sent to it
  const spec = { ...resolveModel("openai/check", { baseURL: "http://127.0.0.1:9/v1", env: {} }), name: "eqakit/check", provider: "eqakit" };
  return {
    name: spec.name,
    spec,
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

/** Runs the EM-EQA suite against the agent of `spec`: answers without and with an episode, then (for a process) robustness. */
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
  if (spec.kind === "exec") checks.push(...(await robustness(spec.command, spec.args, timeoutMs, agent.initializeParams())));
  return checks;
}

const TAG_QUESTION: Question = { questionId: "eqakit-check-tag-1", question: "How many times did you pick up the mug?", answer: "2", category: "spatial understanding", episodeHistory: "eqakit-check" };

/**
 * The check episode's TAG-EQA context: the first camera is the grounding frame's origin (each
 * frame one metre further along −z), and the history picks up a mug, puts it on the table and
 * picks it up again: "How many times did you pick up the mug?" is answered 2.
 */
function checkTagContext(): NonNullable<AnswerParams["tag"]> {
  const translation = (y: number, z: number): number[] => [1, 0, 0, 0, 0, 1, 0, y, 0, 0, 1, z, 0, 0, 0, 1];
  const mug = (position: [number, number, number]) => ({ type: "mug", position });
  const table = { type: "table", position: [0, -0.75, -2] as [number, number, number], relation: "on" as const };
  return {
    toGrounding: translation(-1.5, 0),
    poses: FRAME_COLOURS.map((_, index) => translation(0, -index)),
    actions: [
      { step: 1, frame: 1, action: "pickup", object: mug([0.2, -0.7, -1.5]), index: 1, from: table },
      { step: 2, frame: 2, action: "put", object: mug([0, -0.7, -2]), index: 1, target: table },
      { step: 3, frame: 3, action: "pickup", object: mug([0, -0.7, -2]), index: 2, from: table },
    ],
  };
}

/** How a TAG-EQA reply will be scored: a structured answer (a JSON array of groups) as it is, text through the judge's extraction. */
function tagAnswerKind(answer: string | null): string {
  if (answer === null) return "no answer";
  try {
    const parsed: unknown = JSON.parse(answer);
    if (Array.isArray(parsed)) return `a structured answer of ${parsed.length} group(s), scored as it is`;
  } catch {
    /* text */
  }
  return "text, read by the judge's extraction";
}

/** Runs the TAG suite against the agent of `spec`: a question with frames and `tag` (grounding frame, action history), then (for a process) robustness. Every check's name starts with "tag:". */
export async function checkTagAgent(spec: ExternalAgentSpec, options: AgentCheckOptions = {}): Promise<AgentCheck[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const checks: AgentCheck[] = [];
  const agent = new ExternalAgent(spec, { model: checkModel(), timeoutMs, episodes: true, task: "tag" });
  const name = "tag: answer with frames and the action history (4 frames, 3 actions)";
  try {
    const started = performance.now();
    try {
      const result = await agent.answer(TAG_QUESTION, checkEpisode(), { tag: checkTagContext() });
      checks.push({ ...handshake(agent), name: "tag: initialize" });
      checks.push({ name, passed: true, detail: `${answerDetail(result.answer, result.trace, performance.now() - started)}; ${tagAnswerKind(result.answer)}` });
    } catch (error) {
      checks.push({ ...handshake(agent, error), name: "tag: initialize" });
      checks.push({ name, passed: false, detail: describeFailure(error) });
    }
  } finally {
    await agent.close();
  }
  if (spec.kind === "exec") checks.push(...(await robustness(spec.command, spec.args, timeoutMs, agent.initializeParams())).map((c) => ({ ...c, name: `tag: ${c.name}` })));
  return checks;
}

/**
 * Who the agent is (what it supports), or why it could not say: a fresh process is sent
 * `initialize` once, as an em-eqa run sends it (the check's model, the timeout, eqakit's
 * version), then shut down. An agent that refuses that task with an error reply is asked again,
 * in a fresh process, as a tag run and then as an active run would ask it.
 */
export async function probeAgent(spec: ExternalAgentSpec, options: AgentCheckOptions = {}): Promise<InitializeResult | string> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const asked = [
    new ExternalAgent(spec, { model: checkModel(), timeoutMs, episodes: true }).initializeParams(),
    new ExternalAgent(spec, { model: checkModel(), timeoutMs, episodes: true, task: "tag" }).initializeParams(),
    new ExternalActiveAgent(spec, { model: checkModel(), timeoutMs }).initializeParams(),
  ];
  let refusal = "";
  for (const params of asked) {
    const identity = await probeOnce(spec, params, timeoutMs);
    if (!(identity instanceof RpcFailure)) return identity;
    if (identity.kind !== "remote") return identity.message;
    refusal ||= identity.message;
  }
  return refusal;
}

async function probeOnce(spec: ExternalAgentSpec, params: InitializeParams, timeoutMs: number): Promise<InitializeResult | string | RpcFailure> {
  let session: AgentSession;
  if (spec.kind === "exec") session = new ProcessSession(spec.command, spec.args);
  else {
    const loaded = await loadModuleAgent(spec.path);
    if (typeof loaded === "string") return loaded;
    session = new ModuleSession(loaded);
  }
  try {
    const raw = await session.call("initialize", params, timeoutMs, { request: () => Promise.resolve(null), notify: () => {} });
    const parsed = initializeResult.safeParse(raw);
    return parsed.success ? parsed.data : `initialize: the reply does not match the protocol: ${describeIssues(parsed.error)}`;
  } catch (error) {
    return error instanceof RpcFailure ? error : describeFailure(error);
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

/** One input of the robustness checks and what came back: a reply (its result or error), or the failure that ended the connection. */
interface Sent {
  name: string;
  /** What was sent, for messages: "a line that is not JSON", "eqakit/no-such-method with {}". */
  what: string;
  /** Whether the agent replied to it (an error reply counts). */
  replied: boolean;
  /** The check when the agent turns out to have survived it. */
  passed: () => AgentCheck;
}

/**
 * Malformed input, an unknown method, invalid params (to `answer` for em-eqa and tag, `step` for
 * active) and shutdown, on a fresh process sent `initialize` once, as a run sends it. There is
 * no liveness probe: the reply to each request shows that the agent survived the input before
 * it, and shutdown's reply that it survived the last.
 */
export async function robustness(command: string, args: readonly string[], timeoutMs: number, initialize: InitializeParams): Promise<AgentCheck[]> {
  const session = new ProcessSession(command, args);
  const noCallbacks = { request: () => Promise.resolve(null), notify: () => {} };
  const names = ["malformed input", "unknown method", "invalid params", "shutdown"];
  const checks: AgentCheck[] = [];
  // after the agent stopped, the checks left were not made
  const notChecked = (dead: string): AgentCheck[] => names.slice(checks.length).map((name) => ({ name, passed: false, detail: `not checked: the agent had stopped (${dead.split("\n")[0]})` }));
  try {
    const first = await session.call("initialize", initialize, timeoutMs, noCallbacks).catch((error: unknown) => error);
    if (first instanceof Error || !initializeResult.safeParse(first).success) {
      return [{ name: "malformed input", passed: false, detail: `the agent did not start: ${describeFailure(first)}` }];
    }

    let parseError: { code: number; message: string } | undefined;
    session.rpc.onStrayError = (error) => (parseError ??= error);
    session.rpc.sendLine("this line is not JSON");
    let previous: Sent = {
      name: "malformed input",
      what: "a line that is not JSON",
      get replied() {
        return parseError !== undefined;
      },
      passed: () => ({
        name: "malformed input",
        passed: true,
        detail: parseError ? `refused with error ${parseError.code} (${parseError.message}) and kept working` : "ignored it and kept working (a JSON-RPC parse error reply, code -32700, is expected)",
      }),
    };

    const requests: { name: string; method: string; params: unknown }[] = [
      { name: "unknown method", method: "eqakit/no-such-method", params: {} },
      { name: "invalid params", method: initialize.task === "active" || initialize.task === "mixed" ? "step" : "answer", params: initialize.task === "active" || initialize.task === "mixed" ? { observation: 42 } : { question: 42 } },
      { name: "shutdown", method: "shutdown", params: {} },
    ];
    for (const r of requests) {
      const started = performance.now();
      const outcome = await session.call(r.method, r.params, timeoutMs, noCallbacks).then(
        (result) => ({ replied: true as const, result }),
        (error: unknown) => ({ replied: error instanceof RpcFailure && error.kind === "remote", error }),
      );
      if (!outcome.replied) {
        const failure = describeFailure("error" in outcome ? outcome.error : undefined);
        // a process that exited before replying is blamed on the input before, unless that one was answered
        if ("error" in outcome && outcome.error instanceof RpcFailure && outcome.error.kind === "exited" && !previous.replied) {
          checks.push({ name: previous.name, passed: false, detail: `after ${previous.what}: ${failure}` });
        } else {
          checks.push(previous.passed());
          checks.push({ name: r.name, passed: false, detail: failure });
        }
        checks.push(...notChecked(failure));
        return checks;
      }
      checks.push(previous.passed());
      if (r.method === "shutdown") {
        checks.push("result" in outcome ? await shutdownCheck(session, outcome.result, started) : { name: "shutdown", passed: false, detail: describeFailure(outcome.error) });
        return checks;
      }
      previous = refused(r.name, r.method, r.params, outcome);
    }
    return checks;
  } finally {
    session.kill();
  }
}

/** A refusal check from the reply to a request that should have been refused. */
function refused(name: string, method: string, params: unknown, outcome: { result: unknown } | { error: unknown }): Sent {
  const what = `${method} with ${JSON.stringify(params)}`;
  if ("result" in outcome) return { name, what, replied: true, passed: () => ({ name, passed: false, detail: `${what} was answered ${JSON.stringify(outcome.result)}; an error reply is expected` }) };
  const message = describeFailure(outcome.error).replace(/^.*failed in the agent: /, "");
  return { name, what, replied: true, passed: () => ({ name, passed: true, detail: `refused (${message}) and kept working` }) };
}

/** Shutdown replied `result`: it must be null, and the process must exit within 5 s. */
async function shutdownCheck(session: ProcessSession, result: unknown, started: number): Promise<AgentCheck> {
  const exited = await Promise.race([session.closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 5000))]);
  if (!exited) return { name: "shutdown", passed: false, detail: "replied but did not exit within 5 s (it was killed)" };
  return result === null
    ? { name: "shutdown", passed: true, detail: `replied null and exited in ${Math.round(performance.now() - started)} ms` }
    : { name: "shutdown", passed: false, detail: `replied ${JSON.stringify(result)} (null expected)` };
}
