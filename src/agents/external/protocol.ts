/**
 * The agent protocol (`docs/agent-protocol.md`): the messages eqakit and an agent of the
 * user's own exchange, as JSON-RPC 2.0 over the agent's stdio, one message a line, or as
 * method calls on a JavaScript module in-process. Each message's params and result have one
 * zod schema here: the same schemas validate what an agent sends and generate the JSON
 * Schemas the documentation shows.
 */
import { z } from "zod";

/** The protocol's version: a major change (a field removed or its meaning changed) raises it. */
export const AGENT_PROTOCOL_VERSION = "1";

/** The task kinds of the protocol; this version of eqakit runs `em-eqa` agents. */
export const AGENT_TASK_KINDS = ["em-eqa", "active", "tag"] as const;
export type AgentTaskKind = (typeof AGENT_TASK_KINDS)[number];

/** Lines longer than this (in bytes) end the agent process: no message of the protocol needs more. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const camera = z
  .object({ width: z.number(), height: z.number(), fx: z.number(), fy: z.number(), cx: z.number(), cy: z.number() })
  .describe("pinhole intrinsics in pixels of the image they belong to");

export const initializeParams = z
  .object({
    protocolVersion: z.string().describe(`the protocol version eqakit speaks ("${AGENT_PROTOCOL_VERSION}")`),
    task: z.enum(AGENT_TASK_KINDS).describe("what the agent will be asked: em-eqa is answering from an episode's recorded frames"),
    settings: z.record(z.string(), z.unknown()).describe("the run's settings: the model named with --model (or null), the timeout per call, eqakit's version"),
  })
  .describe("eqakit → agent, once, before any other request");

export const initializeResult = z
  .object({
    name: z.string().min(1).describe("the agent's name, recorded in every answer's trace"),
    version: z.string().describe("the agent's version, recorded in every answer's trace"),
    protocolVersion: z.string().optional().describe("the protocol version the agent was written for; a different major version is refused"),
    supports: z.array(z.string()).optional().describe("the task kinds the agent can do (default: [\"em-eqa\"])"),
  })
  .describe("agent → eqakit: who the agent is");

const frame = z.object({
  index: z.number().int().describe("the frame's number in its episode"),
  path: z.string().optional().describe("the colour image's absolute path (absent for video frames: ask for them as `frame` parts of model/complete)"),
  timestamp: z.number().optional().describe("seconds from the episode's start, when known"),
  pose: z.array(z.number()).length(16).nullable().optional().describe("camera-to-world 4×4, row-major, metres, y up, OpenGL camera axes; null when the episode's pose is invalid, absent when it has none"),
  camera: camera.optional(),
});

export const answerParams = z
  .object({
    question: z.object({
      id: z.string(),
      text: z.string(),
      category: z.string().optional().describe("the benchmark's category, when it has one"),
    }),
    episode: z
      .object({
        id: z.string(),
        path: z.string().describe("the episode's folder or video file"),
        kind: z.string().describe("how the episode is stored (hm3d, scannet, video, frames, …)"),
        frameCount: z.number().int(),
        frames: z.array(frame).describe("every frame of the episode, in order"),
      })
      .nullable()
      .describe("the episode history; null when the run has no --frames"),
    budget: z.object({
      timeoutMs: z.number().describe("the time eqakit waits for this reply"),
    }),
  })
  .describe("eqakit → agent: one question; the agent may call back model/complete and log before it replies");

export const answerResult = z
  .object({
    answer: z.string().nullable().describe("the answer; null when the agent has none"),
    confidence: z.number().min(0).max(1).optional().describe("the agent's confidence in its answer, kept in the trace"),
  })
  .describe("agent → eqakit: the answer to the question asked");

export const shutdownParams = z.object({}).describe("eqakit → agent, last: the agent replies null and exits");
export const shutdownResult = z.null();

const contentPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("frame"), index: z.number().int().min(0).describe("a frame of the current episode, prepared as the run's --image-size and --image-format say") }),
  z.object({ type: z.literal("image"), data: z.string().describe("base64"), mediaType: z.string().describe("image/png, image/jpeg, …") }),
]);

export const completeParams = z
  .object({
    messages: z
      .array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.union([z.string(), z.array(contentPart)]) }))
      .min(1),
    temperature: z.number().optional(),
    topP: z.number().optional(),
    maxTokens: z.number().int().positive().optional(),
    seed: z.number().int().optional(),
    stop: z.array(z.string()).optional(),
    responseFormat: z.enum(["text", "json"]).optional(),
    purpose: z.string().optional().describe("what the call is for (answer, caption, …), recorded as the call's role in the trace (default: answer)"),
  })
  .describe("agent → eqakit, during answer: a call to the run's model (--model) through eqakit's cache, retries and usage accounting");

export const completeResult = z
  .object({
    text: z.string().nullable(),
    finishReason: z.string().nullable(),
    cached: z.boolean(),
    usage: z.object({ promptTokens: z.number(), completionTokens: z.number() }),
  })
  .describe("eqakit → agent: the model's reply");

export const logParams = z
  .object({
    message: z.string(),
    level: z.enum(["debug", "info", "warning", "error"]).optional(),
  })
  .describe("agent → eqakit, during answer (a notification, or a request answered with null): a line kept in the answer's trace");

/** Every method with its params and result, in the order the documentation lists them. */
export const AGENT_METHODS = {
  initialize: { direction: "eqakit → agent", params: initializeParams, result: initializeResult },
  answer: { direction: "eqakit → agent", params: answerParams, result: answerResult },
  shutdown: { direction: "eqakit → agent", params: shutdownParams, result: shutdownResult },
  "model/complete": { direction: "agent → eqakit", params: completeParams, result: completeResult },
  log: { direction: "agent → eqakit", params: logParams, result: z.null() },
} as const;

export type InitializeParams = z.infer<typeof initializeParams>;
export type InitializeResult = z.infer<typeof initializeResult>;
export type AnswerParams = z.infer<typeof answerParams>;
export type AnswerResult = z.infer<typeof answerResult>;
export type CompleteParams = z.infer<typeof completeParams>;
export type CompleteResult = z.infer<typeof completeResult>;
export type LogParams = z.infer<typeof logParams>;

/** The JSON Schema of each method's params and result, generated from the schemas above. */
export function agentProtocolJsonSchemas(): Record<string, { params: unknown; result: unknown }> {
  return Object.fromEntries(
    Object.entries(AGENT_METHODS).map(([name, m]) => [name, { params: z.toJSONSchema(m.params, { io: "input" }), result: z.toJSONSchema(m.result, { io: "input" }) }]),
  );
}

/** Zod's issues as one line: `path: message; …`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(message)"}: ${i.message}`).join("; ");
}
