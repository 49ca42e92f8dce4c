import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { withModelServer } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { emulate, geminiQuotaExceeded } from "../helpers/provider-emulators.js";
import { kindForStatus } from "../../src/models/index.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const picked = readRawBenchmark().slice(0, 2);

/** A subset of two questions and predictions for them, in `home`. */
function inputs(home: string): { subset: string; predictions: string } {
  const subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
  const predictions = join(home, "predictions.json");
  writeFileSync(predictions, JSON.stringify(picked.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
  return { subset, predictions };
}

describe("a Gemini 429 RESOURCE_EXHAUSTED", () => {
  test("Google's details decide: a per-minute QuotaFailure with a RetryInfo is a rate limit, a quota of 0 or a billing message without details is out of credits", () => {
    const body = (reply: { body?: unknown }): string => JSON.stringify(reply.body);
    assert.equal(kindForStatus(429, body(geminiQuotaExceeded("per-minute"))), "rate_limit");
    assert.equal(kindForStatus(429, body(geminiQuotaExceeded("no-allowance"))), "quota");
    // the same words from OpenAI, with no details, still mean the account has no credits
    assert.equal(kindForStatus(429, JSON.stringify({ error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } })), "quota");
    // a body cut short keeps its retryDelay
    assert.equal(kindForStatus(429, body(geminiQuotaExceeded("per-minute")).slice(0, 900)), "rate_limit");
  });

  test("eqa score --judge google/…: the per-minute limit is waited out (retryDelay 2s) and every question is judged", async () => {
    const home = temporaryDir();
    const { subset, predictions } = inputs(home);
    const answer = emulate("gemini-2.5-flash", () => "Your mark: 4");
    await withModelServer((request, index) => (index === 0 ? geminiQuotaExceeded("per-minute") : answer(request, index)), async (server) => {
      const out = join(home, "run");
      const result = await runCli(
        ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "google/gemini-2.5-flash", "--judge-base-url", server.url, "--out", out, "--no-cache", "--concurrency", "1"],
        cliEnv(home, { GEMINI_API_KEY: "k" }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.doesNotMatch(result.stderr, /no credits left/);
      assert.equal(server.requests.length, 3, "the limited request was sent again");
      const summary = readJson(join(out, "summary.json")) as { counts: { scored: number; failed: number } };
      assert.deepEqual([summary.counts.scored, summary.counts.failed], [2, 0]);
    });
  });

  test("eqa answer --model google/…: the per-minute limit is waited out; a quota of 0 stops the run (exit 2) as out of credits", async () => {
    const home = temporaryDir();
    const { subset } = inputs(home);
    const answer = emulate("gemini-2.5-flash", () => "A sofa.");
    const args = (url: string, out: string): string[] => ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "google/gemini-2.5-flash", "--model-base-url", url, "--out", out, "--concurrency", "1", "--no-cache"];
    await withModelServer((request, index) => (index === 0 ? geminiQuotaExceeded("per-minute") : answer(request, index)), async (server) => {
      const out = join(home, "limited");
      const result = await runCli(args(server.url, out), cliEnv(home, { GEMINI_API_KEY: "k" }));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, 3);
      const predictions = readJson(join(out, "predictions.json")) as { answer: string | null }[];
      assert.deepEqual(predictions.map((p) => p.answer), ["A sofa.", "A sofa."]);
    });
    await withModelServer(() => geminiQuotaExceeded("no-allowance"), async (server) => {
      const result = await runCli(args(server.url, join(home, "none")), cliEnv(home, { GEMINI_API_KEY: "k" }));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /no credits left/);
      assert.equal(server.requests.length, 1, "waiting cannot help: no retry");
    });
  });
});
