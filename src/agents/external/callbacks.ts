/**
 * What eqakit answers when an agent calls back while it works on a request: `model/complete`
 * through the run's model runtime (cache, retries, usage, recorded in the trace) and `log`
 * (kept in the trace).
 */
import type { Episode, ImageOptions } from "../../episodes/index.js";
import { ModelCallError, type ChatMessage, type ChatModel, type ContentPart } from "../../models/index.js";
import { imagePart, recordFailedCall, tracedCall } from "../calls.js";
import type { AgentTrace } from "../types.js";
import { completeParams, describeIssues, logParams, type CompleteParams, type CompleteResult } from "./protocol.js";
import { RpcError } from "./rpc.js";

/** The frames a `frame` part of model/complete may name: the question's episode, or what an active episode has observed so far. */
export type CallbackFrames = Pick<Episode, "frameCount" | "images">;

/** Keeps a `log` call's line in `log` (an unreadable one as a warning saying why). */
export function keepLogLine(params: unknown, log: NonNullable<AgentTrace["log"]>): void {
  const parsed = logParams.safeParse(params);
  if (parsed.success) log.push({ level: parsed.data.level ?? "info", message: parsed.data.message });
  else log.push({ level: "warning", message: `an unreadable log call: ${describeIssues(parsed.error)}` });
}

/** Answers a `model/complete` call with the run's model, recording the call (and the frames it sent) in `trace`. */
export async function completeCallback(raw: unknown, trace: AgentTrace, model: ChatModel | undefined, frames: CallbackFrames | undefined, image: ImageOptions | undefined): Promise<CompleteResult> {
  const parsed = completeParams.safeParse(raw);
  if (!parsed.success) throw new RpcError(-32602, `invalid params: ${describeIssues(parsed.error)}`);
  if (!model) throw new RpcError(-32001, "no model: the run was started without --model");
  const params: CompleteParams = parsed.data;
  const sent: number[] = [];
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
        if (!frames || frames.frameCount === 0) throw new RpcError(-32602, "a frame part, and the request has no frames");
        if (part.index >= frames.frameCount) throw new RpcError(-32602, `frame ${part.index} is outside the episode (frames 0-${frames.frameCount - 1})`);
        const [prepared] = await frames.images([part.index], image);
        parts.push(imagePart(prepared!));
        sent.push(part.index);
        if (!trace.images.some((i) => i.index === prepared!.index)) trace.images.push({ index: prepared!.index, sha256: prepared!.sha256, width: prepared!.width, height: prepared!.height, bytes: prepared!.data.byteLength });
      }
    }
    messages.push({ role: message.role, content: parts });
  }
  const { messages: _, purpose, ...generation } = params;
  const request = { messages, ...generation };
  const frameList = sent.length > 0 ? sent : undefined;
  const callsBefore = trace.calls.length;
  let response;
  try {
    response = await tracedCall(trace, model, purpose ?? "answer", `agent:${trace.agent}`, request, frameList);
  } catch (error) {
    // the agent is told and may answer without it: the failed call stays in its trace
    if (error instanceof ModelCallError) recordFailedCall(trace, callsBefore, model, purpose ?? "answer", `agent:${trace.agent}`, request, frameList, error);
    throw error;
  }
  if (sent.length > 0) trace.frames.push(...sent);
  return { text: response.text, finishReason: response.finishReason, cached: response.usage.cached, usage: { promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens } };
}
