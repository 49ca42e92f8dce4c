/**
 * Ray casting of a home: one ray per pixel centre against the floor (y = 0), the ceiling and
 * the parts of every object (`parts.ts`: boxes, upright cylinders, ellipsoids, bowls), binned
 * per frame into screen tiles nearest first. RGB from procedural materials (`materials.ts`) lit
 * by each room's ceiling lamp, daylight from the windows and the sky, with contact shadows from
 * what stands over the floor; exact z-depth in metres (distance along the camera's −z) and
 * instance ids (an object's parts share its id). Only plain double arithmetic and integer
 * hashes, so the same inputs give the same bytes.
 */
import type { Camera, InstanceMasks, Pose } from "../core/index.js";
import { CEILING_COLOUR, CEILING_HEIGHT, CEILING_ID, FLOOR_ID, WALL_THICKNESS, type Home, type SceneObject } from "./home.js";
import { catalogueType, objectCatalogue, type Rgb } from "./catalogue.js";
import { BOWL, BOX, CYLINDER, drawnParts, frontSide, type Part } from "./parts.js";
import { DARK, GLOSS, GLOW, PAINT, WOOD, PERIOD, PLANKS, SCREEN, TEX, floorMaterial, floorTint, hashUnit, materialTextures, wallPaint } from "./materials.js";

export { frontSide } from "./parts.js";

export interface RenderOptions {
  width: number;
  height: number;
  /** Horizontal field of view in degrees. */
  hfovDeg: number;
}

export interface Rendered {
  camera: Camera;
  rgb: Uint8Array;
  depth: Float32Array;
  ids: Uint32Array;
}

/** Square-pixel pinhole intrinsics for a horizontal field of view. */
export function cameraFor(options: RenderOptions): Camera {
  const fx = options.width / 2 / Math.tan((options.hfovDeg * Math.PI) / 360);
  return { width: options.width, height: options.height, fx, fy: fx, cx: options.width / 2, cy: options.height / 2 };
}

// fixed light, normalised (0.3, 0.8, 0.5)
const LIGHT = (() => {
  const l = Math.hypot(0.3, 0.8, 0.5);
  return [0.3 / l, 0.8 / l, 0.5 / l] as const;
})();
/** A box as drawn: part of the object `id`. */
export interface DrawnBox {
  id: number;
  min: [number, number, number];
  max: [number, number, number];
  colour: Rgb;
}

const SHELL_M = 0.04;
const LIQUID: Rgb = [70, 130, 200];

const brighter = (c: Rgb): Rgb => [Math.min(255, Math.round(c[0] * 1.25 + 40)), Math.min(255, Math.round(c[1] * 1.25 + 40)), Math.min(255, Math.round(c[2] * 1.25 + 40))];
const darker = (c: Rgb): Rgb => [Math.round(c[0] * 0.45), Math.round(c[1] * 0.45), Math.round(c[2] * 0.45)];

/**
 * An open box: bottom, top, back and two sides, the front (`front`, or the top when "top") left
 * out so its contents show.
 */
function openShell(o: SceneObject, front: 0 | 1 | 2 | 3 | "top", colour: Rgb): DrawnBox[] {
  const [x0, y0, z0] = o.min;
  const [x1, y1, z1] = o.max;
  const t = SHELL_M;
  const box = (min: [number, number, number], max: [number, number, number]): DrawnBox => ({ id: o.id, min, max, colour });
  const out = [box([x0, y0, z0], [x1, y1 - 0.1, z1])];
  if (front !== "top") {
    out[0] = box([x0, y0, z0], [x1, y0 + t, z1]);
    out.push(box([x0, y1 - t, z0], [x1, y1, z1]));
  }
  const walls: [[number, number, number], [number, number, number]][] = [
    [[x0, y0, z0], [x0 + t, y1, z1]],
    [[x1 - t, y0, z0], [x1, y1, z1]],
    [[x0, y0, z0], [x1, y1, z0 + t]],
    [[x0, y0, z1 - t], [x1, y1, z1]],
  ];
  walls.forEach((w, side) => {
    if (side !== front) out.push(box(w[0], w[1]));
  });
  return out;
}

/**
 * The boxes that show a home in its current state: open receptacles as open shells, basins
 * (sinks, bathtubs) open at the top with a body 0.1 m lower than their rim, toggled
 * things brighter, broken ones darker and lower, sliced ones as three slices, filled ones with
 * a liquid layer on top; held objects are not drawn.
 */
export function drawnBoxes(home: Home): DrawnBox[] {
  // the flat look of earlier versions: one box an object
  const out: DrawnBox[] = [];
  for (const o of home.objects) {
    if (o.held) continue;
    let colour: Rgb = o.colour;
    if (o.states.toggled) colour = brighter(colour);
    if (o.states.broken) colour = darker(colour);
    const min: [number, number, number] = [o.min[0], o.min[1], o.min[2]];
    const max: [number, number, number] = [o.max[0], o.max[1], o.max[2]];
    if (o.kind === "furniture") {
      if (o.states.open) {
        out.push(...openShell(o, frontSide(home, o), colour));
        continue;
      }
      const spec = catalogueType(o.type);
      if (spec.receptacle === "in" && !spec.states.includes("open")) {
        out.push(...openShell(o, "top", colour)); // a basin
        continue;
      }
    }
    if (o.states.broken) max[1] = min[1] + (max[1] - min[1]) * 0.4;
    if (o.states.sliced) {
      const w = (max[0] - min[0]) / 3;
      for (let k = 0; k < 3; k++) out.push({ id: o.id, min: [min[0] + k * w + 0.004, min[1], min[2]], max: [min[0] + (k + 1) * w - 0.004, max[1], max[2]], colour });
      continue;
    }
    out.push({ id: o.id, min, max, colour });
    if (o.states.filled && !o.states.broken) {
      const ix = (max[0] - min[0]) * 0.15;
      const iz = (max[2] - min[2]) * 0.15;
      out.push({ id: o.id, min: [min[0] + ix, max[1] - 0.004, min[2] + iz], max: [max[0] - ix, max[1] + 0.003, max[2] - iz], colour: LIQUID });
    }
  }
  return out;
}

