import type { Aabb, OrientedBox } from "../../geometry/index.js";

/** Where an object view came from: the embedded detector, the episode's instance masks, or a vision-language model. */
export type ViewSource = "detector" | "mask" | "vlm";

/** One object seen in one frame (SVM's step 1): its label, 2-D box, mask area and, with depth and a pose, its 3-D points. */
export interface ObjectView {
  frame: number;
  label: string;
  score: number;
  source: ViewSource;
  /** [x, y, width, height] as fractions of the colour image (0-1). */
  box2d: [number, number, number, number];
  /** Pixels of the object's mask (the box's for the detector, whose boxes have no mask): the best crop is the largest. */
  area: number;
  /** The episode's instance id, for views from masks. */
  maskId?: number;
  /** World points (xyz): a mask's all, a box's DBSCAN-filtered; absent without depth or pose. */
  points?: Float32Array;
  box?: Aabb;
}

/** A view as the scene graph keeps it (no points). */
export type ViewRecord = Omit<ObjectView, "points" | "box">;

/** A global object instance (SVM's step 2): the views merged into it, its box from their merged points, its caption. */
export interface MemoryInstance {
  id: number;
  /** The label most of its views carry. */
  label: string;
  /** The captioner's description of its best crop, or its label when no captioner is configured. */
  caption: string;
  captionSource: "captioner" | "label";
  views: ViewRecord[];
  /** Index into `views` of the best crop (the largest mask area). */
  bestView: number;
  /** Axis-aligned box of the merged points (world metres); absent without positions. */
  box?: Aabb;
  orientedBox?: OrientedBox;
  center?: [number, number, number];
  /** Merged points after voxel down-sampling. */
  pointCount: number;
}

export const RELATIONS = ["on", "inside", "next to", "above", "below"] as const;
export type RelationName = (typeof RELATIONS)[number];

/** `subject` is `relation` `object`, e.g. 3 on 1: the cup is on the table. */
export interface Relation {
  subject: number;
  relation: RelationName;
  object: number;
}

/** Where the agent was when it saw a frame (the camera's position), for retrieval by agent position. */
export interface AgentPosition {
  frame: number;
  position: [number, number, number];
}

/** The object-centric memory of an episode, as `scene-graph.json` stores it. */
export interface SceneGraph {
  format: "eqakit-scene-graph/1";
  episode: string;
  /** The world frame of every position: see `src/geometry/frames.ts`. */
  world: string;
  /** False for an episode without depth or poses (an RGB-only video): instances have no boxes. */
  hasPositions: boolean;
  /** The frames looked at. */
  frames: number[];
  /** Frames left out because their pose was invalid (ScanNet's -inf). */
  skippedPoses: number;
  detector: string | null;
  captioner: string | null;
  instances: MemoryInstance[];
  relations: Relation[];
  agentPositions: AgentPosition[];
  /** World-to-grounding transform of TAG-EQA's frame (the agent's first observation at the origin), row-major. */
  grounding?: number[];
  notes: string[];
}
