/**
 * TAG-EQA's baselines (seed 002, Baselines and Table 2) as built-in answerers of a TAG set made
 * from simulator recordings: Socratic LLM + image captions, the same with object recognition,
 * LLM + ConceptGraphs, and LLM + API (retrieval over the ConceptGraph before answering).
 *
 * Each baseline prepares a trajectory once (captions of its chosen observations, a scene graph)
 * and answers each of its questions from what it prepared, the question and the action history.
 */
import type { z } from "zod";
import type { TagQuestion, TrajectoryLog } from "../../data/index.js";
import type { Episode } from "../../episodes/index.js";
import type { ChatModel } from "../../models/index.js";
import type { AgentTrace } from "../../agents/index.js";
import type { TagAnswerContext } from "../history.js";

/** The paper's four baselines, in Table 2's order. */
export const TAG_BASELINE_NAMES = ["socratic-ic", "socratic-ic-or", "conceptgraphs", "llm-api"] as const;
export type TagBaselineName = (typeof TAG_BASELINE_NAMES)[number];

/** The models a baseline calls: the LLM that answers (and, for LLM + API, retrieves) and the VLM that captions. */
export interface TagBaselineModels {
  llm: ChatModel;
  captioner: ChatModel;
}

/** One recorded trajectory as a baseline reads it. */
export interface TagBaselineTrajectory {
  /** The trajectory's id, as the set's questions name it. */
  id: string;
  /** Its recording's frames (colour, depth, poses and, where recorded, instance masks). */
  episode: Episode;
  log: TrajectoryLog;
  /** The grounding frame, each frame's pose in it and the action history. */
  tag: TagAnswerContext;
}

export interface TagBaselineAnswer {
  /** The answer as text (read by the judge's extraction) or a structured answer as a JSON string; null when none was given. */
  answer: string | null;
  /** The model calls made for this answer (preparation's calls are in the trajectory's trace). */
  trace: AgentTrace;
}

/**
 * A baseline: `prepare` runs once per trajectory (the caller keeps its result for all the
 * trajectory's questions), `answer` once per question.
 */
export interface TagBaseline<Prepared> {
  readonly name: TagBaselineName;
  /** Whether it calls the captioner. */
  readonly captions: boolean;
  /** The prompt files (under prompts/) it uses, for the run's settings hash. */
  readonly prompts: readonly string[];
  /** Settings beside the models and prompts that decide its answers (K, parameters): part of the run's settings. */
  readonly settings?: Record<string, unknown>;
  /**
   * When given, what `prepare` returns is JSON that this schema reads back: `eqa answer-tag`
   * keeps each trajectory's preparation in its run folder (`prepared.jsonl`) and a rerun
   * reuses it instead of preparing again. Without it, a rerun prepares again (its model calls
   * then come from the model-call cache).
   */
  readonly preparedSchema?: z.ZodType<Prepared>;
  prepare(trajectory: TagBaselineTrajectory, models: TagBaselineModels, trace: AgentTrace): Promise<Prepared>;
  answer(question: TagQuestion, prepared: Prepared, trajectory: TagBaselineTrajectory, models: TagBaselineModels): Promise<TagBaselineAnswer>;
}
