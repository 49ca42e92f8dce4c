/**
 * Mixed EQA questions as programs: a query about the world at one or more moments of the
 * agent's history ("the end of day 1", "right after you heated the mug on day 2") or now. The
 * generator executes a program over the ground truth (each day's trajectory log and the present
 * home) to get the answer; a program agent executes the same program over what it perceived (its
 * memory of each day, its observations now), so the answer measures memory and looking, not
 * language. A moment the view knows nothing of, or an object it never saw, gives no answer.
 *
 * Objects and receptacles are named by type: the generator asks only about types that name one
 * object in the home at the moments asked about.
 *
 * Queries (and their answer values, in `canonicalMixedValue`'s form):
 * - `where` (object, at): the type of the receptacle it is on or inside; "floor" when on none.
 * - `contents` (receptacle, at): the types on or inside it, ", "-joined in alphabetical order; "nothing".
 * - `is_on` (object, receptacle, at): "yes" or "no" (on or inside).
 * - `state` (object, state, at): "yes" or "no".
 * - `count_on` (receptacle, at): how many objects are on or inside it, as digits.
 * - `moved` (object, since, at): "yes" when its receptacle at `at` differs from that at `since`.
 * - `where_days` (object, days): its receptacle at the end of each day, in day order, joined by " then ".
 */
import { z } from "zod";

export const MIXED_QUERIES = ["where", "contents", "is_on", "state", "count_on", "moved", "where_days"] as const;
export type MixedQuery = (typeof MIXED_QUERIES)[number];

export const mixedMomentSchema = z.union([
  z.object({ now: z.literal(true) }),
  z.object({ day: z.number().int().positive(), at: z.literal("end") }),
  z.object({
    day: z.number().int().positive(),
    at: z.literal("after"),
    /** An event of the day's trajectory log (`EVENT_TYPES`) on an object of this type, the `index`-th such (default 1). */
    event: z.string().min(1),
    object: z.string().min(1),
    index: z.number().int().positive().optional(),
  }),
]);

export const mixedProgramSchema = z.object({
  query: z.enum(MIXED_QUERIES),
  object: z.string().min(1).optional(),
  receptacle: z.string().min(1).optional(),
  state: z.string().min(1).optional(),
  at: mixedMomentSchema.optional(),
  since: mixedMomentSchema.optional(),
  days: z.array(z.number().int().positive()).optional(),
});

export type MixedMoment = z.infer<typeof mixedMomentSchema>;
export type MixedProgram = z.infer<typeof mixedProgramSchema>;

/** One object as known at a moment: its receptacle by type ("floor" for none), its states. */
export interface MixedSnapshotObject {
  id: string;
  type: string;
  /** The type of what it is on or inside; null when on none (the floor) or unknown. */
  receptacle: string | null;
  states: Readonly<Partial<Record<string, boolean>>>;
}

/** What a view knows of the world: the objects at a moment, or undefined when it knows nothing of that moment. */
export interface MixedWorldView {
  snapshot(moment: MixedMoment): readonly MixedSnapshotObject[] | undefined;
}

const receptacleName = (o: MixedSnapshotObject): string => o.receptacle ?? "floor";

/** The one object of `type` at a moment (the first, when a perceived view holds several). */
function findObject(objects: readonly MixedSnapshotObject[], type: string): MixedSnapshotObject | undefined {
  return objects.find((o) => o.type === type);
}

function contentsOf(objects: readonly MixedSnapshotObject[], receptacle: string): string[] {
  return objects.filter((o) => o.receptacle === receptacle).map((o) => o.type).sort();
}

const yesNo = (b: boolean): string => (b ? "yes" : "no");

function momentOf(program: MixedProgram, field: "at" | "since"): MixedMoment {
  return program[field] ?? { now: true };
}

/**
 * The program's answer over `view`, in canonical form; undefined when the view cannot answer
 * (a moment it knows nothing of, an object it does not hold). A malformed program (a query
 * without the operand it needs) is an Error: programs are checked when a set is read.
 */
export function executeMixedProgram(program: MixedProgram, view: MixedWorldView): string | undefined {
  const need = (field: "object" | "receptacle" | "state"): string => {
    const value = program[field];
    if (value === undefined) throw new Error(`a ${program.query} program needs ${field}`);
    return value;
  };
  const at = (): readonly MixedSnapshotObject[] | undefined => view.snapshot(momentOf(program, "at"));
  switch (program.query) {
    case "where": {
      const o = findObject(at() ?? [], need("object"));
      return o && receptacleName(o);
    }
    case "contents": {
      const objects = at();
      if (!objects) return undefined;
      const types = contentsOf(objects, need("receptacle"));
      return types.length > 0 ? types.join(", ") : "nothing";
    }
    case "count_on": {
      const objects = at();
      return objects && String(contentsOf(objects, need("receptacle")).length);
    }
    case "is_on": {
      const objects = at();
      if (!objects) return undefined;
      const o = findObject(objects, need("object"));
      return yesNo(o !== undefined && o.receptacle === need("receptacle"));
    }
    case "state": {
      const o = findObject(at() ?? [], need("object"));
      const value = o?.states[need("state")];
      return value === undefined ? undefined : yesNo(value);
    }
    case "moved": {
      const type = need("object");
      const then = findObject(view.snapshot(momentOf(program, "since")) ?? [], type);
      const now = findObject(at() ?? [], type);
      return then && now && yesNo(receptacleName(then) !== receptacleName(now));
    }
    case "where_days": {
      const type = need("object");
      const places: string[] = [];
      for (const day of program.days ?? []) {
        const o = findObject(view.snapshot({ day, at: "end" }) ?? [], type);
        if (!o) return undefined;
        places.push(receptacleName(o));
      }
      return places.length > 0 ? places.join(" then ") : undefined;
    }
  }
}
