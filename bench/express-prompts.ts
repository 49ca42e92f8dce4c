/**
 * Checks copies of EXPRESS-Bench's files (which eqakit may not ship) against the sums `eqa data
 * fetch express-bench` knows: the five prompt files by SHA-256, and the records file, when the
 * folder holds it whole, by its git blob id. Prints one JSON line; exits 1 when a file differs.
 *
 *   node --import tsx bench/express-prompts.ts [--dir ../shared/data/express-bench]
 *
 * The folder may hold the prompts under `prompt/` (as fetched) or `prompts/`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KNOWN_DATASETS, checkKnownFile } from "../src/data/index.js";

const at = process.argv.indexOf("--dir");
const dir = at >= 0 ? (process.argv[at + 1] as string) : join(import.meta.dirname, "..", "..", "shared", "data", "express-bench");
const results: Record<string, string> = {};
for (const file of Object.values(KNOWN_DATASETS["express-bench"]!.files)) {
  const path = [join(dir, file.name), join(dir, file.name.replace(/^prompt\//, "prompts/"))].find((p) => existsSync(p));
  if (!path) {
    results[file.name] = "absent";
    continue;
  }
  const check = checkKnownFile(file, readFileSync(path), {});
  results[file.name] = check.ok ? check.checked.join(", ") : check.problem;
}
const differs = Object.values(results).filter((r) => !r.endsWith(" ok") && r !== "absent").length;
console.log(JSON.stringify({ dir, files: results, differs }));
process.exitCode = differs > 0 ? 1 : 0;
