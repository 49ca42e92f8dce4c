import { loadPromptFile, sha256Hex } from "../core/index.js";
import { sampleFrameIndices, type Episode, type EpisodeFrameImage, type ImageOptions, type SamplingSpec } from "../episodes/index.js";
import { addUsage, emptyUsage, imageSha256, knownImageSha256, ModelCallError, type CallUsage, type ChatModel, type ChatRequest, type ChatResponse, type ContentPart } from "../models/index.js";
import type { AgentTrace, TracedCall, TracedImage, TracedMessage, TracedTokens } from "./types.js";

/** A fresh trace for one question. */
export function newTrace(agent: string): AgentTrace {
  return { agent, frames: [], images: [], calls: [], agentAnswer: null, usage: emptyUsage(), notes: [] };
}

/** Calls a model and records the call in the trace. */
export async function tracedCall(
  trace: AgentTrace,
  model: ChatModel,
  role: string,
  prompt: string,
  request: ChatRequest,
  frames?: number[],
): Promise<ChatResponse> {
  const traced = (reply: string | null, usage: CallUsage): TracedCall => ({
    role,
    model: model.name,
    prompt,
    promptSha256: sha256Hex(requestText(request)),
    ...(frames ? { frames } : {}),
    reply,
    cached: usage.cached,
    usage: { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, thinkingTokens: usage.thinkingTokens },
    latencyMs: Math.round(usage.latencyMs),
    messages: tracedMessages(request, frames),
  });
  let response: ChatResponse;
  try {
    response = await model.complete(request);
  } catch (error) {
    // a reply that was not an answer (cut, filtered, refused) was paid for: its call stays in the trace
    const failed = error instanceof ModelCallError ? error.reply : undefined;
    if (failed?.usage) {
      addUsage(trace.usage, failed.usage);
      trace.calls.push(traced(failed.text, failed.usage));
    }
    if (typeof error === "object" && error !== null) tracesOfFailures.set(error, trace);
    throw error;
  }
  addUsage(trace.usage, response.usage);
  trace.calls.push(traced(response.text, response.usage));
  return response;
}

/** The trace of the question a failed call belonged to, by the error it threw. */
const tracesOfFailures = new WeakMap<object, AgentTrace>();

/** Keeps `trace` as what was done before `error` failed its question (an external agent's calls, log lines and stderr). */
export function keepTraceOfFailure(error: object, trace: AgentTrace): void {
  tracesOfFailures.set(error, trace);
}

/**
 * A call that failed, as a trace keeps it: the one `tracedCall` recorded for a paid reply that
 * was not an answer (now with its error), else a new one without reply or tokens.
 */
export function recordFailedCall(trace: AgentTrace, callsBefore: number, model: ChatModel, role: string, prompt: string, request: ChatRequest, frames: number[] | undefined, error: ModelCallError): void {
  if (trace.calls.length > callsBefore) {
    trace.calls[trace.calls.length - 1]!.error = error.message;
    return;
  }
  trace.calls.push({
    role,
    model: model.name,
    prompt,
    promptSha256: sha256Hex(requestText(request)),
    ...(frames ? { frames } : {}),
    reply: null,
    cached: false,
    usage: { promptTokens: 0, completionTokens: 0, thinkingTokens: 0 },
    messages: tracedMessages(request, frames),
    error: error.message,
  });
}

/**
 * What an agent did before the call that failed its question (the calls made, the failed reply's
 * tokens): a failed record keeps it, so that a run's cost counts what failed answers spent.
 */
export function traceOfFailure(error: unknown): AgentTrace | null {
  return typeof error === "object" && error !== null ? (tracesOfFailures.get(error) ?? null) : null;
}

/** A request's messages as a trace keeps them: texts whole, images by hash, numbered by `frames` when there is one index per image. */
function tracedMessages(request: ChatRequest, frames: number[] | undefined): TracedMessage[] {
  const images = request.messages.reduce((n, m) => n + (typeof m.content === "string" ? 0 : m.content.filter((p) => p.type === "image").length), 0);
  let next = 0;
  return request.messages.map((m): TracedMessage => {
    const content: TracedMessage["content"] =
      typeof m.content === "string"
        ? m.content
        : m.content.map((p) => {
            if (p.type === "text") return { type: "text", text: p.text };
            const frame = frames?.length === images ? frames[next] : undefined;
            next++;
            return { type: "image", sha256: imageSha256(p.data), mediaType: p.mediaType, bytes: p.data.byteLength, ...(frame !== undefined ? { frame } : {}) };
          });
    return {
      role: m.role,
      content,
      ...(m.toolCalls ? { toolCalls: m.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments })) } : {}),
      ...(m.toolName ? { toolName: m.toolName } : {}),
    };
  });
}

/** The token counts of a reply, as traces keep them. */
export function tracedTokens(response: ChatResponse): TracedTokens {
  return { promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens, thinkingTokens: response.usage.thinkingTokens };
}

function requestText(request: ChatRequest): string {
  return request.messages
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : `<image ${imageSha256(p.data)}>`)).join("")))
    .join("\n");
}

/** A prepared frame as a request's image (its known sha256 kept beside its bytes, not computed again). */
export function imagePart(image: EpisodeFrameImage): ContentPart {
  knownImageSha256(image.data, image.sha256);
  return { type: "image", data: image.data, mediaType: image.mediaType };
}

/** Samples an episode's frames, prepares them for a model, and records them in the trace. */
export async function sampledImages(episode: Episode, sampling: SamplingSpec, image: ImageOptions | undefined, trace: AgentTrace): Promise<EpisodeFrameImage[]> {
  const images = await episode.images(sampleFrameIndices(episode.frameCount, sampling, episode.timestamps), image);
  trace.frames = images.map((i) => i.index);
  trace.images = images.map((i): TracedImage => ({ index: i.index, sha256: i.sha256, width: i.width, height: i.height, bytes: i.data.byteLength }));
  return images;
}

/** The sha256 of each prompt file an agent uses, for its configuration and the summary. */
export function promptHashes(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, loadPromptFile(name).sha256]));
}

/**
 * OpenEQA's parse of an answer: the text after "A:" up to the end of its line; without an
 * "A:", the whole reply (as the reference's Claude and Gemini baselines do; its GPT-4 one raises).
 */
export function parseAnswerLine(reply: string | null): string | null {
  if (reply === null) return null;
  const start = reply.indexOf("A:");
  if (start === -1) return reply.trim();
  const end = reply.indexOf("\n", start);
  return (end === -1 ? reply.slice(start) : reply.slice(start, end)).split("A:").join("").trim();
}
