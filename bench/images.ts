/**
 * Preparing 50 frames, sampled uniformly as OpenEQA does, from a 600-frame episode of
 * ScanNet-size PNGs (1296×968) into 512-px PNGs: eqakit (openEpisode + images(), from the
 * built dist/) and, in the same run, Python's Pillow doing the same work (open, resize the
 * longest side to 512 with Lanczos, encode PNG, hash), each in its own process, measured
 * from spawn to exit with its peak resident memory and CPU time.
 *
 * The frames are generated once into the system's temp folder (smooth gradients that move
 * from frame to frame, plus noise, about 2.2 MB a PNG, like ScanNet's) and reused.
 * Pillow is Debian's python3-pil for /usr/bin/python3; without it that side is skipped.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import sharp from "sharp";
import { forEachConcurrent, seededRandom } from "../src/core/index.js";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");
const FRAMES = 600;
const SAMPLED = 50;
const WIDTH = 1296;
const HEIGHT = 968;
const PYTHON = "/usr/bin/python3";

export interface ImagePrepFigures {
  label: string;
  wallSeconds: number;
  /** The preparation itself, timed inside the process (without start-up). */
  workSeconds: number;
  cpuSeconds: number;
  peakRssMB: number;
  images: number;
  outputBytes: number;
}

/** Writes the episode's frames unless a complete copy is already there. */
async function ensureEpisode(): Promise<string> {
  const dir = join(tmpdir(), `eqakit-bench-scannet-${FRAMES}-v1`);
  const marker = join(dir, "complete");
  if (existsSync(marker)) return dir;
  mkdirSync(dir, { recursive: true });
  console.log(`writing ${FRAMES} frames of ${WIDTH}×${HEIGHT} to ${dir} (once)…`);
  const random = seededRandom(2024);
  const noise = Array.from({ length: 3 }, () => {
    const field = new Int8Array(WIDTH * HEIGHT * 3);
    for (let i = 0; i < field.length; i++) field[i] = Math.round((random() + random() - 1) * 1.5);
    return field;
  });
  const span = WIDTH + FRAMES * 4;
  const columns = [0, 1, 2].map((c) => Float32Array.from({ length: span }, (_, x) => [90 + 80 * Math.sin(x / 210), 110 + 60 * Math.sin(x / 260), 100 + 70 * Math.cos(x / 330)][c]!));
  const rows = [0, 1, 2].map((c) => Float32Array.from({ length: HEIGHT }, (_, y) => [30 * Math.cos(y / 150), 40 * Math.sin(y / 260), -50 * Math.sin(y / 400)][c]!));
  await forEachConcurrent(Array.from({ length: FRAMES }, (_, i) => i), 4, async (i) => {
    const pixels = new Uint8ClampedArray(WIDTH * HEIGHT * 3);
    const field = noise[i % 3]!;
    const shift = i * 4;
    for (let y = 0; y < HEIGHT; y++) {
      for (let x = 0; x < WIDTH; x++) {
        const o = (y * WIDTH + x) * 3;
        for (let c = 0; c < 3; c++) pixels[o + c] = columns[c]![x + shift]! + rows[c]![y]! + field[o + c]!;
      }
    }
    await sharp(Buffer.from(pixels.buffer), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).png().toFile(join(dir, `${String(i).padStart(6, "0")}-rgb.png`));
  });
  writeFileSync(marker, "");
  return dir;
}

/** The eqakit side: a Node process that imports the built library, as an agent does. */
function eqakitScript(episode: string): string {
  const library = pathToFileURL(join(root, "dist", "episodes", "index.js")).href;
  return `
    const { openEpisode, sampleFrameIndices } = await import(${JSON.stringify(library)});
    const started = performance.now();
    const episode = await openEpisode(${JSON.stringify(episode)}, "scannet-v0/bench");
    const images = await episode.images(sampleFrameIndices(episode.frameCount, { kind: "uniform", count: ${SAMPLED} }));
    const workSeconds = (performance.now() - started) / 1000;
    const usage = process.resourceUsage();
    console.log(JSON.stringify({
      workSeconds,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      peakRssBytes: usage.maxRSS * 1024,
      images: images.length,
      outputBytes: images.reduce((sum, image) => sum + image.data.length, 0),
      size: [images[0].width, images[0].height],
    }));
  `;
}

/**
 * The Pillow side: the frames sorted as OpenEQA's baselines sort them, the same indices
 * (Python's round() rounds halves to even, as numpy's does), each opened, resized with
 * Lanczos (sharp's default kernel is Lanczos-3) to 512 on the longest side, encoded as
 * PNG at zlib level 6 (both libraries' default) and hashed.
 */
