import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
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

test("eqa data fetch openeqa --url takes a local copy as a path or a file:// URL, checked by the same sums", async () => {
  const home = temporaryDir();
  const copy = join(home, "copy of open-eqa-v0.json");
  writeFileSync(copy, readFileSync(openEqaBenchmarkFile));
  const subset = pathToFileURL(openEqaSubsetFile).href;
  for (const [i, url] of [copy, pathToFileURL(copy).href].entries()) {
    const out = join(home, `out${i}`);
    const fetched = await runCli(["data", "fetch", "openeqa", "--out", out, "--url", url, "--subset-url", subset], cliEnv(home));
    assert.equal(fetched.code, 0, fetched.stderr);
    assert.match(fetched.stdout, /md5 c0bd01fdce18206112a29fc3eab50cbb ok/);
    assert.ok(readFileSync(join(out, "open-eqa-v0.json")).equals(readFileSync(openEqaBenchmarkFile)));
  }
  const tampered = join(home, "tampered.json");
  writeFileSync(tampered, readFileSync(openEqaBenchmarkFile, "utf8").replace("Air conditioning unit", "Air conditioner"));
  const refused = await runCli(["data", "fetch", "openeqa", "--out", join(home, "bad"), "--url", tampered], cliEnv(home));
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /expected c0bd01fdce18206112a29fc3eab50cbb/);
  assert.equal(existsSync(join(home, "bad", "open-eqa-v0.json")), false);
  const missing = await runCli(["data", "fetch", "openeqa", "--out", join(home, "bad"), "--url", join(home, "nowhere.json")], cliEnv(home));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nowhere\.json: cannot read the local copy/);
});
