/**
 * `eqa report` of two runs at OpenEQA's size: 1,636 questions over 180 episodes, each answer
 * with the frames its agent used (every question of an episode uses the same frames, as
 * OpenEQA's uniform sampling does), each run answered and scored. How large the HTML file is
 * and how long the command takes, from its start to its exit.
 *
 *   node --import tsx bench/report.ts [--questions 1636] [--episodes 180] [--frames-per-episode 10]
 *     [--width 640] [--height 480] [--runs 2] [--rounds 1] [--thumbnails 4] [--frames-dir] [--depth]
 *
 * The runs are synthetic run directories written as `eqa run` writes them (summary with its
 * LLM-Match aggregates computed by eqakit's own code, traces.jsonl, judgements.jsonl); the
 * frames are PNGs of smooth gradients (with --depth, each with its 16-bit depth image beside it, as
 * OpenEQA's HM3D and ScanNet folders hold them), written once into the system's temp folder and reused.
 * `eqa report` runs as its own process, from the sources through tsx: round 1 with an empty cache
 * folder (every thumbnail prepared from the frame files), later rounds with the thumbnails round 1
 * left in eqakit's frame cache (a report built again, after a run was scored again). Each round
 * gives its wall time, from start to exit, and the process's CPU time, which the machine's other
 * load does not change. Prints one JSON line.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { OPENEQA_CATEGORIES, forEachConcurrent, seededRandom, type Question } from "../src/core/index.js";
import { aggregateLlmMatch } from "../src/eval/index.js";
import { numberFlag as flag } from "./flags.js";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");

const questions = flag("questions", 1636);
const episodes = flag("episodes", 180);
const framesPerEpisode = flag("frames-per-episode", 10);
const width = flag("width", 640);
const height = flag("height", 480);
const runs = flag("runs", 2);
const rounds = flag("rounds", 1);
const thumbnails = flag("thumbnails", 4);
/** Thumbnails as files beside the page (`eqa report --frames-dir`) instead of embedded. */
const linked = process.argv.includes("--frames-dir");
const depth = process.argv.includes("--depth");

const episodeName = (e: number): string => `${e % 2 === 0 ? "hm3d-v0" : "scannet-v0"}/${String(e).padStart(3, "0")}-bench`;

/** Writes the episodes' frames unless a complete copy is already there. */
async function ensureFrames(): Promise<string> {
  const dir = join(tmpdir(), `eqakit-bench-report-${episodes}x${framesPerEpisode}-${width}x${height}${depth ? "-depth" : ""}-v1`);
  const marker = join(dir, "complete");
  if (existsSync(marker)) return dir;
  console.error(`writing ${episodes} × ${framesPerEpisode} frames of ${width}×${height} to ${dir} (once)…`);
  const jobs = Array.from({ length: episodes * framesPerEpisode }, (_, i) => ({ episode: Math.floor(i / framesPerEpisode), frame: i % framesPerEpisode }));
  for (let e = 0; e < episodes; e++) mkdirSync(join(dir, episodeName(e)), { recursive: true });
  await forEachConcurrent(jobs, 2, async ({ episode, frame }) => {
    const pixels = new Uint8ClampedArray(width * height * 3);
    const shift = frame * 6 + episode * 50;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = (y * width + x) * 3;
        pixels[o] = 100 + 80 * Math.sin((x + shift) / 90) + 30 * Math.cos(y / 70);
        pixels[o + 1] = 110 + 60 * Math.sin((x + shift) / 130) + 40 * Math.sin(y / 110);
        pixels[o + 2] = 100 + 70 * Math.cos((x + shift) / 170) - 50 * Math.sin(y / 150);
      }
    }
    await sharp(Buffer.from(pixels.buffer), { raw: { width, height, channels: 3 } }).png().toFile(join(dir, episodeName(episode), `${String(frame).padStart(5, "0")}-rgb.png`));
    if (depth) {
      const metres = new Uint16Array(width * height);
      for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) metres[y * width + x] = 8000 + Math.round(4000 * Math.sin((x + shift) / 200) + 3000 * Math.cos(y / 150));
      await sharp(Buffer.from(metres.buffer), { raw: { width, height, channels: 1 } }).toColourspace("grey16").png().toFile(join(dir, episodeName(episode), `${String(frame).padStart(5, "0")}-depth.png`));
    }
  });
  writeFileSync(marker, "");
  return dir;
}

