/**
 * What happened "while you were away": changes to a home between the end of the agent's last
 * day and now, each applied with the simulator's own rules (`manipulate`: an object is picked up
 * and put where there is room, as a person would) or by setting a state:
 * - `moved`: a small object to another surface (a counter, a table, a shelf, a sink…);
 * - `taken_away`: a small object gone from the home;
 * - `brought_in`: a new object of a catalogue type the home did not hold, put on a surface;
 * - `opened` / `closed`: something that opens (a fridge, a cabinet, a book);
 * - `switched_on` / `switched_off`: something that switches (a lamp, a laptop, the stove).
 * Objects the agent handled on its days are changed most often (people move what was used),
 * then those it saw, so that the changes matter to its memory and a past question about them
 * needs the history. Seeded: the same home, handled and seen objects and random numbers give the
 * same changes.
 */
import { randomInt, type Random } from "../../core/index.js";
import { catalogueType, homeNavGrid, manipulate, objectCatalogue, objectName, type AgentState, type Home, type Point3, type SceneObject } from "../../sim/index.js";

export const CHANGE_KINDS = ["moved", "taken_away", "brought_in", "opened", "closed", "switched_on", "switched_off"] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** One change: what was done to which object (its log id and type), from what to what (receptacles by log id; states by name). */
export interface MixedChange {
  kind: ChangeKind;
  object: string;
  type: string;
  from: string | null;
  to: string | null;
}

/** Things that switch but whose switching does more (heats, runs water into something): left alone. */
const NOT_SWITCHED = new Set(["microwave", "sink", "bathtub"]);
/** How often a change goes to what the agent handled (when something handled can take it), else to what it saw. */
const HANDLED_PREFERENCE = 0.75;
const SEEN_PREFERENCE = 0.75;

/** What the agent attended to on its days, by object name (log id): what it handled and what it saw. */
export interface Attended {
  handled: ReadonlySet<string>;
  seen: ReadonlySet<string>;
}

/** A surface a moved or brought object can stand on and be seen: a receptacle that does not close. */
export function isOpenSurface(o: SceneObject): boolean {
  if (o.kind !== "furniture") return false;
  const spec = catalogueType(o.type);
  return spec.receptacle !== null && !spec.states.includes("open");
}

function reachAll(home: Home, at: SceneObject): { camera: Point3; visible: Set<number> } {
  return { camera: [(at.min[0] + at.max[0]) / 2, (at.min[1] + at.max[1]) / 2, (at.min[2] + at.max[2]) / 2], visible: new Set(home.objects.map((o) => o.id)) };
}

function holderName(home: Home, o: SceneObject): string | null {
  const holder = o.inside ?? o.on;
  const found = holder === undefined ? undefined : home.objects.find((x) => x.id === holder);
  return found ? objectName(found) : null;
}

/**
 * Picks from `items`, those the agent handled most often, then those it saw; within either, one
 * whose type names it alone in the home (so that a question can name it) when there is one.
 */
function pickPreferring(random: Random, items: readonly SceneObject[], attended: Attended, home?: Home): SceneObject | undefined {
  const count = new Map<string, number>();
  for (const o of home?.objects ?? []) count.set(o.type, (count.get(o.type) ?? 0) + 1);
  const preferred = (names: ReadonlySet<string>): SceneObject[] => {
    const known = items.filter((o) => names.has(objectName(o)));
    const named = known.filter((o) => count.get(o.type) === 1);
    return named.length > 0 ? named : known;
  };
  const handled = preferred(attended.handled);
  if (handled.length > 0 && random() < HANDLED_PREFERENCE) return handled[randomInt(random, handled.length)];
  const known = preferred(attended.seen);
  const pool = known.length > 0 && (known.length === items.length || random() < SEEN_PREFERENCE) ? known : items;
  return pool.length === 0 ? undefined : pool[randomInt(random, pool.length)];
}

/** Puts the held object on one of `targets` (tried in a seeded order); whether it went. */
function putSomewhere(home: Home, targets: SceneObject[], random: Random): SceneObject | undefined {
  const order = [...targets];
  for (let i = order.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const target of order) {
    if (manipulate(home, { type: "put", receptacle: target.id }, reachAll(home, target)).ok) return target;
  }
  return undefined;
}

type Applier = (home: Home, random: Random, attended: Attended, touched: Set<number>) => MixedChange | undefined;

const movable = (home: Home, touched: Set<number>): SceneObject[] => home.objects.filter((o) => o.kind === "object" && !o.held && (o.on !== undefined || o.inside !== undefined) && !touched.has(o.id));

/** How a flipped state's change is named: its kinds, and the words of its two values. */
interface FlipNames {
  set: ChangeKind;
  unset: ChangeKind;
  setWord: string;
  unsetWord: string;
}

