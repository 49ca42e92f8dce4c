import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { pythonFixed } from "../../src/core/index.js";
import { OPENEQA_HM3D_RENDER, StdioEnvironment, hm3dIntrinsicsText } from "../../src/sim/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { writeHabitatStandIn } from "../helpers/habitat-standin.js";
import { fixturesDir, projectRoot, temporaryDir } from "../helpers/paths.js";
import { treeSnapshot } from "../helpers/tree.js";

const makeStates = join(fixturesDir, "openeqa-states", "make.py");
const bridge = join(projectRoot, "bridges", "habitat", "bridge.py");
/** A small render: the command's --width/--height (default 1920×1080, OpenEQA's); the stand-in ray-marches in Python. */
const [W, H] = [16, 9];
/** What numpy's savetxt(fmt="%.6f") writes for extract-frames.py's intrinsics at 1920×1080, 90° (run once with numpy 2.4). */
const OPENEQA_INTRINSICS_TEXT = "960.000000 0.000000 960.000000 0.000000\n0.000000 1141.734073 540.000000 0.000000\n0.000000 0.000000 1.000000 0.000000\n0.000000 0.000000 0.000000 1.000000\n";
/** The same at 16×9 (fy from the linear vertical field of view 90°·9/16). */
const SMALL_INTRINSICS_TEXT = "8.000000 0.000000 8.000000 0.000000\n0.000000 9.514451 4.500000 0.000000\n0.000000 0.000000 1.000000 0.000000\n0.000000 0.000000 0.000000 1.000000\n";

interface StateSpec {
  scene_id: string;
  position: [number, number, number];
  /** [w, x, y, z], a turn about +y. */
  rotation: [number, number, number, number];
  sensor_height: number;
}

/** A state of the agent turned `yaw` radians about +y, its sensor `height` above it. */
function state(scene: string, position: [number, number, number], yaw: number, height: number): StateSpec {
  return { scene_id: `/datasets01/hm3d/090121/val/${scene}/${scene.split("-")[1]}.basis.glb`, position, rotation: [Math.cos(yaw / 2), 0, Math.sin(yaw / 2), 0], sensor_height: height };
}

/** Three episodes, two of them in one scene; the long one is the one killed midway. */
const EPISODES: Record<string, StateSpec[]> = {
  "hm3d-v0/000-hm3d-AAAaaa": [state("00800-AAAaaa", [0.25, 0.1, 0.75], 0.5, 1.3), state("00800-AAAaaa", [0.5, 0.1, 0.5], -1.25, 1.6), state("00800-AAAaaa", [-0.75, 0.1, 1.25], 3, 1.3)],
  "hm3d-v0/001-hm3d-BBBbbb": Array.from({ length: 40 }, (_, k) => state("00801-BBBbbb", [-1 + k * 0.04, 0, -1.25 + k * 0.02], k * 0.15, 1.5)),
  "hm3d-v0/002-hm3d-AAAaaa": [state("00800-AAAaaa", [1.25, -0.05, -0.25], 1.5707963, 0.9)],
};
const LONG = "hm3d-v0/001-hm3d-BBBbbb";

/** The pose OpenEQA's script writes: T(position)·R(rotation)·T(0, h, 0) with h from the episode's first state, float32, "%.6f". */
function expectedPose(spec: StateSpec, firstHeight: number): number[] {
  // habitat-sim holds the rotation as a float32 quaternion
  const [w, y] = [Math.fround(spec.rotation[0]), Math.fround(spec.rotation[2])];
  const [c, s] = [1 - 2 * y * y, 2 * w * y];
  const h = Math.fround(Math.fround(spec.position[1] + firstHeight) - Math.fround(spec.position[1]));
  const [px, py, pz] = spec.position;
  // zero entries are +0: habitat-sim's matrix products never leave a -0
  return [c, 0, s, px, 0, 1, 0, py + h, -s, 0, c, pz, 0, 0, 0, 1].map((v) => Math.fround(v) + 0);
}

function poseText(pose: number[]): string {
  return [0, 1, 2, 3].map((r) => `${pose.slice(r * 4, r * 4 + 4).map((v) => pythonFixed(v)).join(" ")}\n`).join("");
}

