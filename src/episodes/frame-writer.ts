/**
 * Writes observations as an OpenEQA HM3D-style frame folder (see folder.ts), so that every
 * EM-EQA agent and `eqa memory build` read a recording unchanged: `NNNNN-rgb.png`,
 * `NNNNN-depth.png` (16-bit, metres = value / 65535 × 10, truncated as the reference does),
 * `NNNNN.txt` (camera-to-world, OpenGL axes, y-up world), `intrinsic_color.txt` and
 * `intrinsic_depth.txt` once, and with masks `NNNNN-instance.png` (16-bit ids) plus one
 * `instance_labels.json` gathering every label seen.
 */
import { join } from "node:path";
import { writeFileAtomically, type Camera, type InstanceMasks, type Pose } from "../core/index.js";
import { loadSharp } from "./image.js";

export interface ObservedFrame {
  width: number;
  height: number;
  camera: Camera;
  pose: Pose;
  /** RGB8, row-major. */
  rgb: Uint8Array;
  /** Metres; 0 where unknown. */
  depth: Float32Array;
  masks?: InstanceMasks;
}

/** Depth beyond this does not fit the HM3D 16-bit encoding. */
const MAX_DEPTH_M = 10;

/**
 * OpenEQA's HM3D depth values (`data/hm3d/extract-frames.py`, `save_depth`):
 * `(depth / 10 * 65535).astype(np.uint16)` on habitat-sim's float32 metres, so both steps are
 * rounded to float32 (numpy keeps float32 for a Python scalar) and the result is truncated.
 * Depth of 10 m or more gives 65535 (numpy's cast wraps it around); 0, NaN and negative depth give 0.
 */
export function hm3dDepthValues(depth: Float32Array): Uint16Array {
  const values = new Uint16Array(depth.length);
  for (let i = 0; i < depth.length; i++) {
    const d = depth[i]!;
    if (!(d > 0)) continue;
    values[i] = Math.min(65535, Math.trunc(Math.fround(Math.fround(d / MAX_DEPTH_M) * 65535)));
  }
  return values;
}

/** An RGB8 image (row-major) as PNG bytes; zlib level 6 is Pillow's and sharp's default. */
export async function encodeRgbPng(rgb: Uint8Array, width: number, height: number, compressionLevel = 6): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(rgb, { raw: { width, height, channels: 3 } }).png({ compressionLevel }).toBuffer();
}

/** 16-bit values (row-major) as a 16-bit greyscale PNG. */
export async function encodeDepthPng(values: Uint16Array, width: number, height: number, compressionLevel = 6): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(values, { raw: { width, height, channels: 1 } }).toColourspace("grey16").png({ compressionLevel }).toBuffer();
}

function matrixLines(values: ArrayLike<number>, digits: number): string {
  const lines: string[] = [];
  for (let r = 0; r < 4; r++) {
    const row: string[] = [];
    for (let c = 0; c < 4; c++) row.push((values[r * 4 + c] as number).toFixed(digits));
    lines.push(row.join(" "));
  }
  return `${lines.join("\n")}\n`;
}

/** Writes frames 0, 1, 2, … of one episode into `dir`. */
export class FrameFolderWriter {
  private count = 0;
  private readonly labels: Record<string, string> = {};
  private intrinsicsWritten = false;

  constructor(readonly dir: string) {}

  /** Frames written so far. */
  get frames(): number {
    return this.count;
  }

  /** Writes the next frame; returns its index. */
  async write(frame: ObservedFrame): Promise<number> {
    const sharp = await loadSharp();
    const index = this.count++;
    const { width, height } = frame;
    const name = join(this.dir, String(index).padStart(5, "0"));
    if (!this.intrinsicsWritten) {
      const { fx, fy, cx, cy } = frame.camera;
      const k = matrixLines([fx, 0, cx, 0, 0, fy, cy, 0, 0, 0, 1, 0, 0, 0, 0, 1], 6);
      await writeFileAtomically(join(this.dir, "intrinsic_color.txt"), k);
      await writeFileAtomically(join(this.dir, "intrinsic_depth.txt"), k);
      this.intrinsicsWritten = true;
    }
    // PNGs are encoded in memory and written whole, so a refused write leaves no empty picture
    const writes: Promise<void>[] = [
      encodeRgbPng(frame.rgb, width, height).then((png) => writeFileAtomically(`${name}-rgb.png`, png)),
      encodeDepthPng(hm3dDepthValues(frame.depth), width, height).then((png) => writeFileAtomically(`${name}-depth.png`, png)),
      writeFileAtomically(`${name}.txt`, matrixLines(frame.pose, 9)),
    ];
    if (frame.masks) {
      const ids = new Uint16Array(width * height);
      for (let i = 0; i < ids.length; i++) ids[i] = Math.min(65535, frame.masks.ids[i] as number);
      writes.push(sharp(ids, { raw: { width, height, channels: 1 } }).toColourspace("grey16").png().toBuffer().then((png) => writeFileAtomically(`${name}-instance.png`, png)));
      let changed = false;
      for (const [id, label] of Object.entries(frame.masks.labels)) {
        if (this.labels[id] !== label) {
          this.labels[id] = label;
          changed = true;
        }
      }
      if (changed) writes.push(writeFileAtomically(join(this.dir, "instance_labels.json"), `${JSON.stringify(this.labels)}\n`));
    }
    // every write ends (and clears its temporary file) before the first failure is thrown
    const failure = (await Promise.allSettled(writes)).find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failure) throw failure.reason;
    return index;
  }
}
