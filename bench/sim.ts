/**
 * Frames per second of the built-in simulator rendering 320×240 RGB, depth and instance
 * masks (target: at least 30 on a 2-core machine), over a scripted walk through several homes;
 * then recording a 500-step task trajectory (`recordTask`: the task-doer heating and placing
 * objects in home 0, every frame written as PNGs with masks, and the ground-truth log), its
 * time and frames per second.
 *
 *   node --import tsx bench/sim.ts [--frames 300] [--seeds 0,1,2,3,4] [--record-steps 500]
 *
 * Run by `npm run bench -- sim` (bench/run.ts), or alone. Prints one JSON line of figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HouseholdEnvironment, recordTask, type DiscreteAction } from "../src/sim/index.js";
import { textFlag as flag } from "./flags.js";

const frames = Number(flag("frames", "300"));
const seeds = flag("seeds", "0,1,2,3,4").split(",").map(Number);
const script: DiscreteAction[] = ["move_forward", "move_forward", "turn_left", "move_forward", "look_down", "turn_right", "move_forward", "look_up"];

const perSeed: { seed: number; fps: number; objects: number }[] = [];
let total = 0;
let totalMs = 0;
for (const seed of seeds) {
  const env = HouseholdEnvironment.fromSeed(seed, { width: 320, height: 240, hfovDeg: 90, masks: true });
  env.observeNow(); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < frames; i++) {
    const r = env.actNow({ type: script[i % script.length] as DiscreteAction });
    if (!r.success) env.actNow({ type: "turn_left" });
    env.observeNow();
  }
  const ms = performance.now() - t0;
  total += frames;
  totalMs += ms;
  perSeed.push({ seed, fps: Math.round((frames / ms) * 10000) / 10, objects: env.home.objects.length });
}
const recordSteps = Number(flag("record-steps", "500"));
const out = mkdtempSync(join(tmpdir(), "eqakit-bench-record-"));
const r0 = performance.now();
const recorded = await recordTask({ seed: 0, tasks: ["heat", "pick_and_place"], out, width: 320, height: 240, hfovDeg: 90, minSteps: recordSteps - 1, maxSteps: recordSteps - 1 });
const seconds = (performance.now() - r0) / 1000;
rmSync(out, { recursive: true, force: true });
const record = { steps: recorded.steps, frames: recorded.frames, events: recorded.events, seconds: Math.round(seconds * 100) / 100, framesPerSecond: Math.round((recorded.frames / seconds) * 10) / 10 };
console.log(JSON.stringify({ benchmark: "sim-render-320x240-rgb-depth-masks", frames: total, fps: Math.round((total / totalMs) * 10000) / 10, perSeed, record }));
