/**
 * A synthetic RGB-D episode whose geometry the tests know: boxes in a room, seen by a
 * camera circling them; depth and instance masks are computed exactly by ray casting, and
 * written in HM3D's layout (OpenGL poses, y-up world) or ScanNet's (OpenCV poses, z-up world).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { matrixText } from "../episodes/fixtures.js";

export interface SceneBox {
  id: number;
  label: string;
  min: [number, number, number];
  max: [number, number, number];
  colour: [number, number, number];
}

/** The room's objects (eqakit world: metres, y up): a cup on a table, a chair next to it, a cabinet, a lamp above the cabinet. */
export const SCENE: SceneBox[] = [
  { id: 1, label: "table", min: [-0.5, 0, -0.4], max: [0.5, 0.75, 0.4], colour: [150, 90, 40] },
  { id: 2, label: "cup", min: [-0.08, 0.75, -0.08], max: [0.08, 0.9, 0.08], colour: [230, 230, 240] },
  { id: 3, label: "chair", min: [0.75, 0, -0.25], max: [1.2, 0.9, 0.25], colour: [40, 120, 200] },
  { id: 4, label: "cabinet", min: [-1.6, 0, 0.9], max: [-1.0, 1.0, 1.5], colour: [90, 160, 60] },
  { id: 5, label: "lamp", min: [-1.45, 1.5, 1.05], max: [-1.15, 1.8, 1.35], colour: [250, 210, 40] },
];

export const ROOM = { min: [-3.5, 0, -3.5], max: [3.5, 2.8, 3.5] } as const;
export const IMAGE = { width: 160, height: 120, f: 110 };

export function truthCentre(box: SceneBox): [number, number, number] {
  return [0, 1, 2].map((a) => (box.min[a]! + box.max[a]!) / 2) as [number, number, number];
}

/** A camera-to-world pose (OpenGL axes) at `eye` looking at `target`, y up. */
export function lookAt(eye: [number, number, number], target: [number, number, number]): number[] {
  const f = normalise([target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]]);
  const r = normalise(cross(f, [0, 1, 0]));
  const u = cross(r, f);
  // columns: x = right, y = up, z = −forward
  return [r[0], u[0], -f[0], eye[0], r[1], u[1], -f[1], eye[1], r[2], u[2], -f[2], eye[2], 0, 0, 0, 1];
}

function cross(a: number[], b: number[]): [number, number, number] {
  return [a[1]! * b[2]! - a[2]! * b[1]!, a[2]! * b[0]! - a[0]! * b[2]!, a[0]! * b[1]! - a[1]! * b[0]!];
}

function normalise(v: number[]): [number, number, number] {
  const n = Math.hypot(v[0]!, v[1]!, v[2]!);
  return [v[0]! / n, v[1]! / n, v[2]! / n];
}

/** Entry distance of a ray into a box (slab method), or Infinity. */
function hitBox(o: number[], d: number[], min: readonly number[], max: readonly number[]): number {
  let t0 = -Infinity;
  let t1 = Infinity;
  for (let a = 0; a < 3; a++) {
    if (Math.abs(d[a]!) < 1e-12) {
      if (o[a]! < min[a]! || o[a]! > max[a]!) return Infinity;
      continue;
    }
    let ta = (min[a]! - o[a]!) / d[a]!;
    let tb = (max[a]! - o[a]!) / d[a]!;
    if (ta > tb) [ta, tb] = [tb, ta];
    t0 = Math.max(t0, ta);
    t1 = Math.min(t1, tb);
  }
  return t0 <= t1 && t0 > 1e-6 ? t0 : Infinity;
}

/** Exit distance of a ray from inside the room. */
function exitRoom(o: number[], d: number[]): number {
  let t = Infinity;
  for (let a = 0; a < 3; a++) {
    if (d[a]! > 1e-12) t = Math.min(t, (ROOM.max[a]! - o[a]!) / d[a]!);
    else if (d[a]! < -1e-12) t = Math.min(t, (ROOM.min[a]! - o[a]!) / d[a]!);
  }
  return t;
}

