import { UserError } from "../core/index.js";
import type { Episode, SamplingSpec } from "../episodes/index.js";
import { loadObjectDetector, loadSentenceEncoder, type ChatModel, type SentenceEncoder } from "../models/index.js";
import { promptHashes } from "./calls.js";
import { buildMemory, DETECT_OBJECTS_PROMPT, MAX_DETECTIONS, MEMORY_DEFAULT_FRAMES, MEMORY_MIN_SCORE, OBJECT_CAPTION_PROMPT, type BuiltMemory, type MemoryInstance, type MemoryOptions, type SceneGraph } from "./memory/index.js";
import { openMemoryFolder, type MemoryFolder } from "./memory-store.js";
import type { AgentTrace } from "./types.js";

export interface MemorySourceOptions {
  sampling?: SamplingSpec;
  /** Describes each instance's best crop; without one, captions are detector labels. */
  captioner?: ChatModel;
  /**
   * The embedded detector: true runs it on every frame, false never; by default it runs only on
   * episodes without instance masks (masks, when an episode has them, are the objects).
   */
  detector?: boolean;
  /** False leaves the episode's instance masks out: the detector finds the objects on every frame. */
  masks?: boolean;
  /** Also ask the captioner for each frame's objects (open-vocabulary detection). */
  vlmDetect?: boolean;
  /** Instance-mask labels that are not objects (walls, floors), left out. */
  ignoreLabels?: readonly string[];
  /** Least detector confidence kept (default 0.3). */
  minScore?: number;
  /** Frames an object detected only below `minScore` must be detected in to be kept (default 0: never kept). */
  supportFrames?: number;
  /** A folder that `eqa memory build --benchmark` wrote: memories are read from it, never built. */
  memoryDir?: string;
}

/** Everything a memory depends on besides its episode: what a memory folder is keyed by. */
export interface MemoryBuildSettings {
  sampling: SamplingSpec;
  detector: "without-masks" | "always" | "never";
  /** Present when the episode's instance masks were left out (absent: used where an episode has them). */
  masks?: "ignored";
  minScore: number;
  /** Frames an object detected only below minScore must be detected in to be kept (absent: never kept). */
  supportFrames?: number;
  /**
   * Detections kept a frame, and how overlapping boxes were suppressed (absent when the detector
   * never runs; memories built before these were recorded kept 20, suppressed across classes).
   */
  detectorViews?: { maxPerFrame: number; suppression?: "per-class" };
  /**
   * How views become objects: "whole" when a mask's every point is kept and views of one mask id
   * are one object (absent: memories built before, which kept a mask's largest cluster of points
   * and joined views of different mask ids by overlap).
   */
  maskViews?: "whole";
  /**
   * "surfaces" when "inside" is read from the points round an object, "on" from the surface
   * under it (absent: memories built before, whose relations came from boxes alone).
   */
  relations?: "surfaces";
  ignoreLabels: string[];
  captioner: string | null;
  vlmDetect: boolean;
  encoder: "use-lite-en";
  prompts: Record<string, string>;
}

export function memoryBuildSettings(options: Omit<MemorySourceOptions, "memoryDir">): MemoryBuildSettings {
  const vlmDetect = options.vlmDetect === true && options.captioner !== undefined;
  return {
    sampling: options.sampling ?? { kind: "uniform", count: MEMORY_DEFAULT_FRAMES },
    detector: options.detector === undefined ? "without-masks" : options.detector ? "always" : "never",
    ...(options.masks === false ? { masks: "ignored" as const } : {}),
    minScore: options.minScore ?? MEMORY_MIN_SCORE,
    ...(options.detector !== false && options.supportFrames ? { supportFrames: options.supportFrames } : {}),
    ...(options.detector !== false ? { detectorViews: { maxPerFrame: MAX_DETECTIONS, suppression: "per-class" as const } } : {}),
    ...(options.masks !== false ? { maskViews: "whole" as const } : {}),
    relations: "surfaces",
    ignoreLabels: [...new Set(options.ignoreLabels ?? [])].sort(),
    captioner: options.captioner?.name ?? null,
    vlmDetect,
    encoder: "use-lite-en",
    prompts: promptHashes([...(options.captioner ? [OBJECT_CAPTION_PROMPT] : []), ...(vlmDetect ? [DETECT_OBJECTS_PROMPT] : [])]),
  };
}

