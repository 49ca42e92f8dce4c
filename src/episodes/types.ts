import type { Frame } from "../core/index.js";
import type { ImageOptions, PreparedImage } from "./image.js";

/** A prepared frame of an episode. */
export interface EpisodeFrameImage extends PreparedImage {
  /** The frame's index in the episode (0 … frameCount − 1). */
  index: number;
}

/**
 * How an episode is stored: an OpenEQA frame folder of HM3D's or ScanNet's layout, a video
 * file, or a folder of plain images (photos, or any `*.png` / `*.jpg` in name order).
 */
export type EpisodeKind = "hm3d" | "scannet" | "video" | "images";

/**
 * An episode history: what an agent saw, frame by frame. Frames are numbered 0 …
 * frameCount − 1: for a frame folder, the position of the frame's file in the order of the
 * numbers in the names (which is the order OpenEQA's baselines sort `*-rgb.png` in); for
 * a video, the decoding order.
 */
export interface Episode {
  /** The benchmark's episode_history, or the name given (by default the folder's or video's name). */
  readonly id: string;
  /** The folder or video file. */
  readonly path: string;
  readonly kind: EpisodeKind;
  readonly frameCount: number;
  /** Seconds from the first frame, one per frame, when known (videos). */
  readonly timestamps?: number[];
  /** What eqakit corrected or left out while reading the episode (HM3D's fy, invalid ScanNet poses, …). */
  readonly notes: string[];
  /**
   * The frames at these indices prepared for a model (resized, encoded), in the given
   * order; an index may repeat (its image is prepared once). An unreadable or truncated
   * image throws a UserError naming the episode and the file. Only these frames are held
   * in memory.
   */
  images(indices: readonly number[], options?: ImageOptions): Promise<EpisodeFrameImage[]>;
  /**
   * One full frame for geometry: the camera, depth in metres and the pose in eqakit's
   * convention (null when the episode's pose for it is invalid), as far as the episode has
   * them. Video frames have only their index and timestamp.
   */
  frame(index: number): Promise<Frame>;
  /** The colour image file of frame `index`, without reading it (frame folders; absent for videos). */
  rgbPath?(index: number): string;
}

/** Throws a RangeError (a caller's bug) for an index outside the episode. */
export function checkFrameIndex(episode: { id: string; frameCount: number }, index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= episode.frameCount) {
    throw new RangeError(`frame index ${index} is outside episode ${episode.id} (frames 0-${episode.frameCount - 1})`);
  }
}

/** The distinct indices, in increasing order, after checking each. */
export function distinctIndices(episode: { id: string; frameCount: number }, indices: readonly number[]): number[] {
  for (const index of indices) checkFrameIndex(episode, index);
  return [...new Set(indices)].sort((a, b) => a - b);
}
