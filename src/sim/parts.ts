/**
 * Objects as the simulator draws them: each catalogue type made of parts (boxes, upright
 * cylinders, ellipsoids and bowls: the lower half of an ellipsoid, open at the top) that make it
 * recognisable, sized and styled by the home's seed, inside the object's box (a few parts rise
 * above it: a bed's headboard and pillows, a TV on its stand, a tap, an open laptop's screen, a
 * desk's monitor).
 * Every part carries its object's id, so masks, depth and ids keep their meaning.
 */
import type { Rgb } from "./catalogue.js";
import type { Home, SceneObject } from "./home.js";
import { CERAMIC, DARK, FABRIC, GLASS, GLOW, LEAVES, METAL, PAPER, PLASTIC, SCREEN, STONE, WAX, WOOD, FOOD, hashUnit, materialOf } from "./materials.js";

export const BOX = 0;
/** An upright cylinder (elliptic when its box is not square) filling its box. */
export const CYLINDER = 1;
/** An ellipsoid inscribed in its box. */
export const ELLIPSOID = 2;
/** The lower half of an ellipsoid whose centre is at the top of the box: a bowl, open above. */
export const BOWL = 3;

export type V3 = [number, number, number];

/** A part as drawn: a shape filling its box, of its object `id`. */
export interface Part {
  id: number;
  shape: number;
  min: V3;
  max: V3;
  colour: Rgb;
  material: number;
}

const SHELL_M = 0.04;
const LIQUID: Rgb = [70, 130, 200];
const WATER: Rgb = [120, 170, 210];
const BLACK: Rgb = [28, 28, 30];
const STEEL: Rgb = [175, 178, 182];
const WHITE: Rgb = [238, 238, 235];
const LINEN: Rgb = [236, 234, 226];

const brighter = (c: Rgb): Rgb => [Math.min(255, Math.round(c[0] * 1.25 + 40)), Math.min(255, Math.round(c[1] * 1.25 + 40)), Math.min(255, Math.round(c[2] * 1.25 + 40))];
const darker = (c: Rgb): Rgb => [Math.round(c[0] * 0.45), Math.round(c[1] * 0.45), Math.round(c[2] * 0.45)];
const shade = (c: Rgb, k: number): Rgb => [Math.min(255, Math.round(c[0] * k)), Math.min(255, Math.round(c[1] * k)), Math.min(255, Math.round(c[2] * k))];
const mix = (a: Rgb, b: Rgb, k: number): Rgb => [Math.round(a[0] + (b[0] - a[0]) * k), Math.round(a[1] + (b[1] - a[1]) * k), Math.round(a[2] + (b[2] - a[2]) * k)];

/** How far a dining table's cloth hangs over its edges. */
const TABLECLOTH_DROP_M = 0.2;

/**
 * How deep from its back the screen standing on a piece of furniture reaches (the TV's, at most
 * 0.24 m, and a desk's monitor, 0.185 m, as shapeFurniture draws them): the home puts small
 * objects in front of it, where they can be seen.
 */
export const SCREEN_DEPTH_M: Readonly<Record<string, number>> = { "tv stand": 0.25, desk: 0.2 };

/**
 * Which side of a piece of furniture is its front: the side facing away from the nearest wall
 * of its room (0: −x, 1: +x, 2: −z, 3: +z).
 */
export function frontSide(home: Pick<Home, "rooms">, o: Pick<SceneObject, "roomId" | "min" | "max">): 0 | 1 | 2 | 3 {
  const room = o.roomId === null ? undefined : home.rooms[o.roomId];
  if (!room) return 3;
  const gaps = [o.min[0] - room.min[0], room.max[0] - o.max[0], o.min[2] - room.min[1], room.max[1] - o.max[2]];
  let nearest = 0;
  for (let i = 1; i < 4; i++) if ((gaps[i] as number) < (gaps[nearest] as number)) nearest = i;
  return [1, 0, 3, 2][nearest] as 0 | 1 | 2 | 3;
}

/**
 * An object's own frame: `a` across its front (0…W), `y` up (0…H), `d` from its back (0) to its
 * front (D), all in metres; `add` puts a part given in that frame into the world.
 */
class Frame {
  readonly W: number;
  readonly H: number;
  readonly D: number;
  readonly parts: Part[] = [];

  constructor(private readonly o: SceneObject, private readonly front: 0 | 1 | 2 | 3) {
    const sx = o.max[0] - o.min[0];
    const sz = o.max[2] - o.min[2];
    this.W = front >= 2 ? sx : sz;
    this.D = front >= 2 ? sz : sx;
    this.H = o.max[1] - o.min[1];
  }

  add(shape: number, a0: number, a1: number, y0: number, y1: number, d0: number, d1: number, colour: Rgb, material: number): void {
    const { o, front } = this;
    const y: [number, number] = [o.min[1] + y0, o.min[1] + y1];
    let x: [number, number];
    let z: [number, number];
    if (front === 3) [x, z] = [[o.min[0] + a0, o.min[0] + a1], [o.min[2] + d0, o.min[2] + d1]];
    else if (front === 2) [x, z] = [[o.min[0] + a0, o.min[0] + a1], [o.max[2] - d1, o.max[2] - d0]];
    else if (front === 1) [x, z] = [[o.min[0] + d0, o.min[0] + d1], [o.min[2] + a0, o.min[2] + a1]];
    else [x, z] = [[o.max[0] - d1, o.max[0] - d0], [o.min[2] + a0, o.min[2] + a1]];
    this.parts.push({ id: o.id, shape, min: [x[0], y[0], z[0]], max: [x[1], y[1], z[1]], colour, material });
  }

  box(a0: number, a1: number, y0: number, y1: number, d0: number, d1: number, colour: Rgb, material: number): void {
    this.add(BOX, a0, a1, y0, y1, d0, d1, colour, material);
  }

  /** An upright cylinder of radius r (across and deep) centred at (a, d). */
  cylinder(a: number, d: number, r: number, y0: number, y1: number, colour: Rgb, material: number, rd = r): void {
    this.add(CYLINDER, a - r, a + r, y0, y1, d - rd, d + rd, colour, material);
  }

