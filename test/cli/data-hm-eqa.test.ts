import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadActiveEpisodes } from "../../src/agents/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { startModelServer } from "../helpers/model-server.js";
import { hmEqaDir, temporaryDir } from "../helpers/paths.js";

/**
 * explore-eqa's repository has no licence, so the server serves the synthetic HM-EQA fixtures in
 * its layout (`data/questions.csv`, `data/scene_init_poses.csv`); the test gives their SHA-256
 * through EQAKIT_TEST_FETCH_SHA256, the one seam that replaces the known sums.
 */
const FILES: Record<string, string> = {
  "data/questions.csv": readFileSync(join(hmEqaDir, "questions.csv"), "utf8"),
  "data/scene_init_poses.csv": readFileSync(join(hmEqaDir, "scene_init_poses.csv"), "utf8"),
};
const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const SUMS = JSON.stringify(Object.fromEntries(Object.entries(FILES).map(([path, text]) => [path.replace(/^data\//, ""), sha256(text)])));

describe("eqa data fetch hm-eqa", () => {
  test("downloads questions.csv and scene_init_poses.csv side by side, each checked by its SHA-256, so that eqa explore reads them; a file that is not HM-EQA's is refused and not written", async () => {
    const home = temporaryDir();
    const server = await startModelServer((request) => {
      const path = request.path.replace(/^\/mirror\//, "");
      return path in FILES ? { body: FILES[path] } : { status: 404, body: "not found" };
    });
    try {
      const fetched = await runCli(["data", "fetch", "hm-eqa", "--base-url", `${server.url}/mirror`], cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: SUMS }));
      assert.equal(fetched.code, 0, fetched.stderr);
      const dir = join(home, "data", "eqakit", "hm-eqa");
      for (const [path, text] of Object.entries(FILES)) assert.equal(readFileSync(join(dir, path.replace(/^data\//, "")), "utf8"), text);
      const episodes = await loadActiveEpisodes(join(dir, "questions.csv"));
      assert.equal(episodes.length, FILES["data/questions.csv"]!.trim().split("\n").length - 1);

      // without the seam the fixtures are checked against HM-EQA's own sums and refused
      const out = join(home, "real");
      const real = await runCli(["data", "fetch", "hm-eqa", "--base-url", `${server.url}/mirror`, "--out", out], cliEnv(home));
      assert.equal(real.code, 2);
      assert.match(real.stderr, /questions\.csv has sha256 [0-9a-f]{64}, expected a7476e727501467c74942f0b03c7fda7904ec16d5fea9dfb72b70c7bc48e0b18/);
      assert.equal(existsSync(join(out, "questions.csv")), false);
    } finally {
      await server.close();
    }
  });
});
