/**
 * The environment protocol: what an embodied agent can ask of a scene, in-process (the
 * `Environment` interface) and between processes (JSON-RPC 2.0 over stdio, see `stdio.ts`).
 *
 * World conventions are eqakit's (src/core/types.ts): metres, y up; the camera's axes are
 * OpenGL's (x right, y up, looking along −z); a pose is a camera-to-world 4×4, row-major.
 * The agent stands on the floor at `position` (its feet; the camera is `cameraHeight` above),
 * turned by `yaw` radians about +y (0 looks along −z, positive turns left) with the camera
 * tilted by `pitch` radians (positive looks up).
 *
 * Actions: `move_forward` 0.25 m along the heading, `turn_left` / `turn_right` 30°,
 * `look_up` / `look_down` 15° (pitch is kept within ±60°), `teleport` to an agent state.
 * An action that cannot be done (a wall, a non-navigable target, a pitch beyond the limit)
 * returns `{ success: false, reason }` and leaves the state unchanged.
 *
 * Manipulation (environments that support it, such as the built-in simulator) names objects by
 * their instance id (the ids of the masks): `pickup` `{ object }`, `put` `{ receptacle }` (puts
 * the held object on or into it), and `open`, `close`, `toggle_on`, `toggle_off`, `slice`,
 * `fill`, `empty`, `break` `{ object }`. The built-in simulator's rules are AI2-THOR's: the
 * object must be within `REACH_M` of the camera and visible in the current view (the held
 * object is always at hand), the hand holds one object, `put` goes only into an open "in"
 * receptacle, an object changes only the states its type has, `fill` needs a running sink or
 * bathtub within reach, `slice` needs a knife in hand. A successful action may report
 * `events`: what happened to which objects (a `put` names its `target`, a `pickup` where it
 * came `from`; switching on a microwave, sink or closing a fridge with things inside also
 * heats, cleans or cools them).
 *
 * ## Wire format (JSON-RPC 2.0, one JSON object per line, UTF-8, `\n`-terminated)
 *
 * The client writes requests on the server's stdin; the server writes one response per
 * request on stdout, in any order, matched by `id`. Anything the server wants to log goes to
 * stderr. Methods and their `params` → `result`:
 *
 * - `reset` `{ start?: AgentState }` → `AgentState` (the episode's start state, or `start`)
 * - `observe` `{}` → `WireObservation`:
 *   `{ width, height, camera: Camera, pose: number[16], state: AgentState,
 *      rgb: base64 (width·height·3 bytes, RGB8, row-major, top row first),
 *      depth: base64 (width·height float32 little-endian, metres along −z, 0 = unknown),
 *      masks?: { ids: base64 (width·height uint32 little-endian, 0 = none), labels: { "id": label } } }`
 * - `observe_pose` `{ pose: number[16] }` → `WireObservation` (optional): what the camera sees when
 *   placed at `pose` (camera-to-world, row-major, a rigid transform: the rotation part
 *   orthonormal within 1e-4, the last row 0 0 0 1), with `pose` as given and the agent's
 *   `state` unchanged; no navigability check, since a recorded camera may be anywhere. An
 *   environment that cannot place its camera answers -32601 (unknown method). The Habitat
 *   bridge and its stand-in serve it; `eqa data prepare openeqa --hm3d` renders OpenEQA's
 *   recorded camera poses with it.
 * - `act` `{ action: Action }` → `{ success: boolean, reason?: string, state: AgentState, events?: SimEvent[] }`
 * - `navigable` `{ point: [x, y, z] }` → `boolean`
 * - `geodesic_distance` `{ from: [x, y, z], to: [x, y, z] }` → `number | null` (null: unreachable)
 * - `bounds` `{}` → `{ min: [x, y, z], max: [x, y, z] }`
 * - `info` `{}` → `{ name: string, sceneId: string, cameraHeight: number }`
 * - `close` `{}` → `null`; the server then exits.
 *
 * Where `AgentState` is `{ position: [x, y, z], yaw: number, pitch: number }` and `Action` is
 * `{ type: "move_forward" | "turn_left" | "turn_right" | "look_up" | "look_down" }` or
 * `{ type: "teleport", state: AgentState }` or a manipulation above, and `SimEvent` is
 * `{ type, object: number, from?: number, target?: number }`. Errors use JSON-RPC's codes: -32700 parse error,
 * -32600 invalid request, -32601 unknown method, -32602 invalid params, -32000 the
 * environment failed (message says why).
 */
