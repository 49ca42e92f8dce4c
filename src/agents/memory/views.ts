import type { Camera, Frame, InstanceMasks } from "../../core/index.js";
import { aabbOf, backProject, clusterPoints, dbscan, voxelDownsample } from "../../geometry/index.js";
import type { Detection } from "../../models/index.js";
import type { ObjectView } from "./types.js";

/** Parameters of SVM's step 1, in metres. */
export const VIEW_PARAMETERS = {
  /** Depth kept (OpenEQA's SVM: [0.1 m, 4 m]). */
  minDepth: 0.1,
  maxDepth: 4,
  /** DBSCAN's neighbourhood and core size over the points of a detector's box (a mask's are all kept). */
  eps: 0.08,
  minPoints: 6,
  /** At most about this many pixels of a box or mask are back-projected (a stride keeps it so). */
  maxPixels: 6000,
  /** Voxel size of stored object points. */
  voxel: 0.02,
} as const;

/** A frame's geometry, when it has depth, a depth camera and a valid pose. */
export interface FrameGeometry {
  depth: Float32Array;
  camera: Camera;
  pose: Float64Array;
}

export function frameGeometry(frame: Frame): FrameGeometry | undefined {
  const camera = frame.depthCamera ?? frame.camera;
  if (!frame.depth || !camera || !frame.pose) return undefined;
  return { depth: frame.depth, camera, pose: frame.pose };
}

/**
 * Views from the episode's instance masks: one per instance id in the frame, with the mask's
 * points back-projected (when the mask has the depth image's size). Instances whose label is
 * in `ignoredLabels` (e.g. walls and floors, which are not objects) are left out before their
 * points are computed, which is most of the work for such large masks.
 *
 * Every point of a mask is kept. Instance masks are ground truth, drawn by the same ray as the
 * depth (a simulator's), so no pixel of one is background; and an object is often seen in
 * pieces more than DBSCAN's 8 cm apart (a TV above its stand, a lamp's shade over a thin pole,
 * a toilet's bowl over its foot, a desk's top over its legs). Keeping only the largest cluster,
 * as a detector's box needs, kept a different piece in each view: one object became several
 * instances, its centre a piece's.
 */
export function viewsFromMasks(frameIndex: number, masks: InstanceMasks, geometry: FrameGeometry | undefined, ignoredLabels: ReadonlySet<string> = new Set()): ObjectView[] {
  const { width, height, ids } = masks;
  const stats = new Map<number, { area: number; x0: number; y0: number; x1: number; y1: number }>();
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) {
      const id = ids[v * width + u]!;
      if (id === 0) continue;
      const s = stats.get(id);
      if (!s) stats.set(id, { area: 1, x0: u, y0: v, x1: u, y1: v });
      else {
        s.area++;
        if (u < s.x0) s.x0 = u;
        if (u > s.x1) s.x1 = u;
        if (v < s.y0) s.y0 = v;
        if (v > s.y1) s.y1 = v;
      }
    }
  }
  const views: ObjectView[] = [];
  const sameSize = geometry !== undefined && geometry.camera.width === width && geometry.camera.height === height;
  for (const [id, s] of [...stats.entries()].sort((a, b) => a[0] - b[0])) {
    const label = masks.labels[String(id)] ?? `object ${id}`;
    if (ignoredLabels.has(label)) continue;
    const view: ObjectView = {
      frame: frameIndex,
      label,
      score: 1,
      source: "mask",
      box2d: [s.x0 / width, s.y0 / height, (s.x1 + 1 - s.x0) / width, (s.y1 + 1 - s.y0) / height],
      area: s.area,
      maskId: id,
    };
    if (geometry && sameSize) {
      const stride = Math.max(1, Math.floor(Math.sqrt(s.area / VIEW_PARAMETERS.maxPixels)));
      const { points } = backProject(geometry.depth, geometry.camera, geometry.pose, {
        minDepth: VIEW_PARAMETERS.minDepth,
        maxDepth: VIEW_PARAMETERS.maxDepth,
        region: [s.x0, s.y0, s.x1 + 1 - s.x0, s.y1 + 1 - s.y0],
        mask: ids,
        maskValue: id,
        stride,
      });
      attachPoints(view, points);
    }
    views.push(view);
  }
  return views;
}

/**
 * Views from detections (boxes as fractions of the image): the depth inside each box,
 * clustered by DBSCAN; the object is the cluster holding most of the box's central pixels
 * (a box also holds the wall and floor behind the object, which DBSCAN separates).
 */
export function viewsFromDetections(frameIndex: number, detections: readonly (Detection & { fraction: [number, number, number, number] })[], geometry: FrameGeometry | undefined, source: "detector" | "vlm"): ObjectView[] {
  return detections.map((d) => {
    const [fx, fy, fw, fh] = d.fraction;
    const view: ObjectView = { frame: frameIndex, label: d.label, score: d.score, source, box2d: [fx, fy, fw, fh], area: Math.round(d.box[2] * d.box[3]) };
    if (geometry) {
      const { width, height } = geometry.camera;
      const region: [number, number, number, number] = [fx * width, fy * height, fw * width, fh * height];
      const stride = Math.max(1, Math.floor(Math.sqrt((region[2] * region[3]) / VIEW_PARAMETERS.maxPixels)));
      const { points, pixels } = backProject(geometry.depth, geometry.camera, geometry.pose, { minDepth: VIEW_PARAMETERS.minDepth, maxDepth: VIEW_PARAMETERS.maxDepth, region, stride });
      attachPoints(view, centralCluster(points, pixels, width, region));
    }
    return view;
  });
}

function attachPoints(view: ObjectView, points: Float32Array | undefined): void {
  if (!points || points.length < 3 * VIEW_PARAMETERS.minPoints) return;
  const voxels = voxelDownsample(points, VIEW_PARAMETERS.voxel).centroids;
  const box = aabbOf(voxels);
  if (!box) return;
  view.points = voxels;
  view.box = box;
}

function centralCluster(points: Float32Array, pixels: Uint32Array, width: number, region: readonly [number, number, number, number]): Float32Array | undefined {
  const { labels, clusters } = dbscan(points, VIEW_PARAMETERS.eps, VIEW_PARAMETERS.minPoints);
  if (clusters === 0) return undefined;
  const [rx, ry, rw, rh] = region;
  const central = new Uint32Array(clusters);
  for (let i = 0; i < pixels.length; i++) {
    const l = labels[i]!;
    if (l < 0) continue;
    const u = pixels[i]! % width;
    const v = Math.floor(pixels[i]! / width);
    if (u >= rx + rw / 4 && u <= rx + (3 * rw) / 4 && v >= ry + rh / 4 && v <= ry + (3 * rh) / 4) central[l] = central[l]! + 1;
  }
  let best = 0;
  for (let c = 1; c < clusters; c++) if (central[c]! > central[best]!) best = c;
  return clusterPoints(points, labels, best);
}
