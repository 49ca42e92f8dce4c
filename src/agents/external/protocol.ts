/**
 * The agent protocol (`docs/agent-protocol.md`): the messages eqakit and an agent of the
 * user's own exchange, as JSON-RPC 2.0 over the agent's stdio, one message a line, or as
 * method calls on a JavaScript module in-process. Each message's params and result have one
 * zod schema here: the same schemas validate what an agent sends and generate the JSON
 * Schemas the documentation shows.
 */
import { z } from "zod";
import type { DiscreteAction } from "../../sim/index.js";

/** The protocol's version: a major change (a field removed or its meaning changed) raises it. */
export const AGENT_PROTOCOL_VERSION = "1";

/** The task kinds of the protocol: `em-eqa` (eqa answer), `tag` (TAG-EQA questions), `active` (eqa explore) and `mixed` (eqa explore on a Mixed EQA set: active episodes with a history). */
export const AGENT_TASK_KINDS = ["em-eqa", "active", "tag", "mixed"] as const;
export type AgentTaskKind = (typeof AGENT_TASK_KINDS)[number];

/** Lines longer than this (in bytes) end the agent process: no message of the protocol needs more. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const camera = z
  .object({ width: z.number(), height: z.number(), fx: z.number(), fy: z.number(), cx: z.number(), cy: z.number() })
  .describe("pinhole intrinsics in pixels of the image they belong to");

export const initializeParams = z
  .object({
    protocolVersion: z.string().describe(`the protocol version eqakit speaks ("${AGENT_PROTOCOL_VERSION}")`),
    task: z.enum(AGENT_TASK_KINDS).describe("what the agent will be asked: em-eqa is answering from an episode's recorded frames (answer), active is exploring an environment (reset, step), tag is answering TAG-EQA questions (answer with tag), mixed is exploring an environment with a history of earlier days (reset with history, step)"),
    settings: z.record(z.string(), z.unknown()).describe("the run's settings: the model named with --model (or null), the timeout per call, eqakit's version; active: also the step budget (maxSteps) and the actions"),
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

const vec3 = z.tuple([z.number(), z.number(), z.number()]);
const tagActionObject = z.object({ type: z.string(), position: vec3.nullable().describe("in the grounding frame; null when unknown") });
const placedObject = tagActionObject.extend({ relation: z.enum(["on", "inside"]).optional() });

/** One of the agent's own actions in a recording (TAG-EQA's action history, a Mixed EQA day's). */
const agentActionRecord = z.object({
  step: z.number().int(),
  frame: z.number().int().nullable(),
  action: z.string().describe("pickup, put, open, close, toggle_on, toggle_off, slice, fill, empty, break, heat, cool, clean"),
  object: tagActionObject.describe("the object acted on, where it was (before a pickup, after a put)"),
  index: z.number().int().describe("the n-th time this action was done to this object, from 1"),
  from: placedObject.optional().describe("where a picked-up object was taken from"),
  target: placedObject.optional().describe("where a put object went, or the appliance that heated, cooled or cleaned it"),
});

export const tagAnswerContext = z
  .object({
    toGrounding: z.array(z.number()).length(16).describe("world → grounding frame, 4×4 row-major: the camera at the first observation at the origin, looking along −z, y up, metres"),
    poses: z.array(z.array(z.number()).length(16).nullable()).describe("each frame's camera-to-grounding pose (4×4 row-major, OpenGL camera axes), by frame index; null where a frame has no valid pose"),
    actions: z.array(agentActionRecord).describe("the agent's own actions, in step order"),
  })
  .describe("TAG-EQA questions: the grounding frame their coordinates are in, and the agent's action history");

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
    tag: tagAnswerContext.optional().describe("TAG-EQA questions only (docs/tag-eqa.md): the answer is best a structured answer, a JSON array of groups, as a string"),
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

/** The actions an active agent may take: the environment's discrete actions (src/sim/protocol.ts gives their step sizes). */
export const ACTIVE_ACTIONS = ["move_forward", "turn_left", "turn_right", "look_up", "look_down"] as const satisfies readonly DiscreteAction[];

