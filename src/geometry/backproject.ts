import type { Camera, Pose } from "../core/index.js";
import type { PoseConvention } from "./frames.js";

/** OpenEQA's Sparse Voxel Map keeps depths in [0.1 m, 4 m] (appendix VI). */
export const SVM_MIN_DEPTH = 0.1;
export const SVM_MAX_DEPTH = 4;

export interface BackProjectOptions {
  /** Depths outside [minDepth, maxDepth] metres are left out (SVM's 0.1 and 4 by default). */
  minDepth?: number;
  maxDepth?: number;
  /** The pose's camera axes: eqakit's OpenGL (default) or OpenCV's (x right, y down, looking along +z). */
  convention?: PoseConvention;
  /** Use every stride-th pixel in each direction (1 = all). */
  stride?: number;
  /** Only pixels in this rectangle of the depth image: [x, y, width, height]. */
  region?: readonly [number, number, number, number];
  /** Only pixels whose value here is `maskValue` (row-major, the depth image's size). */
  mask?: ArrayLike<number>;
  maskValue?: number;
}

export interface BackProjected {
  /** xyz triples in world metres. */
  points: Float32Array;
  /** The depth image's pixel index (y·width + x) of each point. */
  pixels: Uint32Array;
}

/**
 * Back-projects a depth image (z-depth in metres, row-major, 0 where unknown) into world
 * points through the camera's intrinsics and the camera-to-world pose. A pixel (u, v) with
 * depth d is the camera point ((u − cx)·d/fx, (v − cy)·d/fy, d) in OpenCV axes, or
 * ((u − cx)·d/fx, −(v − cy)·d/fy, −d) in OpenGL axes, then carried by the pose. Typed arrays
 * throughout: no object per point.
 */
export function backProject(depth: Float32Array, camera: Camera, pose: Pose, options: BackProjectOptions = {}): BackProjected {
  const { width, height, fx, fy, cx, cy } = camera;
  if (depth.length !== width * height) throw new RangeError(`depth has ${depth.length} values, not ${width}×${height}`);
  const minDepth = options.minDepth ?? SVM_MIN_DEPTH;
  const maxDepth = options.maxDepth ?? SVM_MAX_DEPTH;
  const stride = Math.max(1, Math.trunc(options.stride ?? 1));
  const opencv = options.convention === "opencv";
  const [rx, ry, rw, rh] = options.region ?? [0, 0, width, height];
  const x0 = Math.max(0, Math.floor(rx));
  const y0 = Math.max(0, Math.floor(ry));
  const x1 = Math.min(width, Math.ceil(rx + rw));
  const y1 = Math.min(height, Math.ceil(ry + rh));
  const { mask } = options;
  const maskValue = options.maskValue ?? 1;
  const capacity = Math.max(0, Math.ceil((x1 - x0) / stride) * Math.ceil((y1 - y0) / stride));
  const points = new Float32Array(capacity * 3);
  const pixels = new Uint32Array(capacity);
  const [r00, r01, r02, tx, r10, r11, r12, ty, r20, r21, r22, tz] = [pose[0]!, pose[1]!, pose[2]!, pose[3]!, pose[4]!, pose[5]!, pose[6]!, pose[7]!, pose[8]!, pose[9]!, pose[10]!, pose[11]!];
  const ySign = opencv ? 1 : -1;
  const zSign = opencv ? 1 : -1;
  const invFx = 1 / fx;
  const invFy = 1 / fy;
  let n = 0;
  for (let v = y0; v < y1; v += stride) {
    const yFactor = ySign * (v - cy) * invFy;
    const row = v * width;
    for (let u = x0; u < x1; u += stride) {
      const i = row + u;
      const d = depth[i]!;
      if (!(d >= minDepth && d <= maxDepth)) continue;
      if (mask && mask[i] !== maskValue) continue;
      const x = (u - cx) * invFx * d;
      const y = yFactor * d;
      const z = zSign * d;
      const o = n * 3;
      points[o] = r00 * x + r01 * y + r02 * z + tx;
      points[o + 1] = r10 * x + r11 * y + r12 * z + ty;
      points[o + 2] = r20 * x + r21 * y + r22 * z + tz;
      pixels[n] = i;
      n++;
    }
  }
  return { points: points.slice(0, n * 3), pixels: pixels.slice(0, n) };
}