/** Pixels a side of the screen tiles parts are binned into. */
const TILE = 16;
/** Metres a side of the cells of a home's floor maps (rooms, and what stands over the floor). */
const CELL = 0.05;
const WINDOW_Y0 = 0.9;
const WINDOW_Y1 = 2.1;
const LAMP_Y = CEILING_HEIGHT - 0.06;
const CEILING_RGB = CEILING_COLOUR;
const SKY_LOW: Rgb = [214, 230, 244];
const SKY_HIGH: Rgb = [160, 196, 232];

/** A window in an outside wall: on the plane `axis` = `plane`, from `lo` to `hi` along the other horizontal axis. */
interface Window {
  axis: 0 | 2;
  plane: number;
  lo: number;
  hi: number;
}

/**
 * A prepared scene: the home's parts in flat arrays (`rebuild` after the home's state changed),
 * its rooms, windows, lamps and contact shadows in floor maps. A frame is drawn by binning the
 * parts in view into 16×16-pixel screen tiles, nearest first, and casting one ray per pixel
 * against its tile's parts only, stopping at the first part that cannot be nearer than the hit.
 */
export class SceneRenderer {
  private n = 0;
  private shape = new Uint8Array(0);
  private bmin = new Float64Array(0);
  private bmax = new Float64Array(0);
  private colour = new Float64Array(0);
  private material = new Uint8Array(0);
  private id = new Uint32Array(0);
  private isWall = new Uint8Array(0);
  private longAxis = new Uint8Array(0);
  private texOffset = new Float64Array(0);
  readonly labels: Map<number, string>;
  // floor maps
  private readonly gx0: number;
  private readonly gz0: number;
  private readonly gnx: number;
  private readonly gnz: number;
  private readonly roomGrid: Int16Array;
  private occlusion: Float32Array = new Float32Array(0);
  private occluderTop: Float32Array = new Float32Array(0);
  // per room
  private readonly floorRgb: Float64Array;
  private readonly floorMat: Uint8Array;
  private readonly paint: Float64Array;
  private readonly lamps: Float64Array;
  private readonly roomBox: Float64Array;
  private readonly windows: Window[] = [];
  private textures = materialTextures([]);
  // per frame: the camera, and each pixel's hit (part, or −2 floor, −3 ceiling, −1 nothing), face and distance
  private readonly view = new Float64Array(16);
  /** A shaded point's position, normal, ray, colour and texture coordinates (see shadeLit). */
  private readonly surface = new Float64Array(16);
  private hits = new Int32Array(0);
  private faces = new Uint8Array(0);
  private ts = new Float64Array(0);

  constructor(private readonly home: Home) {
    this.labels = new Map([[FLOOR_ID, "floor"], [CEILING_ID, "ceiling"]]);
    for (const o of home.objects) this.labels.set(o.id, o.type);
    const [bx0, , bz0] = home.bounds.min;
    const [bx1, , bz1] = home.bounds.max;
    this.gx0 = bx0 - 0.5;
    this.gz0 = bz0 - 0.5;
    this.gnx = Math.ceil((bx1 - bx0 + 1) / CELL);
    this.gnz = Math.ceil((bz1 - bz0 + 1) / CELL);
    this.roomGrid = new Int16Array(this.gnx * this.gnz).fill(-1);
    const rooms = home.rooms;
    for (const r of rooms) {
      for (let j = Math.max(0, Math.floor((r.min[1] - this.gz0) / CELL)); j < Math.min(this.gnz, Math.ceil((r.max[1] - this.gz0) / CELL)); j++) {
        for (let i = Math.max(0, Math.floor((r.min[0] - this.gx0) / CELL)); i < Math.min(this.gnx, Math.ceil((r.max[0] - this.gx0) / CELL)); i++) {
          const x = this.gx0 + (i + 0.5) * CELL;
          const z = this.gz0 + (j + 0.5) * CELL;
          if (x >= r.min[0] && x <= r.max[0] && z >= r.min[1] && z <= r.max[1]) this.roomGrid[j * this.gnx + i] = r.id;
        }
      }
    }
    const catalogue = objectCatalogue();
    const count = rooms.reduce((m, r) => Math.max(m, r.id + 1), 0);
    this.floorRgb = new Float64Array(count * 3);
    this.floorMat = new Uint8Array(count);
    this.paint = new Float64Array(count * 3);
    this.lamps = new Float64Array(count * 3);
    this.roomBox = new Float64Array(count * 4);
    const half = WALL_THICKNESS / 2;
    const [hx0, , hz0] = home.bounds.min;
    const [hx1, , hz1] = home.bounds.max;
    for (const r of rooms) {
      const floor = floorTint(home.seed, r.id, catalogue.rooms[r.type].floor);
      const paint = wallPaint(home.seed, r.id);
      for (let k = 0; k < 3; k++) {
        this.floorRgb[r.id * 3 + k] = floor[k] as number;
        this.paint[r.id * 3 + k] = paint[k] as number;
      }
      this.floorMat[r.id] = floorMaterial(home.seed, r.id, r.type);
      this.lamps[r.id * 3] = (r.min[0] + r.max[0]) / 2;
      this.lamps[r.id * 3 + 1] = LAMP_Y;
      this.lamps[r.id * 3 + 2] = (r.min[1] + r.max[1]) / 2;
      this.roomBox[r.id * 4] = r.min[0] + half;
      this.roomBox[r.id * 4 + 1] = r.min[1] + half;
      this.roomBox[r.id * 4 + 2] = r.max[0] - half;
      this.roomBox[r.id * 4 + 3] = r.max[1] - half;
      // windows in the outside walls, one a side where the seed says so
      const sides: [boolean, 0 | 2, number, number, number][] = [
        [r.min[0] - half <= hx0 + 1e-9, 0, r.min[0] + half, r.min[1], r.max[1]],
        [r.max[0] + half >= hx1 - 1e-9, 0, r.max[0] - half, r.min[1], r.max[1]],
        [r.min[1] - half <= hz0 + 1e-9, 2, r.min[1] + half, r.min[0], r.max[0]],
        [r.max[1] + half >= hz1 - 1e-9, 2, r.max[1] - half, r.min[0], r.max[0]],
      ];
      sides.forEach(([outside, axis, plane, lo, hi], side) => {
        const length = hi - lo;
        if (!outside || length < 2.6 || hashUnit(home.seed, r.id * 4 + side, 25) < 0.35) return;
        const w = Math.min(1.6, length - 1.4) * (0.7 + 0.3 * hashUnit(home.seed, r.id * 4 + side, 26));
        const c = (lo + hi) / 2;
        this.windows.push({ axis, plane, lo: c - w / 2, hi: c + w / 2 });
      });
    }
    this.rebuild();
  }