  ellipsoid(a0: number, a1: number, y0: number, y1: number, d0: number, d1: number, colour: Rgb, material: number): void {
    this.add(ELLIPSOID, a0, a1, y0, y1, d0, d1, colour, material);
  }
}

/** Style choices of one object in one home: numbers in [0, 1). */
function styleOf(home: Home, o: SceneObject): (k: number) => number {
  return (k) => hashUnit(home.seed, o.id, k);
}

/** Four legs under a top, inset from its corners. */
function legs(f: Frame, height: number, size: number, inset: number, colour: Rgb, material: number, round: boolean, D = f.D): void {
  const { W } = f;
  for (const a of [inset + size / 2, W - inset - size / 2]) {
    for (const d of [inset + size / 2, D - inset - size / 2]) {
      if (round) f.cylinder(a, d, size / 2, 0, height, colour, material);
      else f.box(a - size / 2, a + size / 2, 0, height, d - size / 2, d + size / 2, colour, material);
    }
  }
}

/** A front of drawers or doors: panels standing 1.5 cm proud of the carcass, with knobs or bars. */
function fronts(f: Frame, rows: number, cols: number, y0: number, y1: number, colour: Rgb, handle: Rgb, bars: boolean, from = 0, W = f.W): void {
  const { D } = f;
  const gap = 0.012;
  const h = (y1 - y0) / rows;
  const w = W / cols;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const a0 = from + c * w + gap;
      const a1 = from + (c + 1) * w - gap;
      const b0 = y0 + r * h + gap;
      const b1 = y0 + (r + 1) * h - gap;
      f.box(a0, a1, b0, b1, D - 0.02, D - 0.005, colour, WOOD);
      const ym = rows === 1 ? b1 - Math.min(0.12, (b1 - b0) * 0.2) : (b0 + b1) / 2;
      if (bars) {
        const am = cols === 1 ? (a0 + a1) / 2 : c % 2 === 0 ? a1 - 0.06 : a0 + 0.06;
        const len = Math.min(0.14, (a1 - a0) * 0.5);
        if (rows === 1 && cols > 1) f.box(am - 0.008, am + 0.008, ym - len / 2, ym + len / 2, D - 0.005, D, handle, METAL);
        else f.box(am - len / 2, am + len / 2, ym - 0.008, ym + 0.008, D - 0.005, D, handle, METAL);
      } else {
        const am = (a0 + a1) / 2;
        f.ellipsoid(am - 0.016, am + 0.016, ym - 0.016, ym + 0.016, D - 0.006, D, handle, METAL);
      }
    }
  }
}

/**
 * A chair pushed in at the front edge (d = front) of a table: seat, four legs and a back at the
 * front, `w` wide, its seat under the table top (`under`).
 */
function chairAt(f: Frame, a: number, front: number, w: number, colour: Rgb, under: number): void {
  const seat = Math.min(0.46, under - 0.1);
  const d0 = front - 0.42;
  const a0 = a - w / 2;
  const a1 = a + w / 2;
  const legSize = 0.035;
  for (const la of [a0 + 0.02, a1 - 0.02 - legSize]) {
    for (const ld of [d0 + 0.02, front - 0.02 - legSize]) f.box(la, la + legSize, 0, seat, ld, ld + legSize, colour, WOOD);
  }
  f.box(a0, a1, seat, seat + 0.04, d0, front, colour, WOOD);
  f.box(a0 + 0.02, a0 + 0.05, seat, seat + 0.46, front - 0.04, front - 0.01, colour, WOOD);
  f.box(a1 - 0.05, a1 - 0.02, seat, seat + 0.46, front - 0.04, front - 0.01, colour, WOOD);
  f.box(a0 + 0.02, a1 - 0.02, seat + 0.22, seat + 0.46, front - 0.04, front - 0.015, colour, WOOD);
}

function carcass(f: Frame, colour: Rgb, material: number, y0 = 0): void {
  f.box(0, f.W, y0, f.H, 0, f.D - 0.02, colour, material);
}

/** The wood of a piece's legs, frame or base: dark or light by its style. */
function woodOf(s: (k: number) => number): Rgb {
  return s(1) < 0.5 ? [118, 78, 44] : [160, 118, 72];
}

type FurnitureShaper = (home: Home, o: SceneObject, f: Frame, colour: Rgb) => void;

