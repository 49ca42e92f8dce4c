/**
 * Checks a folder of OpenEQA episode histories (`--frames DIR`, holding `hm3d-v0/…` and
 * `scannet-v0/…` as OpenEQA's extraction writes them) against the episodes a benchmark uses:
 * each episode's folder is there, its colour frames `N-rgb.png` run from 0 without a gap, every
 * image decodes whole, and with `rgbd` every frame also has its depth PNG (decoding) and pose
 * text (four rows of four numbers), and the folder its intrinsics (`intrinsic_color.txt`,
 * `intrinsic_depth.txt`; ScanNet's also `extrinsic_color.txt`, `extrinsic_depth.txt`).
 * It reads every image, so it takes about as long as decoding them all on the machine's cores.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { describeError, forEachConcurrent } from "../core/index.js";
import { DECODE_OPTIONS, loadSharp } from "./image.js";

export interface EpisodeCheck {
  episodeHistory: string;
  folder: string;
  /** Colour frames found. */
  frames: number;
  /** What is missing or broken, one sentence each (naming the frame); empty when complete. */
  problems: string[];
}

export interface FramesCheckOptions {
  frames: string;
  episodeHistories: readonly string[];
  /** `--rgbd`: depth, poses and intrinsics are required too. */
  rgbd?: boolean;
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

const COLOUR = /^(\d+)-rgb\.png$/;
const POSE_LINE = /^\s*(\S+\s+){3}\S+\s*$/;

/** Checks every episode's folder (see the file's comment); the outcomes are in the order given. */
export async function checkOpenEqaFrames(options: FramesCheckOptions): Promise<EpisodeCheck[]> {
  const sharp = await loadSharp();
  const histories = [...new Set(options.episodeHistories)].sort();
  const checks: EpisodeCheck[] = [];
  const images: { check: EpisodeCheck; file: string; what: string }[] = [];
  for (const episodeHistory of histories) {
    const folder = join(options.frames, episodeHistory);
    const check: EpisodeCheck = { episodeHistory, folder, frames: 0, problems: [] };
    checks.push(check);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      check.problems.push("its folder is missing");
      continue;
    }
    const names = new Set(readdirSync(folder));
    const indices = [...names].map((n) => COLOUR.exec(n)).filter((m): m is RegExpExecArray => m !== null).map((m) => ({ index: Number(m[1]), stem: m[1]! })).sort((a, b) => a.index - b.index);
    check.frames = indices.length;
    if (indices.length === 0) {
      check.problems.push("it holds no colour frames (N-rgb.png)");
      continue;
    }
    const width = indices[0]!.stem.length;
    const last = indices.at(-1)!.index;
    const present = new Set(indices.map((i) => i.index));
    for (let index = 0; index <= last; index++) if (!present.has(index)) check.problems.push(`frame ${index}: its colour image is missing`);
    if (options.rgbd) {
      const needed = ["intrinsic_color.txt", "intrinsic_depth.txt", ...(episodeHistory.includes("scannet") ? ["extrinsic_color.txt", "extrinsic_depth.txt"] : [])];
      for (const name of needed) if (!names.has(name)) check.problems.push(`${name} is missing`);
    }
    for (const { index, stem } of indices) {
      if (stem.length !== width) check.problems.push(`frame ${index}: its name has ${stem.length} digits where the others have ${width}`);
      images.push({ check, file: join(folder, `${stem}-rgb.png`), what: `frame ${index}: its colour image` });
      if (!options.rgbd) continue;
      if (names.has(`${stem}-depth.png`)) images.push({ check, file: join(folder, `${stem}-depth.png`), what: `frame ${index}: its depth image` });
      else check.problems.push(`frame ${index}: its depth image is missing`);
      if (!names.has(`${stem}.txt`)) check.problems.push(`frame ${index}: its pose is missing`);
      else {
        const lines = readFileSync(join(folder, `${stem}.txt`), "utf8").split("\n").filter((l) => l.trim() !== "");
        if (lines.length !== 4 || !lines.every((l) => POSE_LINE.test(l) && l.trim().split(/\s+/).every(isPoseNumber))) {
          check.problems.push(`frame ${index}: its pose is not four rows of four numbers`);
        }
      }
    }
  }
  let done = 0;
  const broken: { check: EpisodeCheck; problem: string }[] = [];
  await forEachConcurrent(images, Math.max(1, options.concurrency ?? availableParallelism()), async ({ check, file, what }) => {
    try {
      await sharp(file, DECODE_OPTIONS).raw().toBuffer();
    } catch (error) {
      broken.push({ check, problem: `${what} does not decode (${describeError(error)})` });
    }
    options.onProgress?.(++done, images.length);
  });
  for (const { check, problem } of broken) check.problems.push(problem);
  for (const check of checks) check.problems.sort(byFrame);
  return checks;
}

/** A number as numpy writes it: ScanNet's poses hold `-inf` where tracking was lost. */
function isPoseNumber(text: string): boolean {
  return !Number.isNaN(Number(text)) || /^[-+]?(inf|nan)$/i.test(text);
}

function byFrame(a: string, b: string): number {
  const fa = /^frame (\d+)/.exec(a);
  const fb = /^frame (\d+)/.exec(b);
  if (fa && fb) return Number(fa[1]) - Number(fb[1]) || a.localeCompare(b);
  return fa ? 1 : fb ? -1 : a.localeCompare(b);
}