/** Metres per unit of a frame folder's 16-bit depth PNG (value / 65535 × 10, as HM3D's frames store it). */
export const DEPTH_METRES_PER_UNIT = 10 / 65535;

const agentState = z
  .object({
    position: z.array(z.number()).length(3).describe("the agent's feet, metres, y up"),
    yaw: z.number().describe("radians about +y; 0 looks along −z, positive turns left"),
    pitch: z.number().describe("radians; positive looks up"),
  })
  .describe("where the agent stands and looks");

export const activeObservation = z
  .object({
    step: z.number().int().min(0).describe("actions taken so far in the episode (0: the first observation)"),
    frame: z
      .object({
        index: z.number().int().min(0).describe("the frame's number in the episode's frame folder (a failed action shows the last frame again)"),
        path: z.string().describe("the colour image, an absolute path to a PNG in the run's frames/<episode>/ folder"),
        depthPath: z.string().describe(`its depth, a 16-bit greyscale PNG: metres = value × ${DEPTH_METRES_PER_UNIT} (value / 65535 × 10), 0 = unknown`),
        masksPath: z.string().optional().describe("its instance masks, a 16-bit PNG of instance ids (0 = none), when the environment gives them"),
      })
      .describe("the observation's files, written before the request is sent"),
    pose: z.array(z.number()).length(16).describe("camera-to-world 4×4, row-major, metres, y up, OpenGL camera axes"),
    state: agentState,
    camera: camera,
    lastAction: z
      .object({ action: z.enum(ACTIVE_ACTIONS), success: z.boolean(), reason: z.string().optional().describe("why it failed (a wall, the pitch limit)") })
      .nullable()
      .describe("the action just taken and whether it could be done (a failed action leaves the state unchanged); null at the first observation"),
    budget: z
      .object({
        stepsLeft: z.number().int().min(0).describe("actions the agent may still take; at 0 it must answer or stop (an action ends the episode without an answer)"),
        timeLeftMs: z.number().nullable().describe("milliseconds left of the episode's time budget (null: none)"),
      })
      .describe("what is left of the episode's budgets"),
  })
  .describe("what the agent sees after each action");

export const mixedHistory = z
  .object({
    days: z
      .array(
        z.object({
          day: z.number().int().positive().describe("1 for the earliest day"),
          when: z.string().describe("when it was, as questions say it (\"two days ago, morning\")"),
          framesDir: z.string().describe("the day's recording, an OpenEQA frame folder (colour, 16-bit depth, poses, intrinsics, instance masks), absolute path"),
          frameCount: z.number().int().min(0),
          actions: z.array(agentActionRecord).describe("the agent's own actions that day, in step order; positions in the world frame (the home's, the same as now)"),
        }),
      )
      .describe("the days in order, earliest first"),
  })
  .describe("a Mixed EQA episode's history: the recordings of earlier days, never the ground truth of what happened while the agent was away");

export const resetParams = z
  .object({
    episode: z.object({
      id: z.string().describe("the episode's question_id"),
      question: z.object({
        id: z.string(),
        text: z.string(),
        category: z.string().optional().describe("the benchmark's category, when it has one"),
        choices: z.array(z.string()).optional().describe("multiple-choice episodes (HM-EQA): the choices, in the order of their letters A, B, C, …"),
      }),
      scene: z.string().describe("the scene's id (home-<seed> for the built-in simulator)"),
      framesDir: z.string().describe("the folder the episode's frames are written to (an OpenEQA frame folder)"),
      history: mixedHistory.optional().describe("mixed episodes only: what the agent saw and did on earlier days in the same home"),
    }),
    actions: z.array(z.enum(ACTIVE_ACTIONS)).describe("the actions the environment offers"),
    budget: z.object({
      maxSteps: z.number().int().describe("the most actions of the episode (--max-steps)"),
      timeMs: z.number().nullable().describe("the episode's time budget, milliseconds (--episode-time; null: none)"),
      timeoutMs: z.number().describe("the time eqakit waits for each reply"),
    }),
    observation: activeObservation,
  })
  .describe("eqakit → agent: a new episode and its first observation; the agent replies with its first decision, as to step");

