import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastUserText, openAiReply, startModelServer, type ModelServer } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openEqaBenchmarkFile, openEqaDir, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

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
      assert.deepEqual(summary.cost.roles, [{ role: "judge", model: "openai/gpt-4o", calls: 4, cacheHits: 0, failed: 0, promptTokens: 4000, completionTokens: 80, thinkingTokens: 0, images: 0, dollars: (4000 * 2.5 + 80 * 10) / 1e6 }]);
      assert.equal(summary.cost.total.dollars, 0.0108);
      assert.match(summary.cost.prices[0] ?? "", /^eqakit prices of \d{4}-\d{2}-\d{2}$/);
      assert.match(result.stdout, /cost \(eqakit prices of [\d-]+\):/);
      assert.match(result.stdout, /judge\s+openai\/gpt-4o\s+4\s+0\s+0\s+4000\s+80\s+0\s+0\s+\$0\.0108/);
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
      // another directory, answered from the model-call cache: cache hits, no call, no tokens billed, no dollars
      const second = join(s.home, "second");
      const cached = await runCli(scoreArgs(s, server, second), cliEnv(s.home));
      assert.equal(cached.code, 0, cached.stderr);
      assert.equal(server.requests.length, 4);
      const cost = (readJson(join(second, "summary.json")) as { cost: CostSection }).cost;
      assert.equal(cost.roles[0]?.cacheHits, 4);
      assert.equal(cost.roles[0]?.calls, 0);
      assert.equal(cost.roles[0]?.promptTokens, 0);
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

/** The row of a --dry-run table for `role`: calls, cached, prompt tokens, completion tokens, dollars. */
function planRow(stdout: string, role: string): string[] | undefined {
  const line = stdout.split("\n").find((l) => l.trim().startsWith(`${role} `));
  return line?.trim().split(/\s+/).slice(2);
}

describe("eqa score --dry-run", () => {
  test("prints the judge's calls, tokens and dollars without a request to the server and writes nothing; after a real run it counts cache hits and judged records", async () => {
    const s = setUp();
    const server = await judgeServer();
    try {
      const out = join(s.home, "run");
      const dry = await runCli([...scoreArgs(s, server, out), "--dry-run"], cliEnv(s.home));
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0, "no model was called");
      assert.equal(existsSync(out), false, "no run directory was made");
      assert.equal(existsSync(join(s.home, "cache")), false, "no cache was made");
      assert.match(dry.stdout, /dry run: no model was called and nothing was written/);
      const [calls, cached, prompt, completion, dollars] = planRow(dry.stdout, "judge") ?? [];
      assert.equal(calls, "4");
      assert.equal(cached, "0");
      // each LLM-Match prompt is a few hundred characters; the reference's max_tokens is 32
      assert.ok(Number(prompt) > 4 * 50, `prompt tokens ${prompt}`);
      assert.equal(completion, String(4 * 32));
      assert.equal(dollars, `$${((Number(prompt) * 2.5 + 128 * 10) / 1e6).toFixed(6).replace(/0+$/, "")}`);
      assert.match(dry.stdout, /4 question\(s\): 0 already judged in .*run, 4 to judge/);

      // the real run sends the same requests: a dry run of a new directory finds them all in the cache
      assert.equal((await runCli(scoreArgs(s, server, out), cliEnv(s.home))).code, 0);
      const sent = server.requests.map(lastUserText);
      const again = await runCli([...scoreArgs(s, server, join(s.home, "other")), "--dry-run"], cliEnv(s.home));
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(planRow(again.stdout, "judge")?.slice(0, 2), ["4", "4"]);
      assert.match(again.stdout, /estimated cost: \$0;/);
      // and a dry run of the finished directory has nothing left to judge
      const resumed = await runCli([...scoreArgs(s, server, out), "--dry-run"], cliEnv(s.home));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /4 question\(s\): 4 already judged in .*run, 0 to judge/);
      assert.equal(planRow(resumed.stdout, "judge"), undefined, "no judge call left");
      assert.deepEqual(server.requests.map(lastUserText), sent, "no request during the dry runs");
    } finally {
      await server.close();
    }
  });

  test("a judge without a price prints n/a, not a guess; a broken EQA_PRICES file is refused with exit 2", async () => {
    const s = setUp();
    const server = await judgeServer();
    try {
      const dry = await runCli([...scoreArgs(s, server, join(s.home, "run"), "openai/house-judge"), "--dry-run"], cliEnv(s.home));
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(planRow(dry.stdout, "judge")?.[4], "n/a");
      assert.match(dry.stdout, /estimated cost: n\/a/);
      const broken = join(s.home, "prices.json");
      writeFileSync(broken, "{ not json");
      const refused = await runCli([...scoreArgs(s, server, join(s.home, "run")), "--dry-run"], cliEnv(s.home, { EQA_PRICES: broken }));
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /cannot read the prices file/);
      assert.match(refused.stderr, /prices\.json/);
      const real = await runCli(scoreArgs(s, server, join(s.home, "run")), cliEnv(s.home, { EQA_PRICES: broken }));
      assert.equal(real.code, 2, "a real run is refused before its first call");
      assert.equal(server.requests.length, 0);
    } finally {
      await server.close();
    }
  });
});

