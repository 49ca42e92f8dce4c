import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadActiveEpisodes } from "../../src/agents/index.js";
import { hm3dSceneFolder } from "../../src/data/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { fixturesDir, openEqaBenchmarkFile, openEqaDir, openEqaSubsetFile, temporaryDir } from "../helpers/paths.js";

const makeStates = join(fixturesDir, "openeqa-states", "make.py");
const gtFile = join(openEqaDir, "third_party", "3d-mem-aeqa-eval", "gt_path_length.json");

interface RawQuestion {
  question_id: string;
  episode_history: string;
}

/** A made-up HM3D scene folder per episode history: `val/00NNN-<id>` */
function sceneOf(history: string, k: number): string {
  return `val/${String(800 + k).padStart(5, "0")}-${history.split("-hm3d-").pop()}`;
}

/** OpenEQA-format state files (two frames per history) for every history of the A-EQA subset, written by make.py. */
function writeStates(dir: string, numpyModule = "numpy.core.multiarray"): { histories: string[]; root: string } {
  const ids = new Set(JSON.parse(readFileSync(openEqaSubsetFile, "utf8")) as string[]);
  const questions = (JSON.parse(readFileSync(openEqaBenchmarkFile, "utf8")) as RawQuestion[]).filter((q) => ids.has(q.question_id));
  const histories = [...new Set(questions.map((q) => q.episode_history))];
  const spec: Record<string, unknown[]> = {};
  histories.forEach((h, k) => {
    const half = (k * 0.1) / 2;
    spec[h] = [
      { scene_id: `/datasets01/hm3d/090121/${sceneOf(h, k)}/${h.split("-hm3d-").pop()}.basis.glb`, position: [k * 0.5, 0.125, -k - 1], rotation: [Math.cos(half), 0, Math.sin(half), 0] },
      { scene_id: "elsewhere", position: [9, 9, 9], rotation: [1, 0, 0, 0] },
    ];
  });
  const specFile = join(dir, "states.json");
  writeFileSync(specFile, JSON.stringify(spec));
  const root = join(dir, "frames");
  execFileSync("python3", [makeStates, specFile, root, numpyModule]);
  return { histories, root };
}

describe("eqa data convert a-eqa", () => {
  test("turns the 184 A-EQA questions into active episodes: the history's HM3D scene, its first state as the start, the ground-truth length in metres", async () => {
    const dir = temporaryDir();
    const { histories, root } = writeStates(dir);
    const out = join(dir, "a-eqa.json");
    const r = await runCli(["data", "convert", "a-eqa", "--states", root, "--benchmark", openEqaBenchmarkFile, "--subset", openEqaSubsetFile, "--gt-path-length", gtFile, "--out", out], cliEnv(dir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /wrote 184 A-EQA episodes in 57 HM3D scenes/);
    assert.match(r.stdout, /eqa explore --episodes .* --env habitat/);

    const episodes = await loadActiveEpisodes(out);
    assert.equal(episodes.length, 184);
    const raw = JSON.parse(readFileSync(out, "utf8")) as { question_id: string; episode_history: string }[];
    const gt = JSON.parse(readFileSync(gtFile, "utf8")) as Record<string, number>;
    for (const [i, e] of episodes.entries()) {
      const k = histories.indexOf(raw[i]!.episode_history);
      assert.equal(e.scene, sceneOf(raw[i]!.episode_history, k));
      assert.deepEqual(e.start?.position.map((v) => Math.round(v * 1e6) / 1e6), [k * 0.5, 0.125, -k - 1]);
      const turn = (e.start?.yaw ?? NaN) - k * 0.1; // the yaw comes back within (-π, π]
      assert.ok(Math.abs(Math.atan2(Math.sin(turn), Math.cos(turn))) < 1e-6, `yaw of ${e.questionId}`);
      assert.equal(e.start?.pitch, 0);
      assert.equal(e.gtPathLengthM, gt[e.questionId]);
    }
    assert.equal(episodes[0]!.questionId, "f2e82760-5c3c-41b1-88b6-85921b9e7b32");
    assert.equal(episodes[0]!.answer, "Air conditioning unit");
    assert.equal(episodes[0]!.category, "object recognition");

    // the file is an input of eqa explore --env habitat (planned here: no habitat-sim on this machine)
    const plan = await runCli(["explore", "--episodes", out, "--env", "habitat", "--scenes", dir, "--agent", "fine-eqa", "--model", "openai/gpt-4o", "--model-base-url", "http://127.0.0.1:9/v1", "--max-steps", "3", "--dry-run", "--out", join(dir, "run")], cliEnv(dir));
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /184 episode\(s\)/);
  });

  test("reads numpy 2's module names too, and says when no ground-truth file was given", async () => {
    const dir = temporaryDir();
    const { root } = writeStates(dir, "numpy._core.multiarray");
    const out = join(dir, "a-eqa.json");
    const r = await runCli(["data", "convert", "a-eqa", "--states", root, "--benchmark", openEqaBenchmarkFile, "--subset", openEqaSubsetFile, "--out", out], cliEnv(dir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /no --gt-path-length: the episodes carry no ground-truth path length, so OpenEQA's efficiency E cannot be computed/);
    const episodes = await loadActiveEpisodes(out);
    assert.equal(episodes.length, 184);
    assert.equal(episodes[0]!.gtPathLengthM, undefined);
  });

  test("refuses a missing history folder, a state file naming another global, and a missing subset, with exit 2", async () => {
    const dir = temporaryDir();
    const { histories, root } = writeStates(dir);
    const base = ["data", "convert", "a-eqa", "--benchmark", openEqaBenchmarkFile, "--subset", openEqaSubsetFile, "--out", join(dir, "out.json")];

    const empty = join(dir, "empty");
    mkdirSync(empty);
    const missing = await runCli([...base, "--states", empty], cliEnv(dir));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no such folder/);
    assert.match(missing.stderr, /hm3d-v0\/000-hm3d-BFRyYbPCCPE/);

    // a pickle that would run os.system when loaded with pickle.load
    const evil = join(root, histories[0]!, "00000.pkl");
    writeFileSync(evil, Buffer.from("cos\nsystem\n(S'echo hi'\ntR.", "latin1"));
    const refused = await runCli([...base, "--states", root], cliEnv(dir));
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /00000\.pkl: a state file may not name os\.system/);

    const noSubset = await runCli(["data", "convert", "a-eqa", "--states", root, "--benchmark", openEqaBenchmarkFile, "--out", join(dir, "out.json")], cliEnv(dir));
    assert.equal(noSubset.code, 2);
    assert.match(noSubset.stderr, /the A-EQA subset has not been downloaded/);
    assert.match(noSubset.stderr, /eqa data fetch openeqa/);
  });
});

describe("hm3dSceneFolder", () => {
  test("keeps the split folder before an HM3D scene folder, as the Habitat bridge looks the scene up under --scenes", () => {
    assert.equal(hm3dSceneFolder("/datasets01/hm3d/090121/val/00853-5cdEh9F2hJL/5cdEh9F2hJL.basis.glb"), "val/00853-5cdEh9F2hJL");
    assert.equal(hm3dSceneFolder("hm3d/00853-5cdEh9F2hJL/5cdEh9F2hJL.basis.glb"), "00853-5cdEh9F2hJL");
    assert.equal(hm3dSceneFolder("scenes/apartment.glb"), undefined);
  });
});
