/**
 * Trajectory logs (`eqakit-trajectory/1`): the ground truth of one agent's trajectory through
 * one scene, the input of the TAG-EQA question generator. Written by the built-in simulator's
 * recorder (complete ground truth) and by the ALFRED replayer (partial: what ALFRED does not
 * record is absent, meaning unknown, and the generator never asks about it).
 *
 * Conventions: metres, y up, right-handed (eqakit's world, src/core/types.ts). The agent's
 * `position` is its feet on the floor; the camera is `cameraHeight` above; `yaw` in radians
 * about +y (0 looks along −z, positive turns left); `pitch` in radians (positive looks up).
 *
 * ```json
 * {
 *   "format": "eqakit-trajectory/1",
 *   "id": "home-7-pick_and_place-0",          // unique among the logs of a dataset
 *   "source": "sim",                           // "sim" | "alfred" | anything else
 *   "environment": "home-7",                  // the scene; splits keep scenes apart
 *   "task": { "type": "pick_and_place", "description": "put a mug in the fridge" },
 *   "cameraHeight": 1.5,
 *   "frames": "frames",                        // optional: the OpenEQA-style frame folder, relative to the log
 *   "objects": [                                // every object that exists, with stable ids
 *     { "id": "mug-41", "type": "mug", "kind": "object", "receptacle": null,
 *       "size": [0.1, 0.12, 0.1],
 *       "properties": { "colour": "red", "material": "ceramic", "use": "used for drinking" },
 *       "states": ["filled", "broken"] }       // the states the object can have
 *   ],
 *   "steps": [                                  // step 0 is the first observation
 *     { "step": 0, "action": null, "success": true, "frame": 0,
 *       "agent": { "position": [1, 0, 2], "yaw": 0, "pitch": 0 },
 *       "held": null,                           // the id of the object in hand
 *       "objects": {                            // every object's state at this step
 *         "mug-41": { "position": [2.1, 0.96, 3.0], "relation": "on", "receptacle": "counter-12",
 *                     "states": { "filled": false, "broken": false } } } }
 *   ],
 *   "events": [                                 // what the agent did, in step order
 *     { "step": 12, "type": "pickup", "object": "mug-41", "from": "counter-12", "index": 1 }
 *   ]
 * }
 * ```
 *
 * - `relation` is `on`, `inside`, `held`, `none` (stands on the floor or is furniture) or
 *   `unknown` (the source does not say); `receptacle` names the object it is on or inside.
 * - An object's `position` is the centre of its box in the world; `null` when unknown.
 * - `properties` holds only what is known; `states` per step only the states the object has.
 * - `events[].type` is one of `EVENT_TYPES`; `target` is where a put went; `index` counts the
 *   events of the same type on the same object from 1, so "the second time you opened the
 *   fridge" names one event.
 * - Steps are in order and numbered 0…n−1; events refer to existing steps and objects.
 */
import { z } from "zod";
import { UserError } from "../core/index.js";
import { readJsonFile } from "./json.js";
import { describeZodError } from "./validate.js";

export const TRAJECTORY_FORMAT = "eqakit-trajectory/1";

export const EVENT_TYPES = ["pickup", "put", "open", "close", "toggle_on", "toggle_off", "slice", "fill", "empty", "break", "heat", "cool", "clean"] as const;
export type TrajectoryEventType = (typeof EVENT_TYPES)[number];

/** The object states a trajectory log and a TAG-EQA question can speak of. */
export const TRAJECTORY_STATES = ["open", "toggled", "broken", "sliced", "filled"] as const;
export type TrajectoryStateName = (typeof TRAJECTORY_STATES)[number];

export const OBJECT_RELATIONS = ["on", "inside", "held", "none", "unknown"] as const;
export type ObjectRelation = (typeof OBJECT_RELATIONS)[number];

const vec3 = z.tuple([z.number(), z.number(), z.number()]);
const stateName = z.enum(TRAJECTORY_STATES);

const agentSchema = z.object({ position: vec3, yaw: z.number(), pitch: z.number() });

const objectSchema = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  kind: z.enum(["furniture", "object", "structure"]),
  receptacle: z.enum(["on", "in"]).nullable(),
  size: vec3.optional(),
  properties: z.object({ colour: z.string().optional(), material: z.string().optional(), use: z.string().optional() }),
  states: z.array(stateName),
});

const objectStateSchema = z.object({
  position: vec3.nullable(),
  relation: z.enum(OBJECT_RELATIONS),
  receptacle: z.string().nullable(),
  states: z.partialRecord(stateName, z.boolean()),
});

