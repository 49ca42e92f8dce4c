// Preloaded into a benchmarked process: writes its peak resident memory (bytes) to the
// file named by EQAKIT_BENCH_RSS_FILE when it exits.
import { writeFileSync } from "node:fs";

const target = process.env.EQAKIT_BENCH_RSS_FILE;
if (target) {
  process.on("exit", () => writeFileSync(target, String(process.resourceUsage().maxRSS * 1024)));
}
