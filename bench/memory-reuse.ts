/**
 * Build once, reuse: the memory agents' wall time on synthetic RGB-D episodes against a
 * loopback model server that answers after a fixed latency.
 * 1. `eqa answer --agent conceptgraph` building each episode's memory in the run (the embedded
 *    detector on every frame, as on episodes without masks, and the geometry);
 * 2. `eqa memory build --benchmark` building the same memories into a folder;
 * 3. `eqa answer --memory DIR`: the same questions again, memories read from the folder, no
 *    frames opened; its wall time against the model-latency bound, ceil(questions /
 *    concurrency) × latency;
 * 4. the blind agent over the same questions (no episode, no memory): what the run harness and
 *    the model client alone take at that latency, the reference for 3.
 * Prints one JSON line. `--episodes N --frames K --questions Q` shorten it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { answerQuestions, buildMemoryFolder, createAgent } from "../src/agents/index.js";
import type { Question } from "../src/core/index.js";
import { ModelRuntime, resolveModel } from "../src/models/index.js";
import { openAiReply, startModelServer } from "../test/helpers/model-server.js";
import { writeSceneEpisode } from "../test/agents/scene-fixture.js";

function argument(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const episodes = argument("episodes", 4);
const frames = argument("frames", 60);
const perEpisode = argument("questions", 10);
const latencyMs = 200;
const concurrency = 8;

const root = mkdtempSync(join(tmpdir(), "eqakit-bench-memory-reuse-"));
const image = { width: 320, height: 240, f: 220 };
const ids = Array.from({ length: episodes }, (_, e) => `hm3d-v0/scene-${e}`);
for (const [e, id] of ids.entries()) await writeSceneEpisode(join(root, "frames", id), { layout: "hm3d", views: frames, startDegrees: e * 17, image });
const questions: Question[] = ids.flatMap((id) => Array.from({ length: perEpisode }, (_, q) => ({ questionId: `${id}/q${q}`, question: `What is object ${q}?`, answer: "x", category: "object recognition", episodeHistory: id })));

const server = await startModelServer(() => ({ ...openAiReply("A: a cup"), delayMs: latencyMs }));
const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 30_000 });
const model = resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: { OPENAI_API_KEY: "sk-bench" } });
const settings = { sampling: { kind: "every" as const, step: 1 }, detector: true };

async function timedRun(memoryDir?: string, blind = false): Promise<{ seconds: number; failed: number; calls: number }> {
  const before = server.requests.length;
  const { agent, models } = blind ? createAgent({ agent: "blind", model }, runtime) : createAgent({ agent: "conceptgraph", model, sampling: settings.sampling, forceGuess: false, memory: { detector: settings.detector, ...(memoryDir ? { memoryDir } : {}) } }, runtime);
  const started = performance.now();
  const result = await answerQuestions({ questions, agent, ...(memoryDir || blind ? {} : { framesRoot: join(root, "frames") }), outDir: mkdtempSync(join(root, "run-")), concurrency, models });
  return { seconds: (performance.now() - started) / 1000, failed: result.summary.counts.failed, calls: server.requests.length - before };
}

try {
  const building = await timedRun();
  const memoryDir = join(root, "memory");
  const buildStarted = performance.now();
  const built = await buildMemoryFolder({ episodes: ids, framesRoot: join(root, "frames"), outDir: memoryDir, options: settings });
  const buildSeconds = (performance.now() - buildStarted) / 1000;
  const reading = await timedRun(memoryDir);
  const blind = await timedRun(undefined, true);
  const boundSeconds = (Math.ceil(questions.length / concurrency) * latencyMs) / 1000;
  console.log(
    JSON.stringify({
      episodes,
      framesPerEpisode: frames,
      image: `${image.width}x${image.height}`,
      questions: questions.length,
      concurrency,
      latencyMs,
      boundSeconds,
      buildingRun: building,
      memoryBuild: { seconds: buildSeconds, built: built.built, failed: built.failed.length },
      memoryRun: { ...reading, overBound: reading.seconds / boundSeconds },
      blindRun: { ...blind, overBound: blind.seconds / boundSeconds },
    }),
  );
} finally {
  await server.close();
  rmSync(root, { recursive: true, force: true });
}