export const stepParams = z
  .object({ episode: z.string().describe("the episode's id, as reset gave it"), observation: activeObservation })
  .describe("eqakit → agent: the observation after the agent's last action; the agent may call back model/complete and log before it replies");

export const activeDecision = z
  .union([
    z.object({ action: z.enum(ACTIVE_ACTIONS).describe("the next action") }),
    z.object({
      answer: z.string().nullable().describe("the answer to the episode's question; it ends the episode"),
      confidence: z.number().min(0).max(1).optional().describe("the agent's confidence in its answer (EXPRESS-Bench's reliability figures use it)"),
    }),
    z.object({ stop: z.literal(true).describe("ends the episode without an answer") }),
  ])
  .describe("agent → eqakit: an action, an answer (with its confidence), or stop");

export const memoryQueryParams = z
  .object({
    query: z.string().nullish().describe("words that objects' labels or captions must contain (case-insensitive; all objects when absent or null)"),
    limit: z.number().int().positive().nullish().describe("the most objects returned (all when absent or null)"),
  })
  .describe("agent → eqakit, while it answers a question of eqa answer --memory DIR: the objects of the episode's prebuilt scene graph; an error (-32003) when the run has none, as eqa explore's episodes have none");

export const memoryQueryResult = z
  .object({
    episode: z.string(),
    objects: z.array(
      z.object({
        id: z.number().int(),
        label: z.string(),
        caption: z.string().nullable().optional(),
        centre: z.array(z.number()).length(3).nullable().describe("the object's 3-D centre, metres (null when unknown)"),
        size: z.array(z.number()).length(3).nullable().optional().describe("its box's extent along x, y, z, metres"),
        frames: z.array(z.number().int()).describe("frames that saw it"),
      }),
    ),
    relations: z
      .array(z.object({ subject: z.number().int(), relation: z.string().describe("on, inside, next to, above, below"), object: z.number().int() }))
      .describe("relations between the objects returned: subject is relation object (3 on 1: the cup is on the table)"),
    total: z.number().int().describe("objects matching the query, before the limit"),
  })
  .describe("eqakit → agent: the scene graph's objects");

/** Every method with its params and result, in the order the documentation lists them. */
export const AGENT_METHODS = {
  initialize: { direction: "eqakit → agent", params: initializeParams, result: initializeResult },
  answer: { direction: "eqakit → agent", params: answerParams, result: answerResult },
  reset: { direction: "eqakit → agent", params: resetParams, result: activeDecision },
  step: { direction: "eqakit → agent", params: stepParams, result: activeDecision },
  shutdown: { direction: "eqakit → agent", params: shutdownParams, result: shutdownResult },
  "model/complete": { direction: "agent → eqakit", params: completeParams, result: completeResult },
  "memory/query": { direction: "agent → eqakit", params: memoryQueryParams, result: memoryQueryResult },
  log: { direction: "agent → eqakit", params: logParams, result: z.null() },
} as const;

export type InitializeParams = z.infer<typeof initializeParams>;
export type InitializeResult = z.infer<typeof initializeResult>;
export type AnswerParams = z.infer<typeof answerParams>;
export type AnswerResult = z.infer<typeof answerResult>;
export type CompleteParams = z.infer<typeof completeParams>;
export type CompleteResult = z.infer<typeof completeResult>;
export type LogParams = z.infer<typeof logParams>;
export type ActiveObservation = z.infer<typeof activeObservation>;
export type ResetParams = z.infer<typeof resetParams>;
export type StepParams = z.infer<typeof stepParams>;
export type ActiveDecision = z.infer<typeof activeDecision>;
export type ActiveAction = (typeof ACTIVE_ACTIONS)[number];
export type MixedHistory = z.infer<typeof mixedHistory>;
export type MemoryQueryParams = z.infer<typeof memoryQueryParams>;
export type MemoryQueryResult = z.infer<typeof memoryQueryResult>;

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
