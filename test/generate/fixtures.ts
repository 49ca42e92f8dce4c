/**
 * A small hand-made kitchen trajectory whose answers the tests compute by hand.
 *
 * The agent stands at the origin facing −z (camera 1.5 m up) for steps 0–1 and 6–7, at x = 1 for
 * steps 2–5 (turned to face the fridge at steps 3–4); the grounding frame is the world shifted down by 1.5 m. It picks cup-1 up at
 * step 6 and puts it back at step 7.
 *
 *   countertop-1 (-1, 0.45, -2)   cup-1 green plastic, cup-2 red ceramic on it
 *   countertop-2 (1.5, 0.45, -2)  cup-3 green ceramic (picked up at step 2, put in the fridge
 *                                 at step 4) and apple-1 red on it
 *   fridge-1 (3, 0.9, -1)         opened at step 3, closed at step 5; mug-1 (blue, filled) inside
 *   table-1 (0, 0.4, -4)          knife-1 on it, box-1 under it
 *   chair-1 (-1.7, 0.45, -3.5)
 */
import { parseTrajectoryLog, type TrajectoryLog } from "../../src/data/index.js";

type Vec = [number, number, number];

interface Placement {
  position: Vec | null;
  relation: "on" | "inside" | "held" | "none" | "unknown";
  receptacle: string | null;
  states?: Record<string, boolean>;
}

const objects = [
  { id: "countertop-1", type: "countertop", kind: "furniture", receptacle: "on", size: [1, 0.9, 0.6], properties: { material: "granite" }, states: [] },
  { id: "countertop-2", type: "countertop", kind: "furniture", receptacle: "on", size: [1, 0.9, 0.6], properties: { material: "granite" }, states: [] },
  { id: "fridge-1", type: "fridge", kind: "furniture", receptacle: "in", size: [0.8, 1.8, 0.7], properties: { colour: "white" }, states: ["open"] },
  { id: "table-1", type: "table", kind: "furniture", receptacle: "on", size: [1.2, 0.8, 0.8], properties: { material: "wood" }, states: [] },
  { id: "chair-1", type: "chair", kind: "furniture", receptacle: "on", size: [0.5, 0.9, 0.5], properties: { material: "wood" }, states: [] },
  { id: "cup-1", type: "cup", kind: "object", receptacle: null, size: [0.1, 0.1, 0.1], properties: { colour: "green", material: "plastic", use: "used for drinking" }, states: [] },
  { id: "cup-2", type: "cup", kind: "object", receptacle: null, size: [0.1, 0.1, 0.1], properties: { colour: "red", material: "ceramic", use: "used for drinking" }, states: [] },
  { id: "cup-3", type: "cup", kind: "object", receptacle: null, size: [0.1, 0.1, 0.1], properties: { colour: "green", material: "ceramic", use: "used for drinking" }, states: [] },
  { id: "apple-1", type: "apple", kind: "object", receptacle: null, size: [0.08, 0.08, 0.08], properties: { colour: "red", use: "used for eating" }, states: ["sliced"] },
  { id: "mug-1", type: "mug", kind: "object", receptacle: null, size: [0.1, 0.12, 0.1], properties: { colour: "blue", material: "ceramic" }, states: ["filled", "broken"] },
  { id: "knife-1", type: "knife", kind: "object", receptacle: null, size: [0.3, 0.02, 0.05], properties: { colour: "silver", material: "metal", use: "used for cutting food" }, states: [] },
  { id: "box-1", type: "box", kind: "object", receptacle: null, size: [0.3, 0.2, 0.3], properties: { colour: "brown", material: "cardboard" }, states: [] },
] as const;

