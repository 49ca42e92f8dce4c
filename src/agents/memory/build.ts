import { existsSync } from "node:fs";
import { join } from "node:path";
import { forEachConcurrent, loadPromptFile, renderPromptFile, sha256Hex } from "../../core/index.js";
import { loadSharp, sampleFrameIndices, type Episode, type SamplingSpec } from "../../episodes/index.js";
import { aabbCenter, backProject, cameraPosition, concatPoints, groundingTransform, voxelDownsample } from "../../geometry/index.js";
import { z } from "zod";
import { ModelCallError, readRgbImage, type ChatModel, type ChatRequest, type ChatResponse, type Detection, type ObjectDetector, type SentenceEncoder } from "../../models/index.js";
import { minAreaOrientedBox } from "./boxes.js";
import { embeddingSimilarity, mainLabel, mergeViews, standingInstances, type DraftInstance } from "./merge.js";
import { inferRelations } from "./relations.js";
import type { AgentPosition, MemoryInstance, ObjectView, SceneGraph, ViewRecord } from "./types.js";
import { VIEW_PARAMETERS, frameGeometry, viewsFromDetections, viewsFromMasks } from "./views.js";

export const OBJECT_CAPTION_PROMPT = "memory-object-caption";
export const DETECT_OBJECTS_PROMPT = "memory-detect-objects";
const DETECT_PARAMS = { temperature: 0, maxTokens: 1024, seed: 1234 } as const;
/** Frames looked at unless told otherwise: spread over the episode, as SVM samples K frames. */
export const MEMORY_DEFAULT_FRAMES = 60;
const CAPTION_PARAMS = { temperature: 0.2, maxTokens: 96, seed: 1234 } as const;
/** Longest side of the frame the detector and the crops are taken from. */
const DETECT_SIDE = 768;
/** Detector confidence kept unless told otherwise (`--min-score`). */
export const MEMORY_MIN_SCORE = 0.3;
/**
 * With `supportFrames` N > 0, an object detected in N or more of the frames looked at may rest on
 * detections below `minScore`, down to `MEMORY_SUPPORT_FRACTION` of it (0.2 at the default 0.3):
 * CenterNet scores tables seen from across a room near 0.2, and a detection seen again is
 * evidence a single one is not. Off by default: in the built-in homes and the OpenEQA demo
 * video it adds more objects that are not there than it finds (docs/memory.md).
 */
export const MEMORY_SUPPORT_FRACTION = 2 / 3;
/** Detections kept per frame: all CenterNet gives (100), so that a shelf of books does not crowd the furniture out. */
export const MAX_DETECTIONS = 100;

/** What a memory without depth says of its objects' places (in its notes and in what the agents are told). */
export const APPROXIMATE_NOTE =
  "positions are approximate: without depth, objects are told apart by when and where in the image they were seen (frame time and 2-D box), so an object that leaves the view and comes back counts again, and alike objects seen one after the other at the same place in the image count once";

export interface MemoryOptions {
  /** Which frames (default: 60 uniformly). */
  sampling?: SamplingSpec;
  /** The embedded detector (or what loads it, on first use); null to use instance masks only. */
  detector?: ObjectDetector | null | (() => Promise<ObjectDetector>);
  /** When the detector runs: on every frame (default), or only on frames without instance masks. */
  detectorUse?: "always" | "without-masks";
  /** Use the episode's instance masks when it has them (default true). */
  useMasks?: boolean;
  /** Mask labels that are not objects (e.g. "wall", "floor", "ceiling"), left out of the memory. */
  ignoredMaskLabels?: readonly string[];
  /** For description similarity when views are merged (labels that differ); optional. */
  encoder?: SentenceEncoder;
  /** A vision-language model that describes each instance's best crop; without one, captions are labels. */
  captioner?: ChatModel;
  /** A vision-language model asked for the objects of each frame with their boxes (open-vocabulary detection). */
  vlmDetector?: ChatModel;
  /** Least detector confidence of an object (default 0.3; see `supportFrames`). */
  minScore?: number;
  /** Frames an object detected only below `minScore` (down to two thirds of it) must be detected in to be kept (default 0: never kept). */
  supportFrames?: number;
  onFrame?: (done: number, total: number) => void;
  /** Called for each model call (the captions), for traces. */
  onCall?: (call: { role: string; model: string; prompt: string; promptSha256: string; frames: number[]; reply: string | null; cached: boolean; usage: { promptTokens: number; completionTokens: number; thinkingTokens: number } }) => void;
}

