import { mkdir, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { UserError, type Frame } from "../core/index.js";
import { lastLine, probeVideo, startTool } from "./ffmpeg.js";
import { defaultFrameCache, episodeCacheId, type FrameCache } from "./frame-cache.js";
import { checkImageOptions, encodePrepared, imageReadError, loadSharp, type ImageOptions, type ImageSettings } from "./image.js";
import { checkFrameIndex, distinctIndices, type Episode, type EpisodeFrameImage } from "./types.js";

/** The file extensions tried when looking for an episode's video beside its folder name. */
export const VIDEO_EXTENSIONS = [".mp4", ".mkv", ".mov", ".avi", ".webm"] as const;

/** Frames prepared at once while ffmpeg goes on decoding the next ones. */
const PIPELINE_DEPTH = 3;
/** Beyond this many characters the select expression is dropped and every frame up to the last wanted is decoded and filtered here. */
const MAX_SELECT_EXPRESSION = 60_000;

/**
 * A video file as an episode, decoded by the system's ffmpeg. Frames are numbered in
 * display order as ffmpeg decodes them; the count and timestamps come from ffprobe
 * (seconds from the first frame). `images()` decodes only as far as the last frame asked
 * for and keeps only the frames asked for. Video frames have no depth, pose or camera.
 */
export class VideoEpisode implements Episode {
  readonly kind = "video" as const;
  readonly notes: string[] = [];
  private readonly cacheId: string;

  constructor(
    readonly id: string,
    readonly path: string,
    readonly frameCount: number,
    readonly timestamps: number[] | undefined,
    private readonly frameCache: FrameCache = defaultFrameCache(),
  ) {
    this.cacheId = episodeCacheId(path);
  }

  /** Opens the video; its frames are prepared through `frameCache`. */
  static async open(path: string, id: string, frameCache: FrameCache = defaultFrameCache()): Promise<VideoEpisode> {
    const probe = await probeVideo(path, `episode ${id}: `);
    const episode = new VideoEpisode(id, path, probe.frameCount, probe.timestamps, frameCache);
    if (probe.declaredFrames !== undefined && probe.declaredFrames !== probe.frameCount) {
      episode.notes.push(`the file holds ${probe.frameCount} frames where its header announces ${probe.declaredFrames}: it may be truncated`);
    }
    return episode;
  }

  async images(indices: readonly number[], options: ImageOptions = {}): Promise<EpisodeFrameImage[]> {
    const settings = checkImageOptions(options);
    const wanted = distinctIndices(this, indices);
    if (wanted.length === 0) return [];
    const images = await this.frameCache.frames(
      wanted.map((index) => ({ episode: this.cacheId, index, settings, source: this.path })),
      async (missing) => {
        const decoded = await decodeFrames(this, missing.map((key) => key.index), settings);
        return missing.map((key) => decoded.get(key.index)!);
      },
    );
    const prepared = new Map(wanted.map((index, i) => [index, images[i]!]));
    return indices.map((index) => ({ ...prepared.get(index)!, index }));
  }

  async frame(index: number): Promise<Frame> {
    checkFrameIndex(this, index);
    const timestamp = this.timestamps?.[index];
    return timestamp === undefined ? { index } : { index, timestamp };
  }
}

/**
 * The ffmpeg filter that keeps exactly these frames (by decoded frame number n), runs of
 * consecutive frames as one `between`; undefined when the expression would be too long for
 * a command line.
 */
function selectExpression(wanted: readonly number[]): string | undefined {
  const terms: string[] = [];
  let length = 0;
  for (let i = 0; i < wanted.length; ) {
    let j = i;
    while (j + 1 < wanted.length && wanted[j + 1] === wanted[j]! + 1) j++;
    const term = i === j ? `eq(n\\,${wanted[i]})` : `between(n\\,${wanted[i]}\\,${wanted[j]})`;
    terms.push(term);
    length += term.length + 1;
    if (length > MAX_SELECT_EXPRESSION) return undefined;
    i = j + 1;
  }
  return `select='${terms.join("+")}'`;
}

/**
 * Decodes the wanted frames (distinct, increasing) as a stream of binary PPM images on
 * ffmpeg's stdout (self-describing, so a rotated video's upright size needs no guessing)
 * and prepares each as it arrives, a few at a time.
 */
async function decodeFrames(episode: VideoEpisode, wanted: number[], settings: ImageSettings): Promise<Map<number, EpisodeFrameImage>> {
  const select = selectExpression(wanted);
  const last = wanted[wanted.length - 1]!;
  // with a select filter, output k is wanted[k]; without, output k is frame k and only the wanted are kept
  const outputs = select ? wanted.length : last + 1;
  const keep = new Set(wanted);
  const args = ["-v", "error", "-nostdin", "-i", episode.path, "-map", "0:v:0", "-an", "-sn", "-dn"];
  if (select) args.push("-vf", select);
  args.push("-vsync", "passthrough", "-frames:v", String(outputs), "-f", "image2pipe", "-c:v", "ppm", "-pix_fmt", "rgb24", "-");
  const tool = await startTool("ffmpeg", args);
  const prepared = new Map<number, EpisodeFrameImage>();
  // each promise settles without rejecting (the first failure is kept), so none goes unhandled
  const pending: Promise<void>[] = [];
  let failure: UserError | undefined;
  const parser = new PpmStream();
  let produced = 0;
  const fail = (message: string, hint?: string): UserError => new UserError(`episode ${episode.id}: ${message}`, { file: episode.path }, hint);
  const sharp = await loadSharp();
  try {
    for await (const chunk of tool.child.stdout!) {
      for (const image of parser.push(chunk as Buffer)) {
        const index = select ? wanted[produced] : produced;
        produced++;
        if (index === undefined || !keep.has(index)) continue;
        pending.push(
          encodePrepared(sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 3 } }), settings).then(
            (result) => void prepared.set(index, { ...result, index }),
            (error: unknown) => void (failure ??= imageReadError(error, episode.path, `episode ${episode.id}, frame ${index}: `)),
          ),
        );
        if (pending.length >= PIPELINE_DEPTH) await pending.shift();
        if (failure) throw failure;
      }
    }
    await Promise.all(pending);
    if (failure) throw failure;
  } catch (error) {
    tool.child.kill();
    await Promise.all(pending);
    await tool.exit.catch(() => undefined);
    if (error instanceof UserError) throw error;
    throw fail(`cannot read ffmpeg's decoded frames (${error instanceof Error ? error.message : String(error)})`);
  }
  const code = await tool.exit;
  if (code !== 0) throw fail(`ffmpeg could not decode the video (${lastLine(tool.stderr())})`, "check that the file is a complete, readable video");
  if (parser.leftover > 0) throw fail(`ffmpeg's output ended inside a frame (${parser.leftover} bytes left over)`);
  const missing = wanted.filter((index) => !prepared.has(index));
  if (missing.length > 0) {
    throw fail(`the video yielded ${produced} of the ${outputs} frames asked for; frame ${missing[0]} is missing though ffprobe counted ${episode.frameCount}`, "the file may be damaged or truncated: re-encode it (ffmpeg -i IN -c:v libx264 OUT.mp4) or extract its frames with `eqa frames extract`");
  }
  return prepared;
}

