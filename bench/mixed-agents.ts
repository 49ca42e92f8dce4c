/**
 * The three built-in Mixed EQA agents on a set made by `eqa generate mixed`, run as a user runs
 * them (`eqa explore --episodes SET/episodes.json --agent NAME`, the CLI from the sources), each
 * into its own run folder (an existing one resumes). Prints accuracy per category, SPL and wasted
 * metres per agent, then the task's targets, each met or not:
 * - memory-only ≥ 70 % on past and ≤ 25 % on present;
 * - explore-only ≥ 60 % on present and ≤ 30 % on past;
 * - recall-explore ≥ 60 % on every category, the best overall, and a higher SPL than
 *   explore-only on present and past_present.
 *
 *   node --import tsx bench/mixed-agents.ts --set DIR [--out DIR] [--width 320 --height 240] [--max-steps 500]
 *
 * Prints a Markdown table and one JSON line of figures; exits 1 when a target is missed or a
 * category has no question.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { textFlag as flag } from "./flags.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const set = flag("set", "");
if (!set || !existsSync(join(set, "episodes.json"))) {
  console.error("give --set DIR, a folder made by eqa generate mixed (holding episodes.json)");
  process.exit(2);
}
const out = resolve(flag("out", join(set, "runs")));
const size = ["--width", flag("width", "320"), "--height", flag("height", "240"), "--max-steps", flag("max-steps", "500")];
const AGENTS = ["memory-only", "explore-only", "recall-explore"] as const;
const CATEGORIES = ["past", "present", "multi_past", "past_present"] as const;

interface Estimate {
  n: number;
  mean: number;
  stderr: number;
}
interface Figure {
  overall: Estimate | null;
  byCategory: Record<string, Estimate | null>;
}
interface Summary {
  counts: { episodes: number; failed: number };
  metrics: { accuracy: Figure; spl: Figure; wastedMetres: Figure };
}

const summaries = new Map<string, Summary>();
for (const agent of AGENTS) {
  const dir = join(out, agent);
  const started = performance.now();
  const ran = spawnSync(process.execPath, ["--import", "tsx", join(root, "src", "cli", "main.ts"), "explore", "--episodes", join(set, "episodes.json"), "--agent", agent, "--out", dir, ...size], { stdio: ["ignore", "ignore", "inherit"], cwd: root });
  if (!existsSync(join(dir, "summary.json"))) {
    console.error(`${agent}: eqa explore ended with code ${ran.status} and no summary`);
    process.exit(1);
  }
  summaries.set(agent, JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as Summary);
  console.error(`${agent}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

const acc = (agent: string, category?: string): number => {
  const f = summaries.get(agent)!.metrics.accuracy;
  return (category ? f.byCategory[category] : f.overall)?.mean ?? Number.NaN;
};
const spl = (agent: string, category: string): number => summaries.get(agent)!.metrics.spl.byCategory[category]?.mean ?? Number.NaN;
const cell = (e: Estimate | null | undefined, digits: number): string => (e ? `${e.mean.toFixed(digits)} ± ${e.stderr.toFixed(digits)}` : "–");

console.log(`| agent | ${CATEGORIES.map((c) => `accuracy ${c} %`).join(" | ")} | accuracy overall % | SPL present | SPL past_present | wasted m |`);
console.log(`|---|${CATEGORIES.map(() => "---|").join("")}---|---|---|---|`);
for (const agent of AGENTS) {
  const m = summaries.get(agent)!.metrics;
  console.log(`| ${agent} | ${CATEGORIES.map((c) => cell(m.accuracy.byCategory[c], 1)).join(" | ")} | ${cell(m.accuracy.overall, 1)} | ${cell(m.spl.byCategory.present, 3)} | ${cell(m.spl.byCategory.past_present, 3)} | ${cell(m.wastedMetres.overall, 2)} |`);
}

/** A target over figures that exist: null when a category has no question in the set. */
const check = (values: number[], holds: boolean): boolean | null => (values.some((v) => Number.isNaN(v)) ? null : holds);
const targets: [string, boolean | null][] = [
  ["memory-only ≥ 70 % on past", check([acc("memory-only", "past")], acc("memory-only", "past") >= 70)],
  ["memory-only ≤ 25 % on present", check([acc("memory-only", "present")], acc("memory-only", "present") <= 25)],
  ["explore-only ≥ 60 % on present", check([acc("explore-only", "present")], acc("explore-only", "present") >= 60)],
  ["explore-only ≤ 30 % on past", check([acc("explore-only", "past")], acc("explore-only", "past") <= 30)],
  ...CATEGORIES.map((c): [string, boolean | null] => [`recall-explore ≥ 60 % on ${c}`, check([acc("recall-explore", c)], acc("recall-explore", c) >= 60)]),
  ["recall-explore best overall", check(AGENTS.map((a) => acc(a)), AGENTS.every((a) => a === "recall-explore" || acc("recall-explore") > acc(a)))],
  ["recall-explore SPL > explore-only on present", check([spl("recall-explore", "present"), spl("explore-only", "present")], spl("recall-explore", "present") > spl("explore-only", "present"))],
  ["recall-explore SPL > explore-only on past_present", check([spl("recall-explore", "past_present"), spl("explore-only", "past_present")], spl("recall-explore", "past_present") > spl("explore-only", "past_present"))],
];
console.log("");
for (const [name, met] of targets) console.log(`${met === null ? "no question" : met ? "met   " : "MISSED"} ${name}`);
console.log(JSON.stringify({ set: resolve(set), agents: Object.fromEntries([...summaries].map(([a, s]) => [a, { episodes: s.counts.episodes, failed: s.counts.failed, metrics: s.metrics }])), targets: Object.fromEntries(targets) }));
process.exitCode = targets.every(([, met]) => met === true) ? 0 : 1;
