/**
 * Small OpenEQA-layout episodes written by the tests: colour frames drawn with sharp,
 * depth computed from known geometry (a floor seen by a level camera), poses and
 * intrinsics written as text the way OpenEQA's extraction scripts write them.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";

/** A row-major 4×4 matrix as `np.savetxt(..., fmt)` writes it. */
export function matrixText(values: ArrayLike<number>, rows = 4, columns = 4, digits = 6): string {
  const lines: string[] = [];
  for (let r = 0; r < rows; r++) {
    const row: string[] = [];
    for (let c = 0; c < columns; c++) {
      const v = values[r * columns + c]!;
      row.push(Number.isNaN(v) ? "nan" : v === Infinity ? "inf" : v === -Infinity ? "-inf" : v.toFixed(digits));
    }
    lines.push(row.join(" "));
  }
  return `${lines.join("\n")}\n`;
}

/** A colour frame: a smooth gradient that differs per frame, with a bright square. */
export async function writeRgb(file: string, width: number, height: number, seed: number): Promise<void> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      pixels[o] = (x * 255) / width;
      pixels[o + 1] = (y * 255) / height;
      pixels[o + 2] = (seed * 53) % 256;
    }
  }
  const side = Math.max(2, Math.round(Math.min(width, height) / 4));
  const left = (seed * 17) % (width - side);
  for (let y = 0; y < side; y++) pixels.fill(255, ((y + 2) * width + left) * 3, ((y + 2) * width + left + side) * 3);
  await sharp(pixels, { raw: { width, height, channels: 3 } }).png().toFile(file);
}

/** A 16-bit grey PNG of these values. */
export async function writeDepth16(file: string, width: number, height: number, values: Uint16Array): Promise<void> {
  await sharp(values, { raw: { width, height, channels: 1 } }).toColourspace("grey16").png().toFile(file);
}

/**
 * The z-depth (metres along the optical axis) of a floor `cameraHeight` below a level
 * pinhole camera, at pixel (u, v); 0 at and above the horizon or beyond `maxDepth`.
 */
export function floorDepth(u: number, v: number, fy: number, cy: number, cameraHeight: number, maxDepth: number): number {
  const below = v - cy;
  if (below <= 0) return 0;
  const z = (cameraHeight * fy) / below;
  return z > maxDepth ? 0 : z;
}

export const HM3D = {
  width: 192,
  height: 108,
  hfovDegrees: 90,
  cameraHeight: 1.5,
  frames: 4,
  /** fx = w / tan(hfov/2) / 2: 96 for 192 px at 90°. */
  get fx(): number {
    return this.width / Math.tan((this.hfovDegrees * Math.PI) / 360) / 2;
  },
  /** OpenEQA's fy, from the linear vfov = hfov·h/w. */
  get fyReference(): number {
    const vfov = ((this.hfovDegrees * Math.PI) / 180) * (this.height / this.width);
    return this.height / Math.tan(vfov / 2) / 2;
  },
};

/** Yaw (about +y) by `degrees`, then translation: an HM3D camera-to-world pose. */
export function hm3dPose(degrees: number, x: number, y: number, z: number): number[] {
  const a = (degrees * Math.PI) / 180;
  const c = Math.cos(a);
  const s = Math.sin(a);
  return [c, 0, s, x, 0, 1, 0, y, -s, 0, c, z, 0, 0, 0, 1];
}

/**
 * An HM3D-layout episode: `NNNNN-rgb.png`, `NNNNN-depth.png` (metres / 10 × 65535, truncated as
 * the reference's astype(uint16) does) of the floor 1.5 m below a level camera seen with
 * square pixels (fy = fx), `NNNNN.txt` poses at that height, and the reference's
 * `intrinsic_color.txt` / `intrinsic_depth.txt` with its linear-vfov fy.
 */
export async function writeHm3dEpisode(dir: string): Promise<{ poses: number[][] }> {
  mkdirSync(dir, { recursive: true });
  const { width, height, fx, cameraHeight } = HM3D;
  const cx = width / 2;
  const cy = height / 2;
  const K = [fx, 0, cx, 0, 0, HM3D.fyReference, cy, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  writeFileSync(join(dir, "intrinsic_color.txt"), matrixText(K));
  writeFileSync(join(dir, "intrinsic_depth.txt"), matrixText(K));
  const depth = new Uint16Array(width * height);
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) depth[v * width + u] = Math.trunc((floorDepth(u, v, fx, cy, cameraHeight, 9.9) / 10) * 65535);
  }
  const poses: number[][] = [];
  for (let i = 0; i < HM3D.frames; i++) {
    const name = String(i).padStart(5, "0");
    const pose = hm3dPose(30 * i, 2 + i * 0.25, cameraHeight, -1 - i * 0.5);
    poses.push(pose);
    await writeRgb(join(dir, `${name}-rgb.png`), width, height, i);
    await writeDepth16(join(dir, `${name}-depth.png`), width, height, depth);
    writeFileSync(join(dir, `${name}.txt`), matrixText(pose));
  }
  return { poses };
}