/** A table, desk or coffee table: a top on four legs; a desk with its chair pushed in and its monitor; places set at a table or desk. */
function shapeTable(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const top = 0.035 + 0.02 * s(2);
  const round = s(3) < 0.4;
  const seats = o.type === "coffee table" ? 0 : o.type === "desk" ? 1 : W >= 1.2 ? 2 : 1;
  // places set at a table or desk; the top stops short of a desk chair's back
  const reach = seats > 0 ? D - 0.05 : D;
  // a dining table wears a cloth in its own colour hanging 20 cm over its edges: the embedded
  // detector finds a table so dressed from more of a recording's views (BENCHMARKS.md)
  if (o.type === "table") f.box(0, W, H - TABLECLOTH_DROP_M, H, 0, reach, shade(colour, 0.9), FABRIC);
  else f.box(0, W, H - top, H, 0, reach, colour, WOOD);
  const leg = o.type === "coffee table" ? 0.05 : 0.045 + 0.015 * s(4);
  legs(f, H - top, leg, 0.03 + 0.03 * s(5), shade(colour, 0.8), WOOD, round, reach);
  const chair: Rgb = s(11) < 0.4 ? shade(colour, 0.9) : s(11) < 0.7 ? BLACK : [150, 110, 70];
  // a desk's chair pushed in under its front edge; a dining table has none (a detector saw chairs pushed in, not the table)
  if (o.type === "desk") chairAt(f, s(7) < 0.5 ? W * 0.68 : W * 0.32, D, 0.44, chair, H - top - 0.02);
  if (seats > 0) {
    // the table set: a plate and a cup at each place, a bowl and a bottle further back; plates and cups in colour on a light top
    for (let k = 0; k < seats; k++) {
      const centre = o.type === "desk" ? (s(7) < 0.5 ? W * 0.68 : W * 0.32) : ((k + 0.5) * W) / seats;
      const light = colour[0] + colour[1] + colour[2] > 540;
      f.cylinder(centre, reach - 0.2, 0.12, H, H + 0.015, light ? [60, 80, 130] : WHITE, CERAMIC);
      f.cylinder(centre + 0.2, reach - 0.28, 0.04, H, H + 0.1, light ? [190, 70, 50] : WHITE, CERAMIC);
    }
    f.add(BOWL, W / 2 - 0.12, W / 2 + 0.12, H, H + 0.08, reach * 0.3 - 0.1, reach * 0.3 + 0.1, s(13) < 0.5 ? [230, 200, 90] : [190, 70, 50], CERAMIC);
    f.cylinder(W / 2 + 0.25, reach * 0.3, 0.035, H, H + 0.28, [40, 110, 60], GLASS);
    if (o.type === "table") {
      const light = colour[0] + colour[1] + colour[2] > 540;
      for (let k = 0; k < seats; k++) f.cylinder(((k + 0.5) * W) / seats, 0.18, 0.12, H, H + 0.015, light ? [60, 80, 130] : WHITE, CERAMIC);
    }
    if (o.type === "desk") {
      // a monitor on a foot, towards the back
      const centre = s(7) < 0.5 ? W * 0.68 : W * 0.32;
      f.box(centre - 0.08, centre + 0.08, H, H + 0.015, 0.08, 0.22, BLACK, PLASTIC);
      f.box(centre - 0.02, centre + 0.02, H, H + 0.14, 0.12, 0.15, BLACK, PLASTIC);
      f.box(centre - 0.27, centre + 0.27, H + 0.1, H + 0.42, 0.15, 0.18, BLACK, PLASTIC);
      f.box(centre - 0.26, centre + 0.26, H + 0.11, H + 0.41, 0.18, 0.185, [30, 40, 60], SCREEN);
    }
  }
  if (o.type === "coffee table" && s(6) < 0.6) f.box(0.05, W - 0.05, 0.1, 0.125, 0.05, D - 0.05, shade(colour, 0.9), WOOD);
  if (o.type === "desk" && s(12) < 0.35) {
    // a drawer pedestal and a modesty panel, on some desks
    const left = s(7) < 0.5;
    const a0 = left ? 0.02 : W - 0.44;
    f.box(a0, a0 + 0.42, 0, H - top, 0.02, D - 0.03, colour, WOOD);
    fronts(f, 3, 1, 0.04, H - top - 0.01, colour, STEEL, true, a0, 0.42);
    f.box(left ? 0.44 : 0.04, left ? W - 0.04 : W - 0.46, H - top - 0.35, H - top, 0.04, 0.06, shade(colour, 0.85), WOOD);
  }
}

/** A sofa or armchair: legs, a base, a back, rolled arms, cushions and, on most sofas, two pillows. */
function shapeSeat(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const wood = woodOf(s);
  const arm = o.type === "sofa" ? 0.16 + 0.06 * s(2) : 0.13;
  const legH = o.type === "sofa" ? 0.06 + 0.06 * s(3) : 0.12 + 0.06 * s(3);
  const seatTop = legH + 0.3;
  const back = 0.2;
  const fabric = colour;
  legs(f, legH, 0.05, 0.05, s(4) < 0.5 ? wood : BLACK, s(4) < 0.5 ? WOOD : METAL, s(5) < 0.5);
  f.box(0, W, legH, seatTop - 0.06, 0, D, shade(fabric, 0.92), FABRIC);
  f.box(0, W, legH, H, 0, back, shade(fabric, 0.95), FABRIC);
  const armTop = seatTop + 0.18 + 0.06 * s(6);
  f.box(0, arm, legH, armTop, back * 0.5, D, fabric, FABRIC);
  f.box(W - arm, W, legH, armTop, back * 0.5, D, fabric, FABRIC);
  // rolled arms
  f.add(ELLIPSOID, -0.01, arm + 0.01, armTop - 0.06, armTop + 0.05, back * 0.5, D, fabric, FABRIC);
  f.add(ELLIPSOID, W - arm - 0.01, W + 0.01, armTop - 0.06, armTop + 0.05, back * 0.5, D, fabric, FABRIC);
  const n = o.type === "sofa" ? 2 + Math.floor(s(7) * 2) : 1;
  const span = (W - 2 * arm) / n;
  for (let k = 0; k < n; k++) {
    const a0 = arm + k * span + 0.006;
    const a1 = arm + (k + 1) * span - 0.006;
    // plump cushions: a seat cushion with a domed top, a rounded back cushion
    f.box(a0, a1, seatTop - 0.06, seatTop, back, D - 0.01, shade(fabric, 1.04), FABRIC);
    f.ellipsoid(a0, a1, seatTop - 0.05, seatTop + 0.07, back - 0.02, D, shade(fabric, 1.04), FABRIC);
    f.ellipsoid(a0, a1, seatTop + 0.02, H, back - 0.06, back + 0.16, shade(fabric, 1.02), FABRIC);
  }
  if (o.type === "sofa" && s(8) < 0.7) {
    const pillow = mix(fabric, s(9) < 0.5 ? WHITE : [200, 160, 60], 0.6);
    f.box(arm + 0.04, arm + 0.34, seatTop + 0.06, seatTop + 0.34, back + 0.1, back + 0.2, pillow, FABRIC);
    f.box(W - arm - 0.34, W - arm - 0.04, seatTop + 0.06, seatTop + 0.34, back + 0.1, back + 0.2, pillow, FABRIC);
  }
}

