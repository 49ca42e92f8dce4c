/**
 * OpenEQA's ScanNet episode histories made from the user's own ScanNet copy: what OpenEQA's
 * `data/scannet/extract-frames.py` (with its `SensorData.py`) writes, file for file.
 *
 * Reference behaviour kept:
 * - episodes: every distinct `episode_history` of the questions that contains "scannet", sorted;
 *   the scan is the last "-" part of its last "/" part (`scannet-v0/002-scannet-scene0709_00` →
 *   `scene0709_00`), read from `ROOT/scans/SCAN/SCAN.sens`, else `ROOT/scans_test/SCAN/SCAN.sens`;
 *   written into `OUT/<episode_history>/`.
 * - frames 0 … 599 (`--max-num-frames` 600, frame skip 1), names `NNNNNN` (6 digits):
 *   `NNNNNN-rgb.png` the JPEG's decoded pixels as an 8-bit PNG (no resizing: ScanNet's
 *   1296×968), and unless `rgbOnly` `NNNNNN-depth.png` (the zlib-decompressed uint16 values as a
 *   16-bit greyscale PNG, depth_shift 1000 per metre untouched), `NNNNNN.txt` (camera-to-world,
 *   four lines of `"%f %f %f %f"`, as `np.savetxt(fmt="%f")` writes float32 rows: `-inf` where
 *   ScanNet's tracking failed) and `intrinsic_color.txt`, `extrinsic_color.txt`,
 *   `intrinsic_depth.txt`, `extrinsic_depth.txt` in the same format.
 * - a frame file that exists is kept (the reference skips existing files too).
 * Differences: PNG compression (the pixels and values are the same, the bytes are not: zlib
 * level 1 for colour and depth by default, where Pillow and pypng use 6; `pngCompression` 0
 * stores them uncompressed, faster and larger); the scan is read only up to its
 * 600th frame and never held in memory; a missing or broken scan fails alone (the reference
 * stops at the first one).
 *
 * Writes: each file under a temporary name, then renamed, so a killed run leaves no partial
 * image; a rerun removes the temporaries and skips every frame whose files are all there
 * (without reading its bytes), so it ends with the files an uninterrupted run writes.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { inflate } from "node:zlib";
import { OutputError, UserError, describeError, isUserError, pythonFixed, removeStaleTemporaries, writeFileAtomically } from "../core/index.js";
import { loadSharp } from "./image.js";
import { SensReader, type SensHeader } from "./scannet-sens.js";

const inflateAsync = promisify(inflate);

/** `extract-frames.py --max-num-frames` default. */
export const OPENEQA_SCANNET_MAX_FRAMES = 600;
/** zlib level of the written PNGs: zlib-ng's fastest that compresses (level 2 costs half as much again). */
export const SCANNET_PNG_COMPRESSION = 1;

/** One ScanNet episode of OpenEQA: its `episode_history` and its scan id. */
export interface ScanNetEpisode {
  episodeHistory: string;
  scan: string;
}

/** The ScanNet episodes among some `episode_history` values, as extract-frames.py finds them (distinct, sorted). */
export function scanNetEpisodes(episodeHistories: Iterable<string>): ScanNetEpisode[] {
  const folders = [...new Set([...episodeHistories].filter((h) => h.includes("scannet")))].sort();
  return folders.map((episodeHistory) => ({ episodeHistory, scan: episodeHistory.split("/").at(-1)!.split("-").at(-1)! }));
}

/** Where a scan's `.sens` is under ScanNet's layout (`scans/`, then `scans_test/`), or undefined. */
export function findSensFile(root: string, scan: string): string | undefined {
  for (const folder of ["scans", "scans_test"]) {
    const path = join(root, folder, scan, `${scan}.sens`);
    if (existsSync(path)) return path;
  }
  return undefined;
}

export interface ScanNetPrepareOptions {
  episodes: readonly ScanNetEpisode[];
  /** `--scannet`: the folder holding `scans/` and `scans_test/`. */
  scannetRoot: string;
  /** `--out`: the frames folder; episodes go to `OUT/<episode_history>/`. */
  out: string;
  /** `--rgb-only`: colour frames only, as extract-frames.py's flag. */
  rgbOnly?: boolean;
  /** Frames per scan; default 600 (extract-frames.py's `--max-num-frames`). */
  maxFrames?: number;
  /** zlib level (0-9) of the colour and depth PNGs; default 1. 0 stores the pixels uncompressed: about a third less CPU, about 1.8 times the disk. */
  pngCompression?: number;
  /** Frames decoded and written at once, over all scans; default the machine's cores. */
  concurrency?: number;
  /** Called as frames and scans finish. */
  onProgress?: (progress: ScanNetProgress) => void;
}

