import type { OrientedBox } from "../../geometry/index.js";

/** Convex hull of 2-D points (Andrew's monotone chain), counter-clockwise, without repeats. */
function convexHull(points: [number, number][]): [number, number][] {
  const sorted = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (sorted.length <= 2) return sorted;
  const cross = (o: [number, number], a: [number, number], b: [number, number]): number => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: [number, number][] = [];
  for (const p of sorted) {
    while (lower.length >= 2 && cross(lower[lower.length - 2]!, lower[lower.length - 1]!, p) <= 0) lower.pop();
    lower.push(p);
  }
  const upper: [number, number][] = [];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const p = sorted[i]!;
    while (upper.length >= 2 && cross(upper[upper.length - 2]!, upper[upper.length - 1]!, p) <= 0) upper.pop();
    upper.push(p);
  }
  return [...lower.slice(0, -1), ...upper.slice(0, -1)];
}

/**
 * A gravity-aligned oriented box: the minimum-area rectangle around the points' floor-plane
 * footprint (x, z), one of whose sides lies along an edge of the footprint's convex hull
 * (rotating calipers), with the points' y range as its height. Unlike principal axes, it is
 * not pulled askew by where the points are dense, nor by an L-shaped or thin footprint.
 * The box's own x axis is its longer side; yaw (about +y, from the world's x axis towards its
 * z axis, as `orientedBoxOf` gives it) is in (−π/2, π/2]. Undefined when there are no points.
 */
export function minAreaOrientedBox(points: Float32Array): OrientedBox | undefined {
  const n = points.length / 3;
  if (n < 1) return undefined;
  let minY = Infinity;
  let maxY = -Infinity;
  const footprint: [number, number][] = [];
  for (let p = 0; p < points.length; p += 3) {
    footprint.push([points[p]!, points[p + 2]!]);
    const y = points[p + 1]!;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  const hull = convexHull(footprint);
  const angles = hull.length < 2 ? [0] : hull.map((a, i) => {
    const b = hull[(i + 1) % hull.length]!;
    return Math.atan2(b[1] - a[1], b[0] - a[0]);
  });
  let best: { area: number; yaw: number; u: [number, number]; v: [number, number] } | undefined;
  for (const angle of angles) {
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    let minU = Infinity, maxU = -Infinity, minV = Infinity, maxV = -Infinity;
    for (const [x, z] of hull) {
      const u = c * x + s * z;
      const v = -s * x + c * z;
      if (u < minU) minU = u;
      if (u > maxU) maxU = u;
      if (v < minV) minV = v;
      if (v > maxV) maxV = v;
    }
    const area = (maxU - minU) * (maxV - minV);
    if (!best || area < best.area - 1e-12) best = { area, yaw: angle, u: [minU, maxU], v: [minV, maxV] };
  }
  let { yaw } = best!;
  const [u0, u1] = best!.u;
  const [v0, v1] = best!.v;
  const cu = (u0 + u1) / 2;
  const cv = (v0 + v1) / 2;
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  const center: [number, number, number] = [c * cu - s * cv, (minY + maxY) / 2, s * cu + c * cv];
  let length = u1 - u0;
  let width = v1 - v0;
  if (width > length) {
    [length, width] = [width, length];
    yaw += Math.PI / 2;
  }
  // a rectangle turned by π is the same rectangle
  while (yaw > Math.PI / 2) yaw -= Math.PI;
  while (yaw <= -Math.PI / 2) yaw += Math.PI;
  return { center, size: [length, maxY - minY, width], yaw };
}