/** Builds one episode's memory with these options (the detector and the encoder are loaded on first use). */
export async function buildEpisodeMemory(episode: Episode, options: Omit<MemorySourceOptions, "memoryDir">, hooks: Pick<MemoryOptions, "onCall" | "onFrame"> = {}): Promise<BuiltMemory> {
  const encoder = await loadSentenceEncoder();
  return buildMemory(episode, {
    detector: options.detector === false ? null : loadObjectDetector,
    detectorUse: options.detector === true ? "always" : "without-masks",
    useMasks: options.masks !== false,
    encoder,
    ...(options.sampling ? { sampling: options.sampling } : {}),
    ...(options.captioner ? { captioner: options.captioner } : {}),
    ...(options.captioner && options.vlmDetect ? { vlmDetector: options.captioner } : {}),
    ...(options.ignoreLabels ? { ignoredMaskLabels: options.ignoreLabels } : {}),
    ...(options.minScore !== undefined ? { minScore: options.minScore } : {}),
    ...(options.supportFrames !== undefined ? { supportFrames: options.supportFrames } : {}),
    ...hooks,
  });
}

/**
 * Each episode's memory: built once per agent (concurrent questions on one episode share the
 * build), or read from a memory folder that `eqa memory build --benchmark` wrote.
 */
export class MemorySource {
  private readonly built = new Map<string, Promise<SceneGraph>>();
  private readonly folder: MemoryFolder | undefined;

  constructor(private readonly options: MemorySourceOptions) {
    if (options.memoryDir !== undefined) this.folder = openMemoryFolder(options.memoryDir, memoryBuildSettings(options));
  }

  /** True when memories are read from a folder: the agent needs no frames. */
  get fromFolder(): boolean {
    return this.folder !== undefined;
  }

  get configuration(): Record<string, unknown> {
    return { ...memoryBuildSettings(this.options), ...(this.folder ? { memoryDir: this.folder.path } : {}) };
  }

  encoder(): Promise<SentenceEncoder> {
    return loadSentenceEncoder();
  }

  /** The episode's scene graph; the question that builds it gets the caption calls in its trace. */
  async graph(episodeId: string, episode: Episode | undefined, trace: AgentTrace): Promise<SceneGraph> {
    const key = episode ? `${episode.path}\u0000${episode.id}` : episodeId;
    let memory = this.built.get(key);
    if (!memory) {
      memory = this.folder ? this.folder.graph(episodeId) : this.build(episode, episodeId, trace);
      memory.catch(() => this.built.delete(key));
      this.built.set(key, memory);
    } else trace.notes.push(`memory of episode ${episodeId} reused`);
    const graph = await memory;
    trace.frames = graph.frames;
    const source = this.folder ? `read from ${this.folder.path}` : "built";
    trace.notes.push(`memory ${source}: ${graph.instances.length} instances, ${graph.relations.length} relations from ${graph.frames.length} frames (detector ${graph.detector ?? "none"}, captions from ${graph.captioner ?? "labels"})`);
    for (const note of graph.notes) trace.notes.push(`memory: ${note}`);
    return graph;
  }

  private async build(episode: Episode | undefined, episodeId: string, trace: AgentTrace): Promise<SceneGraph> {
    if (!episode) throw new UserError(`no frames for episode ${episodeId}`, { field: "--frames" }, "pass --frames DIR, or --memory DIR with memories that eqa memory build wrote");
    const { graph } = await buildEpisodeMemory(episode, this.options, {
      onCall: (call) => trace.calls.push({ role: call.role, model: call.model, prompt: call.prompt, promptSha256: call.promptSha256, frames: call.frames, reply: call.reply, cached: call.cached, usage: call.usage }),
    });
    return graph;
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
  missing: ". Their 3-D positions are not known: the recording has no depth, so objects were told apart only by when and where in the picture they were seen, and how many of each there are is approximate.",
} as const;