export interface ScanNetProgress {
  scansDone: number;
  scansFailed: number;
  scans: number;
  framesDone: number;
  /** Frames to write over all scans, as far as their headers have been read (600 a scan until then). */
  frames: number;
  /** The scan whose frame just finished (or which just ended): its frames done of its frames to write. */
  scan?: { episodeHistory: string; framesDone: number; frames: number; finished: boolean };
}

export interface ScanOutcome {
  episodeHistory: string;
  scan: string;
  /** The `.sens` read, when found. */
  sens?: string;
  /** Frames in the folder at the end (written now or kept from before). */
  frames: number;
  written: number;
  kept: number;
  /** Why the scan failed (its file and frame named); the other scans go on. */
  error?: string;
}

function frameFiles(folder: string, index: number, rgbOnly: boolean): string[] {
  const stem = join(folder, String(index).padStart(6, "0"));
  return rgbOnly ? [`${stem}-rgb.png`] : [`${stem}-rgb.png`, `${stem}-depth.png`, `${stem}.txt`];
}

/** A 4×4 matrix as `np.savetxt(f, row[np.newaxis], fmt="%f")` writes it row by row. */
export function savetxtMatrix(matrix: ArrayLike<number>): string {
  let text = "";
  for (let r = 0; r < 4; r++) text += `${[0, 1, 2, 3].map((c) => pythonFixed(matrix[r * 4 + c]!)).join(" ")}\n`;
  return text;
}

/** A bounded count of frames in flight over every scan. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(width: number) {
    this.free = width;
  }
  async take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/**
 * Writes OpenEQA's ScanNet episode folders (see the file's comment). A scan that cannot be read
 * fails alone, its outcome naming the file and frame; `--out` being a file is a UserError.
 */
