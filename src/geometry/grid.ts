/**
 * Numerics on row-major 2-D grids and point sets, as the explorers' reference code computes them
 * with SciPy and NumPy: a Gaussian filter, the cells of a disc, farthest-point sampling, and a
 * pinhole projection through a camera-to-world pose.
 */
import type { Camera } from "../core/index.js";

/** scipy.ndimage.gaussian_filter (mode "reflect", truncate 4) on a rows×cols grid. */
export function gaussianSmooth(values: Float32Array, rows: number, cols: number, sigma: number): Float32Array {
  const radius = Math.floor(4 * sigma + 0.5);
  const kernel = new Float64Array(2 * radius + 1);
  let sum = 0;
  for (let i = -radius; i <= radius; i++) sum += kernel[i + radius] = Math.exp((-0.5 * i * i) / (sigma * sigma));
  for (let i = 0; i < kernel.length; i++) kernel[i] = (kernel[i] as number) / sum;
  const reflect = (i: number, n: number): number => {
    const period = 2 * n;
    let j = ((i % period) + period) % period;
    if (j >= n) j = period - 1 - j;
    return j;
  };
  const tmp = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let k = -radius; k <= radius; k++) acc += (kernel[k + radius] as number) * (values[r * cols + reflect(c + k, cols)] as number);
      tmp[r * cols + c] = acc;
    }
  }
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let k = -radius; k <= radius; k++) acc += (kernel[k + radius] as number) * (tmp[reflect(r + k, rows) * cols + c] as number);
      out[r * cols + c] = acc;
    }
  }
  return out;
}

/** Cells (as row·cols + col) within `radius` cells of (r0, c0), inside a rows×cols grid. */
export function gridDisc(r0: number, c0: number, radius: number, rows: number, cols: number): number[] {
  const out: number[] = [];
  for (let r = Math.max(0, Math.ceil(r0 - radius)); r <= Math.min(rows - 1, Math.floor(r0 + radius)); r++) {
    for (let c = Math.max(0, Math.ceil(c0 - radius)); c <= Math.min(cols - 1, Math.floor(c0 + radius)); c++) {
      if (Math.hypot(r - r0, c - c0) <= radius) out.push(r * cols + c);
    }
  }
  return out;
}

/** Farthest-point sampling of `n` points, starting from the first (ties to the earliest point). */
export function farthestPoints(points: [number, number][], n: number): [number, number][] {
  const chosen = [0];
  const d = points.map(() => Infinity);
  while (chosen.length < Math.min(n, points.length)) {
    const last = points[chosen[chosen.length - 1] as number] as [number, number];
    let best = -1;
    for (let i = 0; i < points.length; i++) {
      if (chosen.includes(i)) continue;
      const p = points[i] as [number, number];
      d[i] = Math.min(d[i] as number, (p[0] - last[0]) ** 2 + (p[1] - last[1]) ** 2);
      if (best < 0 || (d[i] as number) > (d[best] as number)) best = i;
    }
    chosen.push(best);
  }
  return chosen.map((i) => points[i] as [number, number]);
}

/** World (x, y, z) to pixel (u, v) through a camera-to-world pose (row-major, OpenGL axes); undefined behind the camera. */
export function projectToPixel(camera: Pick<Camera, "fx" | "fy" | "cx" | "cy">, pose: ArrayLike<number>, x: number, y: number, z: number): { u: number; v: number } | undefined {
  const dx = x - (pose[3] as number);
  const dy = y - (pose[7] as number);
  const dz = z - (pose[11] as number);
  const cx = (pose[0] as number) * dx + (pose[4] as number) * dy + (pose[8] as number) * dz;
  const cy = (pose[1] as number) * dx + (pose[5] as number) * dy + (pose[9] as number) * dz;
  const cz = (pose[2] as number) * dx + (pose[6] as number) * dy + (pose[10] as number) * dz;
  const depth = -cz;
  if (!(depth > 0)) return undefined;
  return { u: camera.cx + (camera.fx * cx) / depth, v: camera.cy - (camera.fy * cy) / depth };
}
