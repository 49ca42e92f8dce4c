/**
 * eqakit's benchmarks (`npm run bench`): figures are printed and written to
 * bench/out/results.json, never asserted. See BENCHMARKS.md for what they mean.
 */
import { imagesBenchmark } from "./images.js";
import { scoreBenchmark } from "./score.js";
import { rewardBenchmark } from "./reward.js";
import { memoryBenchmark } from "./memory.js";

const quick = process.argv.includes("--quick");
const results = { score: await scoreBenchmark({ includeSequential: !quick }), images: await imagesBenchmark({ rounds: quick ? 1 : 3 }), reward: await rewardBenchmark({ quick }), memory: await memoryBenchmark({ quick }) };
const { mkdirSync, writeFileSync } = await import("node:fs");
mkdirSync(new URL("./out/", import.meta.url), { recursive: true });
writeFileSync(new URL("./out/results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.log("\nwrote bench/out/results.json");
