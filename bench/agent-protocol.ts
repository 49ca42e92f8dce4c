/**
 * The agent protocol's own cost per `step` (target: under 1 ms), without the agent's work. eqakit
 * sends an active agent the observation of a 320×240 episode (frame paths, pose, state, camera,
 * last action, budget) and takes its decision, through the same code `eqa explore` runs
 * (ExternalActiveAgent, its session pool, JSON-RPC over the process's stdio, the decision's
 * validation), for three agents whose own work is next to nothing:
 *
 * - `node`: a process that answers every step with turn_left as soon as it has read the line
 *   (its JSON parse and write are the only work on its side);
 * - `python`: the Python client (clients/python/eqakit_agent.py) with a `step` that returns
 *   turn_left;
 * - `module`: a JavaScript module in eqakit's process (no serialization, no pipe).
 *
 * For each: the round trip per step (median, p95, p99 of `steps` steps after `warmup`), and
 * eqakit's own CPU time per step (its process's user + system time over the steps, divided by
 * their number: what eqakit spends, whatever the agent does). The environment's work (rendering,
 * writing the frame) is not part of the protocol and is left out.
 *
 *   node --import tsx bench/agent-protocol.ts [--steps 5000] [--warmup 500]
 *
 * Run by `npm run bench -- agent-protocol` (bench/run.ts), or alone. Prints one JSON line of figures.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ACTIVE_ACTIONS, ExternalActiveAgent, type AgentActiveObservation, type ExternalAgentSpec } from "../src/agents/index.js";
import { textFlag as flag } from "./flags.js";

const steps = Number(flag("steps", "5000"));
const warmup = Number(flag("warmup", "500"));
const dir = mkdtempSync(join(tmpdir(), "eqakit-bench-agent-"));
const client = fileURLToPath(new URL("../clients/python", import.meta.url));

const nodeAgent = join(dir, "echo.mjs");
writeFileSync(
  nodeAgent,
  `import { createInterface } from "node:readline";
const reply = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") reply(m.id, { name: "echo", version: "1", supports: ["active"] });
  else if (m.method === "shutdown") { reply(m.id, null); process.exit(0); }
  else reply(m.id, { action: "turn_left" });
});
`,
);
const pythonAgent = join(dir, "echo.py");
writeFileSync(
  pythonAgent,
  `import sys
sys.path.insert(0, ${JSON.stringify(client)})
from eqakit_agent import Agent, serve

class Echo(Agent):
    name = "echo"
    supports = ["active"]
    def step(self, observation):
        return "turn_left"

serve(Echo())
`,
);
const moduleAgent = join(dir, "echo-module.mjs");
writeFileSync(moduleAgent, `export default { initialize: () => ({ name: "echo", version: "1", supports: ["active"] }), step: () => ({ action: "turn_left" }) };\n`);

const frames = join(dir, "frames", "episode");
/** An observation of the size eqa explore sends at 320×240. */
function observation(step: number): AgentActiveObservation {
  const pad = String(step).padStart(5, "0");
  return {
    step,
    frame: { index: step, path: join(frames, `${pad}-rgb.png`), depthPath: join(frames, `${pad}-depth.png`), masksPath: join(frames, `${pad}-instance.png`) },
    pose: [0.8660254037844387, 0, 0.49999999999999994, 1.2345678901234, 0, 1, 0, 1.5, -0.49999999999999994, 0, 0.8660254037844387, -3.4567890123456, 0, 0, 0, 1],
    state: { position: [1.2345678901234, 0, -3.4567890123456], yaw: 0.5235987755982988, pitch: 0 },
    camera: { width: 320, height: 240, fx: 160, fy: 160, cx: 160, cy: 120 },
    lastAction: { action: "turn_left", success: true },
    budget: { stepsLeft: 100_000 - step, timeLeftMs: null },
  };
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const round = (v: number, digits = 1): number => Number(v.toFixed(digits));

async function measure(name: string, spec: ExternalAgentSpec): Promise<Record<string, unknown>> {
  const agent = new ExternalActiveAgent(spec, { timeoutMs: 30_000 });
  try {
    const session = await agent.begin("episode", { frameCount: 0, images: () => Promise.resolve([]) });
    await session.reset({
      episode: { id: "episode", question: { id: "episode", text: "What is on the sofa?" }, scene: "home-0", framesDir: frames },
      actions: [...ACTIVE_ACTIONS],
      budget: { maxSteps: 100_000, timeMs: null, timeoutMs: 30_000 },
      observation: observation(0),
    });
    for (let i = 1; i <= warmup; i++) await session.next({ episode: "episode", observation: observation(i) });
    const times: number[] = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 1; i <= steps; i++) {
      const t = performance.now();
      const decision = await session.next({ episode: "episode", observation: observation(warmup + i) });
      times.push(performance.now() - t);
      if (decision.kind !== "action") throw new Error(`unexpected decision ${JSON.stringify(decision)}`);
    }
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    session.end();
    times.sort((a, b) => a - b);
    const line = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "step", params: { episode: "episode", observation: observation(1234) } });
    return {
      agent: name,
      steps,
      requestBytes: Buffer.byteLength(line) + 1,
      roundTripMs: { median: round(quantile(times, 0.5), 3), p95: round(quantile(times, 0.95), 3), p99: round(quantile(times, 0.99), 3), mean: round(wall / steps, 3) },
      eqakitCpuMsPerStep: round((used.user + used.system) / 1000 / steps, 3),
      stepsPerSecond: Math.round((steps / wall) * 1000),
    };
  } finally {
    await agent.close();
  }
}

try {
  const results = [
    await measure("node", { kind: "exec", commandLine: `node ${nodeAgent}`, command: process.execPath, args: [nodeAgent] }),
    await measure("python", { kind: "exec", commandLine: `python3 ${pythonAgent}`, command: "python3", args: [pythonAgent] }),
    await measure("module", { kind: "module", path: moduleAgent }),
  ];
  for (const r of results) console.error(`${r.agent}: ${JSON.stringify(r)}`);
  console.log(JSON.stringify({ steps, warmup, agents: results }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
