/**
 * A recording made by an earlier eqakit (flat-box homes, test/fixtures/sim-recording-v1) is read
 * by today's code as it was written: its log, its frames with depth, poses and masks, TAG-EQA
 * generation and an episode's memory.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadTrajectoryLog, parseTagQuestions } from "../../src/data/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { fixturesDir, temporaryDir } from "../helpers/paths.js";

/** A copy of the older recording in a fresh folder (commands write beside what they read). */
function olderRecording(): string {
  const root = temporaryDir("eqakit-older-recording-");
  cpSync(join(fixturesDir, "sim-recording-v1", "home-8"), join(root, "home-8"), { recursive: true });
  return root;
}

describe("a recording made by an earlier version", () => {
  test("its log and every frame load: depth, pose and instance mask", async () => {
    const root = olderRecording();
    const log = await loadTrajectoryLog(join(root, "home-8", "trajectory.json"));
    assert.equal(log.environment, "home-8");
    assert.equal(log.steps.length, 56);
    const episode = await openEpisode(join(root, "home-8", "frames"), "home-8");
    assert.equal(episode.frameCount, 56);
    for (const index of [0, 27, 55]) {
      const frame = await episode.frame(index);
      assert.ok(frame.pose, `frame ${index} has a pose`);
      assert.ok(frame.depth && frame.depth.some((d) => d > 0), `frame ${index} has depth`);
      assert.ok(frame.masks && frame.masks.ids.some((id) => id > 0), `frame ${index} has an instance mask`);
    }
  });

  test("eqa generate tag makes questions from it, every object referred to seen", async () => {
    const root = olderRecording();
    const out = join(temporaryDir(), "tag");
    const result = await runCli(["generate", "tag", "--source", `sim:${root}`, "--out", out, "--per-trajectory", "8", "--seed", "1"], cliEnv(root));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /: 0 never seen/);
    const questions = parseTagQuestions(JSON.parse(readFileSync(join(out, "questions.json"), "utf8")), "questions.json");
    assert.ok(questions.length > 0);
    assert.ok(questions.every((q) => q.trajectory === "home-8-pick_and_place"));
  });

  test("eqa memory build reads its masks into a scene graph", async () => {
    const root = olderRecording();
    const out = join(root, "memory");
    const result = await runCli(["memory", "build", "--frames", join(root, "home-8", "frames"), "--out", out, "--no-detector", "--ignore-labels", "wall,floor,ceiling", "--sampling", "every:4"], cliEnv(root));
    assert.equal(result.code, 0, result.stderr);
    const graph = JSON.parse(readFileSync(join(out, "scene-graph.json"), "utf8")) as { instances: { label: string }[] };
    const labels = graph.instances.map((i) => i.label);
    for (const furniture of ["sofa", "table", "fridge"]) assert.ok(labels.includes(furniture), `${furniture} in ${labels.join(", ")}`);
    assert.ok(labels.every((label) => !/^(wall|floor|ceiling)$/.test(label)));
  });
});
