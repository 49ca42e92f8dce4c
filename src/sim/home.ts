/**
 * Procedural homes from a seed: a grid of rooms (2×2 to 2×3) of known types, joined by doors
 * along a random spanning tree (plus sometimes one more), furniture from the catalogue placed
 * against the walls without cutting the free space in two, and small objects on receptacles.
 * Everything is an axis-aligned box; the floor is y = 0.
 */
import { seededRandom, randomInt, type Random } from "../core/index.js";
import { ROOM_TYPES, catalogueType, objectCatalogue, type Rgb, type RoomType, type ObjectStateName } from "./catalogue.js";
import { NavGrid } from "./navgrid.js";
import type { AgentState, Point3 } from "./protocol.js";
import { SCREEN_DEPTH_M, frontSide } from "./parts.js";

export const HOME_FORMAT = "eqakit-sim-home/1";
export const CEILING_HEIGHT = 2.5;
export const WALL_THICKNESS = 0.1;
export const DOOR_WIDTH = 0.9;
export const DOOR_HEIGHT = 2.1;
export const FLOOR_ID = 1;
export const CEILING_ID = 2;
export const WALL_COLOUR: Rgb = [225, 222, 212];
export const CEILING_COLOUR: Rgb = [245, 245, 245];

export interface Room {
  id: number;
  type: RoomType;
  /** x, z of the room's corners (wall centre lines). */
  min: [number, number];
  max: [number, number];
}

export interface Door {
  rooms: [number, number];
  /** x, z of the doorway's centre. */
  centre: [number, number];
  /** The wall's direction: "x" for a wall running along x (between rooms in different rows). */
  along: "x" | "z";
  width: number;
}

export interface SceneObject {
  /** The instance id used in masks (1 floor, 2 ceiling, then walls, furniture, small objects). */
  id: number;
  type: string;
  kind: "structure" | "furniture" | "object";
  roomId: number | null;
  min: Point3;
  max: Point3;
  colour: Rgb;
  /** The colour's name from the catalogue. */
  colourName?: string;
  material?: string;
  use?: string;
  states: Partial<Record<ObjectStateName, boolean>>;
  /** The receptacle it stands on. */
  on?: number;
  /** The receptacle it is inside (hidden from view while the receptacle's box is closed). */
  inside?: number;
  /** In the agent's hand (not drawn). */
  held?: boolean;
}

export interface Home {
  format: typeof HOME_FORMAT;
  seed: number;
  rooms: Room[];
  doors: Door[];
  /** Walls, lintels, furniture and small objects (the floor and ceiling are planes, not listed). */
  objects: SceneObject[];
  start: AgentState;
  bounds: { min: Point3; max: Point3 };
}

