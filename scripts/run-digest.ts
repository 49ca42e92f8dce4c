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
 * "2026-12-02 13:22:46 UTC") and durations ("0.6 s") in any text; in JSON files the values of keys
 * naming a time or a duration (`createdAt`, `wallTimeMs`, `latencyMs`); in messages the progress
 * lines a slow machine prints more of (the last one of each bar is kept). Model replies depend on
 * the request alone, and model calls go one at a time, so records keep one order.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, relative, resolve } from "node:path";
import { cliEnv } from "../test/helpers/cli.js";
import { writeRgbEpisode } from "../test/helpers/frames.js";
import { openAiReply, startModelServer, type ReceivedRequest, type ScriptedReply } from "../test/helpers/model-server.js";

/** One command run: its arguments (given the temporary folder and the model server's /v1 URL) and the folder it writes, relative to the temporary folder. */
interface Scenario {
  name: string;
  args: (root: string, model: string) => string[];
  dir?: string;
}

interface ScenarioDigest {
  args: string[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
  files: Record<string, string>;
}

const DEMO = (root: string): string[] => ["demo", "--out", join(root, "demo"), "--seeds", "2", "--per-trajectory", "4"];
const TAG = (root: string, out: string): string[] => ["generate", "tag", "--source", `sim:${join(root, "tag-source")}`, "--out", join(root, out), "--per-trajectory", "6", "--seed", "4"];
const RM_BUILD = (root: string): string[] => ["rm", "build", "--benchmark", join(root, "open-eqa-v0.json"), "--subset", join(root, "subset.json"), "--frames", join(root, "frames")];
const MODEL = (name: string, role: string, url: string): string[] => [`--${role}`, `openai/${name}`, `--${role}-base-url`, url, "--no-cache", "--concurrency", "1"];

const SCENARIOS: Scenario[] = [
  { name: "demo --help", args: () => ["demo", "--help"] },
  { name: "generate tag --help", args: () => ["generate", "tag", "--help"] },
  { name: "rm build --help", args: () => ["rm", "build", "--help"] },
  { name: "demo offline", args: DEMO, dir: "demo" },
  { name: "demo again (resumes)", args: DEMO, dir: "demo" },
  { name: "demo --agent", args: (root) => [...DEMO(root), "--agent", join(root, "counter.mjs")], dir: "demo" },
  { name: "demo --model", args: (root, url) => [...DEMO(root), ...MODEL("test-vlm", "model", url), "--agents", "blind,vlm"], dir: "demo" },
  { name: "generate tag sim", args: (root) => TAG(root, "tag"), dir: "tag" },
  { name: "generate tag --renderer", args: (root, url) => [...TAG(root, "tag-rewritten"), ...MODEL("gemma-2-27b-it", "renderer", url)], dir: "tag-rewritten" },
  { name: "generate tag alfred", args: (root) => ["generate", "tag", "--source", `alfred:${join(root, "alfred")}`, "--out", join(root, "tag-alfred"), "--per-trajectory", "4"], dir: "tag-alfred" },
  { name: "generate tag bad source", args: (root) => ["generate", "tag", "--source", "habitat:/tmp", "--out", join(root, "tag-bad")] },
  { name: "rm build", args: (root, url) => [...RM_BUILD(root), ...MODEL("resp", "responder", url), ...MODEL("scorer", "scorer", url), "--responses", "2", "--out", join(root, "rm-build")], dir: "rm-build" },
  { name: "rm build without --frames", args: () => ["rm", "build", "--responder", "openai/resp", "--scorer", "openai/scorer"] },
  { name: "rm build without --scorer", args: (root) => [...RM_BUILD(root), "--responder", "openai/resp"] },
];

/**
 * The inputs the scenarios read, in the temporary folder (paths are part of some hashes): the
 * fixtures' OpenEQA questions with frames and a subset for rm build, their ALFRED trajectories, an
 * agent of the user's own.
 */
async function writeInputs(root: string, checkout: string): Promise<void> {
  cpSync(join(checkout, "test/fixtures/alfred/valid_seen"), join(root, "alfred"), { recursive: true });
  cpSync(join(checkout, "test/fixtures/openeqa/open-eqa-v0.json"), join(root, "open-eqa-v0.json"));
  const questions = JSON.parse(readFileSync(join(root, "open-eqa-v0.json"), "utf8")) as { question_id: string; episode_history: string }[];
  const scannet = questions.filter((q) => q.episode_history.startsWith("scannet"));
  const chosen = [questions.find((q) => q.episode_history.startsWith("hm3d"))!, scannet[0]!, scannet.find((q) => q.episode_history !== scannet[0]!.episode_history)!];
  for (const q of chosen) await writeRgbEpisode(join(root, "frames", q.episode_history), 6, 48, 32);
  writeFileSync(join(root, "subset.json"), JSON.stringify(chosen.map((q) => q.question_id)));
  writeFileSync(
    join(root, "counter.mjs"),
    `export function initialize() { return { name: "counter", version: "1", supports: ["tag"] }; }\nexport function answer(params) { return { answer: JSON.stringify([{ predicate: "", objects: [], value: params.tag.actions.length }]) }; }\n`,
  );
}

/** Before the generate tag scenarios: the demo's recording and a trajectory file that is not JSON. */
function writeTagSource(root: string): void {
  if (existsSync(join(root, "tag-source"))) return;
  cpSync(join(root, "demo", "recordings"), join(root, "tag-source"), { recursive: true });
  mkdirSync(join(root, "tag-source", "broken"));
  writeFileSync(join(root, "tag-source", "broken", "trajectory.json"), "{ not json");
}

/** Every request's text, and the reply each command's tests script: the reward model's responder and scorer, the TAG rewriter, the demo's judge and agents. */
function reply(request: ReceivedRequest): ScriptedReply {
  const messages = (request.body as { messages: { content: string | { type: string; text?: string }[] }[] }).messages;
  const texts = messages.map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")));
  const all = texts.join("\n");
  if (all.includes("Role: You are an intelligent Embodied Question Answering")) return openAiReply("<reasoning_trace>\n<think>\nI scan the room.\n</think>\n</reasoning_trace>\n<predicted_answer>\nOn the table.\n</predicted_answer>");
  if (all.includes("Answer Ground Truth: ")) return openAiReply("<critique>\nPlausible.\n</critique>\n<score>\n6\n</score>");
  if (all.includes("Structured question: ")) {
    const last = texts[0]!.split("Structured question: ").at(-1)!;
    return openAiReply(JSON.stringify({ question: `So, ${/^Question: (.*)$/m.exec(last)?.[1]}`, answer: /^Answer: (.*)$/m.exec(last)?.[1] }));
  }
  if (all.includes("You read an answer to a question about a home")) return openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "mug", caption: "red", position: null }], value: 1 }]));
  return openAiReply("A: There is one red mug.");
}