  /** Re-reads the home's objects and states. */
  rebuild(): void {
    const parts = drawnParts(this.home);
    const walls = this.home.objects.filter((o) => o.kind === "structure");
    const n = parts.length + walls.length;
    this.n = n;
    this.shape = new Uint8Array(n);
    this.bmin = new Float64Array(n * 3);
    this.bmax = new Float64Array(n * 3);
    this.colour = new Float64Array(n * 3);
    this.material = new Uint8Array(n);
    this.id = new Uint32Array(n);
    this.isWall = new Uint8Array(n);
    this.longAxis = new Uint8Array(n);
    this.texOffset = new Float64Array(n * 2);
    const all: Part[] = [...walls.map((o): Part => ({ id: o.id, shape: BOX, min: [o.min[0], o.min[1], o.min[2]], max: [o.max[0], o.max[1], o.max[2]], colour: o.colour, material: PAINT })), ...parts];
    all.forEach((p, i) => {
      let long = 0;
      for (let k = 0; k < 3; k++) {
        this.bmin[i * 3 + k] = p.min[k] as number;
        this.bmax[i * 3 + k] = p.max[k] as number;
        this.colour[i * 3 + k] = p.colour[k] as number;
        if ((p.max[k] as number) - (p.min[k] as number) > (p.max[long] as number) - (p.min[long] as number)) long = k;
      }
      this.shape[i] = p.shape;
      // light wood is painted
      this.material[i] = p.material === WOOD && p.colour[0] + p.colour[1] + p.colour[2] > 600 ? PAINT : p.material;
      this.id[i] = p.id;
      this.isWall[i] = i < walls.length ? 1 : 0;
      this.longAxis[i] = long;
      this.texOffset[i * 2] = hashUnit(this.home.seed, p.id, i);
      this.texOffset[i * 2 + 1] = hashUnit(this.home.seed, p.id, i + 7919);
    });
    const used = new Set<number>([PAINT, ...this.floorMat]);
    for (const m of this.material) used.add(m);
    this.textures = materialTextures(used);
    this.buildOcclusion(parts);
  }

  /** What stands over each floor cell (how much, and how high), softened: contact shadows. */
  private buildOcclusion(parts: Part[]): void {
    const { gnx, gnz, gx0, gz0 } = this;
    const cover = new Float32Array(gnx * gnz);
    const top = new Float32Array(gnx * gnz);
    for (const p of parts) {
      if (p.min[1] > 1.2 || p.material === GLOW) continue;
      const w = 0.9 - 0.5 * Math.min(1, p.min[1] / 1.0);
      const i0 = Math.max(0, Math.floor((p.min[0] - gx0) / CELL));
      const i1 = Math.min(gnx - 1, Math.floor((p.max[0] - gx0) / CELL));
      const j0 = Math.max(0, Math.floor((p.min[2] - gz0) / CELL));
      const j1 = Math.min(gnz - 1, Math.floor((p.max[2] - gz0) / CELL));
      for (let j = j0; j <= j1; j++) {
        for (let i = i0; i <= i1; i++) {
          const c = j * gnx + i;
          if (w > (cover[c] as number)) cover[c] = w;
          if (p.max[1] > (top[c] as number)) top[c] = p.max[1];
        }
      }
    }
    // one pass of a box filter of radius r along x or z, clamped at the grid's edges: the mean, or the max when `max`
    const pass = (src: Float32Array, r: number, max: boolean, alongX: boolean): Float32Array => {
      const out = new Float32Array(src.length);
      for (let j = 0; j < gnz; j++) {
        for (let i = 0; i < gnx; i++) {
          let acc = 0;
          for (let k = -r; k <= r; k++) {
            const v = (alongX ? src[j * gnx + Math.min(gnx - 1, Math.max(0, i + k))] : src[Math.min(gnz - 1, Math.max(0, j + k)) * gnx + i]) as number;
            acc = max ? Math.max(acc, v) : acc + v;
          }
          out[j * gnx + i] = max ? acc : acc / (2 * r + 1);
        }
      }
      return out;
    };
    const blur = (src: Float32Array, r: number, max: boolean): Float32Array => pass(pass(src, r, max, true), r, max, false);
    this.occlusion = blur(blur(cover, 3, false), 2, false);
    this.occluderTop = blur(top, 4, true);
  }

  render(pose: Pose, options: RenderOptions): Rendered {
    const camera = cameraFor(options);
    const { width, height } = options;
    const rgb = new Uint8Array(width * height * 3);
    const depth = new Float32Array(width * height);
    const ids = new Uint32Array(width * height);
    if (this.hits.length !== width * height) {
      this.hits = new Int32Array(width * height);
      this.faces = new Uint8Array(width * height);
      this.ts = new Float64Array(width * height);
    }
    const culled = this.cull(pose, camera, width, height);
    const tiles = binTiles(culled, width, height);
    this.trace(pose, camera, width, height, culled, tiles, depth, ids);
    this.shadeAll(pose, camera, width, height, rgb);
    return { camera, rgb, depth, ids };
  }

