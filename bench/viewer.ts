/**
 * `eqa view` on a run at OpenEQA's size: the 1,636 questions of open-eqa-v0 answered by the
 * blind agent and scored by LLM-Match (`eqa run`, against a loopback server speaking OpenAI's
 * protocol, so the run's files are the real ones), then served by the viewer and driven in
 * headless Chromium. How long the viewer takes to answer (the run's list cold and warm, a
 * question's transcript, a rating and the reload it causes) and how long the page takes to show
 * the list, sort it and filter it. Prints one JSON line.
 *
 *   node --import tsx bench/viewer.ts [--questions 1636] [--rounds 5]
 */
import { createServer } from "node:http";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startViewer } from "../src/report/index.js";
import { launchBrowser } from "../test/helpers/browser.js";
import { numberFlag as flag } from "./flags.js";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");

const count = flag("questions", 1636);
const rounds = flag("rounds", 5);

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (start: number): number => Math.round((performance.now() - start) * 10) / 10;

const home = mkdtempSync(join(tmpdir(), "eqakit-bench-viewer-"));
const benchmark = join(home, "benchmark.json");
const all = JSON.parse(readFileSync(join(root, "test", "fixtures", "openeqa", "open-eqa-v0.json"), "utf8")) as { question_id: string }[];
writeFileSync(benchmark, JSON.stringify(all.slice(0, count)));

// the model: a blind answer, and a mark from the question's position
let calls = 0;
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (d: Buffer) => (body += d.toString()));
  req.on("end", () => {
    calls++;
    const text = body.includes("Your mark") ? `Your mark: ${1 + (calls % 5)}` : "A: a wooden chair by the window";
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ id: `c${calls}`, object: "chat.completion", created: 0, model: "gpt-4o", choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text } }], usage: { prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 } }));
  });
});
await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const run = join(home, "run");
let started = performance.now();
// its own process, and this one free to serve its model calls
const child = spawn(process.execPath, ["--import", "tsx", join(root, "src", "cli", "main.ts"), "run", "--agent", "blind", "--model", "openai/gpt-4o", "--model-base-url", base, "--judge", "openai/gpt-4o", "--judge-base-url", base, "--benchmark", benchmark, "--no-cache", "--concurrency", "16", "--out", run], {
  env: { ...process.env, OPENAI_API_KEY: "sk-bench", XDG_CACHE_HOME: join(home, "cache") },
  stdio: ["ignore", "ignore", "pipe"],
});
let stderr = "";
child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
const code = await new Promise<number | null>((done) => child.on("close", done));
if (code !== 0) throw new Error(`eqa run failed: ${stderr}`);
const runSeconds = Math.round(ms(started)) / 1000;
server.close();

const viewer = await startViewer({ runDirs: [run], port: 0 });
const get = async (path: string): Promise<{ ms: number; bytes: number; body: string }> => {
  const t = performance.now();
  const r = await fetch(`${viewer.url}${path}`);
  const body = await r.text();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${body}`);
  return { ms: ms(t), bytes: Buffer.byteLength(body), body };
};

const cold = await get("/api/runs/0");
const warm: number[] = [];
for (let i = 0; i < rounds; i++) warm.push((await get("/api/runs/0")).ms);
const ids = (JSON.parse(cold.body) as { questions: { questionId: string }[] }).questions.map((q) => q.questionId);
const detail: number[] = [];
for (let i = 0; i < rounds * 10; i++) detail.push((await get(`/api/runs/0/questions/${ids[Math.floor((i * ids.length) / (rounds * 10))]}`)).ms);
const rating: number[] = [];
const reload: number[] = [];
for (let i = 0; i < rounds; i++) {
  const t = performance.now();
  const r = await fetch(`${viewer.url}/api/runs/0/ratings`, { method: "POST", headers: { "content-type": "application/json", "x-eqa-view": "rate" }, body: JSON.stringify({ questionId: ids[i], score: 4, reviewer: "bench" }) });
  if (!r.ok) throw new Error(`rating: ${r.status}`);
  rating.push(ms(t));
  reload.push((await get("/api/runs/0")).ms); // the run is read again: its ratings changed
}

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1366, height: 820 } });
const shown: number[] = [];
const sorted: number[] = [];
const filtered: number[] = [];
const sortParts: [number, number][] = [];
for (let i = 0; i < rounds; i++) {
  await page.goto(`${viewer.url}/#/`);
  await page.waitForSelector("#runs tbody tr");
  started = performance.now();
  await page.goto(`${viewer.url}/#/run/0`);
  // the list puts 250 rows in the page, and the rest a click (or j past the last) away
  await page.waitForFunction((n) => document.querySelectorAll("#questions tbody tr").length === n, Math.min(250, ids.length));
  shown.push(ms(started));
  // in the page: the script's time, then the layout it causes (forced at once)
  const timed = (action: "sort" | "filter"): Promise<[number, number]> =>
    page.evaluate((what) => {
      const t0 = performance.now();
      if (what === "sort") [...document.querySelectorAll<HTMLElement>("#questions th")].find((th) => th.textContent === "σ")!.click();
      else {
        const search = document.getElementById("f-search") as HTMLInputElement;
        search.value = "kitchen";
        search.dispatchEvent(new Event("input"));
      }
      const t1 = performance.now();
      void document.body.offsetHeight;
      return [t1 - t0, performance.now() - t1] as [number, number];
    }, action);
  sorted.push(...[await timed("sort")].map(([a, b]) => a + b));
  sortParts.push(await timed("sort"));
  filtered.push(...[await timed("filter")].map(([a, b]) => a + b));
  await page.fill("#f-search", "");
}
await browser.close();
await viewer.close();
const tracesBytes = readFileSync(join(run, "traces.jsonl")).byteLength;
rmSync(home, { recursive: true, force: true });

console.log(
  JSON.stringify({
    questions: ids.length,
    runSeconds,
    tracesBytes,
    api: {
      runListColdMs: cold.ms,
      runListWarmMs: median(warm),
      runListBytes: cold.bytes,
      questionDetailMedianMs: median(detail),
      ratingMedianMs: median(rating),
      runListAfterRatingMedianMs: median(reload),
    },
    browser: {
      listShownMedianMs: median(shown),
      sortMedianMs: Math.round(median(sorted)),
      sortScriptMedianMs: Math.round(median(sortParts.map((p) => p[0]))),
      sortLayoutMedianMs: Math.round(median(sortParts.map((p) => p[1]))),
      filterMedianMs: Math.round(median(filtered)),
    },
  }),
);
