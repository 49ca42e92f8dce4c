/**
 * EQA-RM benchmarks.
 *
 * 1. The reward server (`eqa rm serve`, from the sources) under load: a separate load-generator
 *    process (bench/reward-load.mjs) keeps C keep-alive connections busy with batch-size-1
 *    OpenRLHF requests, bounded in count and in time; throughput and latency percentiles.
 * 2. C-GRPO augmentations for 1,000 five-frame instances: temporal shuffle, reasoning-step
 *    permutation, and spatial masking of every keyframe (decode PNG → mask 15% of 16×16
 *    patches → encode PNG), over 512×384 noisy gradient frames like prepared keyframes.
 */
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { forEachConcurrent, seededRandom } from "../src/core/index.js";
import { augmentationSeed, permuteReasoningSteps, spatialMask, temporalShuffle } from "../src/reward/index.js";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");

export interface LoadFigures {
  connections: number;
  requests: number;
  errors: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function startServer(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src", "cli", "main.ts"), "rm", "serve", "--port", "0"], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/[^/\s]+)/.exec(out);
      if (match) resolveUrl(match[1]!);
    });
    child.on("exit", (code) => reject(new Error(`reward server exited with ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

function load(url: string, connections: number, requests: number, seconds: number): Promise<LoadFigures> {
  return new Promise((resolveFigures, reject) => {
    const child = spawn(process.execPath, [join(root, "bench", "reward-load.mjs"), url, String(connections), String(requests), String(seconds)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code) => (code === 0 ? resolveFigures(JSON.parse(out) as LoadFigures) : reject(new Error(`load generator exited with ${code}`))));
  });
}

export async function rewardServerBenchmark(options: { requests: number; seconds: number; connections: number[] }): Promise<LoadFigures[]> {
  const server = await startServer();
  const figures: LoadFigures[] = [];
  try {
    for (const c of options.connections) {
      const f = await load(server.url, c, options.requests, options.seconds);
      figures.push(f);
      console.log(`reward server, ${c} connections: ${f.requests} requests in ${f.seconds.toFixed(2)} s = ${Math.round(f.requestsPerSecond)}/s, p50 ${f.p50Ms.toFixed(2)} ms, p99 ${f.p99Ms.toFixed(2)} ms, max ${f.maxMs.toFixed(1)} ms, ${f.errors} errors`);
    }
  } finally {
    server.stop();
  }
  return figures;
}

export interface AugmentFigures {
  instances: number;
  frames: number;
  width: number;
  height: number;
  seconds: number;
  msPerInstance: number;
  maskSeconds: number;
  permutationSeconds: number;
  concurrency: number;
  /** CPU time of the process (every thread, libvips' included) during the run. */
  cpuSeconds: number;
}

async function makeFrames(count: number, width: number, height: number): Promise<Buffer[]> {
  const random = seededRandom(7);
  const frames: Buffer[] = [];
  for (let f = 0; f < count; f++) {
    const pixels = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = (y * width + x) * 3;
        const n = (random() - 0.5) * 12;
        pixels[o] = Math.max(0, Math.min(255, 120 + 80 * Math.sin((x + f * 17) / 90) + n));
        pixels[o + 1] = Math.max(0, Math.min(255, 110 + 60 * Math.cos((y + f * 11) / 70) + n));
        pixels[o + 2] = Math.max(0, Math.min(255, 100 + 50 * Math.sin((x + y) / 120) + n));
      }
    }
    frames.push(await sharp(pixels, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer());
  }
  return frames;
}

export async function augmentationBenchmark(options: { instances: number; concurrency: number }): Promise<AugmentFigures> {
  const width = 512;
  const height = 384;
  const distinct = await makeFrames(25, width, height);
  const steps = Array.from({ length: 7 }, (_, i) => `Step ${i + 1}: I look at the next part of the room and note what I see there.`);
  let maskMs = 0;
  let permutationMs = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  await forEachConcurrent(Array.from({ length: options.instances }, (_, i) => i), options.concurrency, async (i) => {
    const id = `instance-${i}`;
    const frames = Array.from({ length: 5 }, (_, f) => distinct[(i * 5 + f) % distinct.length]!);
    const t0 = performance.now();
    temporalShuffle(frames, augmentationSeed(0, id, "temporal"));
    permuteReasoningSteps(steps, augmentationSeed(0, id, "reasoning"));
    const t1 = performance.now();
    await Promise.all(frames.map((frame, f) => spatialMask(frame, augmentationSeed(0, id, "spatial", f))));
    permutationMs += t1 - t0;
    maskMs += performance.now() - t1;
  });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const figures = { instances: options.instances, frames: options.instances * 5, width, height, seconds, msPerInstance: (seconds * 1000) / options.instances, maskSeconds: maskMs / 1000, permutationSeconds: permutationMs / 1000, concurrency: options.concurrency, cpuSeconds: (used.user + used.system) / 1e6 };
  console.log(`augmentations: ${figures.instances} instances × 5 frames (${width}×${height}) in ${seconds.toFixed(2)} s (${figures.msPerInstance.toFixed(2)} ms an instance, ${figures.cpuSeconds.toFixed(1)} s of CPU; shuffles and permutations ${figures.permutationSeconds.toFixed(3)} s)`);
  return figures;
}

export async function rewardBenchmark(options: { quick: boolean }): Promise<{ server: LoadFigures[]; augmentations: AugmentFigures }> {
  const server = await rewardServerBenchmark({ requests: options.quick ? 10_000 : 40_000, seconds: options.quick ? 5 : 15, connections: [1, 8, 32] });
  const augmentations = await augmentationBenchmark({ instances: 1000, concurrency: 4 });
  return { server, augmentations };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const figures = process.argv.includes("--augmentations") ? await augmentationBenchmark({ instances: 1000, concurrency: 4 }) : await rewardBenchmark({ quick: process.argv.includes("--quick") });
  console.log(JSON.stringify(figures, null, 2));
}
