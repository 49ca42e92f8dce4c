/**
 * Reading a home written as `eqakit-sim-home/1` (`writeHome`'s home.json, a Mixed EQA set's world
 * states): every field checked, each object's type one the catalogue knows, so that the
 * simulator can be built on it.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { UserError } from "../core/index.js";
import { OBJECT_STATES, ROOM_TYPES, objectCatalogue } from "./catalogue.js";
import { HOME_FORMAT, type Home } from "./home.js";

const vec3 = z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]);
const vec2 = z.tuple([z.number().finite(), z.number().finite()]);
const rgb = z.tuple([z.number().int().min(0).max(255), z.number().int().min(0).max(255), z.number().int().min(0).max(255)]);

const homeSchema = z.object({
  format: z.literal(HOME_FORMAT),
  seed: z.number().int(),
  rooms: z.array(z.object({ id: z.number().int(), type: z.enum(ROOM_TYPES), min: vec2, max: vec2 })).min(1),
  doors: z.array(z.object({ rooms: z.tuple([z.number().int(), z.number().int()]), centre: vec2, along: z.enum(["x", "z"]), width: z.number().positive() })),
  objects: z.array(
    z.object({
      id: z.number().int().min(3),
      type: z.string().min(1),
      kind: z.enum(["structure", "furniture", "object"]),
      roomId: z.number().int().nullable(),
      min: vec3,
      max: vec3,
      colour: rgb,
      colourName: z.string().optional(),
      material: z.string().optional(),
      use: z.string().optional(),
      states: z.partialRecord(z.enum(OBJECT_STATES), z.boolean()),
      on: z.number().int().optional(),
      inside: z.number().int().optional(),
      held: z.boolean().optional(),
    }),
  ),
  start: z.object({ position: vec3, yaw: z.number().finite(), pitch: z.number().finite() }),
  bounds: z.object({ min: vec3, max: vec3 }),
});

/** A home from a parsed JSON value; a wrong field is a UserError naming the file and the field. */
export function parseHome(value: unknown, file: string): Home {
  const parsed = homeSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`not a home (${HOME_FORMAT}): ${issue.message}`, { file, field: issue.path.join(".") });
  }
  const home = parsed.data as Home;
  const known = new Set(Object.keys(objectCatalogue().types));
  const ids = new Set(home.objects.map((o) => o.id));
  for (const [index, o] of home.objects.entries()) {
    if (o.kind !== "structure" && !known.has(o.type)) throw new UserError(`unknown object type "${o.type}"`, { file, index, field: "objects.type" });
    for (const field of ["on", "inside"] as const) {
      const at = o[field];
      if (at !== undefined && !ids.has(at)) throw new UserError(`${field} names object ${at}, which the home does not hold`, { file, index, field: `objects.${field}` });
    }
  }
  return home;
}

export async function loadHome(file: string): Promise<Home> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UserError(`cannot read the home: ${(error as Error).message}`, { file });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`the home is not JSON: ${(error as Error).message}`, { file });
  }
  return parseHome(value, file);
}