describe("eqa answer --dry-run", () => {
  test("prints the agent's calls, tokens and dollars without a request and writes nothing; after a real run it counts cache hits and answered records", async () => {
    const s = setUp();
    const server = await startModelServer(() => openAiReply("A: a chair", { prompt_tokens: 200, completion_tokens: 5 }));
    try {
      const out = join(s.home, "answers");
      const args = ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--out", out];
      const dry = await runCli([...args, "--dry-run"], cliEnv(s.home));
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(out), false);
      const [calls, cached, prompt, completion, dollars] = planRow(dry.stdout, "agent") ?? [];
      // the blind agent answers each question in one call
      assert.equal(calls, "4");
      assert.equal(cached, "0");
      assert.ok(Number(prompt) > 0);
      assert.ok(Number(completion) > 0);
      assert.match(dollars ?? "", /^\$0\.\d+$/);
      assert.match(dry.stdout, /4 question\(s\): 0 already answered in .*answers, 4 to answer/);

      const real = await runCli(args, cliEnv(s.home));
      assert.equal(real.code, 0, real.stderr);
      assert.equal(server.requests.length, 4, "the dry run counted the calls the real run made");
      const summary = readJson(join(out, "summary.json")) as { cost: CostSection };
      assert.deepEqual(summary.cost.roles.map((r) => [r.role, r.model, r.calls, r.promptTokens, r.completionTokens]), [["agent", "openai/gpt-4o-mini", 4, 800, 20]]);
      assert.equal(summary.cost.total.dollars, (800 * 0.15 + 20 * 0.6) / 1e6);
      assert.match(real.stdout, /agent\s+openai\/gpt-4o-mini\s+4\s+0\s+0\s+800\s+20\s+0/);

      const other = await runCli([...args.slice(0, -1), join(s.home, "other"), "--dry-run"], cliEnv(s.home));
      assert.equal(other.code, 0, other.stderr);
      assert.deepEqual(planRow(other.stdout, "agent")?.slice(0, 2), ["4", "4"], "every request is in the cache");
      const files = readdirSync(out).sort();
      assert.ok(files.includes("calls.jsonl"), "the real run keeps its ledger of model calls");
      const resumed = await runCli([...args, "--dry-run"], cliEnv(s.home));
      assert.match(resumed.stdout, /4 question\(s\): 4 already answered in .*answers, 0 to answer/);
      assert.equal(server.requests.length, 4);
      assert.deepEqual(readdirSync(out).sort(), files, "the dry run added nothing, not even its command");
      assert.equal(readFileSync(join(out, "commands.jsonl"), "utf8").trim().split("\n").length, 1, "the real run's command alone");
    } finally {
      await server.close();
    }
  });
});

