import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, startModelServer, withModelServer } from "../helpers/model-server.js";
import { expressBenchDir, projectRoot, temporaryDir } from "../helpers/paths.js";

/**
 * EXPRESS-Bench's files have no licence, so the server serves synthetic stand-ins in their layout
 * (`[system]:`, the system line, `[user]:`, the user text); the test gives their SHA-256 through
 * EQAKIT_TEST_FETCH_SHA256, the one seam that replaces the known sums.
 */
const STAND_INS: Record<string, string> = {
  "data/express-bench.json": readFileSync(join(expressBenchDir, "express-bench.synthetic.json"), "utf8"),
  ...Object.fromEntries(
    ["region", "explore", "answer", "random_answer", "evaluation"].map((job) => [`prompt/${job}.txt`, `[system]:\nSTAND-IN ${job} system\n[user]:\nSTAND-IN ${job} user\n`]),
  ),
};
const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const SUMS = JSON.stringify(Object.fromEntries(Object.entries(STAND_INS).map(([path, text]) => [path.replace(/^data\//, ""), sha256(text)])));

function serve(files: Record<string, string>) {
  return startModelServer((request) => {
    const path = request.path.replace(/^\/mirror\//, "");
    return path in files ? { body: files[path] } : { status: 404, body: "not found" };
  });
}

describe("eqa data fetch express-bench", () => {
  test("downloads the records and the prompt files into the data folder, each checked by its sum; a changed file is refused and not written", async () => {
    const home = temporaryDir();
    const server = await serve({ ...STAND_INS });
    const bad = await serve({ ...STAND_INS, "prompt/region.txt": STAND_INS["prompt/region.txt"]!.replace("region", "regions") });
    try {
      const fetched = await runCli(["data", "fetch", "express-bench", "--base-url", `${server.url}/mirror`], cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: SUMS }));
      assert.equal(fetched.code, 0, fetched.stderr);
      const dir = join(home, "data", "eqakit", "express-bench");
      for (const [path, text] of Object.entries(STAND_INS)) {
        const stored = join(dir, path.replace(/^data\//, ""));
        assert.equal(readFileSync(stored, "utf8"), text, stored);
        assert.ok(fetched.stdout.includes(`${stored}  (`), fetched.stdout);
        assert.ok(fetched.stdout.includes(`sha256 ${sha256(text)} ok`), fetched.stdout);
      }

      const out = join(home, "other");
      const refused = await runCli(["data", "fetch", "express-bench", "--base-url", `${bad.url}/mirror`, "--out", out], cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: SUMS }));
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, new RegExp(`prompt/region\\.txt has sha256 [0-9a-f]{64}, expected ${sha256(STAND_INS["prompt/region.txt"]!)}`));
      assert.equal(existsSync(join(out, "prompt", "region.txt")), false, "a file that fails its check is not written");

      // without the seam, the stand-ins are checked against the benchmark's own sums and refused
      const real = await runCli(["data", "fetch", "express-bench", "--base-url", `${server.url}/mirror`, "--out", join(home, "real")], cliEnv(home));
      assert.equal(real.code, 2);
      assert.match(real.stderr, /express-bench\.json has git blob [0-9a-f]{40}, expected f90dbd02fc654d1a04bf1b74e4e106c59e65040a/);
    } finally {
      await server.close();
      await bad.close();
    }
  });
});

describe("eqa explore --prompts", () => {
  test("original sends EXPRESS-Bench's fetched files to Fine-EQA and the EAC judge and records their hashes; missing or changed files exit 2", async () => {
    const home = temporaryDir();
    const server = await serve(STAND_INS);
    const env = cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: SUMS, OPENAI_API_KEY: "sk-test" });
    try {
      const episodes = join(home, "episodes.json");
      writeFileSync(episodes, JSON.stringify([{ question_id: "p1", question: "What colour is the sofa?", answer: "Grey", scene: "home-0" }]));
      const run = (prompts: string, url: string, out: string) =>
        runCli(
          ["explore", "--episodes", episodes, "--agent", "fine-eqa", "--prompts", prompts, "--model", "openai/gpt-4o-mini", "--model-base-url", `${url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`, "--out", join(home, out), "--width", "64", "--height", "48", "--image-size", "64", "--max-steps", "4", "--no-cache"],
          env,
        );

      const missing = await run("original", "http://127.0.0.1:9", "missing");
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /EXPRESS-Bench's prompt file is missing/);
      assert.match(missing.stderr, /eqa data fetch express-bench/);

      const fetched = await runCli(["data", "fetch", "express-bench", "--base-url", `${server.url}/mirror`], env);
      assert.equal(fetched.code, 0, fetched.stderr);

      const systems: string[] = [];
      let userTexts: string[] = [];
      await withModelServer(
        (request) => {
          const body = request.body as { messages: { role: string; content: string | { type: string; text?: string }[] }[] };
          const system = body.messages.find((m) => m.role === "system")?.content;
          const user = body.messages.find((m) => m.role === "user")?.content;
          const text = typeof user === "string" ? user : (user ?? []).map((p) => p.text ?? "").join("");
          if (typeof system === "string") systems.push(system);
          userTexts = [...userTexts, text];
          if (system === "STAND-IN region system\n") return openAiReply("kitchen");
          if (system === "STAND-IN explore system\n") return openAiReply("yes");
          if (system === "STAND-IN answer system\n") return openAiReply("A: Grey.");
          if (system === "STAND-IN evaluation system\n") return openAiReply("1, 4");
          return openAiReply("Your mark: 4");
        },
        async (models) => {
          const result = await run("original", models.url, "original");
          assert.equal(result.code, 0, result.stderr);
          assert.match(result.stdout, /EXPRESS-Bench: C 80\.0 %/);
        },
      );
      assert.ok(systems.includes("STAND-IN region system\n"));
      assert.ok(systems.includes("STAND-IN evaluation system\n"), "the EAC judge got the original");
      assert.ok(userTexts.includes("STAND-IN region user\nQUESTION: What colour is the sofa?\nREGION: "), "user text as the benchmark's main.py builds it");
      assert.ok(userTexts.includes("STAND-IN explore user\nQUESTION: What colour is the sofa?"));
      const summary = JSON.parse(readFileSync(join(home, "original", "summary.json"), "utf8")) as { config: { promptSet: string; prompts: Record<string, string> } };
      assert.equal(summary.config.promptSet, "original");
      assert.equal(summary.config.prompts["fine-eqa-stop-check"], sha256(STAND_INS["prompt/explore.txt"]!));
      assert.equal(summary.config.prompts["fine-eqa-view-region"], sha256(readFileSync(join(projectRoot, "prompts", "fine-eqa-view-region.txt"), "utf8")), "no original of the view-region question: eqakit's own");

      // a folder of fetched files given by path; a changed file is refused
      const dir = join(home, "data", "eqakit", "express-bench");
      writeFileSync(join(dir, "prompt", "answer.txt"), "[system]:\nchanged\n[user]:\nchanged\n");
      const changed = await run(dir, "http://127.0.0.1:9", "changed");
      assert.equal(changed.code, 2);
      assert.match(changed.stderr, /prompt\/answer\.txt has sha256 [0-9a-f]{64}, expected/);
      assert.match(changed.stderr, /eqa data fetch express-bench again/);
    } finally {
      await server.close();
    }
  });
});
