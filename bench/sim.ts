/**
 * Frames per second of the built-in simulator rendering RGB, depth and instance masks at
 * 320×240, 512×512 and 640×480 (target: at least 20 at 512×512 on one core), over a scripted
 * walk through several homes, by the wall clock and by this process's CPU time (the machine may
 * be shared);
 * then recording a 500-step task trajectory (`recordTask`: the task-doer heating and placing
 * objects in home 0, every frame written as PNGs with masks, and the ground-truth log), its
 * time and frames per second.
 *
 *   node --import tsx bench/sim.ts [--frames 300] [--seeds 0,1,2,3,4] [--sizes 320x240,512x512,640x480] [--record-steps 500]
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

/** Frames a second at one size over the scripted walk in every seed's home: wall clock, and this process's CPU time. */
function walk(width: number, height: number): { size: string; frames: number; fps: number; cpuMsPerFrame: number; cpuFps: number; perSeed: { seed: number; fps: number; objects: number }[] } {
  const perSeed: { seed: number; fps: number; objects: number }[] = [];
  let total = 0;
  let totalMs = 0;
  let cpuUs = 0;
  for (const seed of seeds) {
    const env = HouseholdEnvironment.fromSeed(seed, { width, height, hfovDeg: 90, masks: true });
    env.observeNow(); // warm-up
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < frames; i++) {
      const r = env.actNow({ type: script[i % script.length] as DiscreteAction });
      if (!r.success) env.actNow({ type: "turn_left" });
      env.observeNow();
    }
    const c = process.cpuUsage(c0);
    const ms = performance.now() - t0;
    cpuUs += c.user + c.system;
    total += frames;
    totalMs += ms;
    perSeed.push({ seed, fps: Math.round((frames / ms) * 10000) / 10, objects: env.home.objects.length });
  }
  const cpuMsPerFrame = cpuUs / 1000 / total;
  return { size: `${width}x${height}`, frames: total, fps: Math.round((total / totalMs) * 10000) / 10, cpuMsPerFrame: Math.round(cpuMsPerFrame * 10) / 10, cpuFps: Math.round((1000 / cpuMsPerFrame) * 10) / 10, perSeed };
}
const sizes = flag("sizes", "320x240,512x512,640x480").split(",").map((s) => s.split("x").map(Number) as [number, number]);
const walks = sizes.map(([w, h]) => walk(w, h));
const recordSteps = Number(flag("record-steps", "500"));
const out = mkdtempSync(join(tmpdir(), "eqakit-bench-record-"));
const r0 = performance.now();
const recorded = await recordTask({ seed: 0, tasks: ["heat", "pick_and_place"], out, width: 320, height: 240, hfovDeg: 90, minSteps: recordSteps - 1, maxSteps: recordSteps - 1 });
const seconds = (performance.now() - r0) / 1000;
rmSync(out, { recursive: true, force: true });
const record = { steps: recorded.steps, frames: recorded.frames, events: recorded.events, seconds: Math.round(seconds * 100) / 100, framesPerSecond: Math.round((recorded.frames / seconds) * 10) / 10 };
console.log(JSON.stringify({ benchmark: "sim-render-rgb-depth-masks", walks, record }));
