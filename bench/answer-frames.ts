/**
 * `eqa answer --agent vlm` against a loopback OpenAI-compatible server that answers every
 * call after a fixed latency: how close the run's wall time comes to the latency bound
 * (ceil(questions / concurrency) × calls per question × latency, what the run would take if
 * eqakit's own work cost nothing; a vlm question makes two calls one after the other, its answer
 * and OpenEQA's force-a-guess check). The episodes are synthetic frame folders (smooth gradients, rendered-like, or with
 * sensor noise added, camera-like, with --noisy; PNGs of
 * the given size, written once into the system's temp folder and reused), each asked the
 * same number of questions; every question samples the same K frames of its episode, as
 * OpenEQA's uniform sampling does.
 *
 *   node --import tsx bench/answer-frames.ts [--questions 100] [--episodes 10] [--frames-per-episode 40]
 *     [--num-frames 8] [--width 640] [--height 480] [--concurrency 16] [--latency-ms 100] [--runs 2] [--noisy]
 *
 * `eqa answer` runs as its own process (from the sources, through tsx) with --no-cache; the
 * figure is the run's own wall time from its summary.json (start-up excluded), and the
 * process's CPU time, also less that of the same command run again (every answer reused: start-up,
 * episodes opened, files written), which is what the answers themselves cost, a figure the
 * machine's other load does not change as it changes the wall time. Run 1 starts with an empty frame cache folder; later runs reuse it
 * (XDG_CACHE_HOME is the same). Prints one JSON line of figures.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { forEachConcurrent, seededRandom } from "../src/core/index.js";
import { numberFlag as flag } from "./flags.js";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");

const questions = flag("questions", 100);
const episodes = flag("episodes", 10);
const framesPerEpisode = flag("frames-per-episode", 40);
const numFrames = flag("num-frames", 8);
const width = flag("width", 640);
const height = flag("height", 480);
const concurrency = flag("concurrency", 16);
const latencyMs = flag("latency-ms", 100);
const runs = flag("runs", 2);
/** Camera-like frames carry sensor noise (ScanNet's); rendered ones (HM3D's) do not, and encode several times faster and smaller. */
const noisy = process.argv.includes("--noisy");

/** Writes the episodes' frames unless a complete copy is already there. */
async function ensureFrames(): Promise<string> {
  const dir = join(tmpdir(), `eqakit-bench-answer-${episodes}x${framesPerEpisode}-${width}x${height}-${noisy ? "noisy" : "smooth"}-v1`);
  const marker = join(dir, "complete");
  if (existsSync(marker)) return dir;
  console.error(`writing ${episodes} × ${framesPerEpisode} frames of ${width}×${height} to ${dir} (once)…`);
  const random = seededRandom(17);
  const noise = new Int8Array(width * height * 3);
  for (let i = 0; noisy && i < noise.length; i++) noise[i] = Math.round((random() + random() - 1) * 1.5);
  const jobs = Array.from({ length: episodes * framesPerEpisode }, (_, i) => ({ episode: Math.floor(i / framesPerEpisode), frame: i % framesPerEpisode }));
  for (let e = 0; e < episodes; e++) mkdirSync(join(dir, `bench-${e}`), { recursive: true });
  await forEachConcurrent(jobs, 4, async ({ episode, frame }) => {
    const pixels = new Uint8ClampedArray(width * height * 3);
    const shift = frame * 6 + episode * 50;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = (y * width + x) * 3;
        pixels[o] = 100 + 80 * Math.sin((x + shift) / 90) + 30 * Math.cos(y / 70) + noise[o]!;
        pixels[o + 1] = 110 + 60 * Math.sin((x + shift) / 130) + 40 * Math.sin(y / 110) + noise[o + 1]!;
        pixels[o + 2] = 100 + 70 * Math.cos((x + shift) / 170) - 50 * Math.sin(y / 150) + noise[o + 2]!;
      }
    }
    const name = `${String(frame).padStart(5, "0")}-rgb.png`;
    await sharp(Buffer.from(pixels.buffer), { raw: { width, height, channels: 3 } }).png().toFile(join(dir, `bench-${episode}`, name));
  });
  writeFileSync(marker, "");
  return dir;
}