interface PpmImage {
  width: number;
  height: number;
  pixels: Buffer;
}

/** Splits a byte stream of binary PPM (P6, maxval 255) images, as ffmpeg's ppm encoder writes them. */
class PpmStream {
  private chunks: Buffer[] = [];
  private buffered = 0;

  get leftover(): number {
    return this.buffered;
  }

  push(chunk: Buffer): PpmImage[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const images: PpmImage[] = [];
    for (;;) {
      const image = this.next();
      if (!image) break;
      images.push(image);
    }
    return images;
  }

  private next(): PpmImage | undefined {
    if (this.buffered < 16) return undefined;
    const head = this.peek(Math.min(this.buffered, 64));
    const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(head.toString("latin1"));
    if (!header) {
      if (head.length === 64 || !/^P6[\s\d]*$/.test(head.toString("latin1"))) throw new Error("ffmpeg wrote something other than PPM images");
      return undefined;
    }
    const width = Number(header[1]);
    const height = Number(header[2]);
    if (Number(header[3]) !== 255) throw new Error(`unexpected PPM maxval ${header[3]}`);
    const headerLength = header[0].length;
    const total = headerLength + width * height * 3;
    if (this.buffered < total) return undefined;
    const all = this.take(total);
    return { width, height, pixels: all.subarray(headerLength) };
  }

  private peek(length: number): Buffer {
    if (this.chunks[0]!.length >= length) return this.chunks[0]!.subarray(0, length);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.subarray(0, length);
  }

  /** Removes and returns the first `length` bytes, copying them once into one buffer. */
  private take(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const chunk = this.chunks[0]!;
      const part = Math.min(chunk.length, length - filled);
      chunk.copy(out, filled, 0, part);
      filled += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    this.buffered -= length;
    return out;
  }
}

/**
 * Writes a video's frames as an OpenEQA-style folder: `00000-rgb.png`, `00001-rgb.png`, …
 * (HM3D's five-digit names, numbered from 0 in the order written), every `every`-th frame
 * (default 1) and at most `maxFrames`. The folder is created; one that already holds
 * `*-rgb.*` frames is refused, so that frames of two extractions never mix.
 */
export async function extractVideoFrames(video: string, outDir: string, options: { every?: number; maxFrames?: number } = {}): Promise<{ frames: number; outDir: string }> {
  const every = options.every ?? 1;
  if (!Number.isInteger(every) || every < 1) throw new UserError(`--every must be a whole number of at least 1, got ${every}`, { field: "every" });
  if (options.maxFrames !== undefined && (!Number.isInteger(options.maxFrames) || options.maxFrames < 1)) {
    throw new UserError(`--max-frames must be a whole number of at least 1, got ${options.maxFrames}`, { field: "maxFrames" });
  }
  const probe = await probeVideo(video);
  await mkdir(outDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new UserError(`cannot create the output folder (${error.code ?? error.message})`, { file: outDir });
  });
  const existing = (await readdir(outDir)).filter((name) => /-rgb\.(png|jpe?g)$/i.test(name));
  if (existing.length > 0) {
    throw new UserError(`the output folder already holds ${existing.length} frames (${existing[0]}, …)`, { file: outDir }, "choose an empty folder, or delete its frames first");
  }
  const expected = Math.ceil(probe.frameCount / every);
  const count = options.maxFrames === undefined ? expected : Math.min(expected, options.maxFrames);
  const args = ["-v", "error", "-nostdin", "-i", video, "-map", "0:v:0", "-an", "-sn", "-dn"];
  if (every > 1) args.push("-vf", `select='not(mod(n\\,${every}))'`);
  args.push("-vsync", "passthrough", "-frames:v", String(count), "-start_number", "0", join(outDir, "%05d-rgb.png"));
  const tool = await startTool("ffmpeg", args);
  const code = await tool.exit;
  if (code !== 0) throw new UserError(`ffmpeg could not extract the frames of ${basename(video)} (${lastLine(tool.stderr())})`, { file: video });
  const frames = (await readdir(outDir)).filter((name) => /^\d+-rgb\.png$/.test(name)).length;
  return { frames, outDir };
}
