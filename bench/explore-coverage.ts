/**
 * How much of each built-in home Fine-EQA sees when its VLM is never sure. `eqa explore --agent
 * fine-eqa` runs, as a user runs it (the CLI from the sources, 320×240 observations, the step
 * budget of 3·√area), against a loopback OpenAI-compatible server that answers "no" to
 * everything: no relevant region, never a yes to the stop check. Each episode should end by its
 * budget, not for want of a frontier, having seen at least 90 % of the floor reachable from its
 * start (the record's `coverage`).
 *
 *   node --import tsx bench/explore-coverage.ts [--seeds 0-9] [--width 320 --height 240]
 *
 * The episodes: those of examples/explore-episodes.json, then one per home of --seeds (the home's
 * own start, the first example's question). Run by `npm run bench -- coverage` (bench/run.ts), or
 * alone. Prints one JSON line of figures.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { textFlag as flag } from "./flags.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const [from, to] = flag("seeds", "0-9").split("-").map(Number) as [number, number | undefined];
const seeds = Array.from({ length: (to ?? from) - from + 1 }, (_, i) => from + i);
const width = flag("width", "320");
const height = flag("height", "240");

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "never-sure", object: "chat.completion", created: 0, model: "never-sure", choices: [{ index: 0, message: { role: "assistant", content: "no" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

interface Row {
  set: string;
  questionId: string;
  scene: string;
  stop: string | null;
  steps: number;
  budget: number;
  coverage: number | null;
  /** The explorer's own time per step, ms (without the environment's and the model's calls). */
  explorerMsPerStep: number | null;
}

const scratch = mkdtempSync(join(tmpdir(), "eqakit-bench-coverage-"));
const rows: Row[] = [];
try {
  const examples = join(root, "examples", "explore-episodes.json");
  const question = (JSON.parse(readFileSync(examples, "utf8")) as { question: string }[])[0]?.question ?? "What is in this home?";
  const homes = join(scratch, "homes.json");
  writeFileSync(homes, JSON.stringify(seeds.map((seed) => ({ question_id: `home${seed}`, question, scene: `home-${seed}` }))));
  for (const [set, file] of [["examples", examples], ["homes", homes]] as const) {
    const out = join(scratch, set);
    // the child talks to this process's server: wait for it without blocking the event loop
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "src", "cli", "main.ts"), "explore", "--episodes", file, "--agent", "fine-eqa", "--model", "openai/never-sure", "--model-base-url", url, "--out", out, "--width", width, "--height", height, "--no-cache"],
      { cwd: root, env: { ...process.env, OPENAI_API_KEY: "sk-bench", NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    if (code !== 0) throw new Error(`eqa explore exited ${code}: ${stderr}`);
    for (const line of readFileSync(join(out, "episodes.jsonl"), "utf8").split("\n").filter(Boolean)) {
      const r = JSON.parse(line) as { questionId: string; scene: string; stop: string | null; coverage?: number | null; explorerMsPerStep: number | null; details: { explorationSteps?: number; budget?: number } };
      rows.push({ set, questionId: r.questionId, scene: r.scene, stop: r.stop, steps: r.details.explorationSteps ?? 0, budget: r.details.budget ?? 0, coverage: r.coverage ?? null, explorerMsPerStep: r.explorerMsPerStep === null ? null : Number(r.explorerMsPerStep.toFixed(2)) });
    }
  }
} finally {
  server.close();
  rmSync(scratch, { recursive: true, force: true });
}

const covered = rows.flatMap((r) => (r.coverage !== null ? [r.coverage] : []));
console.log(
  JSON.stringify({
    bench: "explore-coverage",
    width: Number(width),
    height: Number(height),
    episodes: rows.length,
    endedByBudget: rows.filter((r) => r.stop === "budget").length,
    leastCoverage: covered.length > 0 ? Number(Math.min(...covered).toFixed(4)) : null,
    meanCoverage: covered.length > 0 ? Number((covered.reduce((a, b) => a + b, 0) / covered.length).toFixed(4)) : null,
    perEpisode: rows.map((r) => ({ ...r, coverage: r.coverage === null ? null : Number(r.coverage.toFixed(4)) })),
  }),
);
