import type { Episode, SamplingSpec } from "../episodes/index.js";
import { loadObjectDetector, loadSentenceEncoder, type ChatModel, type SentenceEncoder } from "../models/index.js";
import { buildMemory, MEMORY_DEFAULT_FRAMES, type BuiltMemory, type MemoryInstance, type SceneGraph } from "./memory/index.js";
import type { AgentTrace } from "./types.js";

export interface MemorySourceOptions {
  sampling?: SamplingSpec;
  /** Describes each instance's best crop; without one, captions are detector labels. */
  captioner?: ChatModel;
  /** Run the embedded detector (default true); instance masks are used whenever the episode has them. */
  detector?: boolean;
  /** Also ask the captioner for each frame's objects (open-vocabulary detection). */
  vlmDetect?: boolean;
}

/**
 * Builds each episode's memory once per agent (concurrent questions on one episode share the
 * build), with the embedded detector and sentence encoder loaded on first use.
 */
export class MemorySource {
  private readonly built = new Map<string, Promise<BuiltMemory>>();

  constructor(private readonly options: MemorySourceOptions) {}

  get configuration(): Record<string, unknown> {
    return {
      sampling: this.options.sampling ?? { kind: "uniform", count: MEMORY_DEFAULT_FRAMES },
      detector: this.options.detector === false ? null : "centernet-coco",
      captioner: this.options.captioner?.name ?? null,
      vlmDetect: this.options.vlmDetect === true && this.options.captioner !== undefined,
      encoder: "use-lite-en",
    };
  }

  encoder(): Promise<SentenceEncoder> {
    return loadSentenceEncoder();
  }

  /** The episode's scene graph; the question that builds it gets the caption calls in its trace. */
  async graph(episode: Episode, trace: AgentTrace): Promise<SceneGraph> {
    const key = `${episode.path}\u0000${episode.id}`;
    let memory = this.built.get(key);
    if (!memory) {
      memory = this.build(episode, trace);
      memory.catch(() => this.built.delete(key));
      this.built.set(key, memory);
    } else trace.notes.push(`memory of episode ${episode.id} reused`);
    const { graph } = await memory;
    trace.frames = graph.frames;
    trace.notes.push(`memory: ${graph.instances.length} instances, ${graph.relations.length} relations from ${graph.frames.length} frames (detector ${graph.detector ?? "none"}, captions from ${graph.captioner ?? "labels"})`);
    if (!graph.hasPositions) trace.notes.push("positions are missing: the episode has no depth or no valid poses, so the memory has no 3-D positions");
    if (graph.skippedPoses > 0) trace.notes.push(`${graph.skippedPoses} frames skipped for an invalid pose`);
    return graph;
  }

  private async build(episode: Episode, trace: AgentTrace): Promise<BuiltMemory> {
    const [detector, encoder] = await Promise.all([this.options.detector === false ? null : loadObjectDetector(), loadSentenceEncoder()]);
    return buildMemory(episode, {
      detector,
      encoder,
      ...(this.options.sampling ? { sampling: this.options.sampling } : {}),
      ...(this.options.captioner ? { captioner: this.options.captioner } : {}),
      ...(this.options.captioner && this.options.vlmDetect ? { vlmDetector: this.options.captioner } : {}),
      onCall: (call) => trace.calls.push({ role: call.role, model: call.model, prompt: call.prompt, promptSha256: call.promptSha256, frames: call.frames, reply: call.reply, cached: call.cached, usage: call.usage }),
    });
  }
}

function fmt(v: number): string {
  return v.toFixed(2);
}

/** "(x, y, z)" in metres. */
export function formatPoint(p: readonly number[]): string {
  return `(${p.map(fmt).join(", ")})`;
}

/** One line of an object list: id, caption, label, and the box's centre and size when wanted and known. */
export function describeInstance(instance: MemoryInstance, withPosition: boolean): string {
  const caption = instance.caption === instance.label ? instance.label : `${instance.caption} (${instance.label})`;
  let line = `- [${instance.id}] ${caption}`;
  if (withPosition && instance.center && instance.box) {
    const size = [0, 1, 2].map((a) => instance.box!.max[a]! - instance.box!.min[a]!);
    line += `, centre ${formatPoint(instance.center)} m, size ${size.map(fmt).join(" x ")} m`;
  }
  return line;
}

export const POSITIONS_NOTE = {
  known: " and the centre and size of its 3-D bounding box (x, y, z in metres, y up).",
  hidden: ".",
  missing: ". Their 3-D positions are not known: the recording has no depth.",
} as const;