export interface BuiltMemory {
  graph: SceneGraph;
  /** Every back-projected point of the frames looked at, down-sampled to 5 cm (for the top-down picture). */
  mapPoints: Float32Array;
}

/**
 * Builds an episode's object-centric memory: object views from instance masks and the
 * detector (SVM's step 1), merged into instances (step 2), captioned from their best crop,
 * related by geometry. An episode without depth or poses gives instances without boxes, and
 * the graph says so; frames with an invalid pose are skipped and counted.
 */
export async function buildMemory(episode: Episode, options: MemoryOptions = {}): Promise<BuiltMemory> {
  const indices = [...new Set(sampleFrameIndices(episode.frameCount, options.sampling ?? { kind: "uniform", count: MEMORY_DEFAULT_FRAMES }, episode.timestamps))];
  const notes: string[] = [];
  const views: ObjectView[] = [];
  const agentPositions: AgentPosition[] = [];
  const mapParts: Float32Array[] = [];
  let skippedPoses = 0;
  let withGeometry = 0;
  let firstPose: Float64Array | undefined;
  const useMasks = options.useMasks ?? true;
  const minScore = options.minScore ?? MEMORY_MIN_SCORE;
  const supportFrames = options.supportFrames ?? 0;
  const supportScore = supportFrames > 0 ? Math.round(minScore * MEMORY_SUPPORT_FRACTION * 100) / 100 : minScore;
  const ignoredLabels = new Set(options.ignoredMaskLabels ?? []);
  let usedMasks = false;
  let maskedFramesIgnored = 0;
  let detector: ObjectDetector | undefined;
  let detectorSkipped = false;
  const intrinsicsUsed = new Set<string>();
  let missingIntrinsics = 0;
  for (let n = 0; n < indices.length; n++) {
    const index = indices[n]!;
    const frame = await episode.frame(index);
    if (frame.pose === null) {
      skippedPoses++;
      options.onFrame?.(n + 1, indices.length);
      continue;
    }
    const geometry = frameGeometry(frame);
    if (!geometry && frame.depth && !(frame.depthCamera ?? frame.camera)) missingIntrinsics++;
    if (geometry) {
      withGeometry++;
      intrinsicsUsed.add(describeIntrinsics(geometry.camera, intrinsicsSource(episode, frame)));
      firstPose ??= geometry.pose;
      agentPositions.push({ frame: index, position: cameraPosition(geometry.pose) });
      const stride = Math.max(1, Math.round(Math.sqrt((geometry.camera.width * geometry.camera.height) / 20000)));
      mapParts.push(voxelDownsample(backProject(geometry.depth, geometry.camera, geometry.pose, { stride }).points, 0.05).centroids);
    }
    if (!useMasks && frame.masks) maskedFramesIgnored++;
    if (useMasks && frame.masks) {
      usedMasks = true;
      views.push(...viewsFromMasks(index, frame.masks, geometry, ignoredLabels));
    }
    const wantsDetector = options.detector && ((options.detectorUse ?? "always") === "always" || !frame.masks || !useMasks);
    if (options.detector && !wantsDetector) detectorSkipped = true;
    if (wantsDetector) {
      detector ??= typeof options.detector === "function" ? await options.detector() : options.detector!;
      // a frame file is decoded once, as it is; other frames (video) come prepared
      const rgb = frame.rgbPath ? await readRgbImage(frame.rgbPath) : await readRgbImage((await episode.images([index], { maxSide: DETECT_SIDE, format: "png" }))[0]!.data);
      const detections = await detector.detect(rgb, { minScore: supportScore, maxDetections: MAX_DETECTIONS });
      const withFractions = detections.map((d) => ({ ...d, fraction: [d.box[0] / rgb.width, d.box[1] / rgb.height, d.box[2] / rgb.width, d.box[3] / rgb.height] as [number, number, number, number] }));
      views.push(...viewsFromDetections(index, withFractions, geometry, "detector"));
    }
    if (options.vlmDetector) {
      const detections = await detectWithVlm(episode, index, options.vlmDetector, options.onCall);
      views.push(...viewsFromDetections(index, detections, geometry, "vlm"));
    }
    options.onFrame?.(n + 1, indices.length);
  }
  const hasPositions = withGeometry > 0;
  if (!hasPositions && missingIntrinsics > 0) notes.push("positions are missing: the frames have depth but no camera intrinsics (no intrinsic_color.txt or intrinsic_depth.txt), so no depth was back-projected; instances have no 3-D boxes");
  else if (!hasPositions) notes.push("positions are missing: the frames have no depth or no valid poses, so instances have no 3-D boxes");
  if (!hasPositions && views.some((v) => v.maskId === undefined)) notes.push(APPROXIMATE_NOTE);
  if (intrinsicsUsed.size > 0) notes.push(`depth back-projected with the intrinsics of ${[...intrinsicsUsed].join("; ")}`);
  if (maskedFramesIgnored > 0) notes.push(`the instance masks of ${maskedFramesIgnored} frames were left out: the objects are the detector's`);
  if (detectorSkipped && usedMasks) notes.push("objects from the episode's instance masks; the detector did not run on frames with masks (ask for it with --detector)");
  if (skippedPoses > 0) notes.push(`${skippedPoses} of ${indices.length} frames skipped: invalid pose`);
  if (!detector && !options.vlmDetector && !usedMasks) notes.push("no object views: no detector was used and the episode has no instance masks");

  // with positions, a view that has no 3-D points (its depth beyond the cut-off, or none valid)
  // cannot be told apart from another object of its label: it creates and joins nothing
  const placed = hasPositions ? views.filter((v) => v.box && v.points) : views;
  if (placed.length < views.length) notes.push(`${views.length - placed.length} object views left out: no valid depth within ${VIEW_PARAMETERS.maxDepth} m, so nothing places them in 3-D`);
  const labels = [...new Set(placed.map((v) => v.label))];
  const vectors = new Map<string, Float32Array>();
  if (options.encoder && labels.length > 1) {
    const embedded = await options.encoder.embed(labels);
    labels.forEach((l, i) => vectors.set(l, embedded[i]!));
  }
  const places = new Map(indices.map((index, order) => [index, { order, ...(episode.timestamps?.[index] !== undefined ? { seconds: episode.timestamps[index] } : {}) }]));
  const merged = mergeViews(placed, embeddingSimilarity(vectors), places);
  const drafts = standingInstances(merged, minScore, supportFrames);
  if (drafts.length < merged.length) notes.push(`${merged.length - drafts.length} ${merged.length - drafts.length === 1 ? "object" : "objects"} left out: detected at ${supportScore}-${minScore} only, in fewer than ${supportFrames} frames or where a surer object of another kind stands`);
  const instances = drafts.map((draft, id) => toInstance(draft, id));
  if (options.captioner) await captionInstances(episode, instances, options.captioner, options.onCall);
  const graph: SceneGraph = {
    format: "eqakit-scene-graph/1",
    episode: episode.id,
    world: "metres, y up (gravity along -y), right-handed; cameras with OpenGL axes (x right, y up, looking along -z)",
    hasPositions,
    frames: indices,
    skippedPoses,
    detector: [detector?.name, options.vlmDetector ? `vlm:${options.vlmDetector.name}` : undefined].filter((d) => d !== undefined).join("+") || null,
    captioner: options.captioner?.name ?? null,
    instances,
    relations: hasPositions ? inferRelations(instances, new Map(drafts.flatMap((d, id) => (d.points ? [[id, d.points] as const] : [])))) : [],
    agentPositions,
    ...(firstPose ? { grounding: Array.from(groundingTransform(firstPose)) } : {}),
    notes: [...episode.notes.filter((n) => /invalid pose/.test(n)), ...notes],
  };
  return { graph, mapPoints: mapParts.length > 0 ? voxelDownsample(concatPoints(mapParts), 0.05).centroids : new Float32Array(0) };
}