  /** The screen rectangle and nearest depth of each part in front of the camera; the visible parts nearest first. */
  private cull(pose: Pose, camera: Camera, width: number, height: number): Culled {
    const r00 = pose[0] as number, r01 = pose[1] as number, r02 = pose[2] as number, ox = pose[3] as number;
    const r10 = pose[4] as number, r11 = pose[5] as number, r12 = pose[6] as number, oy = pose[7] as number;
    const r20 = pose[8] as number, r21 = pose[9] as number, r22 = pose[10] as number, oz = pose[11] as number;
    const { fx, fy, cx, cy } = camera;
    const n = this.n;
    const { bmin, bmax } = this;
    const rowLo = new Int32Array(n);
    const rowHi = new Int32Array(n);
    const colLo = new Int32Array(n);
    const colHi = new Int32Array(n);
    const zNear = new Float64Array(n);
    const visible: number[] = [];
    const cxs = new Float64Array(8);
    const cys = new Float64Array(8);
    const czs = new Float64Array(8);
    const NEAR = 1e-3;
    for (let b = 0; b < n; b++) {
      let uMin = Infinity, uMax = -Infinity, vMin = Infinity, vMax = -Infinity;
      let behind = 0;
      let near = Infinity;
      for (let k = 0; k < 8; k++) {
        const wx = (k & 1 ? bmax[b * 3] : bmin[b * 3]) as number - ox;
        const wy = (k & 2 ? bmax[b * 3 + 1] : bmin[b * 3 + 1]) as number - oy;
        const wz = (k & 4 ? bmax[b * 3 + 2] : bmin[b * 3 + 2]) as number - oz;
        // camera coordinates = Rᵀ (w − o)
        const xc = r00 * wx + r10 * wy + r20 * wz;
        const yc = r01 * wx + r11 * wy + r21 * wz;
        const zc = r02 * wx + r12 * wy + r22 * wz;
        cxs[k] = xc;
        cys[k] = yc;
        czs[k] = zc;
        if (zc > -NEAR) {
          behind++;
          continue;
        }
        if (-zc < near) near = -zc;
        const u = cx + (fx * xc) / -zc;
        const v = cy - (fy * yc) / -zc;
        if (u < uMin) uMin = u;
        if (u > uMax) uMax = u;
        if (v < vMin) vMin = v;
        if (v > vMax) vMax = v;
      }
      if (behind === 8) continue;
      if (behind > 0) {
        // clip the box's twelve edges at the near plane: where they cross it bounds the rest
        near = NEAR;
        for (let k = 0; k < 8; k++) {
          for (const bit of [1, 2, 4]) {
            const m = k | bit;
            if (m === k) continue;
            const za = czs[k] as number, zb = czs[m] as number;
            if (za > -NEAR === zb > -NEAR) continue;
            const f = (-NEAR - za) / (zb - za);
            const xc = (cxs[k] as number) + ((cxs[m] as number) - (cxs[k] as number)) * f;
            const yc = (cys[k] as number) + ((cys[m] as number) - (cys[k] as number)) * f;
            const u = cx + (fx * xc) / NEAR;
            const v = cy - (fy * yc) / NEAR;
            if (u < uMin) uMin = u;
            if (u > uMax) uMax = u;
            if (v < vMin) vMin = v;
            if (v > vMax) vMax = v;
          }
        }
        near = 0;
      }
      rowLo[b] = Math.max(0, Math.floor(Math.max(-1e9, vMin)) - 1);
      rowHi[b] = Math.min(height - 1, Math.ceil(Math.min(1e9, vMax)) + 1);
      colLo[b] = Math.max(0, Math.floor(Math.max(-1e9, uMin)) - 1);
      colHi[b] = Math.min(width - 1, Math.ceil(Math.min(1e9, uMax)) + 1);
      zNear[b] = near;
      if ((rowLo[b] as number) > (rowHi[b] as number) || (colLo[b] as number) > (colHi[b] as number)) continue;
      visible.push(b);
    }
    visible.sort((a, b) => (zNear[a] as number) - (zNear[b] as number) || a - b);

    return { rowLo, rowHi, colLo, colHi, zNear, visible };
  }