/** A bed: its frame on short legs, a headboard, the mattress, a blanket in the bed's colour and pillows. */
function shapeBed(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const wood = woodOf(s);
  const frameH = 0.22 + 0.06 * s(2);
  const frameCol = s(3) < 0.5 ? wood : [70, 66, 64];
  f.box(0, W, 0.08, frameH, 0.06, D, frameCol as Rgb, WOOD);
  legs(f, 0.08, 0.06, 0.03, frameCol as Rgb, WOOD, false);
  const head = H + 0.35 + 0.2 * s(4);
  f.box(0, W, 0, head, 0, 0.07, frameCol as Rgb, s(5) < 0.4 ? FABRIC : WOOD);
  f.box(0.03, W - 0.03, frameH, H - 0.06, 0.08, D - 0.03, LINEN, FABRIC); // mattress
  // the blanket, in the bed's colour, over the lower two thirds
  f.box(-0.005, W + 0.005, frameH + 0.08, H, D * 0.36, D, colour, FABRIC);
  f.box(0.02, W - 0.02, H - 0.06, H - 0.01, 0.08, D * 0.36, mix(LINEN, colour, 0.25), FABRIC);
  const pillows = W > 1.2 ? 2 : 1;
  const pw = (W - 0.2) / pillows;
  for (let k = 0; k < pillows; k++) f.ellipsoid(0.1 + k * pw + 0.02, 0.1 + (k + 1) * pw - 0.02, H - 0.06, H + 0.1, 0.1, 0.48, WHITE, FABRIC);
}

/** A fridge: French doors over a freezer drawer, handles beside the seam, notes held by magnets. */
function shapeFridge(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  // French doors over a freezer drawer, handles beside the seam, notes held by magnets
  const cut = H * (0.3 + 0.04 * s(2));
  f.box(0, W, 0.02, H, 0, D - 0.05, colour, METAL);
  f.box(0.005, W - 0.005, 0.02, cut - 0.008, D - 0.05, D - 0.02, colour, METAL);
  f.box(0.005, W / 2 - 0.004, cut + 0.008, H - 0.005, D - 0.05, D - 0.02, colour, METAL);
  f.box(W / 2 + 0.004, W - 0.005, cut + 0.008, H - 0.005, D - 0.05, D - 0.02, colour, METAL);
  f.box(0, W, 0, 0.06, 0.04, D - 0.06, BLACK, PLASTIC);
  f.box(W / 2 - 0.05, W / 2 - 0.03, cut + 0.25, H - 0.2, D - 0.02, D, STEEL, METAL);
  f.box(W / 2 + 0.03, W / 2 + 0.05, cut + 0.25, H - 0.2, D - 0.02, D, STEEL, METAL);
  f.box(0.15, W - 0.15, cut - 0.1, cut - 0.08, D - 0.02, D, STEEL, METAL);
  const notes: Rgb[] = [[250, 250, 245], [240, 220, 120], [120, 170, 220], [230, 130, 120]];
  for (let k = 0; k < 4; k++) {
    const a = (k < 2 ? 0.06 : W / 2 + 0.08) + 0.1 * (k % 2) + 0.03 * s(40 + k);
    const y = cut + 0.5 + 0.15 * (k % 2) + 0.1 * s(50 + k);
    f.box(a, a + 0.08 + 0.03 * s(60 + k), y, y + 0.11 + 0.04 * s(70 + k), D - 0.02, D - 0.017, notes[k] as Rgb, PAPER);
  }
}

/** A cabinet, dresser or nightstand: a carcass on legs or a plinth, a top, and drawer or door fronts. */
function shapeStorage(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const legH = s(2) < 0.5 ? 0.08 : 0;
  if (legH > 0) legs(f, legH, 0.04, 0.02, shade(colour, 0.7), WOOD, s(3) < 0.5);
  else f.box(0.02, W - 0.02, 0, 0.06, 0.02, D - 0.04, shade(colour, 0.6), WOOD);
  carcass(f, colour, WOOD, legH || 0.06);
  f.box(-0.01, W + 0.01, H - 0.03, H, 0, D, shade(colour, 0.95), WOOD);
  const handle: Rgb = s(4) < 0.5 ? STEEL : [190, 160, 90];
  if (o.type === "dresser") fronts(f, 3, 2, (legH || 0.06) + 0.01, H - 0.03, colour, handle, s(5) < 0.5);
  else if (o.type === "nightstand") fronts(f, 2, 1, (legH || 0.06) + 0.01, H - 0.03, colour, handle, s(5) < 0.5);
  else fronts(f, 1, 2, (legH || 0.06) + 0.01, H - 0.03, colour, handle, true);
}

/** A kitchen counter: a plinth, doors and drawers with handles, a stone top. */
function shapeCounter(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const wood = woodOf(s);
  const door: Rgb = s(2) < 0.5 ? [236, 234, 228] : wood;
  f.box(0.02, W - 0.02, 0, 0.1, 0.02, D - 0.08, BLACK, PLASTIC);
  f.box(0, W, 0.1, H - 0.04, 0, D - 0.05, door, WOOD);
  const n = Math.max(2, Math.round(W / 0.5));
  for (let k = 0; k < n; k++) {
    const a0 = (k * W) / n + 0.006;
    const a1 = ((k + 1) * W) / n - 0.006;
    f.box(a0, a1, 0.11, H - 0.2, D - 0.05, D - 0.035, door, WOOD);
    f.box(a0, a1, H - 0.19, H - 0.055, D - 0.05, D - 0.035, door, WOOD);
    f.box((a0 + a1) / 2 - 0.06, (a0 + a1) / 2 + 0.06, H - 0.13, H - 0.115, D - 0.035, D - 0.02, STEEL, METAL);
  }
  f.box(0, W, H - 0.04, H, 0, D, colour, STONE);
}

