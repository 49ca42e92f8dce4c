import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anthropicReply, geminiReply, lastUserText, openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { openEqaBenchmarkFile, pr15Dir, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const benchmark = readRawBenchmark();
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const readLines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);

/** Answers each judge call with the mark the reference's GPT-4o gave the question named in the prompt. */
function referenceJudge(marks: Record<string, number>): (request: ReceivedRequest) => ReturnType<typeof openAiReply> {
  const byQuestion = new Map(benchmark.filter((r) => r.question_id in marks).map((r) => [r.question, marks[r.question_id]!]));
  return (request) => {
    const prompt = lastUserText(request);
    const question = /Your Turn:\nQuestion: (.*)\n/.exec(prompt)?.[1] ?? "";
    return openAiReply(`Your mark: ${byQuestion.get(question) ?? 1}`);
  };
}

function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

describe("eqa score against the reference's real GPT-4o scores (open-eqa PR 15)", () => {
  for (const run of ["gpt4o-dry_run-predictions", "blind-gpt4-dry_run-predictions"]) {
    test(`${run}: compat mode reproduces the reference's metrics file and bytes`, async () => {
      const home = temporaryDir();
      const predictionsFile = join(pr15Dir, `${run}.json`);
      const expected = readJson(join(pr15Dir, `${run}-metrics.json`)) as Record<string, number>;
      const subset = writeJson(join(home, "subset.json"), Object.keys(expected));
      const server = await startModelServer(referenceJudge(expected));
      try {
        const out = join(home, "run");
        const result = await runCli(
          ["score", "--predictions", predictionsFile, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--mode", "compat", "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache"],
          cliEnv(home),
        );
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(readJson(join(out, "metrics.json")), expected);
        const summary = readJson(join(out, "summary.json")) as { llmMatch: { overall: { mean: number } }; config: { mode: string } };
        const points = Object.values(expected).map((s) => (100 * (Math.min(5, Math.max(1, s)) - 1)) / 4);
        assert.equal(summary.llmMatch.overall.mean, points.reduce((a, b) => a + b, 0) / points.length);
        assert.equal(summary.config.mode, "compat");
        assert.match(result.stdout, /overall\s+5\s/);

        assert.equal(server.requests.length, 5);
        for (const request of server.requests) {
          assert.equal(request.path, "/v1/chat/completions");
          const body = request.body as Record<string, unknown>;
          assert.deepEqual(Object.keys(body).sort(), ["max_tokens", "messages", "model", "seed", "temperature"]);
          assert.equal(body.model, "gpt-4o");
          assert.equal(body.temperature, 0.2);
          assert.equal(body.max_tokens, 32);
          assert.equal(body.seed, 1234);
        }
        // the first prediction is judged with the exact prompt the reference sends
        const predictions = readJson(predictionsFile) as { question_id: string; answer: string }[];
        const first = benchmark.find((r) => r.question_id === predictions[0]!.question_id)!;
        const template = readFileSync(join(pr15Dir, "..", "..", "prompts", "mmbench.txt"), "utf8").trim();
        const expectedPrompt = template
          .replace("{question}", first.question)
          .replace("{answer}", first.answer)
          .replace("{prediction}", predictions[0]!.answer);
        const sent = server.requests.map(lastUserText);
        assert.ok(sent.includes(expectedPrompt), "the exact reference prompt was sent");
      } finally {
        await server.close();
      }
    });
  }
});

describe("eqa score: failures, re-asks and providers", () => {
  const predictions = benchmark.slice(0, 6).map((r) => ({ question_id: r.question_id, answer: `${r.answer}. Probably` }));
  let home: string;
  let predictionsFile: string;
  let subsetFile: string;
  before(() => {
    home = temporaryDir();
    predictionsFile = writeJson(join(home, "predictions.json"), predictions);
    subsetFile = writeJson(join(home, "subset.json"), predictions.map((p) => p.question_id));
  });

  const score = (server: ModelServer, judge: string, out: string, extra: string[] = []) =>
    runCli(
      ["score", "--predictions", predictionsFile, "--benchmark", openEqaBenchmarkFile, "--subset", subsetFile, "--judge", judge, "--judge-base-url", judge.startsWith("openai/") ? `${server.url}/v1` : server.url, "--out", join(home, out), "--no-cache", "--max-retries", "1", ...extra],
      cliEnv(home),
    );

  test("compat mode: an unreadable reply leaves that question out as the reference does, counted apart as the judge's, raw reply kept; over a tenth, exit 1", async () => {
    const server = await startModelServer((request) => openAiReply(lastUserText(request).includes(benchmark[2]!.question) ? "I'd say four" : "Your mark: 5"));
    try {
      const result = await score(server, "openai/gpt-4o", "compat-failure", ["--mode", "compat"]);
      assert.equal(result.code, 1);
      const metrics = readJson(join(home, "compat-failure", "metrics.json")) as Record<string, number>;
      assert.equal(Object.keys(metrics).length, 5);
      assert.equal(metrics[benchmark[2]!.question_id], undefined);
      const summary = readJson(join(home, "compat-failure", "summary.json")) as {
        failures: unknown[];
        counts: { scored: number; failed: number; judgeUnreadable: number };
        judgeUnreadable: { count: number; of: number; overLimit: boolean; items: { questionId: string; judge: string; replies: string[] }[] };
      };
      assert.deepEqual([summary.counts.scored, summary.counts.failed, summary.counts.judgeUnreadable], [5, 0, 1]);
      assert.deepEqual(summary.failures, [], "no call failed: the judge answered, unreadably");
      assert.deepEqual(summary.judgeUnreadable.items.map((i) => [i.questionId, i.judge, i.replies]), [[benchmark[2]!.question_id, "llm-match", ["I'd say four"]]]);
      assert.equal(summary.judgeUnreadable.overLimit, true);
      assert.match(result.stdout, /5 of 6 questions scored, 0 failed, 1 unreadable by the judge/);
      assert.match(result.stderr, /^judging: 6\/6 \(1 unreadable by the judge\)$/m, "the progress line counts the judge's unreadable reply apart from failed calls");
      assert.match(result.stdout, new RegExp(`the judge's replies could not be read for 1 of 6 questions, more than 10%: exit 1 \\(first: ${benchmark[2]!.question_id}, llm-match`));
      // compat cuts the prediction after its last period, as the reference does
      assert.ok(server.requests.every((r) => lastUserText(r).includes(`Response: ${predictions[0]!.answer.split(". ")[0]}.`) || !lastUserText(r).includes(benchmark[0]!.question)));
    } finally {
      await server.close();
    }
  });

  test("robust mode re-asks after an unreadable reply and keeps the prediction whole", async () => {
    const server = await startModelServer((request) => {
      const messages = (request.body as { messages: unknown[] }).messages;
      return openAiReply(messages.length === 1 ? "Hmm, hard to say." : "**Mark: 4/5**");
    });
    try {
      const result = await score(server, "openai/gpt-4o", "robust");
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, 12);
      assert.ok(server.requests.some((r) => lastUserText(r).includes(`Response: ${predictions[1]!.answer}\n`) || lastUserText(r).endsWith(`Response: ${predictions[1]!.answer}`)));
      const judgements = readLines(join(home, "robust", "judgements.jsonl")).map((l) => JSON.parse(l) as { score: number; replies: string[] });
      assert.ok(judgements.every((j) => j.score === 4 && j.replies.length === 2));
    } finally {
      await server.close();
    }
  });

  test("an Anthropic judge speaks the Messages protocol", async () => {
    const server = await startModelServer(() => anthropicReply("Your mark: 3"));
    try {
      const result = await score(server, "anthropic/claude-sonnet-4-5", "anthropic");
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests[0]!.path, "/v1/messages");
      const body = server.requests[0]!.body as Record<string, unknown>;
      assert.equal(body.model, "claude-sonnet-4-5");
      assert.equal(body.max_tokens, 32);
      assert.equal(body.temperature, 0.2);
      assert.deepEqual(Object.values(readJson(join(home, "anthropic", "metrics.json")) as object), [3, 3, 3, 3, 3, 3]);
    } finally {
      await server.close();
    }
  });

  test("a Gemini judge speaks generateContent", async () => {
    const server = await startModelServer(() => geminiReply("Your mark: 2"));
    try {
      const result = await score(server, "google/gemini-2.5-flash", "gemini");
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests[0]!.path, "/v1beta/models/gemini-2.5-flash:generateContent");
      const body = server.requests[0]!.body as { generationConfig: Record<string, unknown> };
      // 2.5 Flash thinks unless told not to: a judge asks it not to, so its 32 tokens go to the mark
      assert.deepEqual(body.generationConfig, { temperature: 0.2, maxOutputTokens: 32, seed: 1234, thinkingConfig: { thinkingBudget: 0 } });
      assert.deepEqual(Object.values(readJson(join(home, "gemini", "metrics.json")) as object), [2, 2, 2, 2, 2, 2]);
    } finally {
      await server.close();
    }
  });

  test("429 with retry-after and 500s are retried; every question is scored", async () => {
    let calls = 0;
    const server = await startModelServer(() => {
      calls++;
      if (calls === 1) return { status: 429, headers: { "retry-after": "0.2" }, body: { error: { message: "slow down" } } };
      if (calls === 3) return { status: 500, body: { error: { message: "oops" } } };
      return openAiReply("Your mark: 5");
    });
    try {
      const result = await score(server, "openai/gpt-4o", "retries", ["--max-retries", "3"]);
      assert.equal(result.code, 0, result.stderr);
      const summary = readJson(join(home, "retries", "summary.json")) as { usage: { judgements: { retries: number; calls: number } } };
      assert.equal(summary.usage.judgements.retries, 2);
      assert.equal(summary.usage.judgements.calls, 6);
    } finally {
      await server.close();
    }
  });

  test("an unreachable judge stops the run with exit 2 and says where it looked", async () => {
    const server = await startModelServer(() => openAiReply("Your mark: 5"));
    await server.close();
    const result = await score(server, "openai/gpt-4o", "unreachable", ["--max-retries", "0"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /cannot reach/);
    assert.match(result.stderr, new RegExp(server.url.replace(/[.]/g, "\\.")));
    assert.doesNotMatch(result.stderr, /at .*\.ts:\d+/, "no stack trace");
  });

  test("a refused API key stops the run with exit 2", async () => {
    const server = await startModelServer(() => ({ status: 401, body: { error: { message: "bad key" } } }));
    try {
      const result = await score(server, "openai/gpt-4o", "auth");
      assert.equal(result.code, 2);
      assert.match(result.stderr, /API key/);
      assert.equal(server.requests.length <= 8, true);
    } finally {
      await server.close();
    }
  });
});