  /** Casts a ray through each pixel against the floor, the ceiling and its tile's parts: the nearest hit's part, face and depth. */
  private trace(pose: Pose, camera: Camera, width: number, height: number, culled: Culled, tiles: Tiles, depth: Float32Array, ids: Uint32Array): void {
    const r00 = pose[0] as number, r01 = pose[1] as number, r02 = pose[2] as number, ox = pose[3] as number;
    const r10 = pose[4] as number, r11 = pose[5] as number, r12 = pose[6] as number, oy = pose[7] as number;
    const r20 = pose[8] as number, r21 = pose[9] as number, r22 = pose[10] as number, oz = pose[11] as number;
    const { fx, fy, cx, cy } = camera;
    const { bmin, bmax, shape, hits, faces, ts } = this;
    const { rowLo, rowHi, colLo, colHi, zNear } = culled;
    const { tilesX, tilesY, tileStart, tileParts } = tiles;
    for (let ty = 0; ty < tilesY; ty++) {
      for (let tx = 0; tx < tilesX; tx++) {
        const listStart = tileStart[ty * tilesX + tx] as number;
        const listEnd = tileStart[ty * tilesX + tx + 1] as number;
        const vEnd = Math.min(height, (ty + 1) * TILE);
        const uEnd = Math.min(width, (tx + 1) * TILE);
        for (let v = ty * TILE; v < vEnd; v++) {
          const dyc = -(v + 0.5 - cy) / fy;
          for (let u = tx * TILE; u < uEnd; u++) {
            const dxc = (u + 0.5 - cx) / fx;
            // world direction of the camera ray (dxc, dyc, −1); t is then the z-depth
            const dx = r00 * dxc + r01 * dyc - r02;
            const dy = r10 * dxc + r11 * dyc - r12;
            const dz = r20 * dxc + r21 * dyc - r22;
            let best = Infinity;
            let hit = -1;
            let face = 0;
            if (dy < 0) {
              best = -oy / dy;
              hit = -2; // floor
              face = 3;
            } else if (dy > 0) {
              best = (CEILING_HEIGHT - oy) / dy;
              hit = -3; // ceiling
              face = 2;
            }
            const ix = 1 / dx, iy = 1 / dy, iz = 1 / dz;
            for (let k = listStart; k < listEnd; k++) {
              const b = tileParts[k] as number;
              if ((zNear[b] as number) >= best) break;
              if (u < (colLo[b] as number) || u > (colHi[b] as number) || v < (rowLo[b] as number) || v > (rowHi[b] as number)) continue;
              const j = b * 3;
              const kind = shape[b] as number;
              if (kind === BOX) {
                const ax = ((bmin[j] as number) - ox) * ix, bx = ((bmax[j] as number) - ox) * ix;
                const ay = ((bmin[j + 1] as number) - oy) * iy, by = ((bmax[j + 1] as number) - oy) * iy;
                const az = ((bmin[j + 2] as number) - oz) * iz, bz = ((bmax[j + 2] as number) - oz) * iz;
                const t0x = ax > bx ? bx : ax, t1x = ax > bx ? ax : bx;
                const t0y = ay > by ? by : ay, t1y = ay > by ? ay : by;
                const t0z = az > bz ? bz : az, t1z = az > bz ? az : bz;
                let tn = t0x, fn = ax > bx ? 1 : 0;
                if (t0y > tn) {
                  tn = t0y;
                  fn = ay > by ? 3 : 2;
                }
                if (t0z > tn) {
                  tn = t0z;
                  fn = az > bz ? 5 : 4;
                }
                const tf = Math.min(t1x, t1y, t1z);
                if (!(tn <= tf) || !(tn > 0) || !(tn < best)) continue; // NaN-safe
                best = tn;
                hit = b;
                face = fn;
                continue;
              }
              const x0 = bmin[j] as number, y0 = bmin[j + 1] as number, z0 = bmin[j + 2] as number;
              const x1 = bmax[j] as number, y1 = bmax[j + 1] as number, z1 = bmax[j + 2] as number;
              const rx = (x1 - x0) / 2, rz = (z1 - z0) / 2;
              const qx = (ox - (x0 + rx)) / rx, qz = (oz - (z0 + rz)) / rz;
              const ex = dx / rx, ez = dz / rz;
              if (kind === CYLINDER) {
                const a = ex * ex + ez * ez;
                const bq = qx * ex + qz * ez;
                const c = qx * qx + qz * qz - 1;
                let s0 = -Infinity, s1 = Infinity;
                if (a > 1e-18) {
                  const disc = bq * bq - a * c;
                  if (disc < 0) continue;
                  const sq = Math.sqrt(disc);
                  s0 = (-bq - sq) / a;
                  s1 = (-bq + sq) / a;
                } else if (c > 0) continue;
                const ay = (y0 - oy) * iy, by = (y1 - oy) * iy;
                const t0y = ay > by ? by : ay, t1y = ay > by ? ay : by;
                let tn = s0, fn = 6;
                if (t0y > tn) {
                  tn = t0y;
                  fn = ay > by ? 3 : 2;
                }
                const tf = Math.min(s1, t1y);
                if (!(tn <= tf) || !(tn > 0) || !(tn < best)) continue;
                best = tn;
                hit = b;
                face = fn;
                continue;
              }
              // ellipsoid or bowl: the centre at mid-height, or at the top for a bowl
              const bowl = kind === BOWL;
              const ry = bowl ? y1 - y0 : (y1 - y0) / 2;
              const ycen = bowl ? y1 : y0 + ry;
              const qy = (oy - ycen) / ry, ey = dy / ry;
              const a = ex * ex + ey * ey + ez * ez;
              const bq = qx * ex + qy * ey + qz * ez;
              const c = qx * qx + qy * qy + qz * qz - 1;
              const disc = bq * bq - a * c;
              if (disc < 0) continue;
              const sq = Math.sqrt(disc);
              const s0 = (-bq - sq) / a;
              if (!bowl) {
                if (!(s0 > 0) || !(s0 < best)) continue;
                best = s0;
                hit = b;
                face = 7;
                continue;
              }
              if (s0 > 0 && s0 < best && oy + dy * s0 <= ycen) {
                best = s0;
                hit = b;
                face = 7;
                continue;
              }
              const s1 = (-bq + sq) / a;
              if (s1 > 0 && s1 < best && oy + dy * s1 <= ycen) {
                best = s1;
                hit = b;
                face = 8; // the inside
              }
            }
            const p = v * width + u;
            hits[p] = hit;
            if (hit === -1) continue;
            faces[p] = face;
            ts[p] = best;
            depth[p] = best;
            ids[p] = hit === -2 ? FLOOR_ID : hit === -3 ? CEILING_ID : (this.id[hit] as number);
          }
        }
      }
    }
  }

