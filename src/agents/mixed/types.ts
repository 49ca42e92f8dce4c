/**
 * What a Mixed EQA agent is handed besides the question and the live environment: its history,
 * what it saw and did on each past day, never the ground truth. Per day: when it was, the frame
 * folder of what it saw (RGB-D, poses, instance masks) and its own actions (what it picked up,
 * put, opened…, and where, in the day's grounding frame). The world's per-step object states that
 * a recording's trajectory log also holds never reach an agent.
 */
import type { TrajectoryEventType, TrajectoryLog } from "../../data/index.js";
import type { SceneGraph } from "../memory/index.js";

/** An object an action names: its type and where it was, in the day's grounding frame (null when unknown). */
export interface HistoryActionObject {
  type: string;
  position: [number, number, number] | null;
}

/** One of the agent's own actions on a day (the same shape as a TAG-EQA action history's). */
export interface HistoryAction {
  step: number;
  frame: number | null;
  action: TrajectoryEventType;
  object: HistoryActionObject;
  /** The n-th time this action was done to this object, from 1. */
  index: number;
  from?: HistoryActionObject & { relation?: "on" | "inside" };
  target?: HistoryActionObject & { relation?: "on" | "inside" };
}

/** One past day as the agent lived it. */
export interface MixedHistoryDay {
  day: number;
  /** When it was, as a question says it ("two days ago, morning"). */
  when: string;
  /** The day's frame folder: what the agent saw. */
  frames: string;
  /** How many frames the folder holds. */
  frameCount: number;
  /** The day's grounding frame → the home's world frame (4×4 row-major), in which an agent of the user's own is handed the actions. */
  toWorld: readonly number[];
  /** The agent's own actions that day. */
  actions: readonly HistoryAction[];
  /** Height of the camera above the agent's feet, metres. */
  cameraHeight: number;
}

/** Everything an agent remembers of a home: its past days, oldest first. */
export interface MixedHistory {
  scene: string;
  days: readonly MixedHistoryDay[];
}

/**
 * What the agent remembers of one day: its memory of the day's frames (the scene graph) and the
 * perceived trajectory log built from that memory and its own actions (objects as it saw them,
 * events and what they imply over time).
 */
export interface RecalledDay {
  day: number;
  graph: SceneGraph;
  log: TrajectoryLog;
}

/** Builds what the agent remembers of a day from its history alone (perception supplied by the caller). */
export type RecallDay = (history: MixedHistory, day: MixedHistoryDay) => Promise<RecalledDay>;

/** The built-in Mixed EQA agents, for `eqa explore --agent`. */
export const MIXED_AGENT_NAMES = ["memory-only", "explore-only", "recall-explore"] as const;
export type MixedAgentName = (typeof MIXED_AGENT_NAMES)[number];

export function isMixedAgentName(name: string): name is MixedAgentName {
  return (MIXED_AGENT_NAMES as readonly string[]).includes(name);
}
