/**
 * eqakit's benchmarks (`npm run bench`): figures are printed and written to
 * bench/out/results.json, never asserted. See BENCHMARKS.md for what they mean.
 * `npm run bench -- score reward` runs only the named ones; `--quick` shortens each.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { imagesBenchmark } from "./images.js";
import { memoryBenchmark } from "./memory.js";
import { rewardBenchmark } from "./reward.js";
import { scoreBenchmark } from "./score.js";

const quick = process.argv.includes("--quick");

/** Runs a benchmark script that prints its figures as one JSON line (its own process, so it is measured alone). */
function jsonScript(script: string, args: string[]): unknown {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const output = execFileSync(process.execPath, ["--import", "tsx", path, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const line = output.trim().split("\n").at(-1) ?? "";
  console.log(`${script}: ${line}`);
  return JSON.parse(line);
}

/** `eqa demo` into bench/out/demo (resumed if there), for the figures read from its runs. */
function demoRun(): string {
  const out = fileURLToPath(new URL("./out/demo", import.meta.url));
  const eqa = fileURLToPath(new URL("../bin/eqa.js", import.meta.url));
  execFileSync(process.execPath, [eqa, "demo", "--out", out], { stdio: ["ignore", "ignore", "inherit"] });
  return out;
}

/** `--video` and `--frames` of OpenEQA's HM3D demo video for bench/sim-tables.ts, when ../shared/data has it. */
function demoVideoArgs(): string[] {
  const video = fileURLToPath(new URL("../../shared/data/openeqa/open-eqa-hm3d-demo.mp4", import.meta.url));
  return existsSync(video) ? ["--video", video, "--frames", "46-86"] : [];
}

const benchmarks: Record<string, () => Promise<unknown>> = {
  score: () => scoreBenchmark({ includeSequential: !quick }),
  images: () => imagesBenchmark({ rounds: quick ? 1 : 3 }),
  reward: () => rewardBenchmark({ quick }),
  memory: () => memoryBenchmark({ quick }),
  "memory-reuse": async () => jsonScript("./memory-reuse.ts", quick ? ["--episodes", "2", "--frames", "10", "--questions", "8"] : []),
  answer: async () => jsonScript("./answer-frames.ts", quick ? ["--runs", "1"] : []),
  sim: async () => jsonScript("./sim.ts", quick ? ["--frames", "60"] : []),
  "sim-detect": async () => jsonScript("./sim-detect.ts", quick ? ["--seeds", "0-2", "--views", "3"] : []),
  "sim-memory": async () => jsonScript("./sim-memory.ts", quick ? ["--seeds", "0-1"] : []),
  "sim-memory-masks": async () => jsonScript("./sim-memory-masks.ts", quick ? ["--seeds", "1-3"] : []),
  "sim-tables": async () => jsonScript("./sim-tables.ts", [...(quick ? ["--seeds", "0-1"] : []), ...demoVideoArgs()]),
  explore: async () => jsonScript("./explore.ts", quick ? ["--seeds", "0"] : []),
  coverage: async () => jsonScript("./explore-coverage.ts", quick ? ["--seeds", "5-6"] : []),
  hungarian: async () => jsonScript("./hungarian.ts", quick ? ["--matrices", "2", "--repeats", "3"] : []),
  alfred: async () => jsonScript("./alfred.ts", quick ? ["--rounds", "1"] : []),
  generate: async () => jsonScript("./generate.ts", quick ? ["--per-trajectory", "2"] : []),
  "agent-protocol": async () => jsonScript("./agent-protocol.ts", quick ? ["--steps", "1000", "--warmup", "100"] : []),
  report: async () => jsonScript("./report.ts", quick ? ["--questions", "200", "--episodes", "20", "--rounds", "1"] : ["--width", "1296", "--height", "968", "--depth", "--rounds", "2"]),
  viewer: async () => jsonScript("./viewer.ts", quick ? ["--questions", "300", "--rounds", "2"] : []),
  "tag-demo": async () => jsonScript("./tag-demo.ts", ["--demo", demoRun()]),
  "published-rows": async () => jsonScript("./published-rows.ts", []),
  "la-eqa": async () => jsonScript("./la-eqa.ts", quick ? ["--rounds", "1"] : []),
  "openeqa-frames": async () => jsonScript("./openeqa-frames.ts", quick ? ["--quick"] : []),
};
const named = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const unknown = named.filter((n) => !(n in benchmarks));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${Object.keys(benchmarks).join(", ")}`);
  process.exit(2);
}
const results: Record<string, unknown> = {};
for (const name of named.length > 0 ? named : Object.keys(benchmarks)) results[name] = await benchmarks[name]!();
mkdirSync(new URL("./out/", import.meta.url), { recursive: true });
const file = new URL(named.length > 0 ? `./out/results-${named.join("-")}.json` : "./out/results.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nwrote ${file.pathname}`);