export async function prepareScanNetFrames(options: ScanNetPrepareOptions): Promise<ScanOutcome[]> {
  const maxFrames = options.maxFrames ?? OPENEQA_SCANNET_MAX_FRAMES;
  const rgbOnly = options.rgbOnly ?? false;
  const compressionLevel = options.pngCompression ?? SCANNET_PNG_COMPRESSION;
  if (!Number.isInteger(compressionLevel) || compressionLevel < 0 || compressionLevel > 9) throw new UserError(`PNG compression ${compressionLevel} is not a zlib level`, { field: "--png-compression" }, "give a zlib level from 0 (stored) to 9");
  if (existsSync(options.out) && !statSync(options.out).isDirectory()) throw new UserError("the output folder is a file", { file: options.out, field: "--out" }, "give --out a folder (it is made when missing)");
  if (!existsSync(options.scannetRoot) || !statSync(options.scannetRoot).isDirectory()) {
    throw new UserError("no such folder", { file: options.scannetRoot, field: "--scannet" }, "give --scannet the folder holding ScanNet's scans/ and scans_test/ (as download-scannet.py -o lays them out)");
  }
  mkdirSync(options.out, { recursive: true });
  const width = Math.max(1, options.concurrency ?? availableParallelism());
  const slots = new Slots(width);
  const sharp = await loadSharp();
  const progress: ScanNetProgress = { scansDone: 0, scansFailed: 0, scans: options.episodes.length, framesDone: 0, frames: options.episodes.length * maxFrames };
  const report = (scan?: ScanNetProgress["scan"]): void => options.onProgress?.({ ...progress, ...(scan ? { scan } : {}) });

  const writeFrame = async (header: SensHeader, folder: string, frame: { index: number; cameraToWorld: Float32Array; color: Buffer; depth: Buffer }, path: string): Promise<void> => {
    const [rgb, depth, pose] = frameFiles(folder, frame.index, rgbOnly);
    let png: Buffer;
    try {
      png = await sharp(frame.color).png({ compressionLevel }).toBuffer();
    } catch (error) {
      throw new UserError(`frame ${frame.index}: its colour image does not decode (${describeError(error)})`, { file: path });
    }
    await writeFileAtomically(rgb!, png, { sync: false });
    if (rgbOnly) return;
    let values: Buffer;
    try {
      values = await inflateAsync(frame.depth);
    } catch (error) {
      throw new UserError(`frame ${frame.index}: its depth bytes do not decompress (${describeError(error)})`, { file: path });
    }
    const pixels = header.depthWidth * header.depthHeight;
    if (values.length !== pixels * 2) throw new UserError(`frame ${frame.index}: its depth holds ${values.length} bytes, expected ${header.depthWidth}×${header.depthHeight}×2`, { file: path });
    const depth16 = values.byteOffset % 2 === 0 ? new Uint16Array(values.buffer, values.byteOffset, pixels) : new Uint16Array(Uint8Array.from(values).buffer);
    const depthPng = await sharp(depth16, { raw: { width: header.depthWidth, height: header.depthHeight, channels: 1 } }).toColourspace("grey16").png({ compressionLevel }).toBuffer();
    await writeFileAtomically(depth!, depthPng, { sync: false });
    await writeFileAtomically(pose!, savetxtMatrix(frame.cameraToWorld), { sync: false });
  };

  const prepareScan = async (episode: ScanNetEpisode): Promise<ScanOutcome> => {
    const outcome: ScanOutcome = { episodeHistory: episode.episodeHistory, scan: episode.scan, frames: 0, written: 0, kept: 0 };
    const path = findSensFile(options.scannetRoot, episode.scan);
    if (path === undefined) {
      outcome.error = `${episode.scan}.sens is in neither ${join(options.scannetRoot, "scans", episode.scan)} nor ${join(options.scannetRoot, "scans_test", episode.scan)}\n  download it: ${scanNetDownloadCommand(episode.scan, options.scannetRoot)}`;
      progress.frames -= maxFrames;
      return outcome;
    }
    outcome.sens = path;
    const folder = join(options.out, episode.episodeHistory);
    let reader: SensReader | undefined;
    const inFlight = new Set<Promise<void>>();
    let failure: unknown;
    let count = maxFrames;
    const scanProgress = (finished: boolean): ScanNetProgress["scan"] => ({ episodeHistory: episode.episodeHistory, framesDone: outcome.written + outcome.kept, frames: count, finished });
    try {
      reader = await SensReader.open(path);
      const header = reader.header;
      if (header.colorCompression !== "jpeg" || header.depthCompression !== "zlib_ushort") {
        throw new UserError(`colour compression ${header.colorCompression} and depth compression ${header.depthCompression}; OpenEQA's reader takes jpeg and zlib_ushort only`, { file: path });
      }
      count = Math.min(maxFrames, header.frameCount);
      progress.frames += count - maxFrames;
      if (existsSync(folder) && !statSync(folder).isDirectory()) throw new UserError("the episode's output folder is a file", { file: folder });
      mkdirSync(folder, { recursive: true });
      removeStaleTemporaries(folder);
      if (!rgbOnly) {
        const names: [string, Float32Array][] = [
          ["intrinsic_color.txt", header.intrinsicColor],
          ["extrinsic_color.txt", header.extrinsicColor],
          ["intrinsic_depth.txt", header.intrinsicDepth],
          ["extrinsic_depth.txt", header.extrinsicDepth],
        ];
        for (const [name, matrix] of names) await writeFileAtomically(join(folder, name), savetxtMatrix(matrix), { sync: false });
      }
      const done = (index: number): boolean => frameFiles(folder, index, rgbOnly).every((f) => existsSync(f));
      for await (const frame of reader.frames(count, (index) => !done(index))) {
        if (failure !== undefined) break;
        if (frame.color === undefined || frame.depth === undefined) {
          outcome.kept++;
          progress.framesDone++;
          continue;
        }
        await slots.take();
        const job = writeFrame(header, folder, { index: frame.index, cameraToWorld: frame.cameraToWorld, color: frame.color, depth: frame.depth }, path)
          .then(() => {
            outcome.written++;
            progress.framesDone++;
            report(scanProgress(false));
          })
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => {
            slots.give();
            inFlight.delete(job);
          });
        inFlight.add(job);
      }
    } catch (error) {
      failure ??= error;
    } finally {
      await Promise.all(inFlight);
      await reader?.close();
    }
    outcome.frames = outcome.written + outcome.kept;
    report(scanProgress(true));
    if (failure !== undefined) {
      // a bug, or a disk that refuses the writes (exit 3): the run stops, the finished frames stay
      if (!isUserError(failure) || failure instanceof OutputError) throw failure;
      outcome.error = failure.message;
    }
    return outcome;
  };

  const outcomes: ScanOutcome[] = new Array(options.episodes.length);
  let next = 0;
  // scans are read side by side (as many as frames in flight), their frames share the slots
  const worker = async (): Promise<void> => {
    while (next < options.episodes.length) {
      const index = next++;
      const outcome = await prepareScan(options.episodes[index]!);
      outcomes[index] = outcome;
      progress.scansDone++;
      if (outcome.error !== undefined) progress.scansFailed++;
      report();
    }
  };
  report();
  await Promise.all(Array.from({ length: Math.min(width, Math.max(1, options.episodes.length)) }, worker));
  return outcomes;
}

/** The command line of ScanNet's own download script that fetches one scan's `.sens` into ROOT's layout. */
export function scanNetDownloadCommand(scan: string, root = "ROOT"): string {
  return `python download-scannet.py -o ${root} --id ${scan} --type .sens`;
}
