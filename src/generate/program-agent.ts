/**
 * The `program` agent: answers a TAG-EQA question by executing its structured program over
 * what the agent perceived (its 3-D memory of the recording, as a perceived trajectory log),
 * never over the ground truth, and its own action history (what it picked up, put, opened…,
 * where), which gives the perceived log its events. Its answers are structured, so the
 * structured judge scores them with no language model; the score measures memory and
 * retrieval alone.
 */
import { describeError } from "../core/index.js";
import type { StructuredAnswer, TagQuestion } from "../data/index.js";
import { openEpisode, type SamplingSpec } from "../episodes/index.js";
import { buildMemory, type SceneGraph } from "../agents/index.js";
import { executeProgram } from "./execute.js";
import { perceivedLog, type PerceivedLogOptions } from "./perceived-log.js";
import type { TagAction } from "./history.js";

/** Where the agent's observations of one trajectory are. */
export interface ProgramAgentEpisode {
  /** The recording's frame folder (RGB-D, poses, instance masks). */
  frames: string;
  environment: string;
  cameraHeight: number;
  /** The agent's own actions in the recording (`actionHistory`): its events, for moment and count-times questions. */
  actions?: readonly TagAction[];
}

export interface ProgramAgentOptions extends Pick<PerceivedLogOptions, "typeKnowledge" | "lighting"> {
  /** Frames the memory is built from (default: every second frame). */
  sampling?: SamplingSpec;
  /** Mask labels that are not objects (default: wall, floor, ceiling). */
  ignoredMaskLabels?: readonly string[];
  /** Called after each trajectory's memory is built. */
  onMemory?: (trajectory: string, graph: SceneGraph) => void | Promise<void>;
}

/** Labels of a home's structure, which are not objects. */
export const STRUCTURE_LABELS = ["wall", "floor", "ceiling"] as const;

export interface ProgramPrediction {
  question_id: string;
  answer: StructuredAnswer | null;
  error?: string;
}

/**
 * Answers every question from the memory of its trajectory's recording. A trajectory whose
 * frames cannot be read fails its questions alone (answer null, error said).
 */
export async function answerWithPrograms(
  questions: readonly TagQuestion[],
  episodes: ReadonlyMap<string, ProgramAgentEpisode>,
  options: ProgramAgentOptions = {},
): Promise<ProgramPrediction[]> {
  const byTrajectory = new Map<string, TagQuestion[]>();
  for (const q of questions) byTrajectory.set(q.trajectory, [...(byTrajectory.get(q.trajectory) ?? []), q]);
  const predictions = new Map<string, ProgramPrediction>();
  for (const [trajectory, asked] of byTrajectory) {
    const source = episodes.get(trajectory);
    try {
      if (!source) throw new Error(`no recording of trajectory ${trajectory}`);
      const episode = await openEpisode(source.frames, trajectory);
      const { graph } = await buildMemory(episode, { sampling: options.sampling ?? { kind: "every", step: 2 }, detector: null, ignoredMaskLabels: options.ignoredMaskLabels ?? STRUCTURE_LABELS });
      await options.onMemory?.(trajectory, graph);
      const log = await perceivedLog(graph, episode, { id: trajectory, environment: source.environment, cameraHeight: source.cameraHeight, ...(source.actions ? { actions: source.actions } : {}), ...pickKnowledge(options) });
      for (const q of asked) predictions.set(q.question_id, { question_id: q.question_id, answer: executeProgram(q.program, log) });
    } catch (error) {
      for (const q of asked) predictions.set(q.question_id, { question_id: q.question_id, answer: null, error: describeError(error) });
    }
  }
  return questions.map((q) => predictions.get(q.question_id) as ProgramPrediction);
}

function pickKnowledge(options: ProgramAgentOptions): Pick<PerceivedLogOptions, "typeKnowledge" | "lighting"> {
  return { ...(options.typeKnowledge ? { typeKnowledge: options.typeKnowledge } : {}), ...(options.lighting !== undefined ? { lighting: options.lighting } : {}) };
}