/** Where a frame's depth intrinsics came from: the episode folder's intrinsics files. */
function intrinsicsSource(episode: Episode, frame: { depthCamera?: unknown }): string {
  const has = (name: string): boolean => existsSync(join(episode.path, name));
  if (frame.depthCamera && has("intrinsic_depth.txt")) return "the depth camera's, from intrinsic_depth.txt";
  if (has("intrinsic_color.txt")) return "the colour camera's, from intrinsic_color.txt scaled to the depth image";
  return `the episode's camera (${episode.path})`;
}

/** Which intrinsics, from where, with their values: what a reader needs to trust the positions. */
function describeIntrinsics(camera: { width: number; height: number; fx: number; fy: number; cx: number; cy: number }, source: string): string {
  return `${source} (fx ${camera.fx.toFixed(1)}, fy ${camera.fy.toFixed(1)}, cx ${camera.cx.toFixed(1)}, cy ${camera.cy.toFixed(1)} at ${camera.width}×${camera.height})`;
}

function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function toInstance(draft: DraftInstance, id: number): MemoryInstance {
  const views: ViewRecord[] = draft.views.map((v) => ({
    frame: v.frame,
    label: v.label,
    score: round(v.score),
    source: v.source,
    box2d: v.box2d.map((x) => round(x, 4)) as [number, number, number, number],
    area: v.area,
    ...(v.maskId !== undefined ? { maskId: v.maskId } : {}),
  }));
  let bestView = 0;
  views.forEach((v, i) => {
    if (v.area > views[bestView]!.area) bestView = i;
  });
  const label = mainLabel(draft.views);
  const instance: MemoryInstance = { id, label, caption: label, captionSource: "label", views, bestView, pointCount: draft.points ? draft.points.length / 3 : 0 };
  if (draft.box && draft.points) {
    instance.box = { min: draft.box.min.map((x) => round(x)) as [number, number, number], max: draft.box.max.map((x) => round(x)) as [number, number, number] };
    instance.center = aabbCenter(draft.box).map((x) => round(x)) as [number, number, number];
    const obb = minAreaOrientedBox(draft.points);
    if (obb) instance.orientedBox = { center: obb.center.map((x) => round(x)) as [number, number, number], size: obb.size.map((x) => round(x)) as [number, number, number], yaw: round(obb.yaw, 4) };
  }
  return instance;
}