const usage = (calls: number) => ({ calls, cacheHits: 0, promptTokens: 900 * calls, completionTokens: 12 * calls, thinkingTokens: 0, cachedPromptTokens: 0, cachedCompletionTokens: 0, images: 0, retries: 0, failures: 0, latencyMs: 800 * calls });

/** One run directory as `eqa run` writes it: answers with their traces, judgements, a summary. */
function writeRun(dir: string, r: number, benchmark: string, framesRoot: string, list: Question[]): void {
  mkdirSync(dir, { recursive: true });
  const random = seededRandom(100 + r);
  const frames = Array.from({ length: framesPerEpisode }, (_, i) => i);
  const traces: string[] = [];
  const judgements: string[] = [];
  const scored: { question: Question; score: number }[] = [];
  for (const q of list) {
    const answer = `a ${["brown", "white", "black", "green"][Math.floor(random() * 4)]} ${["chair", "table", "sofa", "lamp"][Math.floor(random() * 4)]} near the window of room ${q.questionId.slice(-3)}`;
    const calls = [
      { role: "answer", model: "openai/gpt-4o", prompt: "openeqa-gpt4v", promptSha256: "0".repeat(64), frames, reply: answer, cached: false, usage: { promptTokens: 900, completionTokens: 12, thinkingTokens: 0 }, latencyMs: 800 },
      { role: "force-guess", model: "openai/gpt-4o", prompt: "openeqa-force-guess", promptSha256: "1".repeat(64), reply: "Action: keep", cached: false, usage: { promptTokens: 200, completionTokens: 3, thinkingTokens: 0 }, latencyMs: 300 },
    ];
    traces.push(JSON.stringify({ questionId: q.questionId, answer, agent: "vlm", inputKey: `k${q.questionId}`, episode: q.episodeHistory, trace: { agent: "vlm", frames, calls, agentAnswer: answer, usage: usage(2), notes: [], forceGuess: { action: "keep" } }, error: null, finishedAt: "2026-01-01T00:00:00.000Z" }));
    const score = 1 + Math.floor(random() * 5);
    scored.push({ question: q, score });
    judgements.push(JSON.stringify({ questionId: q.questionId, score, mode: "robust", judge: "openai/gpt-4o", inputKey: `j${q.questionId}`, promptName: "openeqa-mmbench", promptSha256: "2".repeat(64), prediction: answer, neutralised: false, replies: [`Your mark: ${score}`], error: null, usage: usage(1), finishedAt: "2026-01-01T00:00:00.000Z" }));
  }
  writeFileSync(join(dir, "traces.jsonl"), `${traces.join("\n")}\n`);
  writeFileSync(join(dir, "judgements.jsonl"), `${judgements.join("\n")}\n`);
  const cost = (calls: number) => ({ roles: [{ role: "agent", model: "openai/gpt-4o", calls, cacheHits: 0, promptTokens: 900 * calls, completionTokens: 12 * calls, thinkingTokens: 0, dollars: calls * 0.00237 }], total: { calls, cacheHits: 0, promptTokens: 900 * calls, completionTokens: 12 * calls, thinkingTokens: 0, dollars: calls * 0.00237 }, unpriced: [], prices: ["eqakit prices"] });
  const created = { eqakitVersion: "0.1.0", createdAt: "2026-01-01T00:00:00.000Z" };
  const answerSummary = { kind: "answer", ...created, wallTimeMs: 600_000, config: { agent: "vlm", model: "openai/gpt-4o", framesRoot, benchmark: { path: benchmark } }, counts: { questions: list.length, answered: list.length, failed: 0, reused: 0, nullAnswers: 0, forceGuessChecked: list.length, abstained: 0 }, abstentionRate: 0, replyStatuses: {}, failures: [], usage: { answers: usage(2 * list.length), thisProcess: null }, cost: cost(2 * list.length) };
  const aggregates = aggregateLlmMatch(scored, { resamples: 1000 });
  const scoreSummary = { kind: "llm-match", ...created, wallTimeMs: 300_000, config: { judge: { name: "openai/gpt-4o" }, mode: "robust", benchmark: { path: benchmark } }, counts: { questions: list.length, scored: list.length, failed: 0, missingPredictions: 0, noAnswer: 0, neutralised: 0, reused: 0, predictionsOutsideSubset: 0 }, llmMatch: aggregates, replyStatuses: {}, failures: [], usage: { judgements: usage(list.length), thisProcess: null }, cost: cost(list.length) };
  writeFileSync(join(dir, "summary.json"), JSON.stringify({ kind: "run", ...created, answer: answerSummary, score: scoreSummary }));
}