/** A stove: the oven with its window and handle, the control panel and its knobs, the hob's burners (glowing when on). */
function shapeStove(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const { W, H, D } = f;
  f.box(0, W, 0, H - 0.03, 0, D - 0.04, colour, METAL);
  f.box(0.03, W - 0.03, 0.12, H - 0.16, D - 0.04, D - 0.02, colour, METAL); // oven door
  f.box(0.1, W - 0.1, 0.25, H - 0.3, D - 0.02, D - 0.015, [20, 20, 24], GLASS); // its window
  f.box(0.08, W - 0.08, H - 0.22, H - 0.2, D - 0.02, D, STEEL, METAL); // handle
  f.box(0, W, H - 0.14, H - 0.03, D - 0.04, D - 0.01, shade(colour, 0.8), METAL); // control panel
  for (let k = 0; k < 4; k++) f.cylinder(0.1 + ((W - 0.2) * (k + 0.5)) / 4, D - 0.01, 0.018, H - 0.1, H - 0.07, BLACK, PLASTIC, 0.01);
  f.box(0, W, H - 0.03, H, 0, D, [30, 30, 32], GLASS); // hob
  const on = o.states.toggled === true;
  for (const [a, d] of [[0.25, 0.18], [0.75, 0.18], [0.25, 0.62], [0.75, 0.62]] as const) {
    f.cylinder(a * W, d * D, 0.08, H - 0.005, H + 0.003, on ? [230, 70, 30] : [55, 55, 58], on ? GLOW : METAL);
  }
}

/** A microwave on its wooden base: the door's window and its display (lit when on), the buttons. */
function shapeMicrowave(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const { W, H, D } = f;
  const wood = woodOf(styleOf(home, o));
  const base = H - 0.32;
  f.box(0, W, 0, base, 0, D, wood, WOOD);
  f.box(0.02, W - 0.02, 0.02, base - 0.02, D - 0.005, D, shade(wood, 1.08), WOOD);
  f.box(0.02, W - 0.02, base, H, 0.05, D - 0.02, colour, METAL);
  f.box(0.04, W * 0.68, base + 0.04, H - 0.04, D - 0.02, D - 0.008, [22, 22, 26], GLASS);
  f.box(W * 0.72, W - 0.05, H - 0.09, H - 0.05, D - 0.02, D - 0.01, o.states.toggled ? [80, 220, 120] : [40, 60, 50], o.states.toggled ? GLOW : SCREEN);
  for (let k = 0; k < 3; k++) f.cylinder(W * 0.81, D - 0.012, 0.015, base + 0.06 + k * 0.05, base + 0.09 + k * 0.05, STEEL, METAL, 0.008);
}

/** A bookshelf: sides, back, top and plinth, 3 or 4 shelves of standing books. */
function shapeShelf(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const t = 0.025;
  f.box(0, t, 0, H, 0, D, colour, WOOD);
  f.box(W - t, W, 0, H, 0, D, colour, WOOD);
  f.box(t, W - t, 0, H, 0, 0.012, shade(colour, 0.8), WOOD);
  f.box(t, W - t, H - t, H, 0, D, colour, WOOD);
  f.box(t, W - t, 0, 0.06, 0, D, colour, WOOD);
  const shelves = 3 + Math.floor(s(2) * 2);
  const gap = (H - 0.06 - t) / shelves;
  for (let k = 0; k < shelves; k++) {
    const y = 0.06 + k * gap;
    if (k > 0) f.box(t, W - t, y - t, y, 0.012, D, colour, WOOD);
    // books standing on this shelf, leaning at the end
    let a = t + 0.01 + 0.15 * s(10 + k);
    const end = W - t - 0.02 - 0.2 * s(20 + k);
    let b = 0;
    while (a < end) {
      const thick = 0.02 + 0.03 * s(30 + k * 40 + b);
      const tall = Math.min(gap - t - 0.02, 0.17 + 0.1 * s(31 + k * 40 + b));
      const deep = Math.min(D - 0.03, 0.15 + 0.08 * s(32 + k * 40 + b));
      const r = s(33 + k * 40 + b);
      const col: Rgb = r < 0.2 ? [150, 30, 30] : r < 0.4 ? [30, 60, 130] : r < 0.55 ? [40, 110, 60] : r < 0.7 ? [220, 200, 150] : r < 0.85 ? [40, 40, 45] : [200, 120, 40];
      if (a + thick > end) break;
      f.box(a, a + thick, y, y + tall, D - 0.02 - deep, D - 0.02, col, PLASTIC);
      a += thick + 0.002;
      b++;
    }
  }
}

/** A TV stand: a low cabinet with two doors, the television on its foot towards the back. */
function shapeTvStand(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  f.box(0, W, 0.05, H, 0, D, colour, WOOD);
  f.box(0.03, W - 0.03, 0, 0.05, 0.03, D - 0.03, BLACK, PLASTIC);
  f.box(0.02, W / 2 - 0.01, 0.08, H - 0.04, D - 0.005, D + 0.001, shade(colour, 1.25), WOOD);
  f.box(W / 2 + 0.01, W - 0.02, 0.08, H - 0.04, D - 0.005, D + 0.001, shade(colour, 1.25), WOOD);
  // the television on its foot, towards the back
  const tw = Math.min(W - 0.1, 1.0 + 0.25 * s(2));
  const th = tw * 0.5625;
  const a0 = (W - tw) / 2;
  const yb = H + 0.08;
  f.box(W / 2 - 0.18, W / 2 + 0.18, H, H + 0.015, 0.1, 0.3, [25, 25, 28], METAL);
  f.box(W / 2 - 0.04, W / 2 + 0.04, H, yb + 0.1, 0.16, 0.19, [25, 25, 28], METAL);
  f.box(a0, a0 + tw, yb, yb + th, 0.19, 0.235, [18, 18, 20], PLASTIC);
  f.box(a0 + 0.015, a0 + tw - 0.015, yb + 0.015, yb + th - 0.015, 0.235, 0.24, [10, 12, 16], SCREEN);
}

