/**
 * The explorers' own time per step. The frontier explorer's (occupancy update, frontiers, goal choice, A*,
 * control), without the environment's calls (rendering, acting), over several simulated homes
 * at 320×240 depth (target: under 20 ms per step on a 2-core machine). Then the Fine-EQA
 * explorer's, with an in-process model that answers at once (the kitchen is relevant, views are
 * told by a fixed cycle of regions, the stop check says no), its frames written to a temporary
 * folder; the model's calls and the frame writing are outside its own time.
 *
 *   node --import tsx bench/explore.ts [--seeds 0,1,2,3,4] [--max-steps 500] [--width 320 --height 240]
 *
 * Run by `npm run bench -- explore` (bench/run.ts), or alone. Prints one JSON line of figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exploreFineEqa, exploreFrontier } from "../src/agents/index.js";
import { resolveModel, type ChatModel, type ChatRequest, type ChatResponse } from "../src/models/index.js";
import { HouseholdEnvironment } from "../src/sim/index.js";
import { textFlag as flag } from "./flags.js";

const seeds = flag("seeds", "0,1,2,3,4").split(",").map(Number);
const maxSteps = Number(flag("max-steps", "500"));
const width = Number(flag("width", "320"));
const height = Number(flag("height", "240"));

const perSeed: { seed: number; actions: number; pathLengthM: number; explorerMsPerStep: number; wallMsPerStep: number; stop: string }[] = [];
let ownMs = 0;
let actions = 0;
for (const seed of seeds) {
  const env = HouseholdEnvironment.fromSeed(seed, { width, height, hfovDeg: 90, masks: false });
  const t0 = performance.now();
  const result = await exploreFrontier(env, { maxSteps });
  const wall = performance.now() - t0;
  ownMs += result.explorerMs;
  actions += result.actions;
  perSeed.push({
    seed,
    actions: result.actions,
    pathLengthM: Number(result.pathLengthM.toFixed(2)),
    explorerMsPerStep: Number(result.explorerMsPerStep.toFixed(3)),
    wallMsPerStep: Number((wall / Math.max(1, result.actions)).toFixed(3)),
    stop: result.stop,
  });
}
/** Replies at once, by what the prompt asks: regions, which region a view shows, stop or not, the answer. */
function scriptedModel(): ChatModel {
  let views = 0;
  const reply = (request: ChatRequest): string => {
    const text = JSON.stringify(request.messages);
    if (text.includes("Read the question and name the rooms")) return "kitchen";
    if (text.includes("Which kind of room does this picture show?")) return "EGKAC"[views++ % 5] as string;
    if (text.includes("You are given a QUESTION about a home and the IMAGE")) return "No";
    return "A mug.";
  };
  // an OpenAI-protocol model on a closed local port: nothing is ever sent to it
  const spec = { ...resolveModel("openai/scripted", { baseURL: "http://127.0.0.1:9/v1", env: {} }), name: "bench/scripted", provider: "bench" };
  return {
    name: spec.name,
    spec,
    async complete(request: ChatRequest): Promise<ChatResponse> {
      const text = reply(request);
      return { text, texts: [text], finishReason: "stop", usage: { promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images: 0, latencyMs: 0, retries: 0, cached: false } };
    },
  };
}

const fine: { seed: number; steps: number; explorerMsPerStep: number; stop: string }[] = [];
let fineMs = 0;
let fineSteps = 0;
const scratch = mkdtempSync(join(tmpdir(), "eqakit-bench-explore-"));
try {
  for (const seed of seeds) {
    const env = HouseholdEnvironment.fromSeed(seed, { width, height, hfovDeg: 90, masks: false });
    const result = await exploreFineEqa(env, scriptedModel(), { question: "What is on the kitchen counter?", framesDir: join(scratch, String(seed)), image: { maxSide: 64, format: "jpeg" } });
    const steps = result.explorationSteps;
    fineMs += result.explorerMs;
    fineSteps += steps;
    fine.push({ seed, steps, explorerMsPerStep: Number(result.explorerMsPerStep.toFixed(3)), stop: result.stop });
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

console.log(
  JSON.stringify({
    bench: "explore",
    width,
    height,
    maxSteps,
    explorerMsPerStep: Number((ownMs / Math.max(1, actions)).toFixed(3)),
    actions,
    perSeed,
    fineEqa: { explorerMsPerStep: Number((fineMs / Math.max(1, fineSteps)).toFixed(3)), steps: fineSteps, perSeed: fine },
  }),
);