import { z } from "zod";
import type { Camera, InstanceMasks, Pose } from "../core/index.js";

export type Point3 = [number, number, number];

/** Step sizes of the discrete actions. */
export const MOVE_STEP_M = 0.25;
export const TURN_STEP_DEG = 30;
export const LOOK_STEP_DEG = 15;
export const MAX_PITCH_DEG = 60;
/** How far from the camera an object can be handled, metres. */
export const REACH_M = 1.5;

export const vec3Schema = z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]);
export const agentStateSchema = z.object({
  /** The agent's feet, on the floor (y is the floor's height). */
  position: vec3Schema,
  /** Radians about +y; 0 looks along −z; positive turns left. */
  yaw: z.number().finite(),
  /** Radians; positive looks up. */
  pitch: z.number().finite(),
});
export type AgentState = z.infer<typeof agentStateSchema>;

export const DISCRETE_ACTIONS = ["move_forward", "turn_left", "turn_right", "look_up", "look_down"] as const;
export type DiscreteAction = (typeof DISCRETE_ACTIONS)[number];
export const OBJECT_ACTIONS = ["open", "close", "toggle_on", "toggle_off", "slice", "fill", "empty", "break"] as const;
export type ObjectAction = (typeof OBJECT_ACTIONS)[number];
const instanceId = z.number().int().positive();
const manipulationSchema = z.union([
  z.object({ type: z.literal("pickup"), object: instanceId }),
  z.object({ type: z.literal("put"), receptacle: instanceId }),
  z.object({ type: z.enum(OBJECT_ACTIONS), object: instanceId }),
]);
export type ManipulationAction = z.infer<typeof manipulationSchema>;
export const actionSchema = z.union([z.object({ type: z.enum(DISCRETE_ACTIONS) }), z.object({ type: z.literal("teleport"), state: agentStateSchema }), manipulationSchema]);
export type Action = z.infer<typeof actionSchema>;

export const SIM_EVENT_TYPES = ["pickup", "put", "open", "close", "toggle_on", "toggle_off", "slice", "fill", "empty", "break", "heat", "cool", "clean"] as const;
export type SimEventType = (typeof SIM_EVENT_TYPES)[number];

/** Something that happened to an object (ids are instance ids). */
export const simEventSchema = z.object({
  type: z.enum(SIM_EVENT_TYPES),
  object: instanceId,
  /** Where a picked-up object came from. */
  from: instanceId.optional(),
  /** Where a put object went. */
  target: instanceId.optional(),
});
export type SimEvent = z.infer<typeof simEventSchema>;

export const actResultSchema = z.object({
  success: z.boolean(),
  /** Why the action failed. */
  reason: z.string().optional(),
  /** The state after the action (unchanged when it failed). */
  state: agentStateSchema,
  /** What the action did to objects. */
  events: z.array(simEventSchema).optional(),
});
export type ActResult = z.infer<typeof actResultSchema>;

/** Whether an action handles an object (rather than moving the agent). */
export function isManipulation(action: Action): action is ManipulationAction {
  return action.type === "pickup" || action.type === "put" || (OBJECT_ACTIONS as readonly string[]).includes(action.type);
}

export interface EnvObservation {
  width: number;
  height: number;
  camera: Camera;
  /** Camera-to-world, row-major. */
  pose: Pose;
  state: AgentState;
  /** RGB8, row-major, `width·height·3`. */
  rgb: Uint8Array;
  /** Metres along the camera's −z, `width·height`; 0 where unknown. */
  depth: Float32Array;
  masks?: InstanceMasks;
}

export interface SceneBounds {
  min: Point3;
  max: Point3;
}

export interface EnvironmentInfo {
  name: string;
  sceneId: string;
  /** Height of the camera above the agent's feet, metres. */
  cameraHeight: number;
}

/** An embodied environment: one scene, one agent. */
export interface Environment {
  info(): Promise<EnvironmentInfo>;
  /** Back to the episode's start state (or `start`, which must be navigable). */
  reset(start?: AgentState): Promise<AgentState>;
  observe(): Promise<EnvObservation>;
  /** What the camera sees from `pose` (camera-to-world), the agent left where it is; optional. */
  observePose?(pose: Pose): Promise<EnvObservation>;
  act(action: Action): Promise<ActResult>;
  /** Whether the agent can stand at `point` (its y is ignored: the floor is used). */
  isNavigable(point: Point3): Promise<boolean>;
  /** Shortest walkable distance in metres; Infinity when either point is not navigable or unreachable. */
  geodesicDistance(from: Point3, to: Point3): Promise<number>;
  bounds(): Promise<SceneBounds>;
  close(): Promise<void>;
}