/** A sink: a cabinet under a basin (a rim around an open bowl), the tap, running water when on. */
function shapeSink(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const wood = woodOf(s);
  const bathroom = home.rooms[o.roomId ?? -1]?.type === "bathroom";
  const body: Rgb = bathroom ? (s(2) < 0.5 ? wood : [236, 236, 232]) : [236, 234, 228];
  f.box(0, W, 0, H - 0.12, 0, D - 0.02, body, WOOD);
  fronts(f, 1, 2, 0.06, H - 0.13, body, STEEL, true);
  // the basin: a rim around an open bowl
  const rim = 0.05;
  f.box(0, W, H - 0.12, H, 0, rim + 0.06, colour, CERAMIC);
  f.box(0, W, H - 0.12, H, D - rim, D, colour, CERAMIC);
  f.box(0, rim, H - 0.12, H, 0, D, colour, CERAMIC);
  f.box(W - rim, W, H - 0.12, H, 0, D, colour, CERAMIC);
  f.add(BOWL, rim - 0.005, W - rim + 0.005, H - 0.26, H - 0.02, rim + 0.055, D - rim + 0.005, colour, CERAMIC);
  // the tap
  f.cylinder(W / 2, 0.035, 0.018, H, H + 0.22, STEEL, METAL);
  f.box(W / 2 - 0.014, W / 2 + 0.014, H + 0.19, H + 0.22, 0.035, 0.16, STEEL, METAL);
  if (o.states.toggled) f.cylinder(W / 2, 0.15, 0.008, H - 0.1, H + 0.19, WATER, GLASS);
}

/** A toilet: the pedestal, the bowl and its seat, the tank and its flush lever, the lid open or shut. */
function shapeToilet(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const { W, H, D } = f;
  const bowlTop = 0.4;
  f.add(CYLINDER, W * 0.25, W * 0.75, 0, 0.25, 0.2, 0.5, colour, CERAMIC);
  f.add(BOWL, W * 0.04, W * 0.96, bowlTop - 0.24, bowlTop, 0.17, D - 0.01, colour, CERAMIC);
  f.add(ELLIPSOID, W * 0.02, W * 0.98, bowlTop - 0.02, bowlTop + 0.02, 0.16, D, shade(colour, 0.97), CERAMIC);
  f.box(W * 0.05, W * 0.95, bowlTop, H, 0, 0.19, colour, CERAMIC); // the tank
  f.box(W * 0.03, W * 0.97, H - 0.02, H, 0, 0.2, colour, CERAMIC);
  f.box(W * 0.7, W * 0.8, H - 0.06, H - 0.04, 0.19, 0.2, STEEL, METAL);
  if (o.states.open) f.box(W * 0.06, W * 0.94, bowlTop + 0.02, H - 0.04, 0.19, 0.215, shade(colour, 0.95), CERAMIC);
  else f.add(ELLIPSOID, W * 0.03, W * 0.97, bowlTop + 0.015, bowlTop + 0.05, 0.18, D - 0.01, colour, CERAMIC);
}

/** A bathtub: its rim around an open tub, the tap, water when filled or running. */
function shapeBathtub(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const { W, H, D } = f;
  const rim = 0.07;
  f.box(0, W, 0, H, 0, rim, colour, CERAMIC);
  f.box(0, W, 0, H, D - rim, D, colour, CERAMIC);
  f.box(0, rim, 0, H, 0, D, colour, CERAMIC);
  f.box(W - rim, W, 0, H, 0, D, colour, CERAMIC);
  f.box(rim, W - rim, 0, 0.1, rim, D - rim, colour, CERAMIC);
  f.add(BOWL, rim, W - rim, 0.08, H - 0.02, rim, D - rim, colour, CERAMIC);
  f.cylinder(0.2, 0.03, 0.02, H, H + 0.18, STEEL, METAL);
  f.box(0.186, 0.214, H + 0.15, H + 0.18, 0.03, 0.15, STEEL, METAL);
  if (o.states.filled) f.box(rim, W - rim, H - 0.12, H - 0.1, rim, D - rim, WATER, GLASS);
  if (o.states.toggled) f.cylinder(0.2, 0.14, 0.008, H - 0.12, H + 0.15, WATER, GLASS);
}

/** A floor lamp: a base, a pole and a shade (glowing when on). */
function shapeFloorLamp(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const on = o.states.toggled === true;
  const shadeCol: Rgb = on ? [255, 240, 200] : s(2) < 0.5 ? [236, 226, 200] : [210, 200, 180];
  f.cylinder(W / 2, D / 2, Math.min(W, D) * 0.42, 0, 0.03, colour, METAL);
  f.cylinder(W / 2, D / 2, 0.014, 0.03, H - 0.3, colour, METAL);
  f.cylinder(W / 2, D / 2, Math.min(W, D) * 0.48, H - 0.34, H, shadeCol, on ? GLOW : FABRIC);
}

/** Any other furniture: a block of its material. */
function shapeBlock(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const { W, H, D } = f;
  f.box(0, W, 0, H, 0, D, colour, materialOf(o.material));
}

/** Each furniture type's parts; a type not listed is a block of its material. */
const FURNITURE_SHAPES: Record<string, FurnitureShaper> = {
  table: shapeTable,
  desk: shapeTable,
  "coffee table": shapeTable,
  sofa: shapeSeat,
  armchair: shapeSeat,
  bed: shapeBed,
  fridge: shapeFridge,
  cabinet: shapeStorage,
  dresser: shapeStorage,
  nightstand: shapeStorage,
  counter: shapeCounter,
  stove: shapeStove,
  microwave: shapeMicrowave,
  shelf: shapeShelf,
  "tv stand": shapeTvStand,
  sink: shapeSink,
  toilet: shapeToilet,
  bathtub: shapeBathtub,
  "floor lamp": shapeFloorLamp,
};

function shapeFurniture(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  (FURNITURE_SHAPES[o.type] ?? shapeBlock)(home, o, f, colour);
}

