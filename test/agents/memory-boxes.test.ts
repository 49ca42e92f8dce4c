import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { minAreaOrientedBox } from "../../src/agents/index.js";
import { orientedBoxOf } from "../../src/geometry/index.js";

type Rect = { u: [number, number]; v: [number, number] };

/**
 * Points of a piece of furniture as depth sees it: its top at `height` and its sides down to the
 * floor, on a 2 cm grid, over a footprint made of rectangles in the piece's own (u, v) frame,
 * turned by `yawDegrees` about +y and moved to (cx, cz); `extra` adds a dense cluster (a vase on
 * a corner) in the same frame.
 */
function furniture(parts: Rect[], height: number, yawDegrees: number, cx: number, cz: number, extra?: Rect): Float32Array {
  const yaw = (yawDegrees * Math.PI) / 180;
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  const out: number[] = [];
  const put = (u: number, y: number, v: number): void => {
    out.push(cx + c * u - s * v, y, cz + s * u + c * v);
  };
  const step = 0.02;
  for (const part of parts) {
    for (let u = part.u[0]; u <= part.u[1] + 1e-9; u += step) {
      for (let v = part.v[0]; v <= part.v[1] + 1e-9; v += step) put(u, height, v);
      for (let y = 0; y < height; y += 0.1) {
        put(u, y, part.v[0]);
        put(u, y, part.v[1]);
      }
    }
  }
  if (extra) for (let u = extra.u[0]; u <= extra.u[1]; u += 0.002) for (let v = extra.v[0]; v <= extra.v[1]; v += 0.002) put(u, height + 0.2, v);
  return Float32Array.from(out);
}

function yawError(a: number, bDegrees: number): number {
  const d = Math.abs(((a * 180) / Math.PI - bDegrees) % 180);
  return Math.min(d, 180 - d);
}

describe("oriented boxes: the minimum-area rectangle on the floor plane", () => {
  test("an L-shaped sofa, 2.0 × 1.6 m overall, turned 30°", () => {
    const points = furniture([{ u: [-1, 1], v: [-0.8, 0.1] }, { u: [0.2, 1], v: [0.1, 0.8] }], 0.85, 30, 2, -1);
    const box = minAreaOrientedBox(points)!;
    assert.ok(Math.abs(box.size[0] - 2.0) < 0.01 && Math.abs(box.size[2] - 1.6) < 0.01, `size ${box.size}`);
    assert.ok(Math.abs(box.size[1] - 0.85) < 0.01 + 1e-6);
    assert.ok(yawError(box.yaw, 30) < 0.5, `yaw ${(box.yaw * 180) / Math.PI}`);
    assert.ok(Math.hypot(box.center[0] - 2, box.center[2] + 1) < 0.01, `centre ${box.center}`);
    // principal axes are pulled off the L's sides
    const pca = orientedBoxOf(points)!;
    assert.ok(yawError(pca.yaw, 30) > 2 || pca.size[0] * pca.size[2] > 2.0 * 1.6 * 1.03);
  });

  test("a table of 1.6 × 0.9 m turned 10°, with a dense vase on one corner", () => {
    const points = furniture([{ u: [-0.8, 0.8], v: [-0.45, 0.45] }], 0.75, 10, -1, 3, { u: [0.6, 0.78], v: [0.3, 0.43] });
    const box = minAreaOrientedBox(points)!;
    assert.ok(Math.abs(box.size[0] - 1.6) < 0.01 && Math.abs(box.size[2] - 0.9) < 0.01, `size ${box.size}`);
    assert.ok(yawError(box.yaw, 10) < 0.5, `yaw ${(box.yaw * 180) / Math.PI}`);
    assert.ok(Math.hypot(box.center[0] + 1, box.center[2] - 3) < 0.01);
    assert.ok(yawError(orientedBoxOf(points)!.yaw, 10) > 2, "principal axes follow the dense corner");
  });

  test("a thin shelf, 1.2 × 0.3 m, turned −50°: the longer side is the box's x, yaw in (−90°, 90°]", () => {
    const box = minAreaOrientedBox(furniture([{ u: [-0.6, 0.6], v: [-0.15, 0.15] }], 1.8, -50, 0, 0))!;
    assert.ok(Math.abs(box.size[0] - 1.2) < 0.01 && Math.abs(box.size[2] - 0.3) < 0.01, `size ${box.size}`);
    assert.ok(Math.abs((box.yaw * 180) / Math.PI + 50) < 0.5, `yaw ${(box.yaw * 180) / Math.PI}`);
    const turned = minAreaOrientedBox(furniture([{ u: [-0.15, 0.15], v: [-0.6, 0.6] }], 1.8, 40, 0, 0))!;
    assert.ok(Math.abs((turned.yaw * 180) / Math.PI - 130 + 180) < 0.5, `yaw ${(turned.yaw * 180) / Math.PI}`);
  });

  test("one point, or points on a line, still give a box", () => {
    assert.deepEqual(minAreaOrientedBox(Float32Array.from([1, 2, 3]))!.size, [0, 0, 0]);
    const line = minAreaOrientedBox(Float32Array.from([0, 0, 0, 1, 0, 1, 2, 1, 2]))!;
    assert.ok(Math.abs(line.size[0] - Math.hypot(2, 2)) < 1e-6 && line.size[2] < 1e-6 && Math.abs(line.size[1] - 1) < 1e-6);
    assert.equal(minAreaOrientedBox(new Float32Array(0)), undefined);
  });
});