function shuffle<T>(random: Random, items: T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[randomInt(random, items.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;


/** A home's objects as they are placed, each given the next instance id (1 and 2 are the floor and ceiling). */
class HomeObjects {
  readonly list: SceneObject[] = [];
  private nextId = 3;

  add(object: Omit<SceneObject, "id">): SceneObject {
    const placed: SceneObject = { id: this.nextId++, ...object };
    this.list.push(placed);
    return placed;
  }
}

/** A home from a seed (any integer); the same seed gives the same home. */
export function generateHome(seed: number): Home {
  const random = seededRandom(seed);
  const { rooms, xs, zs, cols, rows } = layoutRooms(random);
  const doors = placeDoors(random, rooms, cols, rows);
  const objects = new HomeObjects();
  const half = WALL_THICKNESS / 2;
  addWalls(objects, xs, zs, doors);
  const bounds = { min: [-half, 0, -half] as Point3, max: [(xs.at(-1) as number) + half, CEILING_HEIGHT, (zs.at(-1) as number) + half] as Point3 };
  const grid = new NavGrid(bounds.min, bounds.max);
  for (const o of objects.list) if (o.min[1] < 0.5) grid.block(o.min, o.max);
  placeFurniture(random, rooms, doors, objects, grid);
  const furniture = objects.list.filter((o) => o.kind === "furniture");
  placeObjectsOn(random, rooms, furniture, objects);
  placeObjectsInside(random, rooms, furniture, objects);

  // the start: a free cell in the living room, facing a multiple of 30°
  const living = rooms.find((r) => r.type === "living room") as Room;
  const cells = grid.freeCellsIn(living.min, living.max);
  const cell = cells[randomInt(random, cells.length)];
  if (cell === undefined) throw new Error(`seed ${seed}: no free cell in the living room`);
  const [sx, sz] = grid.cellCentre(cell);
  const start: AgentState = { position: [sx, 0, sz], yaw: (randomInt(random, 12) * Math.PI) / 6, pitch: 0 };
  return { format: HOME_FORMAT, seed, rooms, doors, objects: objects.list, start, bounds };
}

/** Two rows of two or three rooms of 3.5-5 m, the kitchen and the living room always among them. */
function layoutRooms(random: Random): { rooms: Room[]; xs: number[]; zs: number[]; cols: number; rows: number } {
  const cols = 2 + randomInt(random, 2);
  const rows = 2;
  const widths = Array.from({ length: cols }, () => 3.5 + 0.5 * randomInt(random, 4));
  const depths = Array.from({ length: rows }, () => 3.5 + 0.5 * randomInt(random, 4));
  const xs = [0];
  for (const w of widths) xs.push((xs.at(-1) ?? 0) + w);
  const zs = [0];
  for (const d of depths) zs.push((zs.at(-1) ?? 0) + d);
  const n = rows * cols;
  const others = shuffle(random, ROOM_TYPES.filter((t) => t !== "kitchen" && t !== "living room"));
  const types = shuffle(random, (["kitchen", "living room", ...others] as RoomType[]).slice(0, n));
  const rooms: Room[] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const id = r * cols + c;
      rooms.push({ id, type: types[id] as RoomType, min: [xs[c] as number, zs[r] as number], max: [xs[c + 1] as number, zs[r + 1] as number] });
    }
  }
  return { rooms, xs, zs, cols, rows };
}

/** Doors: a random spanning tree over the grid's adjacencies, plus maybe one more, each at a random point of its wall. */
function placeDoors(random: Random, rooms: Room[], cols: number, rows: number): Door[] {
  const n = rows * cols;
  const edges: [number, number][] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (c + 1 < cols) edges.push([r * cols + c, r * cols + c + 1]);
      if (r + 1 < rows) edges.push([r * cols + c, (r + 1) * cols + c]);
    }
  }
  const order = shuffle(random, edges);
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i] as number)));
  const chosen: [number, number][] = [];
  const spare: [number, number][] = [];
  for (const [a, b] of order) {
    if (find(a) !== find(b)) {
      parent[find(a)] = find(b);
      chosen.push([a, b]);
    } else spare.push([a, b]);
  }
  if (spare.length > 0 && random() < 0.5) chosen.push(spare[0] as [number, number]);
  return chosen.map(([a, b]) => {
    const ra = rooms[a] as Room;
    const rb = rooms[b] as Room;
    if (ra.max[0] === rb.min[0]) {
      // side by side: wall along z at x = ra.max[0]
      const lo = ra.min[1] + 0.8;
      const hi = ra.max[1] - 0.8;
      return { rooms: [a, b], centre: [ra.max[0], round3(lo + random() * (hi - lo))], along: "z", width: DOOR_WIDTH };
    }
    const lo = ra.min[0] + 0.8;
    const hi = ra.max[0] - 0.8;
    return { rooms: [a, b], centre: [round3(lo + random() * (hi - lo)), ra.max[1]], along: "x", width: DOOR_WIDTH };
  });
}

