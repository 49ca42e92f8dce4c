/**
 * Runs `eqa` commands of a checkout on fixed inputs, offline and against a loopback model server,
 * and writes what they did: each command's exit code, stdout and stderr, and the sha256 of every
 * file in its run folder (paths relative to the folder). Run it on a checkout before a change
 * that must not change behaviour and again after, then compare:
 *
 *   node --import tsx scripts/run-digest.ts CHECKOUT OUT.json [--compare BEFORE.json]
 *
 * With --compare it exits 1 when a command's exit code, messages or files differ from BEFORE.json.
 * The commands run in one temporary folder, the same for every checkout (paths are part of some
 * keys and hashes), left there for a look. What differs from run to run is masked first: that
 * folder, the checkout's path and the server's address, times ("2026-12-02T13:22:46.975Z",
 * "2026-12-02 13:22:46 UTC"), durations ("0.6 s", "20.14 ms") and default run folders' stamps
 * ("runs/score-20261202-173805") in any text; in JSON files the values of keys naming a time or a
 * duration (`createdAt`, `wallTimeMs`, `seconds`, `explorerMsPerStep`); in JSONL files the order
 * of the records (items worked on side by side append in the order their timing gives), and in
 * JSON the order of a `calls` list (a trace lists calls made side by side as they came back); in
 * messages the progress lines a slow machine prints more of (the last one of each bar is kept).
 * Model replies depend on the request alone.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, relative, resolve } from "node:path";
import { cliEnv } from "../test/helpers/cli.js";
import { startModelServer } from "../test/helpers/model-server.js";
import { reply, SCENARIOS, writeInputs, writeTagSource } from "./run-digest-scenarios.js";

interface ScenarioDigest {
  args: string[];
  /** The checkout has not the command the scenario needs: nothing ran. */
  absent?: true;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  files: Record<string, string>;
}

// `finishedAt`, `wallTimeMs`, `seconds`, `explorerMsPerStep`, `latencyMs`
const TIME_KEY = /(At|Ms|Seconds|[Dd]uration|[Ll]atency)$|^seconds$|Ms[A-Z]/;
const TIMES = /\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?( ?UTC|Z)/g;
const DURATIONS = /\b\d+(\.\d+)? (m?s)\b/g;
/** The date and time in a default run folder's name (`runs/score-20261202-173805`). */
const RUN_STAMPS = /-\d{8}-\d{6}\b/g;

function maskText(text: string, places: readonly [string, string][]): string {
  let masked = text;
  for (const [place, name] of places) masked = masked.split(place).join(name);
  return masked.replace(TIMES, "<time>").replace(DURATIONS, "<n> $2").replace(RUN_STAMPS, "-<stamp>");
}

function maskJson(value: unknown, places: readonly [string, string][], key = ""): unknown {
  if (typeof value === "string") return maskText(value, places);
  if (Array.isArray(value)) {
    const masked = value.map((v) => maskJson(v, places));
    // a trace's model calls, made side by side, are listed in the order their replies came
    return key === "calls" ? masked.map((v) => JSON.stringify(v)).sort().map((v) => JSON.parse(v) as unknown) : masked;
  }
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, TIME_KEY.test(k) ? "<masked>" : maskJson(v, places, k)]));
}

/** A file's sha256 after masking: JSON and JSONL by value, other text by its text, the rest as bytes. */
function fileDigest(path: string, places: readonly [string, string][]): string {
  const bytes = readFileSync(path);
  const ext = extname(path);
  let content: string | Buffer = bytes;
  if (ext === ".json") content = JSON.stringify(maskJson(JSON.parse(bytes.toString("utf8")), places));
  // appended records by value, in any order: items worked on side by side end in the order of their timing
  else if (ext === ".jsonl") content = bytes.toString("utf8").split("\n").filter((line) => line.trim() !== "").map((line) => JSON.stringify(maskJson(JSON.parse(line), places))).sort().join("\n");
  else if ([".html", ".csv", ".txt", ".md", ".mjs"].includes(ext)) content = maskText(bytes.toString("utf8"), places);
  return createHash("sha256").update(content).digest("hex");
}

function folderDigests(dir: string, places: readonly [string, string][]): Record<string, string> {
  const files: Record<string, string> = {};
  const visit = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) visit(path);
      else files[relative(dir, path)] = fileDigest(path, places);
    }
  };
  if (existsSync(dir)) visit(dir);
  return files;
}

/** Messages masked as text, and the progress lines of a bar but its last. */
function maskMessages(text: string, places: readonly [string, string][]): string {
  const lines = maskText(text, places).split("\n");
  // a progress line ("building: 3/6 responses") is kept when the next line is not the same bar's
  const bar = (line: string): string | undefined => (/^[a-z][\w -]*: \d+\/\d+/.test(line) ? line.replace(/\d+\/\d+/, "") : undefined);
  return lines.filter((line, i) => bar(line) === undefined || bar(line) !== bar(lines[i + 1] ?? "")).join("\n");
}

