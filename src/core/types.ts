/** The seven OpenEQA question categories, as spelled in `open-eqa-v0.json`. */
export const OPENEQA_CATEGORIES = [
  "object recognition",
  "object localization",
  "attribute recognition",
  "spatial understanding",
  "object state recognition",
  "functional reasoning",
  "world knowledge",
] as const;

export type OpenEqaCategory = (typeof OPENEQA_CATEGORIES)[number];

/** A benchmark question with its reference answer(s). */
export interface Question {
  questionId: string;
  question: string;
  answer: string;
  category: OpenEqaCategory;
  /** e.g. `hm3d-v0/000-hm3d-BFRyYbPCCPE`: the source is the part before the slash. */
  episodeHistory: string;
  /** Further correct answers (OpenEQA gives them for object-localization questions). */
  extraAnswers?: string[];
}

/** An agent's answer; null when it gave none. */
export interface Prediction {
  questionId: string;
  answer: string | null;
}

/** The data source of an episode history (`hm3d-v0`, `scannet-v0`, …). */
export function episodeSource(episodeHistory: string): string {
  const slash = episodeHistory.indexOf("/");
  return slash === -1 ? episodeHistory : episodeHistory.slice(0, slash);
}

/** Pinhole intrinsics, in pixels, of an image of `width` × `height`. */
export interface Camera {
  width: number;
  height: number;
  fx: number;
  fy: number;
  cx: number;
  cy: number;
}

/**
 * A camera-to-world transform: 16 numbers, row-major. eqakit's one world convention:
 * metres, y up; camera axes as OpenGL's (x right, y up, the camera looks along −z).
 * HM3D poses are already so; ScanNet's (OpenCV camera axes, z-up world) are converted.
 */
export type Pose = Float64Array;

/** One observation of an episode, with what geometry needs. */
export interface Frame {
  /** The frame's number in its episode (from its file name, or its position in a video). */
  index: number;
  /** The colour image's file, when the frame is a file (video frames have none). */
  rgbPath?: string;
  camera?: Camera;
  /** Depth in metres, row-major, `depthCamera.width × depthCamera.height`; 0 where unknown. */
  depth?: Float32Array;
  /** The depth image's intrinsics (ScanNet's depth has its own size and camera). */
  depthCamera?: Camera;
  /** Null when the episode has poses but this frame's is invalid (ScanNet's -inf); absent when none. */
  pose?: Pose | null;
  /** Seconds from the episode's start, when known. */
  timestamp?: number;
  /** Ground-truth instance masks, when the episode provides them (a simulator's). */
  masks?: InstanceMasks;
}

/**
 * Instance masks of a frame: one instance id per pixel (0 = no instance), row-major, at
 * `width × height` (the depth image's size when the frame has depth), with each id's label.
 */
export interface InstanceMasks {
  width: number;
  height: number;
  ids: Uint32Array;
  /** Label of each instance id present (e.g. "chair"), keyed by the id in decimal. */
  labels: Record<string, string>;
}