function pillowScript(episode: string): string {
  return `
import glob, hashlib, io, json, os, resource, sys, time
from PIL import Image
started = time.perf_counter()
frames = sorted(glob.glob(os.path.join(${JSON.stringify(episode)}, "*-rgb.png")))
n, k = len(frames), ${SAMPLED}
step = (n - 1) / (k - 1)
indices = [round(i * step) if i < k - 1 else n - 1 for i in range(k)]
total = 0
size = None
for i in indices:
    with Image.open(frames[i]) as image:
        image = image.convert("RGB")
        factor = 512 / max(image.size)
        size = (round(image.size[0] * factor), round(image.size[1] * factor))
        image = image.resize(size, Image.LANCZOS)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = buffer.getvalue()
        hashlib.sha256(data).hexdigest()
        total += len(data)
work = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"workSeconds": work, "cpuSeconds": usage.ru_utime + usage.ru_stime, "peakRssBytes": usage.ru_maxrss * 1024, "images": len(indices), "outputBytes": total, "size": list(size)}))
`;
}

async function timeProcess(label: string, command: string, args: string[]): Promise<ImagePrepFigures> {
  const started = performance.now();
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  const wallSeconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${label} exited with ${code}`);
  const report = JSON.parse(stdout.trim().split("\n").pop()!) as { workSeconds: number; cpuSeconds: number; peakRssBytes: number; images: number; outputBytes: number; size: number[] };
  const figures: ImagePrepFigures = { label, wallSeconds, workSeconds: report.workSeconds, cpuSeconds: report.cpuSeconds, peakRssMB: report.peakRssBytes / 1e6, images: report.images, outputBytes: report.outputBytes };
  console.log(
    `${label.padEnd(28)} ${wallSeconds.toFixed(2).padStart(6)} s wall  ${report.workSeconds.toFixed(2).padStart(6)} s work  ${report.cpuSeconds.toFixed(2).padStart(6)} s CPU  ${figures.peakRssMB.toFixed(0).padStart(4)} MB peak  ${report.images} images of ${report.size.join("×")}, ${(report.outputBytes / 1e6).toFixed(1)} MB`,
  );
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function imagesBenchmark(options: { rounds: number }): Promise<{ frames: number; sampled: number; runs: ImagePrepFigures[]; median: Record<string, { wallSeconds: number; peakRssMB: number }> }> {
  if (!existsSync(join(root, "dist", "episodes", "index.js"))) throw new Error("build eqakit first (npm run build): the benchmark runs dist/");
  const episode = await ensureEpisode();
  const count = readdirSync(episode).filter((n) => n.endsWith("-rgb.png")).length;
  const megabytes = readFileSync(join(episode, "000000-rgb.png")).length / 1e6;
  console.log(`\npreparing ${SAMPLED} of ${count} frames (${WIDTH}×${HEIGHT} PNG, ~${megabytes.toFixed(1)} MB each) into 512-px PNGs`);
  const pillow = await new Promise<boolean>((r) => {
    const child = spawn(PYTHON, ["-c", "import PIL"], { stdio: "ignore" });
    child.on("error", () => r(false));
    child.on("close", (code) => r(code === 0));
  });
  if (!pillow) console.log(`(Pillow not found for ${PYTHON}: apt-get install python3-pil to compare)`);
  const runs: ImagePrepFigures[] = [];
  for (let round = 0; round < options.rounds; round++) {
    runs.push(await timeProcess("eqakit (sharp)", process.execPath, ["--input-type=module", "-e", eqakitScript(episode)]));
    if (pillow) runs.push(await timeProcess("Pillow (python3-pil)", PYTHON, ["-c", pillowScript(episode)]));
  }
  const labels = [...new Set(runs.map((r) => r.label))];
  const medians = Object.fromEntries(
    labels.map((label) => {
      const of = runs.filter((r) => r.label === label);
      return [label, { wallSeconds: median(of.map((r) => r.wallSeconds)), peakRssMB: median(of.map((r) => r.peakRssMB)) }];
    }),
  );
  if (options.rounds > 1) for (const [label, m] of Object.entries(medians)) console.log(`median ${label.padEnd(21)} ${m.wallSeconds.toFixed(2).padStart(6)} s wall  ${m.peakRssMB.toFixed(0).padStart(4)} MB peak`);
  return { frames: count, sampled: SAMPLED, runs, median: medians };
}
