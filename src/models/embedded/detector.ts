import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { DECODE_OPTIONS, imageReadError, loadSharp } from "../../episodes/index.js";
import { iou2d } from "../../geometry/index.js";
import { embeddedTf, type Tf } from "./tfjs.js";

/** COCO's 80 classes in CenterNet's output order (as `@vladmandic/human` labels them). */
export const COCO_LABELS = [
  "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
  "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
  "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
  "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
  "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange",
  "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch", "potted plant", "bed",
  "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone", "microwave", "oven",
  "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors", "teddy bear", "hair drier", "toothbrush",
] as const;

/** A detected object: its class, confidence and box in the image's pixels. */
export interface Detection {
  label: string;
  score: number;
  /** [x, y, width, height] in pixels of the image given. */
  box: [number, number, number, number];
}

export interface DetectOptions {
  /** Least confidence kept (Human's default 0.2). */
  minScore?: number;
  /** Non-maximum suppression's IoU, between boxes of one class (Human's default 0.4). */
  iouThreshold?: number;
  /** Most detections kept (default 20). */
  maxDetections?: number;
}

/** An RGB image as raw bytes, 3 a pixel, row-major. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

export interface ObjectDetector {
  readonly name: string;
  detect(image: RgbImage, options?: DetectOptions): Promise<Detection[]>;
}

/**
 * Decodes an image file (any format sharp reads) to raw RGB. A file that is missing, damaged or
 * truncated is a UserError naming it.
 */
export async function readRgbImage(file: string | Uint8Array): Promise<RgbImage> {
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(file, DECODE_OPTIONS).removeAlpha().toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
  } catch (error) {
    throw imageReadError(error, typeof file === "string" ? file : undefined);
  }
}

const require = createRequire(import.meta.url);

/** Where `npm install` put CenterNet: `@vladmandic/human/models/centernet.json`. */
export function centernetModelPath(): string {
  // the package's main entry is dist/human.node.js; models/ is beside dist/
  return join(dirname(dirname(require.resolve("@vladmandic/human"))), "models", "centernet.json");
}

let loaded: Promise<CenterNetDetector> | undefined;

/**
 * The embedded detector, loaded once per process: CenterNet (COCO, 80 classes) from
 * `@vladmandic/human`'s model files, on the tfjs WASM backend, read from the disk only.
 */
export function loadObjectDetector(): Promise<ObjectDetector> {
  loaded ??= (async () => {
    const tf = await embeddedTf();
    const model = await graphModelLoader(tf)(pathToFileURL(centernetModelPath()).href);
    return new CenterNetDetector(tf, model);
  })();
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

/** What eqakit uses of a tfjs graph model (the converter's types are not installed on their own). */
interface GraphModel {
  modelSignature?: Record<string, unknown>;
  execute(input: Tensor, outputs: string[]): Tensor | Tensor[];
}

type Tensor = import("@energetic-ai/core").Tensor;

/** `loadGraphModel`, which `@energetic-ai/core` bundles from tfjs-converter. */
function graphModelLoader(tf: Tf): (url: string) => Promise<GraphModel> {
  return (tf as unknown as { loadGraphModel(url: string): Promise<GraphModel> }).loadGraphModel;
}

/** Human's CenterNet pipeline (resize to the model's square input, 0-255 floats; decode [x1, y1, x2, y2, score, class]), then NMS within each class. */
class CenterNetDetector implements ObjectDetector {
  readonly name = "centernet-coco";
  private readonly inputSize: number;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly tf: Tf, private readonly model: GraphModel) {
    const inputs = Object.values(model.modelSignature?.["inputs"] ?? {}) as { tensorShape?: { dim?: { size?: string }[] } }[];
    this.inputSize = Number(inputs[0]?.tensorShape?.dim?.[2]?.size ?? 512) || 512;
  }

  /** One image at a time: the WASM backend is single-threaded anyway. */
  detect(image: RgbImage, options: DetectOptions = {}): Promise<Detection[]> {
    const run = this.queue.then(() => this.run(image, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(image: RgbImage, options: DetectOptions): Promise<Detection[]> {
    const { tf } = this;
    const size = this.inputSize;
    const sharp = await loadSharp();
    const resized = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } }).resize(size, size, { fit: "fill" }).raw().toBuffer();
    const input = tf.tensor(Float32Array.from(resized), [1, size, size, 3]);
    const output = this.model.execute(input, ["tower_0/detections"]) as Tensor;
    input.dispose();
    const rows = ((await output.array()) as number[][][])[0] ?? [];
    output.dispose();
    const sx = image.width / size;
    const sy = image.height / size;
    const detections: Detection[] = [];
    for (const [x1, y1, x2, y2, score, cls] of suppressOverlaps(rows, options)) {
      const label = COCO_LABELS[cls!];
      if (label === undefined) continue;
      const x = Math.max(0, x1! * sx);
      const y = Math.max(0, y1! * sy);
      detections.push({ label, score: Math.trunc(score! * 100) / 100, box: [x, y, Math.min(image.width, x2! * sx) - x, Math.min(image.height, y2! * sy) - y] });
    }
    return detections;
  }
}

/**
 * Greedy non-maximum suppression of CenterNet's [x1, y1, x2, y2, score, class] rows within each
 * class, as COCO detectors are evaluated: best first, a row is dropped when it overlaps a kept
 * row of its own class by `iouThreshold` or more (as tfjs's NMS); then at most `maxDetections`. Human's
 * pipeline suppresses across classes, which hid a desk behind its chair (BENCHMARKS.md).
 */
export function suppressOverlaps(rows: readonly (readonly number[])[], options: DetectOptions = {}): number[][] {
  const minScore = options.minScore ?? 0.2;
  const iouThreshold = options.iouThreshold ?? 0.4;
  const most = options.maxDetections ?? 20;
  const ranked = rows.filter((r) => r.length >= 6 && r.slice(0, 6).every(Number.isFinite) && r[4]! >= minScore).sort((a, b) => b[4]! - a[4]!);
  const box = (r: readonly number[]): [number, number, number, number] => [r[0]!, r[1]!, r[2]! - r[0]!, r[3]! - r[1]!];
  const kept: { row: number[]; box: [number, number, number, number] }[] = [];
  for (const row of ranked) {
    if (kept.length >= most) break;
    const own = box(row);
    if (!kept.some((k) => k.row[5] === row[5] && iou2d(k.box, own) >= iouThreshold)) kept.push({ row: row.slice(0, 6), box: own });
  }
  return kept.map((k) => k.row);
}