describe("eqa run --dry-run", () => {
  test("counts the captioner's, the agent's and the judge's calls the real run then makes, images included", async () => {
    const home = temporaryDir();
    const server = await startModelServer((request) => openAiReply(JSON.stringify(request.body).includes("Your mark") ? "Your mark: 4" : "A: eight chairs"));
    try {
      const out = join(home, "run");
      const args = ["run", "--benchmark", join(openEqaDir, "open-eqa-demo-data.json"), "--frames", openEqaDir, "--agent", "socratic", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${server.url}/v1`, "--num-frames", "4", "--judge", "openai/gpt-4.1", "--judge-base-url", `${server.url}/v1`, "--out", out];
      const dry = await runCli([...args, "--dry-run"], cliEnv(home));
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(out), false);
      const captioner = planRow(dry.stdout, "captioner") ?? [];
      const agent = planRow(dry.stdout, "agent") ?? [];
      const forceGuess = planRow(dry.stdout, "force-guess") ?? [];
      const judge = planRow(dry.stdout, "judge") ?? [];
      // 3 questions on one episode: 4 frames captioned once, then per question an answer, force-a-guess's check (a role of its own), and a judgement
      assert.deepEqual([captioner[0], agent[0], forceGuess[0], judge[0]], ["4", "3", "3", "3"]);
      // each caption request holds a 512x288 frame: 85 + 170 tokens at OpenAI's detail high
      assert.ok(Number(captioner[2]) >= 4 * 255, `caption prompt tokens ${captioner[2]}`);
      const real = await runCli(args, cliEnv(home));
      assert.equal(real.code, 0, real.stderr);
      assert.equal(server.requests.length, 4 + 6 + 3);
      const summary = readJson(join(out, "summary.json")) as { answer: { cost: CostSection }; score: { cost: CostSection } };
      assert.deepEqual(summary.answer.cost.roles.map((r) => [r.role, r.model, r.calls]).sort(), [["agent", "openai/gpt-4o", 3], ["captioner", "openai/gpt-4o-mini", 4], ["force-guess", "openai/gpt-4o", 3]]);
      assert.deepEqual(summary.score.cost.roles.map((r) => [r.role, r.model, r.calls]), [["judge", "openai/gpt-4.1", 3]]);
    } finally {
      await server.close();
    }
  });
});

describe("eqa explore --dry-run", () => {
  test("counts Fine-EQA's calls up to each scene's step budget, as an upper bound, without starting anything; the real run stays within it", async () => {
    const home = temporaryDir();
    const episodes = join(home, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "f1", question: "What colour is the sofa?", answer: "Grey", scene: "home-0" }]));
    let stops = 0;
    const server = await startModelServer((request) => {
      const text = JSON.stringify(request.body);
      // the EAC prompt (two marks) also names a mark: it is told apart first
      if (text.includes("Give two marks.")) return openAiReply("1, 4");
      if (text.includes("Your mark:")) return openAiReply("Your mark: 4");
      if (text.includes("You are given a QUESTION about a home and the IMAGE")) return openAiReply(++stops >= 2 ? "yes" : "no");
      if (text.includes("Look at the picture and answer the question")) return openAiReply("A: Grey.");
      return openAiReply("living room");
    });
    try {
      const out = join(home, "run");
      const args = ["explore", "--episodes", episodes, "--agent", "fine-eqa", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--width", "64", "--height", "48", "--image-size", "64", "--max-steps", "6"];
      const dry = await runCli([...args, "--dry-run"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(out), false);
      // the regions, at most 5 region checks and the answer; at most 6 stop checks, a role of their own
      assert.deepEqual(planRow(dry.stdout, "explorer")?.slice(0, 2), ["≤", "7"]);
      assert.deepEqual(planRow(dry.stdout, "stop-check")?.slice(0, 2), ["≤", "6"]);
      assert.deepEqual(planRow(dry.stdout, "judge")?.slice(0, 2), ["≤", "2"]);
      assert.match(dry.stdout, /at most 6 step\(s\) in all/);
      assert.match(dry.stdout, /1 episode\(s\): 0 already explored in .*run, 1 to explore/);

      const real = await runCli(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(real.code, 0, real.stderr);
      const summary = readJson(join(out, "summary.json")) as { cost: CostSection };
      const explorer = summary.cost.roles.find((r) => r.role === "explorer");
      const stopChecks = summary.cost.roles.find((r) => r.role === "stop-check");
      assert.ok(explorer && explorer.calls > 0 && explorer.calls <= 7, `explorer calls ${explorer?.calls}`);
      assert.ok(stopChecks && stopChecks.calls > 0 && stopChecks.calls <= 6, `stop checks ${stopChecks?.calls}`);
      assert.deepEqual(summary.cost.roles.map((r) => [r.role, r.model]), [["explorer", "openai/gpt-4o-mini"], ["stop-check", "openai/gpt-4o-mini"], ["judge", "openai/gpt-4o"]]);
      assert.match(real.stdout, /cost \(eqakit prices of/);
      const resumed = await runCli([...args, "--dry-run"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.match(resumed.stdout, /1 episode\(s\): 1 already explored in .*run, 0 to explore/);
    } finally {
      await server.close();
    }
  });
});