  /** The shading pass: a colour for every pixel that hit something (numbers in typed arrays, so nothing is allocated a pixel). */
  private shadeAll(pose: Pose, camera: Camera, width: number, height: number, rgb: Uint8Array): void {
    const r00 = pose[0] as number, r01 = pose[1] as number, r02 = pose[2] as number, ox = pose[3] as number;
    const r10 = pose[4] as number, r11 = pose[5] as number, r12 = pose[6] as number, oy = pose[7] as number;
    const r20 = pose[8] as number, r21 = pose[9] as number, r22 = pose[10] as number, oz = pose[11] as number;
    const { fx, fy, cx, cy } = camera;
    const { hits, faces, ts } = this;
    const view = this.view;
    view[0] = r00;
    view[1] = r01;
    view[2] = r02;
    view[3] = r10;
    view[4] = r11;
    view[5] = r12;
    view[6] = r20;
    view[7] = r21;
    view[8] = r22;
    view[9] = ox;
    view[10] = oy;
    view[11] = oz;
    view[12] = fx;
    view[13] = fy;
    view[14] = cx;
    view[15] = cy;
    for (let v = 0; v < height; v++) {
      for (let u = 0; u < width; u++) {
        const p = v * width + u;
        const hit = hits[p] as number;
        if (hit !== -1) this.shade(rgb, ts, p, u, v, hit, faces[p] as number);
      }
    }
  }

  /** The colour of a hit: material, texture, lamp, windows' daylight and contact shadows. */
  private shade(rgb: Uint8Array, ts: Float64Array, p: number, u: number, v: number, hit: number, face: number): void {
    const view = this.view;
    const dxc = (u + 0.5 - (view[14] as number)) / (view[12] as number);
    const dyc = -(v + 0.5 - (view[15] as number)) / (view[13] as number);
    const dx = (view[0] as number) * dxc + (view[1] as number) * dyc - (view[2] as number);
    const dy = (view[3] as number) * dxc + (view[4] as number) * dyc - (view[5] as number);
    const dz = (view[6] as number) * dxc + (view[7] as number) * dyc - (view[8] as number);
    const t = ts[p] as number;
    const o = p * 3;
    const { gx0, gz0, gnx, gnz, roomGrid, occlusion, occluderTop } = this;
    const px = (view[9] as number) + dx * t, py = (view[10] as number) + dy * t, pz = (view[11] as number) + dz * t;
    let nx = 0, ny = 0, nz = 0;
    let cr: number, cg: number, cb: number;
    let material: number;
    let s: number, q: number; // texture coordinates in metres
    let offU = 0, offV = 0;
    let room: number;
    let ao = 1;
    if (hit < 0) {
      const floorCell = cellOf(px, pz, gx0, gz0, gnx, gnz);
      room = floorCell < 0 ? -1 : (roomGrid[floorCell] as number);
      const box = this.roomBox;
      const edge = room < 0 ? 1 : Math.min(px - (box[room * 4] as number), pz - (box[room * 4 + 1] as number), (box[room * 4 + 2] as number) - px, (box[room * 4 + 3] as number) - pz);
      if (hit === -3) {
        this.shadeCeiling(rgb, o, px, pz, room, edge);
        return;
      }
      ny = 1;
      if (room < 0) {
        cr = cg = cb = 128;
        material = PLANKS;
      } else {
        cr = this.floorRgb[room * 3] as number;
        cg = this.floorRgb[room * 3 + 1] as number;
        cb = this.floorRgb[room * 3 + 2] as number;
        material = this.floorMat[room] as number;
      }
      s = px;
      q = pz;
      ao = (floorCell < 0 ? 1 : 1 - 0.75 * (occlusion[floorCell] as number)) * (1 - 0.3 * soft(Math.max(0, edge) / 0.12));
    } else {
      const j = hit * 3;
      const bmin = this.bmin, bmax = this.bmax;
      material = this.material[hit] as number;
      cr = this.colour[j] as number;
      cg = this.colour[j + 1] as number;
      cb = this.colour[j + 2] as number;
      offU = this.texOffset[hit * 2] as number;
      offV = this.texOffset[hit * 2 + 1] as number;
      if (face < 6) {
        const axis = face >> 1;
        const sign = face & 1 ? 1 : -1;
        if (axis === 0) nx = sign;
        else if (axis === 1) ny = sign;
        else nz = sign;
        const long = this.longAxis[hit] as number;
        // the pattern's first coordinate runs along the part's longest side when it can
        if (axis === 0) {
          s = long === 1 ? py : pz;
          q = long === 1 ? pz : py;
        } else if (axis === 1) {
          s = long === 2 ? pz : px;
          q = long === 2 ? px : pz;
        } else {
          s = long === 1 ? py : px;
          q = long === 1 ? px : py;
        }
      } else {
        const x0 = bmin[j] as number, y0 = bmin[j + 1] as number, z0 = bmin[j + 2] as number;
        const x1 = bmax[j] as number, y1 = bmax[j + 1] as number, z1 = bmax[j + 2] as number;
        const rx = (x1 - x0) / 2, rz = (z1 - z0) / 2;
        const ex = (px - x0 - rx) / (rx * rx), ez = (pz - z0 - rz) / (rz * rz);
        if (face === 6) {
          const l = Math.hypot(ex, ez) || 1;
          nx = ex / l;
          nz = ez / l;
        } else {
          const bowl = this.shape[hit] === BOWL;
          const ry = bowl ? y1 - y0 : (y1 - y0) / 2;
          const ey = (py - (bowl ? y1 : y0 + ry)) / (ry * ry);
          const l = Math.hypot(ex, ey, ez) || 1;
          const sgn = face === 8 ? -1 : 1;
          nx = (sgn * ex) / l;
          ny = (sgn * ey) / l;
          nz = (sgn * ez) / l;
        }
        s = px + pz;
        q = py;
      }
      if (this.isWall[hit]) {
        const wallCell = cellOf(px + nx * 0.08, pz + nz * 0.08, gx0, gz0, gnx, gnz);
        room = wallCell < 0 ? -1 : (roomGrid[wallCell] as number);
        if (room >= 0) {
          cr = this.paint[room * 3] as number;
          cg = this.paint[room * 3 + 1] as number;
          cb = this.paint[room * 3 + 2] as number;
          if (py > WINDOW_Y0 && py < WINDOW_Y1 && ny === 0 && this.shadeWindow(rgb, o, px, py, pz, nx, nz)) return;
          // darker into corners and along the floor and ceiling
          const box = this.roomBox;
          const edge = nx !== 0 ? Math.min(pz - (box[room * 4 + 1] as number), (box[room * 4 + 3] as number) - pz) : Math.min(px - (box[room * 4] as number), (box[room * 4 + 2] as number) - px);
          ao = (1 - 0.22 * soft(Math.max(0, edge) / 0.2)) * (1 - 0.3 * soft(py / 0.12)) * (1 - 0.15 * soft((CEILING_HEIGHT - py) / 0.15));
          // behind furniture
          ao *= openness(cellOf(px + nx * 0.1, pz + nz * 0.1, gx0, gz0, gnx, gnz), py, occlusion, occluderTop);
        }
      } else {
        const partCell = cellOf(px, pz, gx0, gz0, gnx, gnz);
        room = partCell < 0 ? -1 : (roomGrid[partCell] as number);
        ao = openness(cellOf(px + nx * 0.03, pz + nz * 0.03, gx0, gz0, gnx, gnz), py, occlusion, occluderTop);
      }
      if (material === GLOW) {
        rgb[o] = Math.min(255, Math.round(cr * 1.05 + 12));
        rgb[o + 1] = Math.min(255, Math.round(cg * 1.05 + 12));
        rgb[o + 2] = Math.min(255, Math.round(cb * 1.05 + 12));
        return;
      }
    }
    const g = this.surface;
    g[0] = px;
    g[1] = py;
    g[2] = pz;
    g[3] = nx;
    g[4] = ny;
    g[5] = nz;
    g[6] = dx;
    g[7] = dy;
    g[8] = dz;
    g[9] = cr;
    g[10] = cg;
    g[11] = cb;
    g[12] = s;
    g[13] = q;
    g[14] = offU;
    g[15] = offV;
    this.shadeLit(rgb, o, material, room, ao);
  }

