/**
 * A home read back from its file (`eqakit-sim-home/1`, as `writeHome` writes `home.json`): every
 * field checked, so that a world state written by a recording or a generator (a Mixed EQA set's
 * `end.json` and `present.json`) becomes a `Home` the simulator runs on; every object's type one the catalogue knows.
 */
import { z } from "zod";
import { UserError } from "../core/index.js";
import { describeZodError, readJsonFile } from "../data/index.js";
import { OBJECT_STATES, ROOM_TYPES, objectCatalogue } from "./catalogue.js";
import { HOME_FORMAT, type Home } from "./home.js";
import { agentStateSchema, vec3Schema } from "./protocol.js";

const pair = z.tuple([z.number().finite(), z.number().finite()]);
const rgb = z.tuple([z.number().int().min(0).max(255), z.number().int().min(0).max(255), z.number().int().min(0).max(255)]);
const instanceId = z.number().int().nonnegative();

const sceneObjectSchema = z.object({
  id: instanceId,
  type: z.string().min(1),
  kind: z.enum(["structure", "furniture", "object"]),
  roomId: z.number().int().nonnegative().nullable(),
  min: vec3Schema,
  max: vec3Schema,
  colour: rgb,
  colourName: z.string().optional(),
  material: z.string().optional(),
  use: z.string().optional(),
  states: z.partialRecord(z.enum(OBJECT_STATES), z.boolean()),
  on: instanceId.optional(),
  inside: instanceId.optional(),
  held: z.boolean().optional(),
});

export const homeSchema = z.object({
  format: z.literal(HOME_FORMAT),
  seed: z.number().int(),
  rooms: z.array(z.object({ id: z.number().int().nonnegative(), type: z.enum(ROOM_TYPES), min: pair, max: pair })).min(1),
  doors: z.array(z.object({ rooms: z.tuple([z.number().int(), z.number().int()]), centre: pair, along: z.enum(["x", "z"]), width: z.number().positive() })),
  objects: z.array(sceneObjectSchema),
  start: agentStateSchema,
  bounds: z.object({ min: vec3Schema, max: vec3Schema }),
});

/** A parsed home file; a wrong one is a UserError naming the file and the field. */
export function parseHome(value: unknown, file: string): Home {
  const parsed = homeSchema.safeParse(value);
  if (!parsed.success) {
    const { message, field } = describeZodError(parsed.error, value);
    throw new UserError(`not a home file (${HOME_FORMAT}): ${message}`, { file, ...(field ? { field } : {}) });
  }
  const home = parsed.data as Home;
  const known = new Set(Object.keys(objectCatalogue().types));
  const ids = new Set(home.objects.map((o) => o.id));
  for (const [index, o] of home.objects.entries()) {
    if (o.kind !== "structure" && !known.has(o.type)) throw new UserError(`unknown object type "${o.type}"`, { file, index, field: "objects.type" });
    for (const holder of [o.on, o.inside]) {
      if (holder !== undefined && !ids.has(holder)) throw new UserError(`object ${o.id} rests on or in ${holder}, which the home does not hold`, { file, index, field: "objects" });
    }
  }
  return home;
}

/** Reads a home file (`home.json`, a Mixed EQA set's `end.json` or `present.json`). */
export async function readHomeFile(file: string): Promise<Home> {
  return parseHome(await readJsonFile(file), file);
}