describe("eqa data prepare openeqa --hm3d (through the Habitat bridge's stand-in)", () => {
  let home: string;
  let args: string[];
  let out: string;
  let first: Awaited<ReturnType<typeof runCli>>;

  before(async () => {
    home = temporaryDir();
    const spec = join(home, "states.json");
    writeFileSync(spec, JSON.stringify(EPISODES));
    execFileSync("python3", [makeStates, spec, join(home, "states")]);
    const questions = [...Object.keys(EPISODES), "scannet-v0/003-scannet-scene0709_00"].map((history, k) => ({ question_id: `q${k}`, question: "What is there?", answer: "a pillar", category: "object recognition", episode_history: history }));
    writeFileSync(join(home, "benchmark.json"), JSON.stringify(questions));
    mkdirSync(join(home, "hm3d"));
    args = ["data", "prepare", "openeqa", "--hm3d", join(home, "hm3d"), "--states", join(home, "states"), "--standin", "--width", String(W), "--height", String(H), "--benchmark", join(home, "benchmark.json")];
    out = join(home, "whole");
    first = await runCli([...args, "--out", out], cliEnv(home));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  test("writes OpenEQA's files for every HM3D episode, named after the state files, and nothing more", () => {
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /3 of 3 HM3D episodes in .*: 44 frames written, 0 kept from before/);
    // off a terminal the progress is a line each episode as it ends and the whole run's line
    for (const [episode, states] of Object.entries(EPISODES)) assert.match(first.stderr, new RegExp(`^${episode}: ${states.length}/${states.length} frames$`, "m"));
    assert.match(first.stderr, /^frames: 44\/44 episodes 3\/3$/m);
    assert.deepEqual(readdirSync(join(out, "hm3d-v0")).sort(), Object.keys(EPISODES).map((e) => e.split("/")[1]).sort());
    for (const [episode, states] of Object.entries(EPISODES)) {
      const names = states.flatMap((_, k) => [`${String(k).padStart(5, "0")}-rgb.png`, `${String(k).padStart(5, "0")}-depth.png`, `${String(k).padStart(5, "0")}.txt`]);
      assert.deepEqual(readdirSync(join(out, episode)).sort(), [...names, "intrinsic_color.txt", "intrinsic_depth.txt"].sort(), episode);
    }
  });

  test("poses are the states' camera poses (the sensor's height from each episode's first state), intrinsics those of the frames at 90°", () => {
    for (const [episode, states] of Object.entries(EPISODES)) {
      states.forEach((spec, k) => assert.equal(readFileSync(join(out, episode, `${String(k).padStart(5, "0")}.txt`), "utf8"), poseText(expectedPose(spec, states[0]!.sensor_height)), `${episode} frame ${k}`));
      for (const name of ["intrinsic_color.txt", "intrinsic_depth.txt"]) assert.equal(readFileSync(join(out, episode, name), "utf8"), SMALL_INTRINSICS_TEXT);
    }
    // the frame whose own sensor is 1.6 m up still gets the first state's 1.3 m, as extract-frames.py does
    assert.match(readFileSync(join(out, "hm3d-v0/000-hm3d-AAAaaa/00001.txt"), "utf8"), /\n0\.000000 1\.000000 0\.000000 1\.400000\n/);
  });

  test("the default is OpenEQA's rendering, and its intrinsics are the reference's text", () => {
    assert.deepEqual({ ...OPENEQA_HM3D_RENDER }, { width: 1920, height: 1080, hfov: 90 });
    assert.equal(hm3dIntrinsicsText(1920, 1080, 90), OPENEQA_INTRINSICS_TEXT);
    assert.equal(hm3dIntrinsicsText(W, H, 90), SMALL_INTRINSICS_TEXT);
  });

  test("colour is the stand-in's pixels and depth its metres × 65535 / 10 in 16 bits, frame by frame", async () => {
    const env = new StdioEnvironment({ command: "python3", args: [bridge, "--standin", "--no-masks", "--width", String(W), "--height", String(H), "--hfov", "90"] });
    try {
      let seen = 0;
      for (const [episode, states] of Object.entries(EPISODES)) {
        for (let k = 0; k < states.length; k += episode === LONG ? 7 : 1) {
          const obs = await env.observePose(Float64Array.from(expectedPose(states[k]!, states[0]!.sensor_height)));
          const stem = join(out, episode, String(k).padStart(5, "0"));
          const rgb = await sharp(`${stem}-rgb.png`).raw().toBuffer({ resolveWithObject: true });
          assert.deepEqual([rgb.info.width, rgb.info.height, rgb.info.channels], [W, H, 3]);
          assert.ok(rgb.data.equals(Buffer.from(obs.rgb)), `${stem}-rgb.png`);
          const depth = await sharp(`${stem}-depth.png`).toColourspace("grey16").raw({ depth: "ushort" }).toBuffer({ resolveWithObject: true });
          assert.deepEqual([depth.info.width, depth.info.height], [W, H]);
          const values = new Uint16Array(depth.data.buffer, depth.data.byteOffset, W * H);
          const expected = Array.from(obs.depth, (d) => (d > 0 ? Math.trunc(Math.fround(Math.fround(d / 10) * 65535)) : 0));
          assert.deepEqual(Array.from(values), expected, `${stem}-depth.png`);
          assert.ok(expected.some((v) => v > 0), "the stand-in sees something");
          seen++;
        }
      }
      assert.ok(seen >= 8);
    } finally {
      await env.close();
    }
  });

  test("a run killed with SIGKILL and run again writes the same files as an uninterrupted run", async () => {
    const killed = join(home, "killed");
    const long = join(killed, LONG);
    await killMidway([...args, "--out", killed], cliEnv(home), () => existsSync(long) && readdirSync(long).length > 40);
    const partial = readdirSync(long).filter((n) => n.endsWith(".txt") && !n.startsWith("intrinsic")).length;
    assert.ok(partial < 40, "killed before the long episode was done");
    const resumed = await runCli([...args, "--out", killed], cliEnv(home));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /kept from before/);
    assert.deepEqual(treeSnapshot(killed), treeSnapshot(out));
    const again = await runCli([...args, "--out", killed], cliEnv(home));
    assert.match(again.stdout, /3 of 3 HM3D episodes in .*: 0 frames written, 44 kept from before/);
  });

  test("an episode without states fails alone, named with its folder; the others are written and the command exits 1", async () => {
    const questions = JSON.parse(readFileSync(join(home, "benchmark.json"), "utf8")) as object[];
    const benchmark = join(home, "missing.json");
    writeFileSync(benchmark, JSON.stringify([...questions, { question_id: "qx", question: "?", answer: "a", category: "object recognition", episode_history: "hm3d-v0/009-hm3d-CCCccc" }]));
    const partial = join(home, "partial");
    const r = await runCli([...args.slice(0, -1), benchmark, "--out", partial, "--rgb-only"], cliEnv(home));
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /failed hm3d-v0\/009-hm3d-CCCccc: .*009-hm3d-CCCccc: no such folder/);
    assert.match(r.stdout, /3 of 4 HM3D episodes/);
    assert.deepEqual(readdirSync(join(partial, "hm3d-v0/000-hm3d-AAAaaa")).sort(), ["00000-rgb.png", "00001-rgb.png", "00002-rgb.png"]);
  });

  test("with a Python that has habitat-sim, one bridge per scene renders the states' scene, found under --hm3d, at OpenEQA's field of view", async () => {
    const habitat = writeHabitatStandIn(join(home, "habitat"), [3, 5]);
    const scene = (seed: number): string => `/datasets01/hm3d/090121/val/0000${seed}-home${seed}/home${seed}.basis.glb`;
    const episodes: Record<string, StateSpec[]> = {
      "hm3d-v0/000-hm3d-home3": [{ ...state("00003-home3", [1, 0, 1], 0.3, 1.5), scene_id: scene(3) }, { ...state("00003-home3", [1.5, 0, 1], 1, 1.5), scene_id: scene(3) }],
      "hm3d-v0/001-hm3d-home5": [{ ...state("00005-home5", [2, 0, 2], -0.5, 1.2), scene_id: scene(5) }],
      "hm3d-v0/002-hm3d-home3": [{ ...state("00003-home3", [2, 0, 1.5], 2, 1.5), scene_id: scene(3) }],
    };
    const spec = join(home, "habitat-states.json");
    writeFileSync(spec, JSON.stringify(episodes));
    execFileSync("python3", [makeStates, spec, join(home, "habitat-states")]);
    const benchmark = join(home, "habitat-benchmark.json");
    writeFileSync(benchmark, JSON.stringify(Object.keys(episodes).map((h, k) => ({ question_id: `h${k}`, question: "?", answer: "a", category: "object recognition", episode_history: h }))));
    const rendered = join(home, "habitat-out");
    const r = await runCli(["data", "prepare", "openeqa", "--hm3d", habitat.scenes, "--states", join(home, "habitat-states"), "--bridge-python", habitat.python, "--width", "24", "--height", "18", "--benchmark", benchmark, "--out", rendered], cliEnv(home));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const calls = readFileSync(habitat.calls, "utf8").trim().split("\n").map((line) => JSON.parse(line) as string[]);
    assert.deepEqual(calls.map((c) => c.slice(1)).sort(), [3, 5].map((seed) => ["--scene", scene(seed), "--scene-root", habitat.scenes, "--width", "24", "--height", "18", "--hfov", "90"]));
    for (const [episode, states] of Object.entries(episodes)) {
      for (let k = 0; k < states.length; k++) {
        const image = await sharp(join(rendered, episode, `0000${k}-rgb.png`)).metadata();
        assert.deepEqual([image.width, image.height], [24, 18]);
        assert.equal(readFileSync(join(rendered, episode, `0000${k}.txt`), "utf8"), poseText(expectedPose(states[k]!, states[0]!.sensor_height)));
      }
    }
  });

  test("flags that cannot work are refused with exit 2 before anything is written", async () => {
    const noStates = await runCli(["data", "prepare", "openeqa", "--hm3d", join(home, "hm3d"), "--out", join(home, "x"), "--benchmark", join(home, "benchmark.json")], cliEnv(home));
    assert.equal(noStates.code, 2);
    assert.match(noStates.stderr, /--hm3d needs --states/);
    const file = join(home, "a-file");
    writeFileSync(file, "");
    const intoFile = await runCli([...args, "--out", file], cliEnv(home));
    assert.equal(intoFile.code, 2);
    assert.match(intoFile.stderr, /--out .*is an existing file, not a directory/);
    const noRoot = await runCli(["data", "prepare", "openeqa", "--hm3d", join(home, "no-hm3d"), "--states", join(home, "states"), "--out", join(home, "y"), "--benchmark", join(home, "benchmark.json")], cliEnv(home));
    assert.equal(noRoot.code, 2);
    assert.match(noRoot.stderr, /--hm3d/);
    assert.ok(!existsSync(join(home, "x")) && !existsSync(join(home, "y")));
  });
});