  /** The ceiling: its lamp's flush panel, else plaster lit by the lamp and darker towards the walls. */
  private shadeCeiling(rgb: Uint8Array, o: number, px: number, pz: number, room: number, edge: number): void {
    const lx = room < 0 ? 0 : (this.lamps[room * 3] as number) - px;
    const lz = room < 0 ? 0 : (this.lamps[room * 3 + 2] as number) - pz;
    const r2 = room < 0 ? 99 : lx * lx + lz * lz;
    if (Math.abs(lx) < 0.3 && Math.abs(lz) < 0.3) {
      // a flush square panel
      const rim = Math.abs(lx) > 0.27 || Math.abs(lz) > 0.27;
      rgb[o] = rim ? 215 : 250;
      rgb[o + 1] = rim ? 215 : 248;
      rgb[o + 2] = rim ? 212 : 240;
      return;
    }
    const glow = 0.7 + 0.25 / (1 + 6 * r2) - 0.12 * soft(Math.max(0, edge) / 0.25);
    rgb[o] = Math.min(255, Math.round(CEILING_RGB[0] * glow));
    rgb[o + 1] = Math.min(255, Math.round(CEILING_RGB[1] * glow));
    rgb[o + 2] = Math.min(255, Math.round(CEILING_RGB[2] * glow));
  }

  /** A wall pixel in a window: the frame in daylight or the sky beyond; false when the pixel is in no window. */
  private shadeWindow(rgb: Uint8Array, o: number, px: number, py: number, pz: number, nx: number, nz: number): boolean {
    for (const w of this.windows) {
      const along = w.axis === 0 ? pz : px;
      const across = w.axis === 0 ? px : pz;
      if (Math.abs(across - w.plane) > 1e-6 || along < w.lo || along > w.hi) continue;
      const fu = Math.min(along - w.lo, w.hi - along);
      const fv = Math.min(py - WINDOW_Y0, WINDOW_Y1 - py);
      const mid = Math.abs(along - (w.lo + w.hi) / 2);
      const sun = 0.85 + 0.3 * Math.max(0, nx * LIGHT[0] + nz * LIGHT[2]);
      if (fu < 0.05 || fv < 0.05 || mid < 0.02) {
        rgb[o] = Math.min(255, Math.round(236 * sun));
        rgb[o + 1] = Math.min(255, Math.round(236 * sun));
        rgb[o + 2] = Math.min(255, Math.round(232 * sun));
        return true;
      }
      const k = (py - WINDOW_Y0) / (WINDOW_Y1 - WINDOW_Y0);
      rgb[o] = Math.min(255, Math.round((SKY_LOW[0] + (SKY_HIGH[0] - SKY_LOW[0]) * k) * sun));
      rgb[o + 1] = Math.min(255, Math.round((SKY_LOW[1] + (SKY_HIGH[1] - SKY_LOW[1]) * k) * sun));
      rgb[o + 2] = Math.min(255, Math.round((SKY_LOW[2] + (SKY_HIGH[2] - SKY_LOW[2]) * k) * sun));
      return true;
    }
    return false;
  }