const TIME_KEY = /(At|Ms|Seconds|[Dd]uration|[Ll]atency)$/;
const TIMES = /\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?( ?UTC|Z)/g;
const DURATIONS = /\b\d+(\.\d+)? s\b/g;

function maskText(text: string, places: readonly [string, string][]): string {
  let masked = text;
  for (const [place, name] of places) masked = masked.split(place).join(name);
  return masked.replace(TIMES, "<time>").replace(DURATIONS, "<n> s");
}

function maskJson(value: unknown, places: readonly [string, string][]): unknown {
  if (typeof value === "string") return maskText(value, places);
  if (Array.isArray(value)) return value.map((v) => maskJson(v, places));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, TIME_KEY.test(k) ? "<masked>" : maskJson(v, places)]));
}

/** A file's sha256 after masking: JSON and JSONL by value, other text by its text, the rest as bytes. */
function fileDigest(path: string, places: readonly [string, string][]): string {
  const bytes = readFileSync(path);
  const ext = extname(path);
  let content: string | Buffer = bytes;
  if (ext === ".json") content = JSON.stringify(maskJson(JSON.parse(bytes.toString("utf8")), places));
  else if (ext === ".jsonl") content = bytes.toString("utf8").split("\n").map((line) => (line.trim() === "" ? line : JSON.stringify(maskJson(JSON.parse(line), places)))).join("\n");
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

/** The differences between two digests, one line each. */
function compare(before: Record<string, ScenarioDigest>, after: Record<string, ScenarioDigest>): string[] {
  const lines: string[] = [];
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[name], after[name]];
    if (!b || !a) {
      lines.push(`${name}: only ${b ? "before" : "after"}`);
      continue;
    }
    if (b.exitCode !== a.exitCode) lines.push(`${name}: exit ${b.exitCode} before, ${a.exitCode} after`);
    for (const stream of ["stdout", "stderr"] as const) if (b[stream] !== a[stream]) lines.push(`${name}: ${stream} differs\n--- before\n${b[stream]}\n--- after\n${a[stream]}`);
    for (const file of new Set([...Object.keys(b.files), ...Object.keys(a.files)])) {
      if (b.files[file] !== a.files[file]) lines.push(`${name}: ${file} ${!b.files[file] ? "added" : !a.files[file] ? "removed" : "differs"}`);
    }
  }
  return lines;
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
  const differences = compare(before, digests);
  console.log(differences.length === 0 ? `the same as ${process.argv[compareAt + 1]}: exit codes, messages and files` : differences.join("\n"));
  process.exitCode = differences.length === 0 ? 0 : 1;
}
