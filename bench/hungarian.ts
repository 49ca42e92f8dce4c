/**
 * Hungarian matching of 200 × 200 costs (the structured judge's assignment step, far larger than
 * any answer needs): eqakit's `hungarian` against SciPy's `linear_sum_assignment` on the same
 * matrices in the same run, when python3 has NumPy and SciPy. Prints one JSON line.
 *
 *   node --import tsx bench/hungarian.ts [--size 200] [--matrices 5] [--repeats 5]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom } from "../src/core/index.js";
import { hungarian } from "../src/eval/index.js";
import { numberFlag as flag } from "./flags.js";

const size = flag("size", 200);
const matrices = flag("matrices", 5);
const repeats = flag("repeats", 5);

const random = seededRandom(2024);
const costs = Array.from({ length: matrices }, (_, m) => {
  const values = new Float64Array(size * size);
  // uniform costs, and one matrix of small integers (many ties)
  for (let i = 0; i < values.length; i++) values[i] = m === matrices - 1 ? Math.floor(random() * 10) : random();
  return values;
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

hungarian(costs[0]!, size, size); // warm up the JIT
const eqakitTotals: number[] = [];
const eqakitMs: number[] = [];
for (const cost of costs) {
  const times: number[] = [];
  let total = 0;
  for (let r = 0; r < repeats; r++) {
    const started = performance.now();
    total = hungarian(cost, size, size).total;
    times.push(performance.now() - started);
  }
  eqakitTotals.push(total);
  eqakitMs.push(median(times));
}

const PYTHON = `
import json, sys, time
import numpy as np
from scipy.optimize import linear_sum_assignment
size, repeats = int(sys.argv[2]), int(sys.argv[3])
raw = np.fromfile(sys.argv[1], dtype="<f8").reshape(-1, size, size)
out = []
for cost in raw:
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); r, c = linear_sum_assignment(cost); times.append((time.perf_counter() - t) * 1000)
    out.append({"total": float(cost[r, c].sum()), "ms": sorted(times)[len(times) // 2]})
import scipy
print(json.dumps({"scipy": scipy.__version__, "results": out}))
`;

let scipy: { version: string; ms: number[]; totalsAgree: boolean } | { skipped: string };
try {
  const dir = mkdtempSync(join(tmpdir(), "eqakit-bench-hungarian-"));
  const file = join(dir, "costs.f64");
  const all = new Float64Array(size * size * matrices);
  costs.forEach((c, i) => all.set(c, i * size * size));
  writeFileSync(file, new Uint8Array(all.buffer));
  const output = execFileSync("python3", ["-c", PYTHON, file, String(size), String(repeats)], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const parsed = JSON.parse(output.trim().split("\n").at(-1)!) as { scipy: string; results: { total: number; ms: number }[] };
  scipy = {
    version: parsed.scipy,
    ms: parsed.results.map((r) => Number(r.ms.toFixed(3))),
    totalsAgree: parsed.results.every((r, i) => Math.abs(r.total - eqakitTotals[i]!) <= 1e-9 * Math.max(1, Math.abs(r.total))),
  };
} catch (error) {
  scipy = { skipped: `python3 with NumPy and SciPy is not available (${error instanceof Error ? error.message.split("\n")[0] : String(error)})` };
}

console.log(JSON.stringify({ size, matrices, repeats, eqakitMs: eqakitMs.map((ms) => Number(ms.toFixed(3))), eqakitMedianMs: Number(median(eqakitMs).toFixed(3)), scipy }));