const framesRoot = await ensureFrames();
const work = mkdtempSync(join(tmpdir(), "eqakit-bench-report-run-"));
const results: { round: number; seconds: number; cpuSeconds: number; megabytes: number; framesDirMegabytes?: number }[] = [];
const usageFile = join(work, "usage.json");
const preload = join(work, "usage.mjs");
writeFileSync(preload, `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => { const u = process.resourceUsage(); writeFileSync(${JSON.stringify(usageFile)}, JSON.stringify({ cpuSeconds: (u.userCPUTime + u.systemCPUTime) / 1e6 })); });\n`);
try {
  const benchmark = join(work, "questions.json");
  const list: Question[] = Array.from({ length: questions }, (_, i) => ({ questionId: `q${String(i).padStart(5, "0")}`, question: `What is near the window in room ${i}?`, answer: "a chair", category: OPENEQA_CATEGORIES[i % OPENEQA_CATEGORIES.length]!, episodeHistory: episodeName(i % episodes) }));
  writeFileSync(benchmark, JSON.stringify(list.map((q) => ({ question_id: q.questionId, question: q.question, answer: q.answer, category: q.category, episode_history: q.episodeHistory }))));
  const dirs = Array.from({ length: runs }, (_, r) => join(work, `run-${r}`));
  dirs.forEach((dir, r) => writeRun(dir, r, benchmark, framesRoot, list));
  for (let round = 1; round <= rounds; round++) {
    const out = join(work, `report-${round}.html`);
    const started = performance.now();
    const code = await new Promise<number | null>((done) =>
      spawn(process.execPath, ["--import", "tsx", "--import", preload, join(root, "src", "cli", "main.ts"), "report", ...dirs, "--thumbnails", String(thumbnails), "--out", out, ...(linked ? ["--frames-dir", join(work, `frames-${round}`)] : [])], { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, NO_COLOR: "1", XDG_CACHE_HOME: join(work, "cache") } }).on("close", done),
    );
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`eqa report exited with ${code}`);
    const megabytes = statSync(out).size / 1e6;
    const { cpuSeconds } = JSON.parse(readFileSync(usageFile, "utf8")) as { cpuSeconds: number };
    const framesDir = linked ? readdirSync(join(work, `frames-${round}`)).reduce((sum, name) => sum + statSync(join(work, `frames-${round}`, name)).size, 0) / 1e6 : undefined;
    results.push({ round, seconds: Math.round(seconds * 100) / 100, cpuSeconds: Math.round(cpuSeconds * 100) / 100, megabytes: Math.round(megabytes * 100) / 100, ...(framesDir !== undefined ? { framesDirMegabytes: Math.round(framesDir * 100) / 100 } : {}) });
    console.error(`round ${round}: ${seconds.toFixed(2)} s (${cpuSeconds.toFixed(1)} s CPU), ${megabytes.toFixed(2)} MB`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(JSON.stringify({ questions, episodes, framesPerEpisode, size: [width, height], depth, runs, thumbnails, framesDir: linked, rounds: results }));