export const SCANNET = {
  rgbWidth: 162,
  rgbHeight: 121,
  depthWidth: 80,
  depthHeight: 60,
  /** ScanNet-like calibrated intrinsics (principal point off centre). */
  color: { fx: 146.2, fy: 146.0, cx: 80.8, cy: 61.2 },
  depth: { fx: 72.3, fy: 72.5, cx: 39.7, cy: 29.9 },
  cameraHeight: 1.4,
};

/**
 * A ScanNet camera-to-world pose (OpenCV camera axes, z-up world) of a level camera at
 * (x, y, z) looking along world +x: camera right = world −y, down = world −z, forward = +x.
 */
export const SCANNET_POSE_LOOKING_X = (x: number, y: number, z: number): number[] => [0, 0, 1, x, -1, 0, 0, y, 0, -1, 0, z, 0, 0, 0, 1];
/** The same camera looking along world +y: right = +x, down = −z, forward = +y. */
export const SCANNET_POSE_LOOKING_Y = (x: number, y: number, z: number): number[] => [1, 0, 0, x, 0, 0, 1, y, 0, -1, 0, z, 0, 0, 0, 1];

/**
 * A ScanNet-layout episode of three frames: `NNNNNN-rgb.png` at the colour size,
 * `NNNNNN-depth.png` in millimetres at the depth camera's size (the floor 1.4 m below a
 * level camera, seen through `intrinsic_depth.txt`), `NNNNNN.txt` poses (frame 1's lost:
 * -inf, as ScanNet writes it), identity extrinsics.
 */
export async function writeScannetEpisode(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const s = SCANNET;
  const intrinsic = (k: { fx: number; fy: number; cx: number; cy: number }): number[] => [k.fx, 0, k.cx, 0, 0, k.fy, k.cy, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  writeFileSync(join(dir, "intrinsic_color.txt"), matrixText(intrinsic(s.color)));
  writeFileSync(join(dir, "intrinsic_depth.txt"), matrixText(intrinsic(s.depth)));
  writeFileSync(join(dir, "extrinsic_color.txt"), matrixText(identity));
  writeFileSync(join(dir, "extrinsic_depth.txt"), matrixText(identity));
  const depth = new Uint16Array(s.depthWidth * s.depthHeight);
  for (let v = 0; v < s.depthHeight; v++) {
    for (let u = 0; u < s.depthWidth; u++) depth[v * s.depthWidth + u] = Math.round(floorDepth(u, v, s.depth.fy, s.depth.cy, s.cameraHeight, 20) * 1000);
  }
  const poses = [SCANNET_POSE_LOOKING_X(1, 2, s.cameraHeight), new Array<number>(16).fill(-Infinity), SCANNET_POSE_LOOKING_Y(-0.5, 3, s.cameraHeight)];
  for (let i = 0; i < poses.length; i++) {
    const name = String(i).padStart(6, "0");
    await writeRgb(join(dir, `${name}-rgb.png`), s.rgbWidth, s.rgbHeight, i);
    await writeDepth16(join(dir, `${name}-depth.png`), s.depthWidth, s.depthHeight, depth);
    writeFileSync(join(dir, `${name}.txt`), matrixText(poses[i]!));
  }
}

/** One frame of a `.sens` file written by {@link writeSensFile}. */
export interface SensFrameInput {
  /** Row-major 4×4 camera-to-world. */
  pose: number[];
  /** JPEG bytes. */
  color: Buffer;
  /** zlib-compressed uint16 depth. */
  depth: Buffer;
}

export interface SensFileInput {
  version?: number;
  colorWidth: number;
  colorHeight: number;
  depthWidth: number;
  depthHeight: number;
  intrinsicColor: number[];
  intrinsicDepth: number[];
  extrinsic?: number[];
  /** Frames announced in the header (default: as many as written). */
  announced?: number;
  /** Frame `index`, made when it is written. */
  frames: (index: number) => SensFrameInput;
  /** Frames written. */
  count: number;
}

/**
 * A ScanNet `.sens` file (version 4) written from the format's description: header, then each
 * frame's pose, timestamps, sizes and bytes, one frame at a time.
 */
export function writeSensFile(path: string, input: SensFileInput): void {
  const fd = openSync(path, "w");
  const u32 = (v: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(v); return b; };
  const i32 = (v: number): Buffer => { const b = Buffer.alloc(4); b.writeInt32LE(v); return b; };
  const u64 = (v: number): Buffer => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return b; };
  const f32s = (vs: number[]): Buffer => { const b = Buffer.alloc(vs.length * 4); vs.forEach((v, i) => b.writeFloatLE(v, i * 4)); return b; };
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  const name = Buffer.from("StructureSensor");
  writeSync(fd, Buffer.concat([
    u32(input.version ?? 4), u64(name.length), name,
    f32s(input.intrinsicColor), f32s(input.extrinsic ?? identity), f32s(input.intrinsicDepth), f32s(input.extrinsic ?? identity),
    i32(2), i32(1), u32(input.colorWidth), u32(input.colorHeight), u32(input.depthWidth), u32(input.depthHeight),
    f32s([1000]), u64(input.announced ?? input.count),
  ]));
  for (let i = 0; i < input.count; i++) {
    const frame = input.frames(i);
    writeSync(fd, Buffer.concat([f32s(frame.pose), u64(1000 * i), u64(1000 * i + 1), u64(frame.color.length), u64(frame.depth.length), frame.color, frame.depth]));
  }
  closeSync(fd);
}
