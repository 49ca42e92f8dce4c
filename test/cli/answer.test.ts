import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { openAiReply, startModelServer, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { openEqaBenchmarkFile, openEqaDir, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const demoQuestions = join(openEqaDir, "open-eqa-demo-data.json");
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);

function isJudgeCall(request: ReceivedRequest): boolean {
  return JSON.stringify(request.body).includes("Your mark");
}

describe("eqa run on the real OpenEQA demo video", () => {
  test("answers the 3 demo questions from 8 frames of the video, scores them, one summary", async () => {
    const home = temporaryDir();
    const reply = (request: ReceivedRequest): string => (isJudgeCall(request) ? "Your mark: 4" : JSON.stringify(request.body).includes("Proposed Answer:") ? "Action: keep" : "Eight chairs, I think.");
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const out = join(home, "run");
      const result = await runCli(
        ["run", "--benchmark", demoQuestions, "--frames", openEqaDir, "--agent", "vlm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--num-frames", "8", "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache"],
        cliEnv(home),
      );
      assert.equal(result.code, 0, result.stderr);
      const summary = readJson(join(out, "summary.json")) as { kind: string; answer: { counts: { answered: number } }; score: { counts: { scored: number }; llmMatch: { overall: { mean: number } } } };
      assert.equal(summary.kind, "run");
      assert.equal(summary.answer.counts.answered, 3);
      assert.equal(summary.score.counts.scored, 3);
      assert.equal(summary.score.llmMatch.overall.mean, 75);
      assert.equal((readJson(join(out, "predictions.json")) as unknown[]).length, 3);
      assert.equal(Object.keys(readJson(join(out, "metrics.json")) as object).length, 3);
      const vlmCalls = server.requests.filter((r) => !isJudgeCall(r) && JSON.stringify(r.body).includes("image_url"));
      assert.equal(vlmCalls.length, 3);
      const parts = (vlmCalls[0]!.body as { messages: { content: { type: string; image_url?: { url: string } }[] }[] }).messages[0]!.content.filter((p) => p.type === "image_url");
      assert.equal(parts.length, 8);
      const meta = await sharp(Buffer.from(parts[0]!.image_url!.url.split(",")[1]!, "base64")).metadata();
      assert.deepEqual([meta.width, meta.height], [512, 288], "the 1280x720 video's frames at 512 px");
      const trace = JSON.parse(lines(join(out, "traces.jsonl"))[0]!) as { trace: { frames: number[] } };
      assert.deepEqual(trace.trace.frames, [0, 24, 48, 72, 95, 119, 143, 167], "round(linspace(0, 167, 8))");
    });
  });
});

describe("eqa answer", () => {
  test("killed with SIGKILL and run again, it answers only what is missing", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 24);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
    const server = await startModelServer(() => ({ ...openAiReply("A: a chair"), delayMs: 100 }));
    try {
      const out = join(home, "answers");
      const args = ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out, "--concurrency", "2", "--no-cache"];
      await killMidway(args, cliEnv(home), () => lines(join(out, "traces.jsonl")).length >= 6);
      const done = lines(join(out, "traces.jsonl")).length;
      const before = server.requests.length;
      const resumed = await runCli(args, cliEnv(home));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(server.requests.length - before, questions.length - done);
      const predictions = readJson(join(out, "predictions.json")) as { question_id: string; answer: string }[];
      assert.equal(predictions.length, questions.length);
      assert.ok(predictions.every((p) => p.answer === "a chair"));
      assert.match(resumed.stdout, new RegExp(`${done} answer\\(s\\) reused`));
    } finally {
      await server.close();
    }
  });

  test("a failed answer's calls count in the run's usage and cost (a reply cut by the token limit was paid for); the run's command is kept and reported", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 3);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
    let billedPrompt = 0;
    let billedCompletion = 0;
    const server = await startModelServer((request) => {
      const cut = JSON.stringify(request.body).includes(questions[1]!.question);
      const usage = cut ? { prompt_tokens: 700, completion_tokens: 300 } : { prompt_tokens: 10, completion_tokens: 3 };
      billedPrompt += usage.prompt_tokens;
      billedCompletion += usage.completion_tokens;
      const reply = openAiReply(cut ? "A: a ch" : "A: a chair", usage);
      if (cut) (reply.body as { choices: { finish_reason: string }[] }).choices[0]!.finish_reason = "length";
      return reply;
    });
    try {
      const out = join(home, "answers");
      const result = await runCli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out, "--concurrency", "1", "--no-cache"], cliEnv(home));
      assert.equal(result.code, 1, result.stderr);
      const summary = readJson(join(out, "summary.json")) as { counts: { failed: number }; usage: { answers: { promptTokens: number; completionTokens: number } }; cost: { roles: { role: string; promptTokens: number; completionTokens: number }[] } };
      assert.equal(summary.counts.failed, 1);
      assert.ok(billedPrompt > 700);
      assert.equal(summary.usage.answers.promptTokens, billedPrompt, "every billed prompt token, the failed answer's included");
      assert.equal(summary.usage.answers.completionTokens, billedCompletion);
      const agentCost = summary.cost.roles.find((r) => r.role === "agent")!;
      assert.equal(agentCost.promptTokens, billedPrompt);
      const failed = lines(join(out, "traces.jsonl")).map((l) => JSON.parse(l) as { questionId: string; error: string | null; trace: { calls: { reply: string; usage: { completionTokens: number } }[] } | null }).find((r) => r.error !== null)!;
      assert.equal(failed.questionId, questions[1]!.question_id);
      assert.equal(failed.trace?.calls.at(-1)?.reply, "A: a ch", "the cut reply is in the failed question's transcript");
      // the run folder keeps the command that ran in it, which its report shows
      const command = JSON.parse(lines(join(out, "commands.jsonl"))[0]!) as { command: string; exitCode: number };
      assert.match(command.command, /^eqa answer --benchmark \S+ --subset \S+ --agent blind --model openai\/gpt-4 /);
      assert.equal(command.exitCode, 1);
      const page = join(home, "report.html");
      const report = await runCli(["report", out, "--out", page], cliEnv(home));
      assert.equal(report.code, 0, report.stderr);
      assert.ok(readFileSync(page, "utf8").includes(`<dt>command</dt><dd><code class="text">${command.command.replace(/'/g, "&#39;")}</code>`), "the report's panel shows the command");
    } finally {
      await server.close();
    }
  });

  test("an agent that needs frames without --frames, and too many frames for a hosted provider, exit 2 before any call", async () => {
    const home = temporaryDir();
    const noFrames = await runCli(["answer", "--benchmark", demoQuestions, "--agent", "vlm", "--model", "vllm/some-vlm", "--out", join(home, "a")], cliEnv(home));
    assert.equal(noFrames.code, 2);
    assert.match(noFrames.stderr, /--frames/);
    const tooMany = await runCli(
      ["answer", "--benchmark", demoQuestions, "--frames", openEqaDir, "--agent", "vlm", "--model", "anthropic/claude-sonnet-4-5", "--num-frames", "150", "--out", join(home, "b")],
      cliEnv(home, { ANTHROPIC_API_KEY: "sk-ant-test" }),
    );
    assert.equal(tooMany.code, 2);
    assert.match(tooMany.stderr, /at most 100 images/);
    assert.match(tooMany.stderr, /--num-frames/);
  });
});
