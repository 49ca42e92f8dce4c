import type { Camera, Pose } from "../core/index.js";
import { multiplyTransforms, OPENGL_OPENCV_FLIP } from "../episodes/index.js";

/**
 * eqakit's world frame, used by every geometry function: metres, y up (gravity along −y),
 * right-handed; camera poses are camera-to-world transforms with OpenGL camera axes (x right,
 * y up, the camera looks along −z), as `Pose` documents. Episodes convert their own poses into
 * it (HM3D's already are; ScanNet's OpenCV axes and z-up world are converted when read).
 *
 * TAG-EQA grounds positions in the agent's frame at its first observation: the agent at the
 * origin, y still up, looking along −z. {@link groundingTransform} gives that frame's
 * world-to-grounding transform.
 */
export type PoseConvention = "opengl" | "opencv";

/** A row-major 4×4 transform. */
export type Transform = Float64Array;

// 4×4 products and the camera-axes flip are the episodes' own (they convert ScanNet poses with them)
export { multiplyTransforms, OPENGL_OPENCV_FLIP };

/** The inverse of a rigid transform (rotation and translation). */
export function invertRigid(m: ArrayLike<number>): Transform {
  const out = new Float64Array(16);
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) out[r * 4 + c] = m[c * 4 + r]!;
  }
  for (let r = 0; r < 3; r++) out[r * 4 + 3] = -(out[r * 4]! * m[3]! + out[r * 4 + 1]! * m[7]! + out[r * 4 + 2]! * m[11]!);
  out[15] = 1;
  return out;
}

/** Applies a 4×4 transform to xyz triples in place (or into `out`). */
export function transformPoints(m: ArrayLike<number>, points: Float32Array, out: Float32Array = points): Float32Array {
  const [a, b, c, d, e, f, g, h, i, j, k, l] = [m[0]!, m[1]!, m[2]!, m[3]!, m[4]!, m[5]!, m[6]!, m[7]!, m[8]!, m[9]!, m[10]!, m[11]!];
  for (let p = 0; p < points.length; p += 3) {
    const x = points[p]!;
    const y = points[p + 1]!;
    const z = points[p + 2]!;
    out[p] = a * x + b * y + c * z + d;
    out[p + 1] = e * x + f * y + g * z + h;
    out[p + 2] = i * x + j * y + k * z + l;
  }
  return out;
}

/** A camera's position in the world: the translation of its camera-to-world pose. */
export function cameraPosition(pose: Pose): [number, number, number] {
  return [pose[3]!, pose[7]!, pose[11]!];
}

/** The heading of a camera (radians about +y; 0 when looking along −z). */
export function cameraYaw(pose: Pose): number {
  // the camera's −z axis in the world is minus the pose's third column
  const fx = -pose[2]!;
  const fz = -pose[10]!;
  return Math.atan2(-fx, -fz);
}

/**
 * World-to-grounding transform of TAG-EQA's frame: the agent's first observation at the
 * origin, y up, its heading along −z (the camera's pitch and roll are left out so that y
 * stays up).
 */
export function groundingTransform(firstPose: Pose): Transform {
  const yaw = cameraYaw(firstPose);
  const [x, y, z] = cameraPosition(firstPose);
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  // grounding-to-world: rotation by yaw about y, then the translation
  const toWorld = Float64Array.from([c, 0, s, x, 0, 1, 0, y, -s, 0, c, z, 0, 0, 0, 1]);
  return invertRigid(toWorld);
}

/** A pose given in OpenCV camera axes, in eqakit's OpenGL axes (same world). */
export function opencvPoseToOpengl(pose: ArrayLike<number>): Pose {
  return multiplyTransforms(pose, OPENGL_OPENCV_FLIP);
}

/** The pinhole camera scaled to another image size. */
export function scaleIntrinsics(camera: Camera, width: number, height: number): Camera {
  const sx = width / camera.width;
  const sy = height / camera.height;
  return { width, height, fx: camera.fx * sx, fy: camera.fy * sy, cx: camera.cx * sx, cy: camera.cy * sy };
}
