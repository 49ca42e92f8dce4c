import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

const BRIDGE = "bridges/habitat/bridge.py";
const SMALL = ["--width", "32", "--height", "24", "--env-timeout", "20"];

describe("eqa env check", () => {
  test("the built-in simulator passes every conformance check: each printed as ok, exit 0", async () => {
    const dir = temporaryDir();
    const r = await runCli(["env", "check", "--env", "builtin", "--scene", "home-3", ...SMALL], cliEnv(dir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /eqa env check \(builtin, scene home-3\)/);
    assert.match(r.stdout, /^ok {5}reset is repeatable$/m);
    assert.match(r.stdout, /^ok {5}navigability and geodesic distance$/m);
    assert.doesNotMatch(r.stdout, /FAILED/);
    assert.match(r.stdout, /(\d+) of \1 checks passed/);
  });

  test("the Habitat bridge in its stand-in mode passes over stdio (Python and the protocol layer work), exit 0", async () => {
    const dir = temporaryDir();
    const r = await runCli(["env", "check", "--env", "habitat", "--standin", ...SMALL], cliEnv(dir));
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /habitat bridge, stand-in grid world/);
    assert.match(r.stdout, /environment habitat-bridge-standin|environment \S+, scene \S+, camera 1\.5 m above the feet/);
    assert.match(r.stdout, /(\d+) of \1 checks passed/);
  });

  test("an environment that fails checks names each failed check with its reason, exit 1", async () => {
    const dir = temporaryDir();
    // the stand-in started outside its room: its start is not navigable
    const r = await runCli(["env", "check", "--env", "stdio", "--env-command", `python3 ${BRIDGE} --standin --start 100,0,100,0`, ...SMALL], cliEnv(dir));
    assert.equal(r.code, 1, r.stderr + r.stdout);
    assert.match(r.stdout, /^FAILED bounds contain the start: the start lies outside the bounds$/m);
    assert.match(r.stdout, /\d+ of \d+ checks passed in [\d.]+ s; failed: .*bounds contain the start/);
  });

  test("an environment that does not start is one failed check with its error, exit 1", async () => {
    const dir = temporaryDir();
    const r = await runCli(["env", "check", "--env", "habitat", "--scenes", dir, "--scene", "val/00800-TEEsavR23oF", ...SMALL], cliEnv(dir));
    assert.equal(r.code, 1, r.stderr + r.stdout);
    assert.match(r.stdout, /^FAILED the environment starts: [\s\S]*TEEsavR23oF.basis.glb does not exist/m);
    assert.match(r.stdout, /0 of 1 checks passed/);
  });

  test("usage errors exit 2: habitat without --scenes, stdio without --env-command, an unknown built-in scene", async () => {
    const dir = temporaryDir();
    const habitat = await runCli(["env", "check", "--env", "habitat", "--scene", "val/00800-TEEsavR23oF"], cliEnv(dir));
    assert.equal(habitat.code, 2);
    assert.match(habitat.stderr, /--env habitat needs --scenes DIR/);
    const stdio = await runCli(["env", "check", "--env", "stdio"], cliEnv(dir));
    assert.equal(stdio.code, 2);
    assert.match(stdio.stderr, /--env stdio needs --env-command/);
    const unknown = await runCli(["env", "check", "--env", "nowhere"], cliEnv(dir));
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /expected one of: builtin, habitat, stdio/);
  });
});