describe("eqa score: resume and cache", () => {
  const questions = benchmark.slice(0, 40);
  let home: string;
  let predictionsFile: string;
  let subsetFile: string;
  let server: ModelServer;
  before(async () => {
    home = temporaryDir();
    predictionsFile = writeJson(join(home, "predictions.json"), questions.map((q) => ({ question_id: q.question_id, answer: q.answer })));
    subsetFile = writeJson(join(home, "subset.json"), questions.map((q) => q.question_id));
    server = await startModelServer(() => ({ ...openAiReply("Your mark: 5"), delayMs: 100 }));
  });
  after(() => server.close());

  const args = (out: string, extra: string[]) => ["score", "--predictions", predictionsFile, "--benchmark", openEqaBenchmarkFile, "--subset", subsetFile, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(home, out), "--concurrency", "4", ...extra];

  test("killed with SIGKILL and run again, it judges only what is missing", async () => {
    const out = join(home, "killed");
    const judgements = join(out, "judgements.jsonl");
    await killMidway(args("killed", ["--no-cache"]), cliEnv(home), () => readLines(judgements).length >= 10);
    const doneBeforeKill = readLines(judgements).length;
    const requestsBefore = server.requests.length;
    assert.ok(doneBeforeKill < questions.length);

    const resumed = await runCli(args("killed", ["--no-cache"]), cliEnv(home));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(server.requests.length - requestsBefore, questions.length - doneBeforeKill, "only the missing questions were judged");
    assert.equal(Object.keys(readJson(join(out, "metrics.json")) as object).length, questions.length);
    const summary = readJson(join(out, "summary.json")) as { counts: { reused: number; scored: number } };
    assert.equal(summary.counts.reused, doneBeforeKill);
    assert.equal(summary.counts.scored, questions.length);
  });

  test("a second run with the same cache makes no calls", async () => {
    const cache = join(home, "calls.sqlite");
    const first = await runCli(args("cache-1", ["--cache", cache]), cliEnv(home));
    assert.equal(first.code, 0, first.stderr);
    const requestsBefore = server.requests.length;
    const second = await runCli(args("cache-2", ["--cache", cache]), cliEnv(home));
    assert.equal(second.code, 0, second.stderr);
    assert.equal(server.requests.length, requestsBefore);
    const summary = readJson(join(home, "cache-2", "summary.json")) as { usage: { judgements: { cacheHits: number; calls: number } } };
    assert.equal(summary.usage.judgements.cacheHits, questions.length);
    assert.deepEqual(readJson(join(home, "cache-1", "metrics.json")), readJson(join(home, "cache-2", "metrics.json")));

    const stats = await runCli(["cache", "stats", "--cache", cache], cliEnv(home));
    assert.equal(stats.code, 0);
    assert.match(stats.stdout, new RegExp(`${questions.length} entries`));
    assert.match(stats.stdout, /openai\/gpt-4o\s+40/);
    const cleared = await runCli(["cache", "clear", "--cache", cache], cliEnv(home));
    assert.match(cleared.stdout, /removed 40 entries/);
  });
});