function shapeSmall(home: Home, o: SceneObject, f: Frame, colour: Rgb): void {
  const s = styleOf(home, o);
  const { W, H, D } = f;
  const mat = materialOf(o.material);
  switch (o.type) {
    case "mug": {
      f.add(CYLINDER, 0, W * 0.78, 0, H, 0, D, colour, CERAMIC);
      f.add(CYLINDER, W * 0.06, W * 0.72, H - 0.004, H + 0.0005, D * 0.08, D * 0.92, o.states.filled ? LIQUID : [40, 30, 25], o.states.filled ? GLASS : DARK);
      f.box(W * 0.76, W, H * 0.25, H * 0.35, D * 0.44, D * 0.56, colour, CERAMIC);
      f.box(W * 0.76, W, H * 0.7, H * 0.8, D * 0.44, D * 0.56, colour, CERAMIC);
      f.box(W * 0.9, W, H * 0.25, H * 0.8, D * 0.44, D * 0.56, colour, CERAMIC);
      break;
    }
    case "bowl":
      f.add(BOWL, 0, W, 0, H, 0, D, colour, CERAMIC);
      if (o.states.filled) f.add(CYLINDER, W * 0.1, W * 0.9, H * 0.6, H * 0.65, D * 0.1, D * 0.9, LIQUID, GLASS);
      break;
    case "bottle":
      f.add(CYLINDER, 0, W, 0, H * 0.62, 0, D, colour, GLASS);
      f.add(ELLIPSOID, 0, W, H * 0.5, H * 0.76, 0, D, colour, GLASS);
      f.add(CYLINDER, W * 0.32, W * 0.68, H * 0.7, H * 0.95, D * 0.32, D * 0.68, colour, GLASS);
      f.add(CYLINDER, W * 0.3, W * 0.7, H * 0.93, H, D * 0.3, D * 0.7, s(1) < 0.5 ? [200, 200, 200] : [180, 40, 40], PLASTIC);
      f.add(CYLINDER, -0.001, W + 0.001, H * 0.2, H * 0.42, -0.001, D + 0.001, s(2) < 0.5 ? WHITE : [230, 210, 150], PAPER);
      break;
    case "vase":
      f.add(ELLIPSOID, 0, W, 0, H * 0.7, 0, D, colour, CERAMIC);
      f.add(CYLINDER, W * 0.3, W * 0.7, H * 0.55, H, D * 0.3, D * 0.7, colour, CERAMIC);
      f.add(CYLINDER, W * 0.24, W * 0.76, H * 0.95, H, D * 0.24, D * 0.76, shade(colour, 0.9), CERAMIC);
      break;
    case "apple":
    case "tomato":
      f.add(ELLIPSOID, 0, W, 0, H * 0.92, 0, D, colour, FOOD);
      f.add(CYLINDER, W * 0.46, W * 0.54, H * 0.8, H, D * 0.46, D * 0.54, o.type === "apple" ? [90, 60, 30] : [60, 120, 40], FOOD);
      break;
    case "bread":
      f.box(0, W, 0, H * 0.5, 0, D, colour, FOOD);
      f.add(ELLIPSOID, 0, W, 0, H, 0, D, shade(colour, 0.9), FOOD);
      break;
    case "book":
      if (o.states.open) {
        f.box(0, W, 0, H * 0.3, 0, D, colour, PLASTIC);
        f.box(0.005, W - 0.005, H * 0.3, H * 0.6, 0.005, D - 0.005, WHITE, PAPER);
      } else {
        f.box(0, W, 0, H * 0.15, 0, D, colour, PLASTIC);
        f.box(0, W, H * 0.85, H, 0, D, colour, PLASTIC);
        f.box(0, W * 0.07, 0, H, 0, D, colour, PLASTIC);
        f.box(W * 0.07, W - 0.006, H * 0.15, H * 0.85, 0.004, D - 0.004, [240, 236, 222], PAPER);
      }
      break;
    case "laptop": {
      const on = o.states.toggled === true;
      f.box(0, W, 0, H * 0.6, 0, D, colour, METAL);
      f.box(W * 0.08, W * 0.92, H * 0.6, H * 0.62, D * 0.12, D * 0.62, BLACK, PLASTIC); // keys
      f.box(W * 0.36, W * 0.64, H * 0.6, H * 0.61, D * 0.68, D * 0.92, shade(colour, 0.85), METAL); // touchpad
      if (o.states.open) {
        f.box(0, W, H * 0.6, H * 0.6 + D * 0.85, 0, 0.012, colour, METAL);
        f.box(W * 0.04, W * 0.96, H * 0.6 + 0.02, H * 0.6 + D * 0.8, 0.012, 0.015, on ? [90, 140, 200] : [16, 18, 22], on ? GLOW : SCREEN);
      } else f.box(0, W, H * 0.6, H, 0, D, shade(colour, 1.05), METAL);
      break;
    }
    case "lamp": {
      const on = o.states.toggled === true;
      f.add(CYLINDER, W * 0.2, W * 0.8, 0, 0.025, D * 0.2, D * 0.8, colour, METAL);
      f.add(ELLIPSOID, W * 0.3, W * 0.7, 0.02, H * 0.35, D * 0.3, D * 0.7, colour, CERAMIC);
      f.add(CYLINDER, W * 0.47, W * 0.53, H * 0.3, H * 0.62, D * 0.47, D * 0.53, STEEL, METAL);
      f.add(CYLINDER, 0, W, H * 0.58, H, 0, D, on ? [255, 240, 200] : [236, 226, 200], on ? GLOW : FABRIC);
      break;
    }
    case "plant": {
      const pot: Rgb = s(1) < 0.5 ? [176, 96, 60] : s(1) < 0.75 ? WHITE : [60, 60, 64];
      f.add(CYLINDER, W * 0.18, W * 0.82, 0, H * 0.38, D * 0.18, D * 0.82, pot, CERAMIC);
      f.add(CYLINDER, W * 0.2, W * 0.8, H * 0.36, H * 0.39, D * 0.2, D * 0.8, [70, 50, 35], FOOD);
      const n = 5 + Math.floor(s(2) * 3);
      for (let k = 0; k < n; k++) {
        const a = W * (0.12 + 0.76 * s(10 + k));
        const d = D * (0.12 + 0.76 * s(20 + k));
        const r = W * (0.16 + 0.12 * s(30 + k));
        const y = H * (0.45 + 0.4 * s(40 + k));
        f.ellipsoid(Math.max(-0.03, a - r), Math.min(W + 0.03, a + r), y - r * 0.9, Math.min(H + 0.04, y + r * 0.9), Math.max(-0.03, d - r), Math.min(D + 0.03, d + r), shade(colour, 0.75 + 0.45 * s(50 + k)), LEAVES);
      }
      break;
    }
    case "candle": {
      f.add(CYLINDER, 0, W, 0, H * 0.9, 0, D, colour, WAX);
      f.add(CYLINDER, W * 0.47, W * 0.53, H * 0.9, H, D * 0.47, D * 0.53, BLACK, DARK);
      if (o.states.toggled) f.ellipsoid(W * 0.35, W * 0.65, H, H + 0.04, D * 0.35, D * 0.65, [255, 200, 90], GLOW);
      break;
    }
    case "knife":
      f.box(0, W * 0.4, 0, H, D * 0.2, D * 0.8, BLACK, PLASTIC);
      f.box(W * 0.4, W, 0, H * 0.5, D * 0.25, D * 0.75, colour, METAL);
      break;
    case "remote control":
      f.box(0, W, 0, H * 0.8, 0, D, colour, PLASTIC);
      for (let k = 0; k < 4; k++) f.box(W * 0.25, W * 0.75, H * 0.8, H, D * (0.15 + k * 0.18), D * (0.23 + k * 0.18), k === 0 ? [180, 40, 40] : [90, 90, 95], PLASTIC);
      break;
    case "towel":
      f.box(0, W, 0, H * 0.5, 0, D, colour, FABRIC);
      f.box(0.005, W - 0.005, H * 0.5, H, 0.005, D * 0.8, shade(colour, 0.97), FABRIC);
      break;
    default:
      f.box(0, W, 0, H, 0, D, colour, mat);
  }
}

