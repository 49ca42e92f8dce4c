/**
 * Procedural materials of the built-in simulator: tileable 128×128 patterns (a brightness
 * multiplier around 1) made once from integer-hash value noise, so every frame of every process
 * reads the same numbers; per home, the paint of each room's walls and the floor's material and
 * tint follow the seed.
 */
import type { Rgb, RoomType } from "./catalogue.js";

export const PAINT = 0;
export const WOOD = 1;
export const PLANKS = 2;
export const TILE = 3;
export const SMALL_TILE = 4;
export const CARPET = 5;
export const FABRIC = 6;
export const METAL = 7;
export const CERAMIC = 8;
export const LEAVES = 9;
export const STONE = 10;
export const PAPER = 11;
export const PLASTIC = 12;
export const FOOD = 13;
export const GLASS = 14;
/** A display: dark glass with a sheen, or a picture when its object is switched on. */
export const SCREEN = 15;
/** Gives light (a lamp's shade or bulb when on, a flame, a glowing hob). */
export const GLOW = 16;
/** The inside of something: no texture, little light. */
export const DARK = 17;
export const WAX = 18;
export const MATERIAL_COUNT = 19;

/** The material of a part from the catalogue's word for what an object is made of. */
export function materialOf(word: string | undefined): number {
  switch (word) {
    case "wood":
      return WOOD;
    case "fabric":
      return FABRIC;
    case "metal":
      return METAL;
    case "ceramic":
      return CERAMIC;
    case "stone":
      return STONE;
    case "glass":
      return GLASS;
    case "paper":
      return PAPER;
    case "plant":
      return LEAVES;
    case "food":
      return FOOD;
    case "wax":
      return WAX;
    default:
      return PLASTIC;
  }
}

/** How glossy each material is (the weight of a highlight from the room's lamp). */
export const GLOSS = new Float64Array(MATERIAL_COUNT);
GLOSS[METAL] = 0.35;
GLOSS[CERAMIC] = 0.3;
GLOSS[GLASS] = 0.45;
GLOSS[SCREEN] = 0.4;
GLOSS[PLASTIC] = 0.15;
GLOSS[STONE] = 0.2;
GLOSS[TILE] = 0.2;
GLOSS[SMALL_TILE] = 0.2;
GLOSS[PLANKS] = 0.08;
GLOSS[WAX] = 0.1;

/** Metres one repeat of each material's pattern spans. */
export const PERIOD = new Float64Array(MATERIAL_COUNT).fill(1);
PERIOD[PAINT] = 2;
PERIOD[WOOD] = 0.6;
PERIOD[PLANKS] = 1.6;
PERIOD[TILE] = 1.2;
PERIOD[SMALL_TILE] = 0.6;
PERIOD[CARPET] = 0.8;
PERIOD[FABRIC] = 0.25;
PERIOD[METAL] = 0.6;
PERIOD[CERAMIC] = 1;
PERIOD[LEAVES] = 0.3;
PERIOD[STONE] = 0.7;
PERIOD[PAPER] = 0.12;
PERIOD[FOOD] = 0.2;

export const TEX = 128;

/** A 32-bit integer hash (Murmur3's finaliser). */
export function hash32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A number in [0, 1) from integers. */
export function hashUnit(a: number, b = 0, c = 0): number {
  return hash32(Math.imul(a, 73856093) ^ Math.imul(b + 0x9e3779b9, 19349663) ^ Math.imul(c + 0x7f4a7c15, 83492791)) / 4294967296;
}

/** Tileable value noise at (x, y) on a lattice of `period` cells. */
function valueNoise(x: number, y: number, periodX: number, periodY: number, salt: number): number {
  const xi = Math.floor(x);
  const yi = Math.floor(y);
  const fx = x - xi;
  const fy = y - yi;
  const sx = fx * fx * (3 - 2 * fx);
  const sy = fy * fy * (3 - 2 * fy);
  const x0 = ((xi % periodX) + periodX) % periodX;
  const y0 = ((yi % periodY) + periodY) % periodY;
  const x1 = (x0 + 1) % periodX;
  const y1 = (y0 + 1) % periodY;
  const a = hashUnit(x0, y0, salt);
  const b = hashUnit(x1, y0, salt);
  const c = hashUnit(x0, y1, salt);
  const d = hashUnit(x1, y1, salt);
  return a + (b - a) * sx + (c - a) * sy + (a - b - c + d) * sx * sy;
}

/** Fractal noise in [0, 1), tileable over the texture; (u, v) in [0, 1). */
function fbm(u: number, v: number, cellsU: number, cellsV: number, octaves: number, salt: number): number {
  let sum = 0;
  let weight = 0;
  let amp = 1;
  for (let o = 0; o < octaves; o++) {
    const f = 1 << o;
    const pu = cellsU * f;
    const pv = cellsV * f;
    sum += amp * valueNoise(u * pu, v * pv, pu, pv, salt + o * 131);
    weight += amp;
    amp *= 0.5;
  }
  return sum / weight;
}