  /**
   * A surface's colour: its material's pattern at texture coordinates (s, q) in metres, lit by the
   * sky from above, the sun through the windows and the room's lamp (with a highlight on glossy
   * materials), darkened by ambient occlusion `ao`. The point, its normal, the ray, the colour and
   * the texture coordinates are in `surface`.
   */
  private shadeLit(rgb: Uint8Array, o: number, material: number, room: number, ao: number): void {
    const g = this.surface;
    const px = g[0] as number, py = g[1] as number, pz = g[2] as number;
    const nx = g[3] as number, ny = g[4] as number, nz = g[5] as number;
    const dx = g[6] as number, dy = g[7] as number, dz = g[8] as number;
    const cr = g[9] as number, cg = g[10] as number, cb = g[11] as number;
    const s = g[12] as number, q = g[13] as number, offU = g[14] as number, offV = g[15] as number;
    // the pattern
    const period = PERIOD[material] as number;
    const tu = Math.floor((s / period + offU) * TEX) & (TEX - 1);
    const tv = Math.floor((q / period + offV) * TEX) & (TEX - 1);
    let tex = this.textures[material * TEX * TEX + tv * TEX + tu] as number;
    if (material === SCREEN) tex = 1 + 1.5 * Math.abs(((s + q) * 0.7) % 1);
    if (material === DARK) tex = 0.6;
    // light: sky from above, the sun through the windows, the room's lamp
    let light = (0.44 + 0.14 * ny) * ao + 0.2 * Math.max(0, nx * LIGHT[0] + ny * LIGHT[1] + nz * LIGHT[2]) * (0.5 + 0.5 * ao);
    let spec = 0;
    if (room >= 0) {
      const lx = (this.lamps[room * 3] as number) - px;
      const ly = LAMP_Y - py;
      const lz = (this.lamps[room * 3 + 2] as number) - pz;
      const d2 = lx * lx + ly * ly + lz * lz;
      const inv = 1 / Math.sqrt(d2);
      const ndl = (nx * lx + ny * ly + nz * lz) * inv;
      if (ndl > 0) {
        light += (0.62 * ndl * ao) / (1 + 0.12 * d2);
        const gloss = GLOSS[material] as number;
        if (gloss > 0) {
          // Blinn-Phong highlight towards the viewer
          const vl = 1 / Math.sqrt(dx * dx + dy * dy + dz * dz);
          let hx = lx * inv - dx * vl, hy = ly * inv - dy * vl, hz = lz * inv - dz * vl;
          const hl = 1 / Math.sqrt(hx * hx + hy * hy + hz * hz);
          hx *= hl;
          hy *= hl;
          hz *= hl;
          let nh = nx * hx + ny * hy + nz * hz;
          if (nh > 0) {
            nh *= nh;
            nh *= nh;
            nh *= nh;
            nh *= nh;
            nh *= nh;
            spec = gloss * nh * 255 * ao;
          }
        }
      }
    }
    const k = light * tex;
    rgb[o] = Math.min(255, Math.round(cr * k + spec));
    rgb[o + 1] = Math.min(255, Math.round(cg * k + spec));
    rgb[o + 2] = Math.min(255, Math.round(cb * k + spec));
  }

  /** Instance masks with the labels of the ids present. */
  masks(rendered: Rendered): InstanceMasks {
    const labels: Record<string, string> = {};
    for (const id of idsIn(rendered.ids)) {
      if (id === 0) continue;
      labels[String(id)] = this.labels.get(id) ?? "unknown";
    }
    return { width: rendered.camera.width, height: rendered.camera.height, ids: rendered.ids, labels };
  }
}

/** The distinct ids of a frame, in the order they first appear. */
export function idsIn(ids: Uint32Array): Set<number> {
  const seen = new Set<number>();
  let last = -1;
  for (let p = 0; p < ids.length; p++) {
    const id = ids[p] as number;
    if (id === last) continue;
    last = id;
    seen.add(id);
  }
  return seen;
}

/** The floor-map cell under (x, z), or −1 outside the map. */
function cellOf(x: number, z: number, gx0: number, gz0: number, gnx: number, gnz: number): number {
  const i = Math.floor((x - gx0) / CELL);
  const j = Math.floor((z - gz0) / CELL);
  return i < 0 || j < 0 || i >= gnx || j >= gnz ? -1 : j * gnx + i;
}

/** How much of the light from above is kept at height y over a floor cell: what stands over it. */
function openness(cell: number, y: number, occlusion: Float32Array, top: Float32Array): number {
  if (cell < 0) return 1;
  const h = top[cell] as number;
  if (y >= h) return 1;
  return 1 - 0.75 * (occlusion[cell] as number) * (1 - y / (h + 0.05));
}

/** About e^−x for x ≥ 0, cheaper: how a shadow fades with distance. */
function soft(x: number): number {
  return 1 / (1 + x * (1 + 0.5 * x));
}

/** Each visible part's screen rectangle and nearest depth (indexed by part), and the visible parts nearest first. */
interface Culled {
  rowLo: Int32Array;
  rowHi: Int32Array;
  colLo: Int32Array;
  colHi: Int32Array;
  zNear: Float64Array;
  visible: number[];
}

/** The visible parts binned into TILE×TILE tiles, nearest first: tile t holds tileParts[tileStart[t]] up to tileParts[tileStart[t + 1]]. */
interface Tiles {
  tilesX: number;
  tilesY: number;
  tileStart: Int32Array;
  tileParts: Int32Array;
}

function binTiles({ rowLo, rowHi, colLo, colHi, visible }: Culled, width: number, height: number): Tiles {
  const tilesX = Math.ceil(width / TILE);
  const tilesY = Math.ceil(height / TILE);
  const tileStart = new Int32Array(tilesX * tilesY + 1);
  for (const b of visible) {
    for (let ty = (rowLo[b] as number) >> 4; ty <= (rowHi[b] as number) >> 4; ty++) {
      for (let tx = (colLo[b] as number) >> 4; tx <= (colHi[b] as number) >> 4; tx++) tileStart[ty * tilesX + tx + 1] = (tileStart[ty * tilesX + tx + 1] as number) + 1;
    }
  }
  for (let t = 0; t < tilesX * tilesY; t++) tileStart[t + 1] = (tileStart[t + 1] as number) + (tileStart[t] as number);
  const fill = tileStart.slice(0, tilesX * tilesY);
  const tileParts = new Int32Array(tileStart[tilesX * tilesY] as number);
  for (const b of visible) {
    for (let ty = (rowLo[b] as number) >> 4; ty <= (rowHi[b] as number) >> 4; ty++) {
      for (let tx = (colLo[b] as number) >> 4; tx <= (colHi[b] as number) >> 4; tx++) {
        const at = fill[ty * tilesX + tx] as number;
        tileParts[at] = b;
        fill[ty * tilesX + tx] = at + 1;
      }
    }
  }

  return { tilesX, tilesY, tileStart, tileParts };
}