const stepSchema = z.object({
  step: z.number().int().nonnegative(),
  action: z.string().nullable(),
  success: z.boolean(),
  frame: z.number().int().nonnegative().nullable().optional(),
  agent: agentSchema,
  held: z.string().nullable(),
  objects: z.record(z.string(), objectStateSchema),
});

const eventSchema = z.object({
  step: z.number().int().nonnegative(),
  type: z.enum(EVENT_TYPES),
  object: z.string().min(1),
  from: z.string().nullable().optional(),
  target: z.string().nullable().optional(),
  index: z.number().int().positive(),
});

const logSchema = z.object({
  format: z.literal(TRAJECTORY_FORMAT),
  id: z.string().min(1),
  source: z.string().min(1),
  environment: z.string().min(1),
  task: z.object({ type: z.string(), description: z.string() }).optional(),
  cameraHeight: z.number().positive(),
  frames: z.string().optional(),
  objects: z.array(objectSchema),
  steps: z.array(stepSchema).min(1),
  events: z.array(eventSchema),
});

export type TrajectoryAgent = z.infer<typeof agentSchema>;
export type TrajectoryObject = z.infer<typeof objectSchema>;
export type TrajectoryObjectState = z.infer<typeof objectStateSchema>;
export type TrajectoryLogStep = z.infer<typeof stepSchema>;
export type TrajectoryEvent = z.infer<typeof eventSchema>;
export type TrajectoryLog = z.infer<typeof logSchema>;

/**
 * Validates a trajectory log: its shape (zod), then its consistency: steps numbered 0…n−1,
 * object states only for known objects, events on existing steps and objects, event indices
 * counting from 1 per (type, object), and no put of an object that was not picked up.
 * The error names the file, and the step or event.
 */
export function parseTrajectoryLog(value: unknown, file: string): TrajectoryLog {
  const parsed = logSchema.safeParse(value);
  if (!parsed.success) {
    const { message, field } = describeZodError(parsed.error, value);
    throw new UserError(`not a trajectory log: ${message}`, { file, ...(field ? { field } : {}) });
  }
  const log = parsed.data;
  const ids = new Set(log.objects.map((o) => o.id));
  if (ids.size !== log.objects.length) throw new UserError("object ids are not unique", { file, field: "objects" });
  log.steps.forEach((step, i) => {
    if (step.step !== i) throw new UserError(`step ${i} is numbered ${step.step}`, { file, field: `steps.${i}.step` });
    for (const id of Object.keys(step.objects)) {
      if (!ids.has(id)) throw new UserError(`step ${i}: unknown object ${id}`, { file, field: `steps.${i}.objects` });
    }
    if (step.held !== null && !ids.has(step.held)) throw new UserError(`step ${i}: holds unknown object ${step.held}`, { file, field: `steps.${i}.held` });
  });
  const counts = new Map<string, number>();
  let holding: string | null = log.steps[0]?.held ?? null;
  let lastStep = 0;
  log.events.forEach((event, i) => {
    const where = { file, field: `events.${i}` };
    if (event.step >= log.steps.length) throw new UserError(`event ${i} at step ${event.step}, past the last step ${log.steps.length - 1}`, where);
    if (event.step < lastStep) throw new UserError(`event ${i} at step ${event.step} comes after an event at step ${lastStep}`, where);
    lastStep = event.step;
    for (const ref of [event.object, event.from, event.target]) {
      if (ref && !ids.has(ref)) throw new UserError(`event ${i} (step ${event.step}) names unknown object ${ref}`, where);
    }
    const key = `${event.type}\u0000${event.object}`;
    const expected = (counts.get(key) ?? 0) + 1;
    if (event.index !== expected) throw new UserError(`event ${i} (step ${event.step}): ${event.type} ${event.object} is numbered ${event.index}, expected ${expected}`, where);
    counts.set(key, expected);
    if (event.type === "pickup") {
      if (holding !== null) throw new UserError(`event ${i} (step ${event.step}): picks up ${event.object} while holding ${holding}`, where);
      holding = event.object;
    } else if (event.type === "put") {
      if (holding !== event.object) throw new UserError(`event ${i} (step ${event.step}): puts down ${event.object}, which was never picked up`, where);
      holding = null;
    }
  });
  return log;
}

export async function loadTrajectoryLog(file: string): Promise<TrajectoryLog> {
  return parseTrajectoryLog(await readJsonFile(file), file);
}