/** Ray-cast z-depth (metres), instance ids and colours of one view. */
export function renderView(pose: number[], image: { width: number; height: number; f: number } = IMAGE): { depth: Float32Array; ids: Uint16Array; rgb: Buffer } {
  const { width, height, f } = image;
  const cx = width / 2;
  const cy = height / 2;
  const depth = new Float32Array(width * height);
  const ids = new Uint16Array(width * height);
  const rgb = Buffer.alloc(width * height * 3);
  const o = [pose[3]!, pose[7]!, pose[11]!];
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) {
      const c = [(u - cx) / f, -(v - cy) / f, -1];
      const d = [0, 1, 2].map((r) => pose[r * 4]! * c[0]! + pose[r * 4 + 1]! * c[1]! + pose[r * 4 + 2]! * c[2]!);
      let t = exitRoom(o, d);
      let id = 0;
      for (const box of SCENE) {
        const hit = hitBox(o, d, box.min, box.max);
        if (hit < t) {
          t = hit;
          id = box.id;
        }
      }
      const i = v * width + u;
      depth[i] = t; // c has z = −1, so t is the z-depth
      ids[i] = id;
      const colour = id === 0 ? [200, 200, 190] : SCENE.find((b) => b.id === id)!.colour;
      rgb[i * 3] = colour[0]!;
      rgb[i * 3 + 1] = colour[1]!;
      rgb[i * 3 + 2] = colour[2]!;
    }
  }
  return { depth, ids, rgb };
}

/** The poses of `views` cameras circling the table at 1.5 m height. */
export function circlePoses(views: number, startDegrees = 0): number[][] {
  return Array.from({ length: views }, (_, k) => {
    const a = (2 * Math.PI * k) / views + (startDegrees * Math.PI) / 180;
    return lookAt([2.3 * Math.cos(a), 1.5, 2.3 * Math.sin(a)], [0, 0.6, 0]);
  });
}

/** ScanNet's z-up world and OpenCV camera axes from eqakit's: T_scannet = Wᵀ · T · F. */
function toScannetPose(pose: number[]): number[] {
  const W = [1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1];
  const Wt = [1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1];
  const F = [1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1];
  void W;
  return mul(mul(Wt, pose), F);
}

function mul(a: number[], b: number[]): number[] {
  const out = new Array<number>(16).fill(0);
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) for (let k = 0; k < 4; k++) out[r * 4 + c]! += a[r * 4 + k]! * b[k * 4 + c]!;
  return out;
}

export interface SceneEpisodeOptions {
  layout: "hm3d" | "scannet";
  views?: number;
  masks?: boolean;
  /** Frames whose pose is written as -inf. */
  lostPoses?: number[];
  /** Where on the circle the first camera stands (degrees; 0 = +x). */
  startDegrees?: number;
  /** Image size and focal length (default IMAGE: 160×120). */
  image?: { width: number; height: number; f: number };
}

/** Writes the episode; returns the eqakit poses used. */
export async function writeSceneEpisode(dir: string, options: SceneEpisodeOptions): Promise<number[][]> {
  mkdirSync(dir, { recursive: true });
  const image = options.image ?? IMAGE;
  const { width, height, f } = image;
  const K = [f, 0, width / 2, 0, 0, f, height / 2, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  writeFileSync(join(dir, "intrinsic_color.txt"), matrixText(K));
  writeFileSync(join(dir, "intrinsic_depth.txt"), matrixText(K));
  const poses = circlePoses(options.views ?? 20, options.startDegrees ?? 0);
  const digits = options.layout === "scannet" ? 6 : 5;
  if (options.masks !== false) writeFileSync(join(dir, "instance_labels.json"), JSON.stringify(Object.fromEntries(SCENE.map((b) => [String(b.id), b.label]))));
  for (let k = 0; k < poses.length; k++) {
    const name = String(k).padStart(digits, "0");
    const { depth, ids, rgb } = renderView(poses[k]!, image);
    const depth16 = new Uint16Array(depth.length);
    for (let i = 0; i < depth.length; i++) depth16[i] = options.layout === "scannet" ? Math.round(depth[i]! * 1000) : Math.min(65535, Math.trunc((depth[i]! / 10) * 65535));
    await sharp(rgb, { raw: { width, height, channels: 3 } }).png().toFile(join(dir, `${name}-rgb.png`));
    await sharp(depth16, { raw: { width, height, channels: 1 } }).toColourspace("grey16").png().toFile(join(dir, `${name}-depth.png`));
    if (options.masks !== false) await sharp(ids, { raw: { width, height, channels: 1 } }).toColourspace("grey16").png().toFile(join(dir, `${name}-instance.png`));
    const lost = options.lostPoses?.includes(k) ?? false;
    const written = lost ? new Array<number>(16).fill(-Infinity) : options.layout === "scannet" ? toScannetPose(poses[k]!) : poses[k]!;
    writeFileSync(join(dir, `${name}.txt`), matrixText(written, 4, 4, 9));
  }
  return poses;
}