/** An applier that flips `state` of an unbroken object that has it (not of a type in `excluded`), named by the state it is left in. */
function flipState(state: "open" | "toggled", names: FlipNames, excluded: ReadonlySet<string> = new Set()): Applier {
  return (home, random, attended, touched) => {
    const items = home.objects.filter((o) => o.kind !== "structure" && !touched.has(o.id) && !excluded.has(o.type) && catalogueType(o.type).states.includes(state) && !o.states.broken);
    const object = pickPreferring(random, items, attended, home);
    if (!object) return undefined;
    const value = !object.states[state];
    object.states[state] = value;
    touched.add(object.id);
    return { kind: value ? names.set : names.unset, object: objectName(object), type: object.type, from: value ? names.unsetWord : names.setWord, to: value ? names.setWord : names.unsetWord };
  };
}

const APPLIERS: Record<"moved" | "taken_away" | "brought_in" | "opened" | "switched", Applier> = {
  moved(home, random, attended, touched) {
    const object = pickPreferring(random, movable(home, touched), attended, home);
    if (!object) return undefined;
    const from = holderName(home, object);
    const holder = object.inside ?? object.on;
    if (!manipulate(home, { type: "pickup", object: object.id }, reachAll(home, object)).ok) return undefined;
    const target = putSomewhere(home, home.objects.filter((o) => isOpenSurface(o) && o.id !== holder), random);
    if (!target) throw new Error(`nowhere to put ${objectName(object)} in home ${home.seed}`);
    touched.add(object.id);
    touched.add(target.id);
    return { kind: "moved", object: objectName(object), type: object.type, from, to: objectName(target) };
  },
  taken_away(home, random, attended, touched) {
    const object = pickPreferring(random, movable(home, touched), attended, home);
    if (!object) return undefined;
    const from = holderName(home, object);
    home.objects = home.objects.filter((o) => o.id !== object.id);
    touched.add(object.id);
    return { kind: "taken_away", object: objectName(object), type: object.type, from, to: null };
  },
  brought_in(home, random, _attended, touched) {
    const present = new Set(home.objects.map((o) => o.type));
    const catalogue = objectCatalogue();
    const types = [...new Set(Object.values(catalogue.smallObjects).flat())].filter((t) => !present.has(t)).sort();
    if (types.length === 0) return undefined;
    const type = types[randomInt(random, types.length)]!;
    const spec = catalogueType(type);
    const colour = spec.colours[randomInt(random, spec.colours.length)]!;
    const id = Math.max(...home.objects.map((o) => o.id)) + 1;
    const states = Object.fromEntries(spec.states.map((s) => [s, false]));
    home.objects.push({ id, type, kind: "object", roomId: null, min: [0, 0, 0], max: [spec.size[0], spec.size[1], spec.size[2]], colour: colour.rgb, colourName: colour.name, material: spec.material, use: spec.use, states, held: true });
    const target = putSomewhere(home, home.objects.filter((o) => isOpenSurface(o) && !touched.has(o.id)), random);
    if (!target) {
      home.objects.pop();
      return undefined;
    }
    touched.add(id);
    return { kind: "brought_in", object: `${type.replaceAll(" ", "_")}-${id}`, type, from: null, to: objectName(target) };
  },
  opened: flipState("open", { set: "opened", unset: "closed", setWord: "open", unsetWord: "closed" }),
  switched: flipState("toggled", { set: "switched_on", unset: "switched_off", setWord: "on", unsetWord: "off" }, NOT_SWITCHED),
};

/** The appliers in proportion: moves most often. */
const KIND_WHEEL: (keyof typeof APPLIERS)[] = ["moved", "moved", "moved", "moved", "taken_away", "taken_away", "brought_in", "brought_in", "opened", "switched"];

/** `count` changes applied to a copy of `home`; returns the changed home and the changes in order. */
export function applyChanges(home: Home, count: number, random: Random, attended: Attended): { home: Home; changes: MixedChange[] } {
  const changed = structuredClone(home);
  const touched = new Set<number>();
  const changes: MixedChange[] = [];
  for (let tries = 0; changes.length < count && tries < count * 10; tries++) {
    const change = APPLIERS[KIND_WHEEL[randomInt(random, KIND_WHEEL.length)]!](changed, random, attended, touched);
    if (change) changes.push(change);
  }
  return { home: changed, changes };
}

/** A navigable pose in the home now, facing a multiple of 30°: where the agent starts. */
export function startPose(home: Home, random: Random): AgentState {
  const grid = homeNavGrid(home);
  const cells = grid.freeCellsIn([home.bounds.min[0], home.bounds.min[2]], [home.bounds.max[0], home.bounds.max[2]]);
  const cell = cells[randomInt(random, cells.length)];
  if (cell === undefined) throw new Error(`home ${home.seed} has no free cell`);
  const [x, z] = grid.cellCentre(cell);
  const yaw = (randomInt(random, 12) * Math.PI) / 6;
  return { position: [Math.round(x * 1000) / 1000, 0, Math.round(z * 1000) / 1000], yaw: yaw > Math.PI ? yaw - 2 * Math.PI : yaw, pitch: 0 };
}
