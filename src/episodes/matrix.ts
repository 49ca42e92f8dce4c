import type { Camera, Pose } from "../core/index.js";

/** A matrix read from a text file, or why it could not be read (the caller names the file). */
export type MatrixParse = { ok: true; rows: number; columns: number; values: Float64Array } | { ok: false; problem: string };

/**
 * Parses a matrix written as text, one row a line, numbers separated by spaces, tabs or
 * commas (what `np.savetxt` and ScanNet's exporter write). `inf`, `-inf` and `nan` (any
 * case) are read as numbers, since ScanNet marks lost poses with them.
 */
export function parseMatrixText(text: string): MatrixParse {
  const rows = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => line.split(/[\s,]+/));
  if (rows.length === 0) return { ok: false, problem: "is empty" };
  const columns = rows[0]!.length;
  const ragged = rows.findIndex((row) => row.length !== columns);
  if (ragged !== -1) return { ok: false, problem: `line ${ragged + 1} has ${rows[ragged]!.length} numbers where line 1 has ${columns}` };
  const values = new Float64Array(rows.length * columns);
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < columns; c++) {
      const token = rows[r]![c]!;
      const value = parseNumber(token);
      if (value === undefined) return { ok: false, problem: `line ${r + 1}: "${token}" is not a number` };
      values[r * columns + c] = value;
    }
  }
  return { ok: true, rows: rows.length, columns, values };
}

function parseNumber(token: string): number | undefined {
  if (/^[+-]?inf(inity)?$/i.test(token)) return token.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(token)) return Number.NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(token)) return undefined;
  return Number(token);
}

export function allFinite(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]!)) return false;
  return true;
}

/** Row-major 4×4 product a·b. */
export function multiplyTransforms(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(16);
  for (let r = 0; r < 4; r++) {
    for (let c = 0; c < 4; c++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[r * 4 + k]! * b[k * 4 + c]!;
      out[r * 4 + c] = sum;
    }
  }
  return out;
}

/** ScanNet's z-up world to eqakit's y-up world: (x, y, z) ↦ (x, z, −y), a rotation of −90° about x. */
const SCANNET_WORLD_TO_EQAKIT = Float64Array.from([1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1]);
/** OpenGL camera axes (x right, y up, looking along −z) to OpenCV's (x right, y down, looking along +z), and back: y and z flipped. */
export const OPENGL_OPENCV_FLIP = Float64Array.from([1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1]);

/**
 * A ScanNet camera-to-world pose (OpenCV camera axes, z-up world) in eqakit's convention
 * (OpenGL camera axes, y-up world):
 *
 *   T_eqakit = W · T_scannet · F,  W = [[1,0,0,0],[0,0,1,0],[0,−1,0,0],[0,0,0,1]],  F = diag(1, −1, −1, 1)
 *
 * F turns a point in OpenGL camera axes into OpenCV camera axes, T_scannet carries it into
 * ScanNet's world, and W turns ScanNet's world (z up) into eqakit's (y up, x kept, the old
 * −y becoming +z). Both are rotations, so the result stays a rigid transform.
 */
export function scannetPoseToEqakit(scannet: ArrayLike<number>): Pose {
  return multiplyTransforms(multiplyTransforms(SCANNET_WORLD_TO_EQAKIT, scannet), OPENGL_OPENCV_FLIP);
}

/** A pinhole camera's focal lengths and principal point, in pixels, before an image size is attached. */
export type Intrinsics = Omit<Camera, "width" | "height">;

/** The pinhole intrinsics in a 3×3 or 4×4 matrix (row-major). */
export function intrinsicsFromMatrix(matrix: { columns: number; values: Float64Array }): Intrinsics {
  const at = (r: number, c: number): number => matrix.values[r * matrix.columns + c]!;
  return { fx: at(0, 0), fy: at(1, 1), cx: at(0, 2), cy: at(1, 2) };
}

/**
 * OpenEQA's HM3D extraction writes fy = h / tan(vfov/2) / 2 with a linear vfov = hfov·h/w,
 * which holds only for square images: a 1920×1080 frame at 90° hfov gets fy ≈ 1141.7
 * where Habitat's square pixels give fy = fx = 960. Detects that value (to the precision
 * the file was written with; the image size is the one the matrix was written for, twice
 * its principal point, as the reference puts it at the centre) and returns the intrinsics
 * with fy = fx, or undefined when they do not carry it.
 */
export function correctLinearVfov(intrinsics: Intrinsics): Intrinsics | undefined {
  const { fx, fy } = intrinsics;
  const width = 2 * intrinsics.cx;
  const height = 2 * intrinsics.cy;
  if (!(fx > 0) || !(fy > 0) || !(width > 0) || !(height > 0) || width === height) return undefined;
  const hfov = 2 * Math.atan(width / 2 / fx);
  const vfovLinear = (hfov * height) / width;
  const fyLinear = height / Math.tan(vfovLinear / 2) / 2;
  // the reference writes "%.6f"; allow for that rounding and for float32 round trips
  const tolerance = 1e-6 * Math.max(1, fyLinear) + 1e-6;
  if (Math.abs(fy - fyLinear) > tolerance || Math.abs(fy - fx) <= tolerance) return undefined;
  return { ...intrinsics, fy: fx };
}

/** The camera scaled to another image size (same field of view). */
export function scaleCamera(camera: Camera, width: number, height: number): Camera {
  const sx = width / camera.width;
  const sy = height / camera.height;
  return { width, height, fx: camera.fx * sx, fy: camera.fy * sy, cx: camera.cx * sx, cy: camera.cy * sy };
}

export function isIdentity4(values: ArrayLike<number>, tolerance = 1e-6): boolean {
  for (let i = 0; i < 16; i++) if (Math.abs(values[i]! - (i % 5 === 0 ? 1 : 0)) > tolerance) return false;
  return true;
}
