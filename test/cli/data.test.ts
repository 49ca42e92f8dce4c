import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startModelServer } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openEqaBenchmarkFile, openEqaSubsetFile, temporaryDir } from "../helpers/paths.js";

test("eqa data fetch openeqa downloads, checks md5, and eqa score finds it by default", async () => {
  const home = temporaryDir();
  const files: Record<string, string> = {
    "/data/open-eqa-v0.json": readFileSync(openEqaBenchmarkFile, "utf8"),
    "/assets/open-eqa-v0-184-questions.json": readFileSync(openEqaSubsetFile, "utf8"),
    "/tampered.json": readFileSync(openEqaBenchmarkFile, "utf8").replace("Air conditioning unit", "Air conditioner"),
  };
  const server = await startModelServer((request) => (request.path in files ? { body: files[request.path] } : { status: 404, body: "not found" }));
  try {
    const urls = ["--url", `${server.url}/data/open-eqa-v0.json`, "--subset-url", `${server.url}/assets/open-eqa-v0-184-questions.json`];
    const fetched = await runCli(["data", "fetch", "openeqa", ...urls], cliEnv(home));
    assert.equal(fetched.code, 0, fetched.stderr);
    const target = join(home, "data", "eqakit", "openeqa", "open-eqa-v0.json");
    assert.equal(readFileSync(target, "utf8"), files["/data/open-eqa-v0.json"]);
    assert.match(fetched.stdout, /md5 c0bd01fdce18206112a29fc3eab50cbb ok/);
    assert.ok(existsSync(join(home, "data", "eqakit", "openeqa", "open-eqa-v0-184-questions.json")));

    const predictions = join(home, "predictions.json");
    writeFileSync(predictions, JSON.stringify([{ question_id: "f2e82760-5c3c-41b1-88b6-85921b9e7b32", answer: null }]));
    const scored = await runCli(["score", "--predictions", predictions, "--allow-missing", "--judge", "vllm/m", "--out", join(home, "run")], cliEnv(home));
    assert.equal(scored.code, 0, scored.stderr);
    assert.match(scored.stdout, /1636 of 1636 questions scored/);

    const out = join(home, "other");
    const tampered = await runCli(["data", "fetch", "openeqa", "--out", out, "--url", `${server.url}/tampered.json`], cliEnv(home));
    assert.equal(tampered.code, 2);
    assert.match(tampered.stderr, /expected c0bd01fdce18206112a29fc3eab50cbb/);
    assert.equal(existsSync(join(out, "open-eqa-v0.json")), false, "nothing written on a mismatch");

    const missing = await runCli(["data", "fetch", "openeqa", "--out", out, "--url", `${server.url}/gone.json`], cliEnv(home));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /HTTP 404/);

    const unknown = await runCli(["data", "fetch", "scannet"], cliEnv(home));
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown dataset "scannet"/);
  } finally {
    await server.close();
  }
});