function placements(step: number): Record<string, Placement> {
  const cup3: Placement =
    step < 2 ? { position: [1.5, 0.95, -2], relation: "on", receptacle: "countertop-2" }
    : step < 4 ? { position: [1, 1, -0.3], relation: "held", receptacle: null }
    : { position: [3, 1.2, -1], relation: "inside", receptacle: "fridge-1" };
  return {
    "countertop-1": { position: [-1, 0.45, -2], relation: "none", receptacle: null },
    "countertop-2": { position: [1.5, 0.45, -2], relation: "none", receptacle: null },
    "fridge-1": { position: [3, 0.9, -1], relation: "none", receptacle: null, states: { open: step >= 3 && step < 5 } },
    "table-1": { position: [0, 0.4, -4], relation: "none", receptacle: null },
    "chair-1": { position: [-1.7, 0.45, -3.5], relation: "none", receptacle: null },
    "cup-1": step === 6 ? { position: [0, 1, -0.3], relation: "held", receptacle: null } : { position: [-1.2, 0.95, -2], relation: "on", receptacle: "countertop-1" },
    "cup-2": { position: [-0.8, 0.95, -2], relation: "on", receptacle: "countertop-1" },
    "cup-3": cup3,
    "apple-1": { position: [1.7, 0.95, -2], relation: "on", receptacle: "countertop-2", states: { sliced: false } },
    "mug-1": { position: [3, 1, -1], relation: "inside", receptacle: "fridge-1", states: { filled: true, broken: false } },
    "knife-1": { position: [0.2, 0.85, -4], relation: "on", receptacle: "table-1" },
    "box-1": { position: [0, 0.1, -4], relation: "none", receptacle: null },
  };
}

const actions = [null, "look_around", "pickup", "open", "put", "close", "pickup", "put"];
/** At steps 3 and 4 the agent, at x = 1, faces the fridge (open, put the cup in). */
const FRIDGE_TURN = -Math.atan2(2, 1);

export interface KitchenOptions {
  id?: string;
  environment?: string;
  /** Turn the whole scene by this yaw and shift it (the answers in the grounding frame do not change). */
  yaw?: number;
  offset?: Vec;
  /** Rename every object id (another log of the same trajectory). */
  renameIds?: (id: string) => string;
  /** Replace parts of the raw log before parsing. */
  edit?: (raw: RawLog) => void;
}

export interface RawLog {
  format: string;
  id: string;
  source: string;
  environment: string;
  cameraHeight: number;
  objects: Record<string, unknown>[];
  steps: { step: number; action: string | null; success: boolean; agent: { position: Vec; yaw: number; pitch: number }; held: string | null; objects: Record<string, Placement> }[];
  events: { step: number; type: string; object: string; from?: string | null; target?: string | null; index: number }[];
}

export function kitchenRaw(options: KitchenOptions = {}): RawLog {
  const yaw = options.yaw ?? 0;
  const offset = options.offset ?? [0, 0, 0];
  const name = options.renameIds ?? ((id: string) => id);
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  // world = R_y(yaw) · p + offset, so the agent's view turns with the scene
  const move = (p: Vec): Vec => [c * p[0] + s * p[2] + offset[0], p[1] + offset[1], -s * p[0] + c * p[2] + offset[2]];
  const raw: RawLog = {
    format: "eqakit-trajectory/1",
    id: options.id ?? "kitchen-0",
    source: "test",
    environment: options.environment ?? "kitchen",
    cameraHeight: 1.5,
    objects: objects.map((o) => ({ ...o, id: name(o.id), size: [...o.size], properties: { ...o.properties }, states: [...o.states] })),
    steps: actions.map((action, step) => {
      const placed: Record<string, Placement> = {};
      for (const [id, p] of Object.entries(placements(step))) {
        placed[name(id)] = { ...p, position: p.position ? move(p.position) : null, receptacle: p.receptacle ? name(p.receptacle) : null, states: p.states ?? {} };
      }
      return { step, action, success: true, agent: { position: move(step < 2 || step > 5 ? [0, 0, 0] : [1, 0, 0]), yaw: yaw + (step === 3 || step === 4 ? FRIDGE_TURN : 0), pitch: 0 }, held: step >= 2 && step < 4 ? name("cup-3") : step === 6 ? name("cup-1") : null, objects: placed };
    }),
    events: [
      { step: 2, type: "pickup", object: name("cup-3"), from: name("countertop-2"), index: 1 },
      { step: 3, type: "open", object: name("fridge-1"), index: 1 },
      { step: 4, type: "put", object: name("cup-3"), target: name("fridge-1"), index: 1 },
      { step: 5, type: "close", object: name("fridge-1"), index: 1 },
      { step: 6, type: "pickup", object: name("cup-1"), from: name("countertop-1"), index: 1 },
      { step: 7, type: "put", object: name("cup-1"), target: name("countertop-1"), index: 1 },
    ],
  };
  options.edit?.(raw);
  return raw;
}

export function kitchenLog(options: KitchenOptions = {}): TrajectoryLog {
  return parseTrajectoryLog(kitchenRaw(options), "kitchen.json");
}