function pattern(material: number, u: number, v: number): number {
  const fine = (hashUnit(Math.floor(u * TEX), Math.floor(v * TEX), material + 1000) - 0.5);
  switch (material) {
    case PAINT:
      return 1 + 0.05 * (fbm(u, v, 8, 8, 3, 1) - 0.5) + 0.015 * fine;
    case WOOD: {
      const n = fbm(u, v, 2, 16, 3, 2);
      const rings = Math.sin(2 * Math.PI * (v * 20 + 1.2 * fbm(u, v, 2, 4, 2, 3)));
      return 0.95 + 0.07 * rings * (0.6 + 0.4 * n) + 0.08 * (n - 0.5);
    }
    case PLANKS: {
      // eight planks across, each in two lengths staggered; grooves between
      const rows = 8;
      const row = Math.floor(v * rows);
      const along = u + hashUnit(row, 0, 7) * 0.5;
      const seam = Math.floor(along * 2);
      const tone = 0.86 + 0.22 * hashUnit(row, seam, 5);
      const inRow = v * rows - row;
      const inLen = along * 2 - seam;
      const groove = inRow < 0.04 || inLen < 0.008 ? 0.55 : 1;
      const grain = Math.sin(2 * Math.PI * (inRow * 3 + 2.5 * fbm(u, v, 4, 32, 3, 9 + row)));
      return tone * groove * (0.94 + 0.07 * grain) + 0.03 * fine;
    }
    case TILE:
    case SMALL_TILE: {
      const n = 4;
      const gu = u * n - Math.floor(u * n);
      const gv = v * n - Math.floor(v * n);
      const grout = gu < 0.025 || gv < 0.025 || gu > 0.985 || gv > 0.985;
      if (grout) return 0.62;
      const tone = 0.94 + 0.1 * hashUnit(Math.floor(u * n), Math.floor(v * n), material);
      return tone + 0.04 * (fbm(u, v, 16, 16, 2, 11) - 0.5);
    }
    case CARPET:
      return 1 + 0.22 * fine + 0.12 * (fbm(u, v, 16, 16, 3, 12) - 0.5);
    case FABRIC: {
      const weave = Math.sin(2 * Math.PI * u * 48) * Math.sin(2 * Math.PI * v * 48);
      return 1 + 0.05 * weave + 0.1 * fine + 0.08 * (fbm(u, v, 4, 4, 2, 13) - 0.5);
    }
    case METAL:
      return 1 + 0.08 * (fbm(u, v, 2, 64, 2, 14) - 0.5) + 0.02 * fine;
    case LEAVES: {
      const n = fbm(u, v, 6, 6, 3, 15);
      const vein = Math.abs(Math.sin(2 * Math.PI * (u * 6 + v * 6 + n))) < 0.08 ? 1.2 : 1;
      return (0.6 + 0.7 * n) * vein;
    }
    case STONE:
      return 1 + 0.3 * fine + 0.2 * (fbm(u, v, 8, 8, 3, 16) - 0.5);
    case PAPER: {
      const lines = v * 40 - Math.floor(v * 40) < 0.35 ? 0.9 : 1;
      return lines + 0.03 * fine;
    }
    case FOOD:
      return 1 + 0.14 * (fbm(u, v, 8, 8, 3, 17) - 0.5) + 0.05 * fine;
    default:
      return 1 + 0.02 * fine;
  }
}

const textures = new Float32Array(MATERIAL_COUNT * TEX * TEX);
const made = new Uint8Array(MATERIAL_COUNT);

/**
 * Every material's pattern: TEX×TEX values each, material after material; those of `needed` are
 * made on first use (the others stay zero until asked for).
 */
export function materialTextures(needed: Iterable<number>): Float32Array {
  for (const m of needed) {
    if (made[m] || m < 0 || m >= MATERIAL_COUNT) continue;
    for (let y = 0; y < TEX; y++) {
      for (let x = 0; x < TEX; x++) textures[m * TEX * TEX + y * TEX + x] = pattern(m, (x + 0.5) / TEX, (y + 0.5) / TEX);
    }
    made[m] = 1;
  }
  return textures;
}

const PAINTS: Rgb[] = [
  [226, 222, 210], // warm white
  [214, 218, 222], // cool grey
  [205, 214, 196], // sage
  [226, 210, 188], // sand
  [196, 210, 222], // pale blue
  [230, 214, 206], // blush
  [220, 220, 200], // cream
  [200, 200, 206], // light grey
];

/** The paint of a room's walls in home `seed`. */
export function wallPaint(seed: number, room: number): Rgb {
  return PAINTS[Math.floor(hashUnit(seed, room, 21) * PAINTS.length)] as Rgb;
}

/** The floor's material of a room type in home `seed`. */
export function floorMaterial(seed: number, room: number, type: RoomType): number {
  const r = hashUnit(seed, room, 22);
  switch (type) {
    case "kitchen":
      return r < 0.7 ? TILE : PLANKS;
    case "bathroom":
      return SMALL_TILE;
    case "bedroom":
    case "office":
      return r < 0.6 ? CARPET : PLANKS;
    case "living room":
      return r < 0.75 ? PLANKS : CARPET;
    default:
      return PLANKS;
  }
}

/** The floor's colour: the catalogue's, tinted by the seed. */
export function floorTint(seed: number, room: number, base: Rgb): Rgb {
  const k = 0.85 + 0.3 * hashUnit(seed, room, 23);
  const warm = 8 * (hashUnit(seed, room, 24) - 0.5);
  return [Math.min(255, base[0] * k + warm), Math.min(255, base[1] * k), Math.min(255, base[2] * k - warm)];
}
