import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, openEqaDir, pr15Dir, temporaryDir } from "../helpers/paths.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { emulate, type EmulatedFamily } from "../helpers/provider-emulators.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

/** Today's models, each against a server that refuses what its API refuses. */
const MODELS: [EmulatedFamily, string][] = [
  ["openai-reasoning", "openai/o3-mini"],
  ["openai-reasoning", "openai/gpt-5"],
  ["claude-opus-4-7", "anthropic/claude-opus-4-7"],
  ["claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"],
  ["gemini-2.5-flash", "google/gemini-2.5-flash"],
  ["gemini-3", "google/gemini-3-pro-preview"],
];

const baseUrl = (model: string, url: string): string => (model.startsWith("openai/") ? `${url}/v1` : url);
const isJudgeCall = (request: ReceivedRequest): boolean => JSON.stringify(request.body).includes("Your mark");

interface Summary {
  counts: Record<string, number>;
  usage: { thisProcess: { deviations?: Record<string, string[]>; total: { thinkingTokens: number } } };
}

describe("today's models as judges and agents", () => {
  const predictions = JSON.parse(readFileSync(join(pr15Dir, "gpt4o-dry_run-predictions.json"), "utf8")) as { question_id: string }[];
  for (const [family, model] of MODELS) {
    test(`eqa score --judge ${model}: every question judged, what was sent differently recorded`, async () => {
      const home = temporaryDir();
      const subset = join(home, "subset.json");
      writeFileSync(subset, JSON.stringify(predictions.slice(0, 3).map((p) => p.question_id)));
      await withModelServer(emulate(family, () => "Your mark: 4"), async (server) => {
        const out = join(home, "run");
        const args = ["score", "--predictions", join(pr15Dir, "gpt4o-dry_run-predictions.json"), "--benchmark", openEqaBenchmarkFile, "--subset", subset];
        const result = await runCli([...args, "--judge", model, "--judge-base-url", baseUrl(model, server.url), "--out", out, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", GEMINI_API_KEY: "k" }));
        assert.equal(result.code, 0, result.stderr);
        assert.ok(server.requests.every((r) => r.body !== undefined));
        const summary = readJson(join(out, "summary.json")) as Summary;
        assert.equal(summary.counts.failed, 0);
        assert.equal(summary.counts.scored, 3);
        const deviations = summary.usage.thisProcess.deviations?.[model] ?? [];
        if (deviations.length > 0) assert.ok(result.stdout.includes(`${model} was sent differently than asked: ${deviations[0]}`), result.stdout);
        const config = (readJson(join(out, "summary.json")) as { config: { parametersSentDifferently?: string[] } }).config;
        if (family === "openai-reasoning") {
          assert.ok(config.parametersSentDifferently?.some((d) => d.startsWith("temperature 0.2 not sent")), JSON.stringify(config));
          assert.match(result.stdout, /the judge could not take the reference's parameters as they are: temperature 0\.2 not sent/);
        }
        if (family === "claude-sonnet-4-5") assert.equal(config.parametersSentDifferently, undefined, "the judge sends no top_p: nothing to leave out");
        if (family === "openai-reasoning" || family === "claude-opus-4-7") assert.ok(deviations.includes(`temperature 0.2 not sent: ${family === "openai-reasoning" ? "openai-reasoning" : "claude-default-sampling"} models take only their default`), deviations.join("; "));
        if (family === "openai-reasoning" || family === "gemini-3") {
          assert.ok(deviations.some((d) => /raised by 4096 for thinking/.test(d)), deviations.join("; "));
          assert.ok(summary.usage.thisProcess.total.thinkingTokens > 0, "thinking tokens counted");
        }
      });
    });
  }

  for (const [family, model] of MODELS.filter(([, name]) => ["openai/o3-mini", "anthropic/claude-opus-4-7", "google/gemini-2.5-flash"].includes(name))) {
    test(`eqa answer --agent vlm --model ${model} answers the demo's questions from its frames`, async () => {
      const home = temporaryDir();
      await withModelServer(emulate(family, (r) => (isJudgeCall(r) ? "Your mark: 4" : "A: Eight chairs.")), async (server) => {
        const out = join(home, "answers");
        const args = ["answer", "--benchmark", join(openEqaDir, "open-eqa-demo-data.json"), "--frames", openEqaDir, "--agent", "vlm", "--num-frames", "4"];
        const result = await runCli([...args, "--model", model, "--model-base-url", baseUrl(model, server.url), "--out", out, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", GEMINI_API_KEY: "k" }));
        assert.equal(result.code, 0, result.stderr);
        const summary = readJson(join(out, "summary.json")) as Summary;
        assert.equal(summary.counts.failed, 0);
        assert.equal(summary.counts.answered, 3);
      });
    });
  }
});

describe("eqa rm score with today's reward models", () => {
  for (const [family, model] of MODELS.filter(([, name]) => ["anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-7", "openai/gpt-5"].includes(name))) {
    test(`${model}: every sample scored (its refused sampling parameters left out)`, async () => {
      const home = temporaryDir();
      const frames = join(home, "frames");
      await writeRgbEpisode(join(frames, "hm3d-v0", "000-hm3d-a"), 6, 64, 48);
      const instances = join(home, "instances.jsonl");
      const instance = { question: "What colour is the sofa?", predicted_answer: "Blue.", reasoning_trace: ["I look at the sofa.", "It is blue."], episode_history: "hm3d-v0/000-hm3d-a", ground_truth_score: 8, category: "attribute recognition" };
      writeFileSync(instances, ["i1", "i2"].map((id) => JSON.stringify({ id, ...instance })).join("\n") + "\n");
      await withModelServer(emulate(family, () => "<critique>\nThe trace matches the frames.\n</critique>\n<score>8</score>"), async (server) => {
        const out = join(home, "score");
        const result = await runCli(["rm", "score", "--instances", instances, "--frames", frames, "--model", model, "--model-base-url", baseUrl(model, server.url), "--samples", "2", "--out", out, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" }));
        assert.equal(result.code, 0, result.stderr);
        assert.equal(server.requests.length, 4);
        assert.deepEqual(readJson(join(out, "scores.json")), { i1: 8, i2: 8 });
      });
    });
  }
});

describe("--ROLE-option", () => {
  test("every model role takes its options: sent as asked, recorded, and a wrong key or value is a usage error", async () => {
    const home = temporaryDir();
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify((JSON.parse(readFileSync(join(pr15Dir, "gpt4o-dry_run-predictions.json"), "utf8")) as { question_id: string }[]).slice(0, 1).map((p) => p.question_id)));
    const args = ["score", "--predictions", join(pr15Dir, "gpt4o-dry_run-predictions.json"), "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--no-cache"];
    await withModelServer(emulate("openai-reasoning", () => "Your mark: 3"), async (server) => {
      const out = join(home, "run");
      const result = await runCli([...args, "--judge", "vllm/my-reasoner", "--judge-base-url", `${server.url}/v1`, "--judge-option", "family=openai-reasoning", "--judge-option", "reasoning_effort=high", "--out", out], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      const body = server.requests[0]!.body as Record<string, unknown>;
      assert.equal(body.reasoning_effort, "high");
      assert.equal(body.max_completion_tokens, 32 + 4096);
      const summary = readJson(join(out, "summary.json")) as { config: { judge: { family: string; options: Record<string, string> } } };
      assert.deepEqual(summary.config.judge.options, { family: "openai-reasoning", reasoning_effort: "high" });
    });
    const badKey = await runCli([...args, "--judge", "openai/o3-mini", "--judge-option", "effort=high"], cliEnv(home, { OPENAI_API_KEY: "k" }));
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /--judge-option.*key=value with a key among family, token_limit/);
    const badValue = await runCli([...args, "--judge", "openai/o3-mini", "--judge-option", "truncation_retries=many"], cliEnv(home, { OPENAI_API_KEY: "k" }));
    assert.equal(badValue.code, 2);
    assert.match(badValue.stderr, /--judge-option truncation_retries.*"many" is not a whole number/);
    const help = await runCli(["answer", "--help"], cliEnv(home));
    assert.match(help.stdout, /--model-option <key=value>/);
    assert.match(help.stdout, /--captioner-option <key=value>/);
  });
});

describe("a reasoning model cut while thinking", () => {
  test("is a truncated reply naming its reasoning tokens, asked again with twice the budget when truncation_retries allows", async () => {
    const home = temporaryDir();
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify((JSON.parse(readFileSync(join(pr15Dir, "gpt4o-dry_run-predictions.json"), "utf8")) as { question_id: string }[]).slice(0, 1).map((p) => p.question_id)));
    const args = ["score", "--predictions", join(pr15Dir, "gpt4o-dry_run-predictions.json"), "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--no-cache", "--judge", "openai/o3-mini", "--judge-option", "thinking_headroom=200"];
    await withModelServer(emulate("openai-reasoning", () => "Your mark: 3"), async (server) => {
      const cut = await runCli([...args, "--judge-base-url", `${server.url}/v1`, "--out", join(home, "cut")], cliEnv(home, { OPENAI_API_KEY: "k" }));
      assert.equal(cut.code, 1, cut.stderr);
      const summary = readJson(join(home, "cut", "summary.json")) as { replyStatuses: Record<string, number>; failures: { error: string; status: string }[] };
      assert.deepEqual(summary.replyStatuses, { truncated: 1 });
      assert.match(summary.failures[0]!.error, /cut while thinking: the token limit was spent on 232 reasoning tokens/);
      assert.equal(summary.failures[0]!.status, "truncated");
      const before = server.requests.length;
      const retried = await runCli([...args, "--judge-option", "truncation_retries=1", "--judge-base-url", `${server.url}/v1`, "--out", join(home, "retried")], cliEnv(home, { OPENAI_API_KEY: "k" }));
      assert.equal(retried.code, 0, retried.stderr);
      const limits = server.requests.slice(before).map((r) => (r.body as { max_completion_tokens: number }).max_completion_tokens);
      assert.deepEqual(limits, [32 + 200, 64 + 400]);
    });
  });
});

describe("replies that are not answers", () => {
  test("a cut, a filtered and a refused reply are counted by status with their reasons, and asked again on the next run", async () => {
    const home = temporaryDir();
    const subset = join(home, "subset.json");
    const ids = (JSON.parse(readFileSync(join(pr15Dir, "gpt4o-dry_run-predictions.json"), "utf8")) as { question_id: string }[]).slice(0, 4).map((p) => p.question_id);
    writeFileSync(subset, JSON.stringify(ids));
    const finish = ["length", "content_filter", "refusal", "stop"];
    let serving = true;
    await withModelServer(() => {
      const order = finish.shift() ?? "stop";
      const reply = !serving || order === "stop" ? "Your mark: 5" : order === "length" ? "Your ma" : "";
      const message = order === "refusal" && serving ? { role: "assistant", content: null, refusal: "I can't help with that." } : { role: "assistant", content: reply };
      return { body: { id: "c", object: "chat.completion", created: 0, model: "gpt-4o", choices: [{ index: 0, message, finish_reason: serving && order !== "refusal" ? order : "stop" }], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } } };
    }, async (server) => {
      const out = join(home, "run");
      const args = ["score", "--predictions", join(pr15Dir, "gpt4o-dry_run-predictions.json"), "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--concurrency", "1"];
      const first = await runCli(args, cliEnv(home));
      assert.equal(first.code, 1, first.stderr);
      const summary = readJson(join(out, "summary.json")) as Summary & { replyStatuses: Record<string, number>; failures: { questionId: string; error: string; status?: string }[] };
      assert.deepEqual(summary.replyStatuses, { truncated: 1, filtered: 1, refused: 1 });
      assert.match(first.stdout, /replies that were not answers: 1 truncated, 1 filtered, 1 refused/);
      assert.equal(summary.counts.scored, 1);
      const reasons = summary.failures.map((f) => f.error).join("\n");
      assert.match(reasons, /cut by the token limit \(finish_reason length\)/);
      assert.match(reasons, /content filter/);
      assert.match(reasons, /I can't help with that\./);
      serving = false;
      const calls = server.requests.length;
      const second = await runCli(args, cliEnv(home));
      assert.equal(second.code, 0, second.stderr);
      assert.equal(server.requests.length, calls + 3, "the three non-answers were not cached: asked again, the good one reused");
      const after = readJson(join(out, "summary.json")) as Summary;
      assert.equal(after.counts.scored, 4);
    });
  });

  test("an account out of credits stops the run at once, keeps what was judged, and says so", async () => {
    const home = temporaryDir();
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify((JSON.parse(readFileSync(join(pr15Dir, "gpt4o-dry_run-predictions.json"), "utf8")) as { question_id: string }[]).map((p) => p.question_id)));
    let calls = 0;
    await withModelServer(() => {
      calls++;
      if (calls <= 2) return { body: { id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "Your mark: 3" }, finish_reason: "stop" }] } };
      return { status: 429, body: { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } } };
    }, async (server) => {
      const out = join(home, "run");
      const result = await runCli(["score", "--predictions", join(pr15Dir, "gpt4o-dry_run-predictions.json"), "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--concurrency", "1", "--no-cache"], cliEnv(home));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /exceeded your current quota/);
      assert.match(result.stderr, /no credits left: top it up/);
      assert.equal(server.requests.length, 3, "no retries, no further items");
      const judged = readFileSync(join(out, "judgements.jsonl"), "utf8").trim().split("\n");
      assert.equal(judged.length, 2);
    });
  });
});