/** An OpenAI-compatible server that reads each request whole and answers after the latency. */
async function startServer(): Promise<{ url: string; peakInFlight: () => number; calls: () => number; spanSeconds: () => number; close: () => Promise<void> }> {
  let first = 0;
  let last = 0;
  let inFlight = 0;
  let peak = 0;
  let calls = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    calls++;
    if (first === 0) first = performance.now();
    peak = Math.max(peak, inFlight);
    req.resume();
    req.on("end", () => {
      setTimeout(() => {
        inFlight--;
        last = performance.now();
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion", created: 0, model: "bench", choices: [{ index: 0, message: { role: "assistant", content: "a chair" }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } }));
      }, latencyMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    peakInFlight: () => peak,
    calls: () => calls,
    spanSeconds: () => (last - first) / 1000,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const framesRoot = await ensureFrames();
const work = mkdtempSync(join(tmpdir(), "eqakit-bench-answer-run-"));
const benchmark = join(work, "questions.json");
writeFileSync(
  benchmark,
  JSON.stringify(
    Array.from({ length: questions }, (_, i) => ({
      question_id: `q${String(i).padStart(5, "0")}`,
      question: `What is in room ${i}?`,
      answer: "a chair",
      category: "object recognition",
      episode_history: `bench-${i % episodes}`,
    })),
  ),
);
const usageFile = join(work, "usage.json");
const preload = join(work, "usage.mjs");
writeFileSync(preload, `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => { const u = process.resourceUsage(); writeFileSync(${JSON.stringify(usageFile)}, JSON.stringify({ cpuSeconds: (u.userCPUTime + u.systemCPUTime) / 1e6, peakRssMB: u.maxRSS / 1024 })); });\n`);

/** The vlm agent's answer, then the force-a-guess check (on by default, as OpenEQA runs it). */
const CALLS_PER_QUESTION = 2;
const boundSeconds = (Math.ceil(questions / concurrency) * CALLS_PER_QUESTION * latencyMs) / 1000;
const results: { run: number; wallSeconds: number; ratio: number; cpuSeconds: number; runCpuSeconds: number; serverCpuSeconds: number; peakRssMB: number; peakInFlight: number; firstToLastCallSeconds: number; answered: number }[] = [];
const env = { ...process.env, OPENAI_API_KEY: "sk-bench", XDG_CACHE_HOME: join(work, "cache"), NO_COLOR: "1" };

/** Runs `eqa answer` into `out` against `url`; its exit code and CPU seconds. */
async function answer(url: string, out: string): Promise<{ code: number | null; cpuSeconds: number; peakRssMB: number }> {
  const profile = process.env.EQAKIT_BENCH_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.EQAKIT_BENCH_CPU_PROF] : [];
  const args = ["--import", "tsx", "--import", preload, ...profile, join(root, "src", "cli", "main.ts"), "answer", "--benchmark", benchmark, "--frames", framesRoot, "--agent", "vlm", "--model", "openai/bench-vlm", "--model-base-url", url, "--num-frames", String(numFrames), "--concurrency", String(concurrency), "--no-cache", "--out", out];
  const code = await new Promise<number | null>((done) => spawn(process.execPath, args, { env, cwd: root, stdio: ["ignore", "ignore", "inherit"] }).on("close", done));
  const usage = JSON.parse(readFileSync(usageFile, "utf8")) as { cpuSeconds: number; peakRssMB: number };
  return { code, ...usage };
}

try {
  for (let run = 1; run <= runs; run++) {
    const server = await startServer();
    const out = join(work, `run-${run}`);
    // the loopback server's own CPU (reading every request whole) competes with eqa for the cores
    const serverCpu = process.cpuUsage();
    const measured = await answer(server.url, out);
    const serverCpuSeconds = cpuSeconds(process.cpuUsage(serverCpu));
    await server.close();
    if (measured.code !== 0) throw new Error(`eqa answer exited with ${measured.code}`);
    if (server.calls() !== questions * CALLS_PER_QUESTION) throw new Error(`expected ${questions * CALLS_PER_QUESTION} calls, the server saw ${server.calls()}`);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { wallTimeMs: number; counts: { answered: number } };
    // the same command again reuses every answer: its CPU is start-up, episodes opened, files written
    const idle = await startServer();
    const reused = await answer(idle.url, out);
    await idle.close();
    if (reused.code !== 0 || idle.calls() !== 0) throw new Error("the resumed run did not reuse every answer");
    const wallSeconds = summary.wallTimeMs / 1000;
    const runCpuSeconds = measured.cpuSeconds - reused.cpuSeconds;
    results.push({ run, wallSeconds: round(wallSeconds), ratio: round(wallSeconds / boundSeconds), cpuSeconds: round(measured.cpuSeconds), runCpuSeconds: round(runCpuSeconds), serverCpuSeconds: round(serverCpuSeconds), peakRssMB: Math.round(measured.peakRssMB), peakInFlight: server.peakInFlight(), firstToLastCallSeconds: round(server.spanSeconds()), answered: summary.counts.answered });
    console.error(`run ${run}: ${wallSeconds.toFixed(2)} s (${(wallSeconds / boundSeconds).toFixed(2)}× the bound of ${boundSeconds} s), ${measured.cpuSeconds.toFixed(1)} s CPU (${runCpuSeconds.toFixed(1)} s beyond a run that reuses every answer; the model server ${serverCpuSeconds.toFixed(1)} s), peak ${server.peakInFlight()} calls in flight, ${server.spanSeconds().toFixed(2)} s from the first call's arrival to the last reply`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(JSON.stringify({ questions, episodes, content: noisy ? "noisy" : "smooth", numFrames, size: [width, height], concurrency, latencyMs, boundSeconds, runs: results }));

function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