/** Walls along x (constant z), split by doors; then walls along z (constant x). */
function addWalls(objects: HomeObjects, xs: number[], zs: number[], doors: Door[]): void {
  const half = WALL_THICKNESS / 2;
  const addWall = (min: Point3, max: Point3): void => {
    objects.add({ type: "wall", kind: "structure", roomId: null, min, max, colour: WALL_COLOUR, states: {} });
  };
  const width = xs.at(-1) as number;
  const depth = zs.at(-1) as number;
  for (const z of zs) {
    const cuts = doors.filter((d) => d.along === "x" && d.centre[1] === z).map((d) => d.centre[0]).sort((a, b) => a - b);
    let from = -half;
    for (const cx of cuts) {
      addWall([from, 0, z - half], [cx - DOOR_WIDTH / 2, CEILING_HEIGHT, z + half]);
      addWall([cx - DOOR_WIDTH / 2, DOOR_HEIGHT, z - half], [cx + DOOR_WIDTH / 2, CEILING_HEIGHT, z + half]);
      from = cx + DOOR_WIDTH / 2;
    }
    addWall([from, 0, z - half], [width + half, CEILING_HEIGHT, z + half]);
  }
  for (const x of xs) {
    const cuts = doors.filter((d) => d.along === "z" && d.centre[0] === x).map((d) => d.centre[1]).sort((a, b) => a - b);
    let from = half;
    for (const cz of cuts) {
      addWall([x - half, 0, from], [x + half, CEILING_HEIGHT, cz - DOOR_WIDTH / 2]);
      addWall([x - half, DOOR_HEIGHT, cz - DOOR_WIDTH / 2], [x + half, CEILING_HEIGHT, cz + DOOR_WIDTH / 2]);
      from = cz + DOOR_WIDTH / 2;
    }
    addWall([x - half, 0, from], [x + half, CEILING_HEIGHT, depth - half]);
  }
}

/** Each room's furniture against a random wall (25 tries a piece), keeping doorways clear and the free space connected. */
function placeFurniture(random: Random, rooms: Room[], doors: Door[], objects: HomeObjects, grid: NavGrid): void {
  const half = WALL_THICKNESS / 2;
  const catalogue = objectCatalogue();
  for (const room of rooms) {
    for (const type of catalogue.rooms[room.type].furniture) {
      const spec = catalogueType(type);
      for (let attempt = 0; attempt < 25; attempt++) {
        const side = randomInt(random, 4);
        const [w, h, d] = spec.size;
        const sx = side < 2 ? w : d;
        const sz = side < 2 ? d : w;
        const x0 = room.min[0] + half + 0.02;
        const x1 = room.max[0] - half - 0.02;
        const z0 = room.min[1] + half + 0.02;
        const z1 = room.max[1] - half - 0.02;
        if (x1 - x0 < sx + 0.1 || z1 - z0 < sz + 0.1) continue;
        let minX: number;
        let minZ: number;
        if (side === 0) [minX, minZ] = [x0 + random() * (x1 - x0 - sx), z0];
        else if (side === 1) [minX, minZ] = [x0 + random() * (x1 - x0 - sx), z1 - sz];
        else if (side === 2) [minX, minZ] = [x0, z0 + random() * (z1 - z0 - sz)];
        else [minX, minZ] = [x1 - sx, z0 + random() * (z1 - z0 - sz)];
        const min: Point3 = [round3(minX), 0, round3(minZ)];
        const max: Point3 = [round3(minX + sx), h, round3(minZ + sz)];
        const overlaps = objects.list.some((o) => o.kind === "furniture" && min[0] < o.max[0] + 0.1 && max[0] > o.min[0] - 0.1 && min[2] < o.max[2] + 0.1 && max[2] > o.min[2] - 0.1);
        if (overlaps) continue;
        const nearDoor = doors.some((dr) => Math.max(Math.abs(Math.max(min[0], Math.min(dr.centre[0], max[0])) - dr.centre[0]), Math.abs(Math.max(min[2], Math.min(dr.centre[1], max[2])) - dr.centre[1])) < 1.1);
        if (nearDoor) continue;
        const trial = grid.clone();
        trial.block(min, max);
        if (!trial.isConnected()) continue;
        grid.block(min, max);
        const colour = pick(random, spec.colours);
        objects.add({ type, kind: "furniture", roomId: room.id, min, max, colour: colour.rgb, colourName: colour.name, material: spec.material, use: spec.use, states: closedStates(spec.states) });
        break;
      }
    }
  }
}

/** Every state an object can be in, false (closed, off, clean, …). */
function closedStates(names: readonly ObjectStateName[]): Partial<Record<ObjectStateName, boolean>> {
  const states: Partial<Record<ObjectStateName, boolean>> = {};
  for (const s of names) states[s] = false;
  return states;
}

