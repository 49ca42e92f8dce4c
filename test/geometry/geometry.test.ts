import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  NOISE,
  farthestPoints,
  gaussianSmooth,
  gridDisc,
  projectToPixel,
  aabbOf,
  backProject,
  cameraPosition,
  dbscan,
  groundingTransform,
  invertRigid,
  iou2d,
  iou3d,
  multiplyTransforms,
  opencvPoseToOpengl,
  orientedBoxOf,
  transformPoints,
  voxelDownsample,
  type Aabb,
} from "../../src/geometry/index.js";
import { scannetPoseToEqakit } from "../../src/episodes/index.js";
import { inferRelations, type MemoryInstance } from "../../src/agents/index.js";

const camera = { width: 8, height: 6, fx: 4, fy: 4, cx: 4, cy: 3 };

function yawPose(degrees: number, x: number, y: number, z: number): Float64Array {
  const a = (degrees * Math.PI) / 180;
  return Float64Array.from([Math.cos(a), 0, Math.sin(a), x, 0, 1, 0, y, -Math.sin(a), 0, Math.cos(a), z, 0, 0, 0, 1]);
}

describe("back-projection", () => {
  test("a wall 2 m in front of an OpenGL camera lands at z = −2 in camera space, then moves with the pose", () => {
    const depth = new Float32Array(camera.width * camera.height).fill(2);
    const identity = yawPose(0, 0, 0, 0);
    const { points, pixels } = backProject(depth, camera, identity);
    assert.equal(points.length, 48 * 3);
    assert.equal(pixels.length, 48);
    // pixel (0, 0): x = (0 − 4)·2/4 = −2, y = −(0 − 3)·2/4 = 1.5 (up), z = −2
    assert.deepEqual(Array.from(points.slice(0, 3)), [-2, 1.5, -2]);
    const moved = backProject(depth, camera, yawPose(90, 1, 1.5, 0)).points;
    // yaw 90°: camera −z (forward) is world −x
    assert.ok(Math.abs(moved[0]! - (1 - 2)) < 1e-6 && Math.abs(moved[1]! - 3) < 1e-6 && Math.abs(moved[2]! - 2) < 1e-6);
  });

  test("the OpenCV convention gives the same world points as the same camera in OpenGL axes", () => {
    const depth = Float32Array.from({ length: 48 }, (_, i) => 0.5 + (i % 7) * 0.3);
    const opencvPose = Float64Array.from([0, 0, 1, 1, -1, 0, 0, 2, 0, -1, 0, 1.4, 0, 0, 0, 1]);
    const a = backProject(depth, camera, opencvPose, { convention: "opencv" }).points;
    const b = backProject(depth, camera, opencvPoseToOpengl(opencvPose)).points;
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) < 1e-5);
    // and ScanNet's pose converted to eqakit's y-up world gives those points rotated into it
    const c = backProject(depth, camera, scannetPoseToEqakit(opencvPose)).points;
    for (let i = 0; i < a.length; i += 3) {
      assert.ok(Math.abs(c[i]! - a[i]!) < 1e-5 && Math.abs(c[i + 1]! - a[i + 2]!) < 1e-5 && Math.abs(c[i + 2]! + a[i + 1]!) < 1e-5);
    }
  });

  test("depth outside [0.1 m, 4 m] and outside the mask or region is left out", () => {
    const depth = Float32Array.from({ length: 48 }, (_, i) => [0, 0.05, 1, 4.5, 2][i % 5]!);
    const { points } = backProject(depth, camera, yawPose(0, 0, 0, 0));
    assert.equal(points.length / 3, depth.filter((d) => d >= 0.1 && d <= 4).length);
    const mask = Uint8Array.from({ length: 48 }, (_, i) => (i < 24 ? 1 : 0));
    const masked = backProject(new Float32Array(48).fill(1), camera, yawPose(0, 0, 0, 0), { mask, maskValue: 1, region: [0, 0, 4, 6] });
    assert.equal(masked.pixels.length, 12);
  });
});

