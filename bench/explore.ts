/**
 * The frontier explorer's own time per step (occupancy update, frontiers, goal choice, A*,
 * control), without the environment's calls (rendering, acting), over several simulated homes
 * at 320×240 depth (target: under 20 ms per step on a 2-core machine).
 *
 *   node --import tsx bench/explore.ts [--seeds 0,1,2,3,4] [--max-steps 500] [--width 320 --height 240]
 *
 * Run by `npm run bench -- explore` (bench/run.ts), or alone. Prints one JSON line of figures.
 */
import { exploreFrontier } from "../src/agents/index.js";
import { HouseholdEnvironment } from "../src/sim/index.js";

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

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
console.log(JSON.stringify({ bench: "explore", width, height, maxSteps, explorerMsPerStep: Number((ownMs / Math.max(1, actions)).toFixed(3)), actions, perSeed }));
