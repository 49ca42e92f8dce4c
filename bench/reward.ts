/**
 * EQA-RM benchmarks.
 *
 * 1. The reward server (`eqa rm serve`, from the sources) under load: a separate load-generator
 *    process (bench/reward-load.mjs) keeps C keep-alive connections busy with batch-size-1
 *    OpenRLHF requests, bounded in count and in time; throughput and latency percentiles.
 *    Then eqakit and the FastAPI anchor (bench/reward_fastapi.py: the same rewards served by
 *    FastAPI under uvicorn, one worker) at 32 clients, in alternating rounds; `--server` runs
 *    only this comparison and the reading benchmark.
 * 2. Reading replies: `parseEvaluation` and the server's `splitQuery` on 1 MB completions made to
 *    be hard (runs of opening tags, tag pairs, spaces inside a score, a megabyte critique).
 * 3. C-GRPO augmentations for 1,000 five-frame instances: temporal shuffle, reasoning-step
 *    permutation, and spatial masking of every keyframe (decode PNG → mask 15% of 16×16
 *    patches → encode PNG), over 512×384 noisy gradient frames like prepared keyframes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { forEachConcurrent, seededRandom } from "../src/core/index.js";
import { augmentationSeed, parseEvaluation, permuteReasoningSteps, spatialMask, splitQuery, temporalShuffle } from "../src/reward/index.js";

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

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolvePort(port));
    });
  });
}

/** The FastAPI anchor in its own process, or null when no python3 with fastapi and uvicorn is found. */
async function startFastApi(): Promise<{ url: string; stop: () => void } | null> {
  const python = process.env.EQA_BENCH_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const port = await freePort();
  const child = spawn(python, [join(root, "bench", "reward_fastapi.py"), String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const started = await new Promise<boolean>((resolveStarted) => {
    child.on("error", () => resolveStarted(false));
    child.on("exit", () => resolveStarted(false));
    const poll = async (tries: number): Promise<void> => {
      try {
        const reply = await fetch(`http://127.0.0.1:${port}/health`);
        if (reply.ok) return resolveStarted(true);
      } catch {
        // not listening yet
      }
      if (tries > 0) setTimeout(() => void poll(tries - 1), 200);
      else resolveStarted(false);
    };
    void poll(50);
  });
  if (!started) {
    child.kill("SIGTERM");
    console.log(`FastAPI anchor not run: ${python} could not serve bench/reward_fastapi.py (needs fastapi and uvicorn: apt-get install python3-fastapi python3-uvicorn)${err ? `\n${err.trim().split("\n").slice(-1)[0]}` : ""}`);
    return null;
  }
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}

export interface AnchorComparison {
  connections: number;
  rounds: { eqakit: LoadFigures; fastApi: LoadFigures }[];
  /** Median over the rounds of eqakit's throughput over the anchor's. */
  medianRatio: number;
}

/**
 * eqakit's server and the FastAPI anchor, both running, loaded in alternating rounds (eqakit,
 * anchor, eqakit, anchor, …) so that a busy machine slows both alike; the ratio is per round.
 */
export async function fastApiComparison(options: { requests: number; seconds: number; connections: number; rounds: number }): Promise<AnchorComparison | null> {
  const anchor = await startFastApi();
  if (!anchor) return null;
  const server = await startServer();
  const rounds: AnchorComparison["rounds"] = [];
  try {
    for (let r = 0; r < options.rounds; r++) {
      const eqakit = await load(server.url, options.connections, options.requests, options.seconds);
      const fastApi = await load(anchor.url, options.connections, options.requests, options.seconds);
      rounds.push({ eqakit, fastApi });
      console.log(`round ${r + 1}, ${options.connections} connections: eqakit ${Math.round(eqakit.requestsPerSecond)}/s (p99 ${eqakit.p99Ms.toFixed(1)} ms), FastAPI anchor ${Math.round(fastApi.requestsPerSecond)}/s (p99 ${fastApi.p99Ms.toFixed(1)} ms): ${(eqakit.requestsPerSecond / fastApi.requestsPerSecond).toFixed(2)}×`);
    }
  } finally {
    server.stop();
    anchor.stop();
  }
  const ratios = rounds.map((r) => r.eqakit.requestsPerSecond / r.fastApi.requestsPerSecond).sort((x, y) => x - y);
  const medianRatio = ratios[Math.floor(ratios.length / 2)]!;
  console.log(`reward server at ${options.connections} connections: ${medianRatio.toFixed(2)}× the FastAPI anchor's throughput (median of ${rounds.length} rounds)`);
  return { connections: options.connections, rounds, medianRatio };
}

export interface ParseFigures {
  case: string;
  bytes: number;
  /** Median over 5 runs after a warm-up, in milliseconds. */
  parseMs: number;
  splitMs: number;
}

/** `parseEvaluation` and `splitQuery` on 1 MB completions built to be hard for a backtracking reader. */
export function parseBenchmark(): ParseFigures[] {
  const mb = 1 << 20;
  const prompt = "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Evaluate.<|im_end|>\n<|im_start|>assistant\n";
  const cases: Record<string, string> = {
    "opening <score> tags": "<score>".repeat(mb / 7),
    "opening <critique> tags": "<critique>".repeat(mb / 10),
    "<score>1</score> pairs": `<critique>a</critique>${"<score>1</score>".repeat(mb / 16)}`,
    "spaces inside a score": `<critique>x</critique><score>7${" ".repeat(mb - 40)}x</score>`,
    "closing tags after a critique": `<critique>a${"</critique><score>7</score>".repeat(mb / 26)}`,
    "a megabyte critique": `<critique>${"grounded ".repeat(mb / 9)}</critique><score>7</score>`,
    "'<' and '<|' runs": "<".repeat(mb / 2) + "<|".repeat(mb / 4),
  };
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const figures: ParseFigures[] = [];
  for (const [name, text] of Object.entries(cases)) {
    const query = prompt.replace("<|image_pad|>", "<|image_pad|>".repeat(300)) + text;
    parseEvaluation(text);
    splitQuery(query, prompt);
    const parse: number[] = [];
    const split: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      parseEvaluation(text);
      const t1 = performance.now();
      splitQuery(query, prompt);
      parse.push(t1 - t0);
      split.push(performance.now() - t1);
    }
    const f = { case: name, bytes: text.length, parseMs: median(parse), splitMs: median(split) };
    figures.push(f);
    console.log(`reading a 1 MB completion (${name}): parseEvaluation ${f.parseMs.toFixed(1)} ms, splitQuery ${f.splitMs.toFixed(1)} ms`);
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

export async function rewardBenchmark(options: { quick: boolean }): Promise<{ server: LoadFigures[]; fastApi: AnchorComparison | null; parsing: ParseFigures[]; augmentations: AugmentFigures }> {
  const budget = { requests: options.quick ? 10_000 : 40_000, seconds: options.quick ? 5 : 15 };
  const server = await rewardServerBenchmark({ ...budget, connections: [1, 8, 32] });
  const fastApi = await fastApiComparison({ ...budget, connections: 32, rounds: 3 });
  const parsing = parseBenchmark();
  const augmentations = await augmentationBenchmark({ instances: 1000, concurrency: 4 });
  return { server, fastApi, parsing, augmentations };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes("--quick");
  const budget = { requests: quick ? 10_000 : 40_000, seconds: quick ? 5 : 15 };
  const figures = process.argv.includes("--augmentations")
    ? await augmentationBenchmark({ instances: 1000, concurrency: 4 })
    : process.argv.includes("--server")
      ? { fastApi: await fastApiComparison({ ...budget, connections: 32, rounds: 3 }), parsing: parseBenchmark() }
      : await rewardBenchmark({ quick });
  console.log(JSON.stringify(figures, null, 2));
}
