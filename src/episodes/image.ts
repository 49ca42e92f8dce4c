import { open } from "node:fs/promises";
import type { Sharp } from "sharp";
import { UserError, describeError, lazyImport, sha256Hex } from "../core/index.js";

/** sharp, loaded when the first image is (it adds a tenth of a second to every start-up). */
export const loadSharp = lazyImport(async () => (await import("sharp")).default);

/** How a frame is prepared for a model. */
export interface ImageOptions {
  /** The longest side in pixels after resizing (default 512); a smaller image is never enlarged. */
  maxSide?: number;
  /** The encoding sent (default png). */
  format?: "png" | "jpeg";
  /** JPEG quality, 1-100 (default 90). */
  quality?: number;
}

/** An image ready to send to a model: encoded bytes, their media type, size and content hash. */
export interface PreparedImage {
  data: Buffer;
  mediaType: "image/png" | "image/jpeg";
  width: number;
  height: number;
  /** sha256 of `data`, hex: what the model-call cache keys images by. */
  sha256: string;
}

export const DEFAULT_MAX_SIDE = 512;
export const DEFAULT_JPEG_QUALITY = 90;

/**
 * Decoding stops at damaged pixel data (a truncated file, a bad checksum) rather than
 * sending a half-grey frame; libpng's mere warnings (an odd colour profile) pass.
 */
export const DECODE_OPTIONS = { failOn: "error" } as const;

/**
 * Resizes an image (a file path or encoded bytes) so its longest side is at most
 * `maxSide` (default 512; never enlarged, unlike OpenEQA's baselines, which scale small
 * frames up to 512), turns it upright by its EXIF orientation, and encodes it as PNG
 * (default) or JPEG. A file that cannot be read or decoded throws a UserError naming it.
 */
export async function prepareImage(input: Buffer | string, options: ImageOptions = {}): Promise<PreparedImage> {
  const settings = checkImageOptions(options);
  try {
    const sharp = await loadSharp();
    return await encodePrepared(sharp(input, DECODE_OPTIONS), settings);
  } catch (error) {
    throw imageReadError(error, typeof input === "string" ? input : undefined);
  }
}

export interface ImageSettings {
  maxSide: number;
  format: "png" | "jpeg";
  quality: number;
}

export function checkImageOptions(options: ImageOptions): ImageSettings {
  const maxSide = options.maxSide ?? DEFAULT_MAX_SIDE;
  const quality = options.quality ?? DEFAULT_JPEG_QUALITY;
  const format = options.format ?? "png";
  if (!Number.isInteger(maxSide) || maxSide < 1) throw new UserError(`the longest side of prepared images must be a whole number of pixels of at least 1, got ${maxSide}`, { field: "maxSide" });
  if (!Number.isInteger(quality) || quality < 1 || quality > 100) throw new UserError(`JPEG quality must be a whole number from 1 to 100, got ${quality}`, { field: "quality" });
  if (format !== "png" && format !== "jpeg") throw new UserError(`image format must be png or jpeg, got ${String(format)}`, { field: "format" });
  return { maxSide, format, quality };
}

/** Runs the preparation on an opened sharp pipeline; errors are sharp's own. */
export async function encodePrepared(image: Sharp, settings: ImageSettings): Promise<PreparedImage> {
  let pipeline = image.autoOrient().resize({ width: settings.maxSide, height: settings.maxSide, fit: "inside", withoutEnlargement: true });
  // PNG with a filter chosen per row (as Pillow writes by default) at zlib level 6:
  // frames come out 40-60% smaller than sharp's unfiltered default, which matters in a request of 50
  pipeline = settings.format === "png" ? pipeline.png({ adaptiveFiltering: true, compressionLevel: 6 }) : pipeline.flatten({ background: "#ffffff" }).jpeg({ quality: settings.quality });
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  return { data, mediaType: settings.format === "png" ? "image/png" : "image/jpeg", width: info.width, height: info.height, sha256: sha256Hex(data) };
}

/** A UserError for an image that could not be read, naming the file when there is one. */
export function imageReadError(error: unknown, file: string | undefined, context = ""): UserError {
  if (error instanceof UserError) return error;
  const message = firstLine(describeError(error));
  // fs says ENOENT; sharp says "Input file is missing"
  const missing = (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT" || message.startsWith("Input file is missing");
  const what = missing ? "image file not found" : `cannot read the image (${message})`;
  return new UserError(`${context}${what}`, file !== undefined ? { file } : {}, missing ? undefined : "the file is damaged, truncated or not an image: replace or re-extract it");
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

/** An image's size and sample depth, read from its header without decoding it. */
export interface ImageHeader {
  width: number;
  height: number;
  /** Bits per sample (8 or 16 for the images eqakit reads). */
  bitDepth: number;
  /** 1 grey, 2 grey + alpha, 3 colour, 4 colour + alpha. */
  channels: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 3, 4: 2, 6: 4 };

/**
 * Reads an image's header. PNGs (all of OpenEQA's frames) are read from their first 26
 * bytes, which is about ten times quicker than asking sharp; any other format goes to
 * sharp's metadata, which reads only the header as well. Throws the underlying error
 * (ENOENT, or sharp's) for the caller to name the file.
 */
export async function readImageHeader(path: string): Promise<ImageHeader> {
  const head = Buffer.alloc(26);
  const file = await open(path, "r");
  let bytes: number;
  try {
    ({ bytesRead: bytes } = await file.read(head, 0, head.length, 0));
  } finally {
    await file.close();
  }
  if (bytes >= 8 && head.subarray(0, 8).equals(PNG_SIGNATURE)) {
    if (bytes < 26 || head.toString("latin1", 12, 16) !== "IHDR") throw new Error("the PNG header is damaged (no IHDR chunk)");
    const width = head.readUInt32BE(16);
    const height = head.readUInt32BE(20);
    const channels = PNG_CHANNELS[head[25]!];
    if (width === 0 || height === 0 || channels === undefined) throw new Error("the PNG header is damaged");
    return { width, height, bitDepth: head[24]!, channels };
  }
  const sharp = await loadSharp();
  const meta = await sharp(path).metadata();
  if (meta.width === undefined || meta.height === undefined) throw new Error("the image has no size in its header");
  return { width: meta.width, height: meta.height, bitDepth: meta.bitsPerSample ?? 8, channels: meta.channels ?? 3 };
}
