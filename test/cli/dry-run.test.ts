import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastUserText, openAiReply, startModelServer, type ModelServer } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const benchmark = readRawBenchmark();
const questions = benchmark.slice(0, 4);

interface CostSection {
  roles: { role: string; model: string; calls: number; cacheHits: number; promptTokens: number; completionTokens: number; thinkingTokens: number; dollars: number | null }[];
  total: { dollars: number | null; promptTokens: number; completionTokens: number };
  unpriced: string[];
  prices: string[];
}

/** A judge that marks every answer 4 and bills 1000 prompt and 20 completion tokens a call. */
function judgeServer(): Promise<ModelServer> {
  return startModelServer(() => openAiReply("Your mark: 4", { prompt_tokens: 1000, completion_tokens: 20 }));
}

function setUp(): { home: string; subset: string; predictions: string } {
  const home = temporaryDir();
  const subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
  const predictions = join(home, "predictions.json");
  writeFileSync(predictions, JSON.stringify(questions.map((q) => ({ question_id: q.question_id, answer: `${q.answer}.` }))));
  return { home, subset, predictions };
}

function scoreArgs(s: { subset: string; predictions: string }, server: ModelServer, out: string, judge = "openai/gpt-4o"): string[] {
  return ["score", "--predictions", s.predictions, "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--judge", judge, "--judge-base-url", `${server.url}/v1`, "--out", out];
}

describe("eqa score: the summary's cost", () => {
  test("gives the judge's tokens and dollars at its price, in summary.json and in the text printed", async () => {
    const s = setUp();
    const server = await judgeServer();
    try {
      const out = join(s.home, "run");
      const result = await runCli(scoreArgs(s, server, out), cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const summary = readJson(join(out, "summary.json")) as { cost: CostSection };
      // gpt-4o: $2.50 in, $10 out per million tokens; 4 calls of 1000 + 20 tokens
      assert.deepEqual(summary.cost.roles, [{ role: "judge", model: "openai/gpt-4o", calls: 4, cacheHits: 0, promptTokens: 4000, completionTokens: 80, thinkingTokens: 0, dollars: (4000 * 2.5 + 80 * 10) / 1e6 }]);
      assert.equal(summary.cost.total.dollars, 0.0108);
      assert.match(summary.cost.prices[0] ?? "", /^eqakit prices of \d{4}-\d{2}-\d{2}$/);
      assert.match(result.stdout, /cost \(eqakit prices of [\d-]+\):/);
      assert.match(result.stdout, /judge\s+openai\/gpt-4o\s+4\s+0\s+4000\s+80\s+0\s+\$0\.0108/);
    } finally {
      await server.close();
    }
  });

  test("a resumed run counts every judgement of its directory, and cache hits cost nothing", async () => {
    const s = setUp();
    const server = await judgeServer();
    try {
      const first = join(s.home, "first");
      assert.equal((await runCli(scoreArgs(s, server, first), cliEnv(s.home))).code, 0);
      // the same run again: everything is reused, nothing called, the cost is still the run's
      const again = await runCli(scoreArgs(s, server, first), cliEnv(s.home));
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, 4);
      assert.equal((readJson(join(first, "summary.json")) as { cost: CostSection }).cost.total.dollars, 0.0108);
      // another directory, answered from the model-call cache: no call, no dollars
      const second = join(s.home, "second");
      const cached = await runCli(scoreArgs(s, server, second), cliEnv(s.home));
      assert.equal(cached.code, 0, cached.stderr);
      assert.equal(server.requests.length, 4);
      const cost = (readJson(join(second, "summary.json")) as { cost: CostSection }).cost;
      assert.equal(cost.roles[0]?.cacheHits, 4);
      assert.equal(cost.roles[0]?.promptTokens, 4000);
      assert.equal(cost.total.dollars, 0);
    } finally {
      await server.close();
    }
  });

  test("a judge without a price costs null, named with the way to give it one; EQA_PRICES gives it", async () => {
    const s = setUp();
    const server = await judgeServer();
    try {
      const out = join(s.home, "run");
      const result = await runCli(scoreArgs(s, server, out, "openai/house-judge"), cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const cost = (readJson(join(out, "summary.json")) as { cost: CostSection }).cost;
      assert.equal(cost.roles[0]?.dollars, null);
      assert.equal(cost.total.dollars, null);
      assert.deepEqual(cost.unpriced, ["openai/house-judge"]);
      assert.match(result.stdout, /no price for openai\/house-judge: add it to a file named by EQA_PRICES/);

      const prices = join(s.home, "prices.json");
      writeFileSync(prices, JSON.stringify({ checked: "2026-11-01", currency: "USD", unit: "per million tokens", models: [{ match: "^house-judge$", input: 1, output: 100 }] }));
      const priced = join(s.home, "priced");
      const again = await runCli([...scoreArgs(s, server, priced, "openai/house-judge"), "--no-cache"], cliEnv(s.home, { EQA_PRICES: prices }));
      assert.equal(again.code, 0, again.stderr);
      const pricedCost = (readJson(join(priced, "summary.json")) as { cost: CostSection }).cost;
      assert.equal(pricedCost.total.dollars, (4000 * 1 + 80 * 100) / 1e6);
      assert.equal(pricedCost.prices[0], prices);
    } finally {
      await server.close();
    }
  });
});
