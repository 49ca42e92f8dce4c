import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { EnvironmentError, StdioEnvironment, runConformance } from "../../src/sim/index.js";
import { projectRoot } from "../helpers/paths.js";

const BRIDGE_DIR = join(projectRoot, "bridges", "habitat");
const BRIDGE = join(BRIDGE_DIR, "bridge.py");
/** No __pycache__ folders left in the source tree by the tests. */
const PYTHON_ENV = { ...process.env, PYTHONDONTWRITEBYTECODE: "1" };

function standin(args: string[] = []): StdioEnvironment {
  return new StdioEnvironment({ command: "python3", args: [BRIDGE, "--standin", "--width", "32", "--height", "24", ...args], cwd: projectRoot, env: PYTHON_ENV, timeoutMs: 15_000 });
}

describe("Habitat bridge (bridges/habitat)", () => {
  test("its Python unit tests pass (python3 -m unittest)", () => {
    const run = spawnSync("python3", ["-m", "unittest", "-v"], { cwd: BRIDGE_DIR, env: PYTHON_ENV, encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, /\nOK\b/);
    const ran = Number(/Ran (\d+) tests?/.exec(run.stderr)?.[1] ?? 0);
    assert.ok(ran >= 20, `only ${ran} Python tests ran`);
  });

  test("the stand-in passes the conformance suite through StdioEnvironment", async () => {
    const env = standin();
    try {
      const results = await runConformance(env);
      assert.ok(results.length >= 10, `only ${results.length} checks ran`);
      assert.deepEqual(results.filter((r) => !r.ok).map((r) => `${r.check}: ${r.message}`), []);
    } finally {
      await env.close();
    }
  });

  test("observations decode with masks, pose and state as sent", async () => {
    const env = standin();
    try {
      const start = await env.reset();
      assert.deepEqual(start, { position: [0.25, 0, 0.75], yaw: 0, pitch: 0 });
      await env.act({ type: "turn_left" });
      const obs = await env.observe();
      assert.equal(obs.rgb.length, 32 * 24 * 3);
      assert.equal(obs.depth.length, 32 * 24);
      assert.ok(obs.masks);
      assert.deepEqual(obs.masks.labels, { "1": "floor", "2": "ceiling", "3": "wall", "4": "pillar" });
      const ids = new Set(obs.masks.ids);
      assert.ok(ids.has(1) && ids.has(3), `ids seen: ${[...ids].join(",")}`);
      assert.ok(Math.abs(obs.state.yaw - Math.PI / 6) < 1e-12);
      assert.equal(obs.pose[7], 1.5);
      const blocked = await env.act({ type: "teleport", state: { position: [100, 0, 100], yaw: 0, pitch: 0 } });
      assert.equal(blocked.success, false);
      assert.match(blocked.reason ?? "", /not navigable/);
      assert.equal(await env.geodesicDistance([0.25, 0, 0.75], [100, 0, 100]), Infinity);
    } finally {
      await env.close();
    }
  });

  test("without masks, and an environment failure is a remote error that leaves the server running", async () => {
    const env = standin(["--no-masks"]);
    try {
      assert.equal((await env.observe()).masks, undefined);
      await assert.rejects(env.reset({ position: [100, 0, 100], yaw: 0, pitch: 0 }), (error: unknown) => {
        assert.ok(error instanceof EnvironmentError);
        assert.equal(error.kind, "remote");
        assert.match(error.message, /not navigable.*code -32000/);
        return true;
      });
      assert.equal((await env.info()).sceneId, "standin-grid");
    } finally {
      await env.close();
    }
  });
});