/** An angle in (−π, π]. */
export function wrapAngle(angle: number): number {
  let a = angle % (2 * Math.PI);
  if (a <= -Math.PI) a += 2 * Math.PI;
  if (a > Math.PI) a -= 2 * Math.PI;
  return a;
}

/** The camera-to-world pose of an agent state (camera `cameraHeight` above the feet). */
export function agentPose(state: AgentState, cameraHeight: number): Pose {
  const cy = Math.cos(state.yaw);
  const sy = Math.sin(state.yaw);
  const cp = Math.cos(state.pitch);
  const sp = Math.sin(state.pitch);
  // R = Ry(yaw) · Rx(pitch)
  const [x, y, z] = state.position;
  const pose = new Float64Array([
    cy, sy * sp, sy * cp, x,
    0, cp, -sp, y + cameraHeight,
    -sy, cy * sp, cy * cp, z,
    0, 0, 0, 1,
  ]);
  for (let i = 0; i < 16; i++) pose[i] = (pose[i] as number) + 0; // no −0: the same bytes after a JSON round trip
  return pose;
}

// ---------------------------------------------------------------------------------------------
// Wire schemas

export const cameraSchema = z.object({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  fx: z.number(),
  fy: z.number(),
  cx: z.number(),
  cy: z.number(),
});
export const wireObservationSchema = z.object({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  camera: cameraSchema,
  pose: z.array(z.number()).length(16),
  state: agentStateSchema,
  rgb: z.string(),
  depth: z.string(),
  masks: z.object({ ids: z.string(), labels: z.record(z.string(), z.string()) }).optional(),
});
export type WireObservation = z.infer<typeof wireObservationSchema>;
/** `observe_pose`'s pose: a camera-to-world 4×4, row-major. */
export const poseSchema = z.array(z.number().finite()).length(16);
export const boundsSchema = z.object({ min: vec3Schema, max: vec3Schema });
export const infoSchema = z.object({ name: z.string(), sceneId: z.string(), cameraHeight: z.number() });

export const PROTOCOL_METHODS = ["info", "reset", "observe", "observe_pose", "act", "navigable", "geodesic_distance", "bounds", "close"] as const;
export type ProtocolMethod = (typeof PROTOCOL_METHODS)[number];

function littleEndian(): boolean {
  return new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
}

function toBase64(view: ArrayBufferView): string {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString("base64");
}

function fromBase64(text: string, bytes: number, what: string): Buffer {
  const buffer = Buffer.from(text, "base64");
  if (buffer.length !== bytes) throw new Error(`${what}: expected ${bytes} bytes, got ${buffer.length}`);
  return buffer;
}

export function encodeObservation(obs: EnvObservation): WireObservation {
  if (!littleEndian()) throw new Error("the wire format needs a little-endian host");
  const wire: WireObservation = {
    width: obs.width,
    height: obs.height,
    camera: obs.camera,
    pose: Array.from(obs.pose),
    state: obs.state,
    rgb: toBase64(obs.rgb),
    depth: toBase64(obs.depth),
  };
  if (obs.masks) wire.masks = { ids: toBase64(obs.masks.ids), labels: obs.masks.labels };
  return wire;
}

/** Throws a plain Error naming what is wrong when the sizes do not match. */
export function decodeObservation(wire: WireObservation): EnvObservation {
  const n = wire.width * wire.height;
  const rgb = new Uint8Array(fromBase64(wire.rgb, n * 3, "rgb"));
  const depthBytes = fromBase64(wire.depth, n * 4, "depth");
  const depth = new Float32Array(n);
  new Uint8Array(depth.buffer).set(depthBytes);
  const obs: EnvObservation = {
    width: wire.width,
    height: wire.height,
    camera: wire.camera,
    pose: new Float64Array(wire.pose),
    state: wire.state as AgentState,
    rgb,
    depth,
  };
  if (wire.masks) {
    const ids = new Uint32Array(n);
    new Uint8Array(ids.buffer).set(fromBase64(wire.masks.ids, n * 4, "masks.ids"));
    obs.masks = { width: wire.width, height: wire.height, ids, labels: wire.masks.labels };
  }
  return obs;
}