describe("eqa score: bad input exits 2 and names the file, record and field", () => {
  let home: string;
  before(() => {
    home = temporaryDir();
  });
  const score = (predictions: string, extra: string[] = []) =>
    runCli(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--judge", "openai/gpt-4o", "--judge-base-url", "http://127.0.0.1:9/v1", "--out", join(home, "run"), ...extra], cliEnv(home));

  test("malformed JSON: line and column", async () => {
    const file = join(home, "broken.json");
    writeFileSync(file, '[\n  {"question_id": "a", "answer": "b"},\n  {"question_id": "c" "answer": "d"}\n]');
    const result = await score(file);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /broken\.json:3:23: malformed JSON/);
  });

  test("a prediction whose answer is a number", async () => {
    const file = writeJson(join(home, "typed.json"), [{ question_id: benchmark[0]!.question_id, answer: 3 }]);
    const result = await score(file);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /typed\.json, record 1 \(id [^)]+\), field "answer": expected string, found a number/);
  });

  test("predictions for unknown ids: count and the first ten", async () => {
    const file = writeJson(join(home, "unknown.json"), Array.from({ length: 12 }, (_, i) => ({ question_id: `nope-${i}`, answer: "x" })));
    const result = await score(file);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /12 prediction\(s\) for question ids not in the benchmark/);
    assert.match(result.stderr, /nope-9, … \(2 more\)/);
  });

  test("missing predictions are refused unless --allow-missing", async () => {
    const file = writeJson(join(home, "few.json"), [{ question_id: benchmark[0]!.question_id, answer: null }]);
    const refused = await score(file);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /1635 of 1636 benchmark question\(s\) have no prediction/);
    assert.match(refused.stderr, /--allow-missing/);
    const allowed = await score(file, ["--allow-missing", "--out", join(home, "allowed")]);
    assert.equal(allowed.code, 0, allowed.stderr);
    const summary = readJson(join(home, "allowed", "summary.json")) as { llmMatch: { overall: { mean: number; n: number } } };
    assert.deepEqual([summary.llmMatch.overall.mean, summary.llmMatch.overall.n], [0, 1636]);
  });

  test("no judge: says how to configure one", async () => {
    const file = writeJson(join(home, "one.json"), [{ question_id: benchmark[0]!.question_id, answer: "x" }]);
    const result = await runCli(["score", "--predictions", file, "--benchmark", openEqaBenchmarkFile], cliEnv(home));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no model configured for --judge/);
    assert.match(result.stderr, /OPENAI_API_KEY/);
    assert.match(result.stderr, /ollama/);
  });

  test("no benchmark given and none downloaded", async () => {
    const file = writeJson(join(home, "one.json"), [{ question_id: benchmark[0]!.question_id, answer: "x" }]);
    const result = await runCli(["score", "--predictions", file, "--judge", "vllm/some-model"], cliEnv(home));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /eqa data fetch openeqa/);
  });

  test("a bad flag value", async () => {
    const result = await runCli(["score", "--predictions", "x.json", "--concurrency", "0"], cliEnv(home));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--concurrency/);
  });
});
