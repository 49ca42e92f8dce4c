/**
 * `eqa score` on all 1,636 OpenEQA questions against a loopback OpenAI-compatible judge
 * that answers each call after 100 ms. Measures the whole CLI process (start to exit)
 * and its peak memory: at concurrency 32, re-run from the cache, and at concurrency 1
 * (how the reference script calls its judge: one question at a time).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");
const benchmarkFile = resolve(root, "..", "shared", "data", "openeqa", "open-eqa-v0.json");
const JUDGE_DELAY_MS = 100;

export interface ProcessFigures {
  label: string;
  concurrency: number;
  wallSeconds: number;
  peakRssMB: number;
  judgeCalls: number;
  exitCode: number | null;
}

async function startJudge(): Promise<{ url: string; calls: () => number; close: () => void }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          id: "bench", object: "chat.completion", created: 0, model: "bench",
          choices: [{ index: 0, message: { role: "assistant", content: `Your mark: ${1 + (calls % 5)}` }, finish_reason: "stop" }],
          usage: { prompt_tokens: 200, completion_tokens: 4, total_tokens: 204 },
        }));
      }, JUDGE_DELAY_MS);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, calls: () => calls, close: () => server.close() };
}

async function timeScore(label: string, args: string[], concurrency: number, judge: { calls: () => number }, work: string): Promise<ProcessFigures> {
  const rssFile = join(work, `${label}.rss`);
  const callsBefore = judge.calls();
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", join(root, "bench", "peak-rss.mjs"), join(root, "bin", "eqa.js"), "score", ...args, "--concurrency", String(concurrency)], {
    env: { ...process.env, OPENAI_API_KEY: "bench", EQAKIT_BENCH_RSS_FILE: rssFile },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exitCode = await new Promise<number | null>((r) => child.on("close", r));
  const wallSeconds = (performance.now() - started) / 1000;
  const peakRssMB = Number(readFileSync(rssFile, "utf8")) / 1e6;
  const figures = { label, concurrency, wallSeconds, peakRssMB, judgeCalls: judge.calls() - callsBefore, exitCode };
  console.log(`${label.padEnd(34)} c=${String(concurrency).padStart(2)}  ${wallSeconds.toFixed(2).padStart(7)} s  ${peakRssMB.toFixed(0).padStart(4)} MB peak  ${figures.judgeCalls} judge calls  exit ${exitCode}`);
  return figures;
}

export async function scoreBenchmark(options: { includeSequential: boolean }): Promise<{ ideal32Seconds: number; runs: ProcessFigures[] }> {
  const work = mkdtempSync(join(tmpdir(), "eqakit-bench-"));
  const questions = JSON.parse(readFileSync(benchmarkFile, "utf8")) as { question_id: string; answer: string }[];
  const predictions = join(work, "predictions.json");
  writeFileSync(predictions, JSON.stringify(questions.map((q) => ({ question_id: q.question_id, answer: `I think: ${q.answer}` }))));
  const judge = await startJudge();
  const ideal32Seconds = (questions.length * JUDGE_DELAY_MS) / 1000 / 32;
  console.log(`eqa score, ${questions.length} questions, judge answers after ${JUDGE_DELAY_MS} ms; ideal at c=32: ${ideal32Seconds.toFixed(2)} s`);
  const common = ["--predictions", predictions, "--benchmark", benchmarkFile, "--judge", "openai/gpt-4o", "--judge-base-url", judge.url];
  const cache = join(work, "cache.sqlite");
  const runs: ProcessFigures[] = [];
  try {
    runs.push(await timeScore("first run (empty cache)", [...common, "--cache", cache, "--out", join(work, "run-1")], 32, judge, work));
    runs.push(await timeScore("re-run answered from the cache", [...common, "--cache", cache, "--out", join(work, "run-2")], 32, judge, work));
    runs.push(await timeScore("first run, no cache", [...common, "--no-cache", "--out", join(work, "run-3")], 32, judge, work));
    if (options.includeSequential) {
      runs.push(await timeScore("one at a time, as the reference", [...common, "--no-cache", "--out", join(work, "run-4")], 1, judge, work));
    }
  } finally {
    judge.close();
  }
  return { ideal32Seconds, runs };
}