function runEqa(checkout: string, args: string[], root: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), join(checkout, "src/cli/main.ts"), ...args], { cwd: root, env: cliEnv(root, { OPENAI_API_KEY: "sk-test" }), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.on("close", (code) => done({ code, stdout, stderr })));
}

async function digestCheckout(checkout: string): Promise<Record<string, ScenarioDigest>> {
  // one folder for every checkout, as paths are part of some keys and hashes (an agent's path, a source's)
  const root = join(tmpdir(), "eqakit-run-digest");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root);
  const server = await startModelServer(reply);
  const places: [string, string][] = [[root, "<root>"], [checkout, "<checkout>"], [server.url, "<model>"]];
  const digests: Record<string, ScenarioDigest> = {};
  try {
    await writeInputs(root, checkout);
    for (const scenario of SCENARIOS) {
      const args = scenario.args(root, `${server.url}/v1`);
      if (scenario.needs && !scenario.needs.shows.test((await runEqa(checkout, [...scenario.needs.help, "--help"], root)).stdout)) {
        process.stderr.write(`${scenario.name}: absent (eqa ${scenario.needs.help.join(" ")} --help shows no ${scenario.needs.shows.source})\n`);
        digests[scenario.name] = { args: args.map((a) => maskText(a, places)), absent: true, exitCode: null, stdout: "", stderr: "", files: {} };
        continue;
      }
      if (args.some((a) => a.includes("tag-source"))) writeTagSource(root);
      const result = await runEqa(checkout, args, root);
      process.stderr.write(`${scenario.name}: exit ${result.code}\n`);
      const files = scenario.dir ? folderDigests(join(root, scenario.dir), places) : {};
      digests[scenario.name] = { args: args.map((a) => maskText(a, places)), exitCode: result.code, stdout: maskMessages(result.stdout, places), stderr: maskMessages(result.stderr, places), files };
    }
  } finally {
    await server.close();
  }
  return digests;
}

/** The differences between two digests, one line each; a command absent from a checkout is a note, not a difference. */
function compare(before: Record<string, ScenarioDigest>, after: Record<string, ScenarioDigest>): { differences: string[]; notes: string[]; files: number; equal: number } {
  const differences: string[] = [];
  const notes: string[] = [];
  let [files, equal] = [0, 0];
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[name], after[name]];
    if (!b || !a || b.absent || a.absent) {
      notes.push(`${name}: ${!b || b.absent ? "absent before" : "absent after"}`);
      continue;
    }
    if (b.exitCode !== a.exitCode) differences.push(`${name}: exit ${b.exitCode} before, ${a.exitCode} after`);
    for (const stream of ["stdout", "stderr"] as const) if (b[stream] !== a[stream]) differences.push(`${name}: ${stream} differs\n--- before\n${b[stream]}\n--- after\n${a[stream]}`);
    for (const file of new Set([...Object.keys(b.files), ...Object.keys(a.files)])) {
      files++;
      if (b.files[file] === a.files[file]) equal++;
      else differences.push(`${name}: ${file} ${!b.files[file] ? "added" : !a.files[file] ? "removed" : "differs"}`);
    }
  }
  return { differences, notes, files, equal };
}

const [checkoutArg, outArg] = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && all[i - 1] !== "--compare");
const compareAt = process.argv.indexOf("--compare");
if (!checkoutArg || !outArg) throw new Error("usage: node --import tsx scripts/run-digest.ts CHECKOUT OUT.json [--compare BEFORE.json]");
const digests = await digestCheckout(resolve(checkoutArg));
writeFileSync(outArg, `${JSON.stringify(digests, null, 1)}\n`);
const fileCount = Object.values(digests).reduce((n, d) => n + Object.keys(d.files).length, 0);
console.log(`wrote ${outArg}: ${Object.keys(digests).length} commands, ${fileCount} files (the run folders stay in ${join(tmpdir(), "eqakit-run-digest")})`);
if (compareAt >= 0) {
  const before = JSON.parse(readFileSync(process.argv[compareAt + 1]!, "utf8")) as Record<string, ScenarioDigest>;
  const { differences, notes, files, equal } = compare(before, digests);
  console.log([...notes, ...differences].join("\n"));
  console.log(`${files} files compared: ${equal} equal, ${files - equal} different; ${differences.length === 0 ? `the same as ${process.argv[compareAt + 1]}: exit codes, messages and files` : `${differences.length} differences`}`);
  process.exitCode = differences.length === 0 ? 0 : 1;
}