/** An open box: bottom, top, back and two sides, the front (or the top) left out. */
function openShell(o: SceneObject, front: 0 | 1 | 2 | 3 | "top", colour: Rgb, material: number): Part[] {
  const [x0, y0, z0] = o.min;
  const [x1, y1, z1] = o.max;
  const t = SHELL_M;
  const part = (min: V3, max: V3, c: Rgb = colour, m = material): Part => ({ id: o.id, shape: BOX, min, max, colour: c, material: m });
  const out = [part([x0, y0, z0], [x1, y1 - 0.1, z1])];
  if (front !== "top") {
    out[0] = part([x0, y0, z0], [x1, y0 + t, z1]);
    out.push(part([x0, y1 - t, z0], [x1, y1, z1]));
  }
  const walls: [V3, V3][] = [
    [[x0, y0, z0], [x0 + t, y1, z1]],
    [[x1 - t, y0, z0], [x1, y1, z1]],
    [[x0, y0, z0], [x1, y1, z0 + t]],
    [[x0, y0, z1 - t], [x1, y1, z1]],
  ];
  walls.forEach((w, side) => {
    if (side !== front) out.push(part(w[0], w[1]));
  });
  if (front !== "top") {
    // the inside, darker, and a shelf halfway
    const ym = (y0 + y1) / 2;
    out.push(part([x0 + t, ym - 0.012, z0 + t], [x1 - t, ym, z1 - t], shade(colour, 0.9)));
  }
  return out;
}

/**
 * The parts that show a home in its current state: every object's shape; open receptacles as
 * open shells; toggled things brighter, broken ones darker and lower, sliced ones as three
 * slices, filled ones with a liquid layer on top; held objects are not drawn.
 */
export function drawnParts(home: Home): Part[] {
  const out: Part[] = [];
  for (const o of home.objects) {
    if (o.held || o.kind === "structure") continue;
    let colour: Rgb = o.colour;
    if (o.states.toggled) colour = brighter(colour);
    if (o.states.broken) colour = darker(colour);
    const material = materialOf(o.material);
    if (o.kind === "furniture" && o.states.open) {
      out.push(...openShell(o, frontSide(home, o), colour, material));
      continue;
    }
    if (o.states.broken) {
      const min: V3 = [o.min[0], o.min[1], o.min[2]];
      const max: V3 = [o.max[0], o.min[1] + (o.max[1] - o.min[1]) * 0.4, o.max[2]];
      const w = (max[0] - min[0]) / 2;
      out.push({ id: o.id, shape: BOX, min, max: [min[0] + w, max[1], max[2]], colour, material });
      out.push({ id: o.id, shape: BOX, min: [min[0] + w + 0.005, min[1], min[2]], max: [max[0], min[1] + (max[1] - min[1]) * 0.6, max[2]], colour, material });
      continue;
    }
    if (o.states.sliced) {
      const w = (o.max[0] - o.min[0]) / 3;
      for (let k = 0; k < 3; k++) out.push({ id: o.id, shape: ELLIPSOID, min: [o.min[0] + k * w + 0.004, o.min[1], o.min[2]], max: [o.min[0] + (k + 1) * w - 0.004, o.max[1], o.max[2]], colour, material });
      continue;
    }
    const f = new Frame(o, o.kind === "furniture" ? frontSide(home, o) : objectFront(home, o));
    if (o.kind === "furniture") shapeFurniture(home, o, f, colour);
    else shapeSmall(home, o, f, colour);
    out.push(...f.parts);
    if (o.states.filled && o.kind === "object" && o.type !== "mug" && o.type !== "bowl") {
      const ix = (o.max[0] - o.min[0]) * 0.15;
      const iz = (o.max[2] - o.min[2]) * 0.15;
      out.push({ id: o.id, shape: CYLINDER, min: [o.min[0] + ix, o.max[1] - 0.004, o.min[2] + iz], max: [o.max[0] - ix, o.max[1] + 0.003, o.max[2] - iz], colour: LIQUID, material: GLASS });
    }
  }
  return out;
}

/** A small object faces the way the thing it stands on faces. */
function objectFront(home: Home, o: SceneObject): 0 | 1 | 2 | 3 {
  const under = o.on === undefined ? undefined : home.objects.find((x) => x.id === o.on);
  return frontSide(home, under ?? o);
}
