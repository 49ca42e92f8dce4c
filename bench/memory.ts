/**
 * The 3-D memory's geometry and its build:
 * 1. back-projecting 50 depth frames of 640×480 (ray-cast from a known room, depth in
 *    [0.1 m, 4 m] kept as SVM does) and voxelising them into one 5 cm map, eqakit's typed-array
 *    code against the same computation in NumPy (bench/voxel_numpy.py), in the same run, both
 *    timed around the computation only (the frames are in memory on both sides);
 * 2. building the memory of a 600-frame synthetic RGB-D episode (320×240) with the embedded
 *    detector on every frame (and its instance masks): seconds per frame.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { backProject, concatPoints, voxelDownsample } from "../src/geometry/index.js";
import { openEpisode } from "../src/episodes/index.js";
import { buildMemory } from "../src/agents/index.js";
import { loadObjectDetector, loadSentenceEncoder } from "../src/models/index.js";
import { circlePoses, renderView, writeSceneEpisode } from "../test/agents/scene-fixture.js";

/** The first python3 on the PATH (NumPy is not in Debian's /usr/bin/python3 here). */
const PYTHON = process.env["PYTHON"] ?? "python3";

export interface MemoryFigures {
  voxel: { frames: number; points: number; voxels: number; eqakitSeconds: number; numpySeconds: number | null; numpyVoxels: number | null; ratio: number | null; numpy: string | null };
  build: { frames: number; seconds: number; secondsPerFrame: number; instances: number; relations: number } | null;
}

function voxelBenchmark(rounds: number): MemoryFigures["voxel"] {
  const image = { width: 640, height: 480, f: 500 };
  const frames = 50;
  // the room's floor is at y = 0, a voxel boundary, where float rounding would split it between
  // two layers of voxels differently in each implementation: the cameras are raised by 1.23 cm
  const poses = circlePoses(frames);
  const raised = poses.map((p) => p.map((x, i) => (i === 7 ? x + 0.0123 : x)));
  const dir = join(tmpdir(), "eqakit-bench-voxel-v1");
  mkdirSync(dir, { recursive: true });
  const depths = poses.map((pose, i) => {
    const file = join(dir, `${String(i).padStart(3, "0")}.f32`);
    const { depth } = renderView(pose, image);
    if (!existsSync(file)) writeFileSync(file, Buffer.from(depth.buffer));
    return depth;
  });
  const camera = { width: image.width, height: image.height, fx: image.f, fy: image.f, cx: image.width / 2, cy: image.height / 2 };
  writeFileSync(join(dir, "meta.json"), JSON.stringify({ ...camera, frames, poses: raised }));
  const floatPoses = raised.map((p) => Float64Array.from(p));
  let best = Infinity;
  let points = 0;
  let voxels = 0;
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    const clouds = depths.map((depth, i) => backProject(depth, camera, floatPoses[i]!).points);
    const all = concatPoints(clouds);
    const grid = voxelDownsample(all, 0.05);
    best = Math.min(best, (performance.now() - started) / 1000);
    points = all.length / 3;
    voxels = grid.counts.length;
  }
  let numpySeconds: number | null = null;
  let numpyVoxels: number | null = null;
  let numpy: string | null = null;
  const script = fileURLToPath(new URL("./voxel_numpy.py", import.meta.url));
  for (let r = 0; r < rounds; r++) {
    const run = spawnSync(PYTHON, [script, dir], { encoding: "utf8" });
    if (run.status !== 0) {
      console.log(`NumPy side skipped: ${run.stderr || run.error?.message}`);
      break;
    }
    const out = JSON.parse(run.stdout) as { seconds: number; voxels: number; numpy: string };
    numpySeconds = Math.min(numpySeconds ?? Infinity, out.seconds);
    numpyVoxels = out.voxels;
    numpy = out.numpy;
  }
  const ratio = numpySeconds ? best / numpySeconds : null;
  console.log(`voxel map: ${frames} frames 640x480, ${points} points -> ${voxels} voxels of 5 cm: eqakit ${best.toFixed(3)} s, NumPy ${numpySeconds?.toFixed(3) ?? "-"} s (${numpyVoxels ?? "-"} voxels), eqakit/NumPy ${ratio?.toFixed(2) ?? "-"}`);
  return { frames, points, voxels, eqakitSeconds: best, numpySeconds, numpyVoxels, ratio, numpy };
}

async function buildBenchmark(frames: number): Promise<MemoryFigures["build"]> {
  const dir = join(tmpdir(), `eqakit-bench-memory-${frames}-v1`);
  if (!existsSync(dir) || readdirSync(dir).filter((n) => n.endsWith("-rgb.png")).length !== frames) {
    await writeSceneEpisode(dir, { layout: "hm3d", views: frames, image: { width: 320, height: 240, f: 230 } });
  }
  const episode = await openEpisode(dir, "hm3d-v0/bench");
  const [detector, encoder] = await Promise.all([loadObjectDetector(), loadSentenceEncoder()]);
  const started = performance.now();
  const { graph } = await buildMemory(episode, { detector, encoder, sampling: { kind: "every", step: 1 } });
  const seconds = (performance.now() - started) / 1000;
  const figures = { frames, seconds, secondsPerFrame: seconds / frames, instances: graph.instances.length, relations: graph.relations.length };
  console.log(`memory build: ${frames} frames 320x240 with the detector on each: ${seconds.toFixed(1)} s, ${figures.secondsPerFrame.toFixed(3)} s a frame (${figures.instances} instances, ${figures.relations} relations)`);
  return figures;
}

export async function memoryBenchmark(options: { quick: boolean }): Promise<MemoryFigures> {
  return { voxel: voxelBenchmark(options.quick ? 1 : 3), build: await buildBenchmark(options.quick ? 60 : 600) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await memoryBenchmark({ quick: process.argv.includes("--quick") }), null, 2));
}