describe("voxels, DBSCAN, boxes", () => {
  test("voxel down-sampling keeps one centroid per occupied 5 cm voxel", () => {
    const points = Float32Array.from([0.01, 0.01, 0.01, 0.03, 0.03, 0.03, 0.06, 0, 0, -0.01, 0, 0]);
    const grid = voxelDownsample(points, 0.05);
    assert.equal(grid.counts.length, 3);
    assert.deepEqual(Array.from(grid.counts), [2, 1, 1]);
    assert.ok(Math.abs(grid.centroids[0]! - 0.02) < 1e-6);
  });

  test("DBSCAN separates two blobs and marks the outlier as noise", () => {
    const pts: number[] = [];
    for (let i = 0; i < 50; i++) pts.push((i % 5) * 0.02, Math.floor(i / 5) * 0.02, 0);
    for (let i = 0; i < 50; i++) pts.push(3 + (i % 5) * 0.02, Math.floor(i / 5) * 0.02, 0);
    pts.push(10, 10, 10);
    const { labels, clusters } = dbscan(Float32Array.from(pts), 0.05, 4);
    assert.equal(clusters, 2);
    assert.equal(labels[0], 0);
    assert.equal(labels[50], 1);
    assert.equal(labels[100], NOISE);
  });

  test("boxes: axis-aligned, gravity-aligned oriented, 2-D and 3-D IoU", () => {
    const a: Aabb = { min: [0, 0, 0], max: [2, 1, 1] };
    const b: Aabb = { min: [1, 0, 0], max: [3, 1, 1] };
    assert.equal(iou3d(a, b), 1 / 3);
    assert.equal(iou3d(a, { min: [5, 5, 5], max: [6, 6, 6] }), 0);
    assert.equal(iou2d([0, 0, 2, 1], [1, 0, 2, 1]), 1 / 3);
    assert.equal(iou2d([0, 0, 2, 1], [2, 0, 2, 1]), 0);
    // a 2 m × 0.5 m rectangle of points rotated by 30° about y
    const pts: number[] = [];
    const yaw = Math.PI / 6;
    for (let u = -1; u <= 1; u += 0.1) for (let v = -0.25; v <= 0.25; v += 0.05) for (const y of [0, 0.8]) pts.push(5 + Math.cos(yaw) * u - Math.sin(yaw) * v, y, 2 + Math.sin(yaw) * u + Math.cos(yaw) * v);
    const obb = orientedBoxOf(Float32Array.from(pts))!;
    assert.ok(Math.abs(obb.size[0] - 2) < 0.02 && Math.abs(obb.size[2] - 0.5) < 0.02 && Math.abs(obb.size[1] - 0.8) < 1e-6);
    assert.ok(Math.abs(obb.center[0] - 5) < 0.01 && Math.abs(obb.center[2] - 2) < 0.01);
    const aabb = aabbOf(Float32Array.from(pts))!;
    assert.ok(aabb.max[0] - aabb.min[0] > 1.8);
  });

  test("relations: on, inside, above / below, next to", () => {
    const instance = (id: number, min: [number, number, number], max: [number, number, number]): MemoryInstance => ({ id, label: `o${id}`, caption: `o${id}`, captionSource: "label", views: [], bestView: 0, box: { min, max }, pointCount: 1 });
    const relations = inferRelations([
      instance(0, [0, 0, 0], [1, 0.75, 1]), // table
      instance(1, [0.4, 0.75, 0.4], [0.5, 0.9, 0.5]), // cup on it
      instance(2, [3, 0, 0], [4, 2, 1]), // shelf
      instance(3, [3.2, 1, 0.2], [3.4, 1.2, 0.4]), // box inside the shelf
      instance(4, [1.2, 0, 0], [1.6, 0.9, 0.5]), // chair next to the table
      instance(5, [0.3, 2, 0.3], [0.7, 2.2, 0.7]), // lamp above the table
    ]);
    const said = new Set(relations.map((r) => `${r.subject} ${r.relation} ${r.object}`));
    for (const expected of ["1 on 0", "3 inside 2", "5 above 0", "0 below 5", "0 next to 4"]) assert.ok(said.has(expected), `${expected} in ${[...said].join(", ")}`);
    assert.ok(!said.has("4 on 0") && !said.has("1 next to 0"));
  });
});

