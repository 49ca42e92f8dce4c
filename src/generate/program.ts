/**
 * TAG-EQA programs (seed `002_…`, Tables 3 and 4): DATA → FILTER₁ → … → FILTERₙ → QUERY, the
 * filters joined by AND, with no `unique()` at the end. A program (`TagProgram` in
 * src/data/tag-eqa.ts) names objects by TYPE, and events by (event type, object type, ordinal),
 * never by a log's own ids, so that it can be executed over any log of the same trajectory
 * (the simulator's ground truth, an ALFRED replay, or a memory an agent perceived).
 *
 * ```json
 * { "target": "cup",
 *   "filters": [
 *     { "type": "property", "key": "colour", "args": ["green"] },
 *     { "type": "location", "key": "on", "args": ["countertop"] },
 *     { "type": "moment", "key": "after", "args": ["open", "fridge", 1] } ],
 *   "query": { "type": "countObjects", "modifier": null } }
 * ```
 *
 * `target` is an object type, or `"object"` (any object that is not furniture or structure,
 * for `listObjects`).
 *
 * Filters (`type` / `key`: `args`):
 * - property / `colour` | `material` | `use`: `[value]`
 * - location / `on` | `inside`: `[receptacle type]`; `same_on` | `same_inside`:
 *   `[receptacle type, other object type]` ("on the same countertop as the apple");
 *   `above` | `under`: `[object type]` (footprints overlap in x–z; above: the bottom at or over
 *   the other's top; under: a lower centre and a top below the other's top, not inside it;
 *   5 cm tolerance)
 * - state / `open` | `toggled` | `broken` | `sliced` | `filled`: `["true"]` or `["false"]`
 * - position / `in_front_of` | `behind` | `left_of` | `right_of`: `[object type]`, from the
 *   agent's view (see `execute.ts` for the viewpoint)
 * - moment / `before` | `after` | `right_before` | `right_after`: `[event type, object type, ordinal]`;
 *   `between`: `[event type, object type, ordinal, event type, object type, ordinal]`. The
 *   ordinal counts the events of that type on objects of that type from 1, in step order, so
 *   each event is unique.
 *
 * A filter that refers to another object (location, position) matches any object of that type
 * and groups the answer by which one it was (Fig. 2) when several exist. In a grounded program
 * the filter also carries `at`: the position of the one it means, in the grounding frame
 * (`groundingTransform`), and only the object of that type nearest to `at` (within
 * `GROUNDING_TOLERANCE` metres) is meant.
 *
 * Queries (`type` / `modifier`): `listObjects` / null, `countObjects` / null, `countTimes` /
 * event type ("how many times did you open the fridge"), `getState` / state name,
 * `getProperty` / `colour` | `material` | `use`, `getLocation` / null.
 */
import type { TagCondition, TagPredicateType, TagProgram, TagQueryType, TrajectoryEventType, TrajectoryStateName } from "../data/index.js";

export const ANY_OBJECT = "object";
/** How far (metres) a grounded reference may lie from the object it means. */
export const GROUNDING_TOLERANCE = 0.75;

export const PROPERTY_KEYS = ["colour", "material", "use"] as const;
export type PropertyKey = (typeof PROPERTY_KEYS)[number];

/** Values a catalogue gives as a material that are not one ("food" says what an egg is, not what it is made of). */
const NOT_MATERIALS = new Set(["food"]);

/** An object's property as questions may use it: undefined when unknown or not a property of that kind. */
export function propertyOf(o: { properties: Partial<Record<PropertyKey, string>> }, key: PropertyKey): string | undefined {
  const value = o.properties[key];
  if (value === undefined || (key === "material" && NOT_MATERIALS.has(value.toLowerCase()))) return undefined;
  return value;
}
export const LOCATION_KEYS = ["on", "inside", "same_on", "same_inside", "above", "under"] as const;
export type LocationKey = (typeof LOCATION_KEYS)[number];
export const POSITION_KEYS = ["in_front_of", "behind", "left_of", "right_of"] as const;
export type PositionKey = (typeof POSITION_KEYS)[number];
export const MOMENT_KEYS = ["before", "after", "right_before", "right_after", "between"] as const;
export type MomentKey = (typeof MOMENT_KEYS)[number];

/** An event as programs name it. */
export interface EventRef {
  type: TrajectoryEventType;
  objectType: string;
  ordinal: number;
}

/** The object type a condition refers to, when it refers to one (location, position). */
export function referenceType(condition: TagCondition): string | null {
  if (condition.type === "location") {
    if (condition.key === "same_on" || condition.key === "same_inside") return String(condition.args[1]);
    return String(condition.args[0]);
  }
  if (condition.type === "position") return String(condition.args[0]);
  return null;
}

export function momentEvents(condition: TagCondition): EventRef[] {
  const a = condition.args;
  const refs: EventRef[] = [{ type: a[0] as TrajectoryEventType, objectType: String(a[1]), ordinal: Number(a[2]) }];
  if (condition.key === "between") refs.push({ type: a[3] as TrajectoryEventType, objectType: String(a[4]), ordinal: Number(a[5]) });
  return refs;
}

/** The state an event type changes, for the hint rules. */
export const EVENT_STATE: Partial<Record<TrajectoryEventType, TrajectoryStateName>> = {
  open: "open",
  close: "open",
  toggle_on: "toggled",
  toggle_off: "toggled",
  slice: "sliced",
  break: "broken",
  fill: "filled",
  empty: "filled",
};

/**
 * Query and condition pairs that would give the answer away (section 3, "free of hints"):
 * where the spoons on the countertop are (location with getLocation), whether the open fridge
 * is open (a state with the same getState), the colour of the green cups (a property with the
 * same getProperty), how many times you opened the fridge before you opened the fridge (a
 * moment on the counted event, or the state it changes), whether the fridge was open right after
 * you opened it (a moment on an event that sets the state asked), and an object related to its
 * own type.
 */
export function isBannedPair(program: TagProgram, condition: TagCondition): boolean {
  const { type: query, modifier } = program.query;
  if (query === "getLocation" && condition.type === "location") return true;
  if (query === "getState" && condition.type === "state" && condition.key === modifier) return true;
  if (query === "getState" && condition.type === "moment" && momentEvents(condition).some((e) => e.objectType === program.target && EVENT_STATE[e.type] === modifier)) return true;
  if (query === "getProperty" && condition.type === "property" && condition.key === modifier) return true;
  if (query === "countTimes" && modifier) {
    const event = modifier as TrajectoryEventType;
    if (condition.type === "state" && EVENT_STATE[event] === condition.key) return true;
    if (condition.type === "moment" && momentEvents(condition).some((e) => e.objectType === program.target && (e.type === event || EVENT_STATE[e.type] === EVENT_STATE[event]))) return true;
  }
  const reference = referenceType(condition);
  return reference !== null && reference === program.target;
}

/** Predicate types mixed: no type fills more than half of the conditions (one of each up to three). */
export function isDiverse(conditions: readonly TagCondition[]): boolean {
  if (conditions.length < 2) return true;
  const limit = Math.max(1, Math.floor(conditions.length / 2));
  const counts = new Map<TagPredicateType, number>();
  for (const c of conditions) counts.set(c.type, (counts.get(c.type) ?? 0) + 1);
  return [...counts.values()].every((n) => n <= limit);
}

export function predicateTypes(program: TagProgram): TagPredicateType[] {
  return [...new Set(program.filters.map((f) => f.type))].sort();
}

export function queryKey(query: { type: TagQueryType; modifier: string | null }): string {
  return query.modifier ? `${query.type}:${query.modifier}` : query.type;
}