/** Up to two small objects of the room's kinds on each receptacle, not overlapping, in front of a TV's or a monitor's screen. */
function placeObjectsOn(random: Random, rooms: Room[], furniture: SceneObject[], objects: HomeObjects): void {
  const catalogue = objectCatalogue();
  for (const f of furniture) {
    const spec = catalogueType(f.type);
    if (spec.receptacle !== "on" || f.roomId === null) continue;
    const room = rooms[f.roomId] as Room;
    const count = randomInt(random, 3);
    const placed: SceneObject[] = [];
    for (let k = 0; k < count; k++) {
      const type = pick(random, catalogue.smallObjects[room.type]);
      const small = catalogueType(type);
      const turned = random() < 0.5;
      const sx = turned ? small.size[2] : small.size[0];
      const sz = turned ? small.size[0] : small.size[2];
      if (f.max[0] - f.min[0] - sx - 0.04 <= 0 || f.max[2] - f.min[2] - sz - 0.04 <= 0) continue;
      const [u, v] = [random(), random()];
      // on a TV stand or a desk, in front of the screen standing at its back (parts.ts), where it can be seen
      const back = SCREEN_DEPTH_M[f.type] ?? 0;
      const front = back > 0 ? frontSide({ rooms }, f) : 3;
      const spanX = f.max[0] - f.min[0] - sx - 0.04 - (back > 0 && front <= 1 ? back : 0);
      const spanZ = f.max[2] - f.min[2] - sz - 0.04 - (back > 0 && front >= 2 ? back : 0);
      if (spanX <= 0 || spanZ <= 0) continue;
      const minX = round3(f.min[0] + 0.02 + (back > 0 && front === 1 ? back : 0) + u * spanX);
      const minZ = round3(f.min[2] + 0.02 + (back > 0 && front === 3 ? back : 0) + v * spanZ);
      const min: Point3 = [minX, f.max[1], minZ];
      const max: Point3 = [round3(minX + sx), round3(f.max[1] + small.size[1]), round3(minZ + sz)];
      if (placed.some((o) => min[0] < o.max[0] && max[0] > o.min[0] && min[2] < o.max[2] && max[2] > o.min[2])) continue;
      const colour = pick(random, small.colours);
      placed.push(objects.add({ type, kind: "object", roomId: room.id, min, max, colour: colour.rgb, colourName: colour.name, material: small.material, use: small.use, states: closedStates(small.states), on: f.id }));
    }
  }
}

/** A small object inside most closed receptacles (fridges, cabinets, drawers…), wholly within their box. */
function placeObjectsInside(random: Random, rooms: Room[], furniture: SceneObject[], objects: HomeObjects): void {
  const catalogue = objectCatalogue();
  for (const f of furniture) {
    const spec = catalogueType(f.type);
    if (f.roomId === null || !(spec.receptacle === "in" || spec.states.includes("open")) || random() < 0.4) continue;
    const room = rooms[f.roomId] as Room;
    const type = pick(random, catalogue.smallObjects[room.type]);
    const small = catalogueType(type);
    const [sx, sy, sz] = small.size;
    const spanX = f.max[0] - f.min[0] - sx - 0.1;
    const spanZ = f.max[2] - f.min[2] - sz - 0.1;
    if (spanX <= 0 || spanZ <= 0 || f.max[1] - f.min[1] < sy + 0.2) continue;
    const minX = round3(f.min[0] + 0.05 + random() * spanX);
    const minZ = round3(f.min[2] + 0.05 + random() * spanZ);
    const min: Point3 = [minX, round3(f.min[1] + 0.1), minZ];
    const max: Point3 = [round3(minX + sx), round3(f.min[1] + 0.1 + sy), round3(minZ + sz)];
    const colour = pick(random, small.colours);
    objects.add({ type, kind: "object", roomId: room.id, min, max, colour: colour.rgb, colourName: colour.name, material: small.material, use: small.use, states: closedStates(small.states), inside: f.id });
  }
}

/** The navigation grid of a home (walls and furniture blocked, inflated by the agent's radius). */
export function homeNavGrid(home: Home): NavGrid {
  const grid = new NavGrid(home.bounds.min, home.bounds.max);
  for (const o of home.objects) if (o.kind !== "object" && o.min[1] < 0.5) grid.block(o.min, o.max);
  return grid;
}

/** The room containing (x, z), if any. */
export function roomAt(home: Home, x: number, z: number): Room | undefined {
  return home.rooms.find((r) => x >= r.min[0] && x <= r.max[0] && z >= r.min[1] && z <= r.max[1]);
}