describe("frames", () => {
  test("the grounding transform puts the first observation at the origin looking along −z, y up", () => {
    const first = yawPose(40, 2, 1.5, -3);
    const toGrounding = groundingTransform(first);
    const origin = transformPoints(toGrounding, Float32Array.from(cameraPosition(first)));
    assert.ok(Math.hypot(origin[0]!, origin[1]!, origin[2]!) < 1e-6);
    // a point 1 m in front of the camera is at (0, 0, −1)
    const ahead = transformPoints(multiplyTransforms(toGrounding, first), Float32Array.from([0, 0, -1]));
    assert.ok(Math.abs(ahead[0]!) < 1e-6 && Math.abs(ahead[1]!) < 1e-6 && Math.abs(ahead[2]! + 1) < 1e-6);
    const inverse = multiplyTransforms(invertRigid(first), first);
    for (let i = 0; i < 16; i++) assert.ok(Math.abs(inverse[i]! - (i % 5 === 0 ? 1 : 0)) < 1e-9);
  });
});

describe("grid numerics", () => {
  test("gaussianSmooth equals scipy.ndimage.gaussian_filter (reflect, truncate 4) at σ 0.8 and 2", () => {
    // a = zeros((6, 8), float32); a[1, 2] = 1; a[4, 6] = 2.5; a[0, 7] = -1; values of gaussian_filter(a, sigma) at flat indices 0, 10, 17, 38, 47 (SciPy 1.x)
    const grid = new Float32Array(48);
    grid[1 * 8 + 2] = 1;
    grid[4 * 8 + 6] = 2.5;
    grid[7] = -1;
    const expected: Record<string, number[]> = { "0.8": [0.005593, 0.248898, 0.052126, 0.622795, 0.156526], "2": [0.055198, 0.056508, 0.043639, 0.165677, 0.215836] };
    for (const [sigma, values] of Object.entries(expected)) {
      const out = gaussianSmooth(grid, 6, 8, Number(sigma));
      [0, 10, 17, 38, 47].forEach((i, k) => assert.ok(Math.abs((out[i] as number) - (values[k] as number)) < 1e-6, `σ ${sigma}, cell ${i}: ${out[i]}`));
    }
  });

  test("gridDisc holds the cells within the radius and inside the grid", () => {
    assert.deepEqual(gridDisc(0, 0, 1, 3, 3), [0, 1, 3]);
    assert.equal(gridDisc(5, 5, 2, 11, 11).length, 13);
  });

  test("farthestPoints starts from the first point and takes the farthest each time", () => {
    assert.deepEqual(farthestPoints([[0, 0], [1, 0], [5, 5], [0, 4]], 3), [[0, 0], [5, 5], [0, 4]]);
    assert.deepEqual(farthestPoints([[2, 2]], 3), [[2, 2]]);
  });

  test("projectToPixel puts a point ahead of an identity pose at the principal point, and nothing behind it", () => {
    const camera = { fx: 100, fy: 100, cx: 64, cy: 48 };
    const pose = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
    assert.deepEqual(projectToPixel(camera, pose, 0, 0, -2), { u: 64, v: 48 });
    assert.deepEqual(projectToPixel(camera, pose, 1, 1, -2), { u: 114, v: -2 });
    assert.equal(projectToPixel(camera, pose, 0, 0, 2), undefined);
  });
});