/** The best crop of an instance (its largest view), with a margin, as PNG. */
export async function instanceCrop(episode: Episode, instance: MemoryInstance, maxSide = 512): Promise<{ data: Buffer; frame: number }> {
  const view = instance.views[instance.bestView]!;
  const [image] = await episode.images([view.frame], { maxSide: 1024, format: "png" });
  const meta = { width: image!.width, height: image!.height };
  const [x, y, w, h] = view.box2d;
  const margin = 0.1;
  const left = Math.max(0, Math.floor((x - w * margin) * meta.width));
  const top = Math.max(0, Math.floor((y - h * margin) * meta.height));
  const right = Math.min(meta.width, Math.ceil((x + w * (1 + margin)) * meta.width));
  const bottom = Math.min(meta.height, Math.ceil((y + h * (1 + margin)) * meta.height));
  const sharp = await loadSharp();
  const data = await sharp(image!.data)
    .extract({ left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) })
    .resize(maxSide, maxSide, { fit: "inside", withoutEnlargement: true })
    .png()
    .toBuffer();
  return { data, frame: view.frame };
}

/**
 * A model call of a memory build that failed for good: which call (a caption of an object, or the
 * objects of a frame), on which frame, and the model's error. The build of the episode fails with
 * it; the episode is built again, every call asked again, by the next run.
 */
export class MemoryCallError extends ModelCallError {
  constructor(
    readonly call: "caption" | "detect",
    readonly frame: number,
    cause: ModelCallError,
    /** The object captioned (its instance id), for a caption call. */
    readonly instance?: number,
  ) {
    const what = call === "caption" ? `the caption of object ${instance} (a crop of frame ${frame})` : `the objects of frame ${frame}`;
    super(cause.kind, `the call for ${what} failed: ${cause.message}`, cause.endpoint, cause.status, cause.retryAfterMs, cause.reply);
    this.retries = cause.retries;
    this.name = "MemoryCallError";
  }
}

/** `model.complete(request)`, a failed call named by what it was for. */
async function memoryCall(model: ChatModel, request: ChatRequest, call: MemoryCallError["call"], frame: number, instance?: number): Promise<ChatResponse> {
  try {
    return await model.complete(request);
  } catch (error) {
    if (error instanceof ModelCallError) throw new MemoryCallError(call, frame, error, instance);
    throw error;
  }
}

async function captionInstances(episode: Episode, instances: MemoryInstance[], captioner: ChatModel, onCall: MemoryOptions["onCall"]): Promise<void> {
  await forEachConcurrent(instances, 4, async (instance) => {
    const crop = await instanceCrop(episode, instance);
    const text = renderPromptFile(OBJECT_CAPTION_PROMPT, { label: instance.label });
    const response = await memoryCall(captioner, { messages: [{ role: "user", content: [{ type: "text", text }, { type: "image", data: crop.data, mediaType: "image/png" }] }], ...CAPTION_PARAMS }, "caption", crop.frame, instance.id);
    onCall?.({ role: "caption", model: captioner.name, prompt: OBJECT_CAPTION_PROMPT, promptSha256: sha256Hex(`${text}\n<image ${sha256Hex(crop.data)}>`), frames: [crop.frame], reply: response.text, cached: response.usage.cached, usage: callTokens(response) });
    const caption = (response.text ?? "").replace(/\s+/g, " ").trim();
    if (caption.length > 0) {
      instance.caption = caption;
      instance.captionSource = "captioner";
    }
  });
}

export function objectCaptionPromptHash(): string {
  return loadPromptFile(OBJECT_CAPTION_PROMPT).sha256;
}

const vlmDetectionsSchema = z.object({
  objects: z.array(z.object({ label: z.string().min(1), box: z.array(z.number()).length(4) }).loose()),
}).loose();

/** The JSON object in a reply (a fenced block or the first {...}), parsed; undefined when there is none. */
function jsonInReply(reply: string | null): unknown {
  if (!reply) return undefined;
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(reply);
  const text = fenced ? fenced[1]! : reply.slice(reply.indexOf("{"), reply.lastIndexOf("}") + 1);
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Open-vocabulary detection by a vision-language model: it lists the frame's objects with boxes
 * in thousandths of the image (`prompts/memory-detect-objects.txt`). A reply that is not that
 * JSON gives no views for the frame (the trace keeps the reply).
 */
export async function detectWithVlm(episode: Episode, index: number, model: ChatModel, onCall: MemoryOptions["onCall"]): Promise<(Detection & { fraction: [number, number, number, number] })[]> {
  const [image] = await episode.images([index], { maxSide: DETECT_SIDE, format: "png" });
  const text = loadPromptFile(DETECT_OBJECTS_PROMPT).text.trim();
  const response = await memoryCall(model, { messages: [{ role: "user", content: [{ type: "text", text }, { type: "image", data: image!.data, mediaType: image!.mediaType }] }], ...DETECT_PARAMS }, "detect", index);
  onCall?.({ role: "detect", model: model.name, prompt: DETECT_OBJECTS_PROMPT, promptSha256: sha256Hex(`${text}\n<image ${image!.sha256}>`), frames: [index], reply: response.text, cached: response.usage.cached, usage: callTokens(response) });
  const parsed = vlmDetectionsSchema.safeParse(jsonInReply(response.text));
  if (!parsed.success) return [];
  return parsed.data.objects.flatMap((o) => {
    const [x1, y1, x2, y2] = o.box.map((v) => Math.min(1000, Math.max(0, v)) / 1000) as [number, number, number, number];
    if (!(x2 > x1 && y2 > y1)) return [];
    const fraction: [number, number, number, number] = [x1, y1, x2 - x1, y2 - y1];
    return [{ label: o.label.trim().toLowerCase(), score: 1, box: [x1 * image!.width, y1 * image!.height, (x2 - x1) * image!.width, (y2 - y1) * image!.height] as [number, number, number, number], fraction }];
  });
}

function callTokens(response: ChatResponse): { promptTokens: number; completionTokens: number; thinkingTokens: number } {
  return { promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens, thinkingTokens: response.usage.thinkingTokens };
}
