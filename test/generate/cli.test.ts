import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseTagQuestions } from "../../src/data/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { alfredDir, temporaryDir } from "../helpers/paths.js";
import { kitchenRaw } from "./fixtures.js";

function writeRecording(dir: string, raw: unknown): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "trajectory.json"), JSON.stringify(raw));
}

/** Three good recordings (one nested), and unless `clean`, one that contradicts itself at step 3 and one that is not JSON. */
function recordings(clean = false): string {
  const root = temporaryDir();
  writeRecording(join(root, "a"), { ...kitchenRaw({ id: "rec-a", environment: "house-0" }), frames: "frames" });
  writeRecording(join(root, "b"), kitchenRaw({ id: "rec-b", environment: "house-1", yaw: 1.1, offset: [2, 0, 1] }));
  writeRecording(join(root, "c", "nested"), kitchenRaw({ id: "rec-c", environment: "house-2", yaw: -0.5 }));
  if (clean) return root;
  writeRecording(join(root, "bad"), kitchenRaw({ id: "rec-bad", edit: (raw) => (raw.steps[3]!.step = 4) }));
  mkdirSync(join(root, "broken"));
  writeFileSync(join(root, "broken", "trajectory.json"), "{ not json");
  return root;
}

describe("eqa generate tag", () => {
  test("writes the dataset from simulator recordings, skips bad files with their path and step", async () => {
    const source = recordings();
    const home = temporaryDir();
    const out = join(home, "tag");
    const result = await runCli(["generate", "tag", "--source", `sim:${source}`, "--out", out, "--per-trajectory", "6", "--seed", "4"], cliEnv(home));
    assert.equal(result.code, 1, "skipped files make exit code 1, the others done");
    assert.match(result.stderr, /skipped .*bad\/trajectory\.json \(step 3\)/);
    assert.match(result.stdout, /seen check of \d+ objects the questions refer to: 0 never seen/);
    assert.match(result.stdout, /neverSeen \d+/);
    const questions = parseTagQuestions(JSON.parse(readFileSync(join(out, "questions.json"), "utf8")), "questions.json");
    assert.equal(new Set(questions.map((q) => q.trajectory)).size, 3);
    assert.ok(questions.length >= 12);
    const fromA = questions.filter((q) => q.trajectory === "rec-a");
    assert.ok(fromA.every((q) => q.episode_history === relative(out, join(source, "a", "frames"))));
    assert.ok(questions.filter((q) => q.trajectory === "rec-b").every((q) => q.episode_history === null));
    const skipped = JSON.parse(readFileSync(join(out, "skipped.json"), "utf8")) as { file: string; step?: number; error: string }[];
    assert.deepEqual(
      skipped.map((s) => [relative(source, s.file), s.step]),
      [
        ["bad/trajectory.json", 3],
        ["broken/trajectory.json", undefined],
      ],
    );
    assert.match(skipped[0]!.error, /step 3 is numbered 4/);
    const stats = JSON.parse(readFileSync(join(out, "stats.json"), "utf8")) as { questions: number; skipped: number; splits: Record<string, number>; categories: Record<string, number> };
    assert.equal(stats.questions, questions.length);
    assert.equal(stats.skipped, 2);
    assert.equal(stats.splits.train! + stats.splits.validation! + stats.splits.test!, questions.length);
    assert.match(result.stdout, new RegExp(`${questions.length} questions from 3 trajectories \\(2 skipped\\)`));
  });

  test("rewrites the texts with a model given as --renderer", async () => {
    const source = recordings(true);
    const home = temporaryDir();
    const out = join(home, "tag");
    await withModelServer(
      (request) => {
        const prompt = (request.body as { messages: { content: string }[] }).messages[0]!.content;
        const last = prompt.split("Structured question: ").at(-1)!;
        const question = /^Question: (.*)$/m.exec(last)![1]!;
        const answer = /^Answer: (.*)$/m.exec(last)![1]!;
        return openAiReply(JSON.stringify({ question: `So, ${question}`, answer }));
      },
      async (server) => {
        const result = await runCli(["generate", "tag", "--source", `sim:${source}`, "--out", out, "--per-trajectory", "3", "--renderer", "openai/gemma-2-27b-it", "--renderer-base-url", `${server.url}/v1`, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(result.code, 0, result.stderr);
        const questions = parseTagQuestions(JSON.parse(readFileSync(join(out, "questions.json"), "utf8")), "questions.json");
        assert.ok(questions.length > 0 && questions.every((q) => q.question.startsWith("So, ")));
        const stats = JSON.parse(readFileSync(join(out, "stats.json"), "utf8")) as { renderer: { name: string; rewritten: number } };
        assert.equal(stats.renderer.name, "openai/gemma-2-27b-it");
        assert.equal(stats.renderer.rewritten, server.requests.length);
      },
    );
  });

  test("a rewrite whose model call failed is a failed item: exit 1, template text kept, tried again by the next run", async () => {
    const source = recordings(true);
    const home = temporaryDir();
    const out = join(home, "tag");
    const args = ["generate", "tag", "--source", `sim:${source}`, "--out", out, "--per-trajectory", "3", "--renderer", "openai/gemma-2-27b-it", "--no-cache"];
    const rewrite = (prompt: string): ReturnType<typeof openAiReply> => {
      const last = prompt.split("Structured question: ").at(-1)!;
      return openAiReply(JSON.stringify({ question: `So, ${/^Question: (.*)$/m.exec(last)![1]!}`, answer: /^Answer: (.*)$/m.exec(last)![1]! }));
    };
    const failedIds: string[] = [];
    // the first run: every second question asked with examples is refused (400, not retried)
    await withModelServer(
      (request, index) => {
        const prompt = (request.body as { messages: { content: string }[] }).messages[0]!.content;
        if (prompt.includes("Example:") && index % 2 === 0) return { status: 400, body: { error: { message: "the server refused this request" } } };
        return rewrite(prompt);
      },
      async (server) => {
        const result = await runCli([...args, "--renderer-base-url", `${server.url}/v1`], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(result.code, 1, result.stderr);
        const stats = JSON.parse(readFileSync(join(out, "stats.json"), "utf8")) as { renderer: { rewritten: number; failed: number } };
        assert.ok(stats.renderer.failed > 0);
        assert.match(result.stdout, new RegExp(`${stats.renderer.failed} rewrites failed \\(their template text stays\\): run the same command again to retry them`));
        assert.match(result.stderr, /rewriting \S+ failed: .*refused/);
        const records = readFileSync(join(out, "rewrites.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { questionId: string; failed?: boolean });
        failedIds.push(...records.filter((r) => r.failed).map((r) => r.questionId));
        assert.equal(failedIds.length, stats.renderer.failed);
        const questions = parseTagQuestions(JSON.parse(readFileSync(join(out, "questions.json"), "utf8")), "questions.json");
        const plain = failedIds.filter((id) => !id.includes("#"));
        assert.ok(questions.filter((q) => plain.includes(q.question_id)).every((q) => !q.question.startsWith("So, ")));
      },
    );
    // the rerun asks again for the failed ones only, and they succeed
    await withModelServer(
      (request) => rewrite((request.body as { messages: { content: string }[] }).messages[0]!.content),
      async (server) => {
        const result = await runCli([...args, "--renderer-base-url", `${server.url}/v1`], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(result.code, 0, result.stderr);
        assert.equal(server.requests.length, failedIds.length);
        const questions = parseTagQuestions(JSON.parse(readFileSync(join(out, "questions.json"), "utf8")), "questions.json");
        assert.ok(questions.every((q) => q.question.startsWith("So, ")));
        const stats = JSON.parse(readFileSync(join(out, "stats.json"), "utf8")) as { renderer: { failed: number } };
        assert.equal(stats.renderer.failed, 0);
      },
    );
  });

  test("rewrites that failed, examples among them, run again: each text recorded once, the dataset byte for byte that of a run without failures", async () => {
    const source = recordings(true);
    const home = temporaryDir();
    const args = (out: string, url: string) => ["generate", "tag", "--source", `sim:${source}`, "--out", join(home, out), "--per-trajectory", "6", "--renderer", "openai/gemma-2-27b-it", "--renderer-base-url", `${url}/v1`, "--no-cache", "--max-retries", "0"];
    const rewrite = (request: { body: unknown }): ReturnType<typeof openAiReply> => {
      const last = (request.body as { messages: { content: string }[] }).messages[0]!.content.split("Structured question: ").at(-1)!;
      return openAiReply(JSON.stringify({ question: `So, ${/^Question: (.*)$/m.exec(last)![1]!}`, answer: /^Answer: (.*)$/m.exec(last)![1]! }));
    };
    const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
    await withModelServer(rewrite, async (server) => assert.equal((await runCli(args("whole", server.url), env)).code, 0));
    // every third call answered 500 (not retried): examples fail, and the texts written with them wait
    await withModelServer(
      (request, index) => (index % 3 === 0 ? { status: 500, body: { error: { message: "overloaded" } } } : rewrite(request)),
      async (server) => {
        const result = await runCli(args("resumed", server.url), env);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, /rewriting \S+ failed: (.*overloaded|not asked: \d+ of the example rewrites failed)/);
      },
    );
    await withModelServer(rewrite, async (server) => assert.equal((await runCli(args("resumed", server.url), env)).code, 0));
    const records = (out: string): { questionId: string }[] => readFileSync(join(home, out, "rewrites.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { questionId: string });
    const ids = records("resumed").map((r) => r.questionId);
    assert.equal(ids.length, new Set(ids).size, "no text recorded twice");
    assert.deepEqual([...ids].sort(), records("whole").map((r) => r.questionId).sort());
    assert.equal(readFileSync(join(home, "resumed", "questions.json"), "utf8"), readFileSync(join(home, "whole", "questions.json"), "utf8"));
  });

  test("reads real ALFRED trajectories through the replayer", async () => {
    const source = temporaryDir();
    const seen = join(alfredDir, "valid_seen");
    for (const task of readdirSync(seen).sort().slice(0, 3)) cpSync(join(seen, task), join(source, task), { recursive: true });
    writeRecording(join(source, "zz-broken"), {});
    writeFileSync(join(source, "zz-broken", "traj_data.json"), JSON.stringify({ task_type: "pick_and_place_simple" }));
    const home = temporaryDir();
    const out = join(home, "tag");
    const result = await runCli(["generate", "tag", "--source", `alfred:${source}`, "--out", out, "--per-trajectory", "4"], cliEnv(home));
    assert.equal(result.code, 1, result.stderr);
    const questions = parseTagQuestions(JSON.parse(readFileSync(join(out, "questions.json"), "utf8")), "questions.json");
    assert.ok(questions.length >= 6);
    assert.ok(questions.every((q) => q.source === "alfred"));
    // every ALFRED property comes from the type's catalogue entry: no property question survives
    assert.ok(questions.every((q) => q.program.query.type !== "getProperty"));
    const stats = JSON.parse(readFileSync(join(out, "stats.json"), "utf8")) as { funnel: { made: number; kept: number; filtered: Record<string, number> } };
    assert.equal(stats.funnel.kept, questions.length);
    assert.equal(stats.funnel.made, stats.funnel.kept + Object.values(stats.funnel.filtered).reduce((a, b) => a + b, 0));
    assert.ok(stats.funnel.filtered.answeredByType! > 0);
    assert.match(result.stdout, new RegExp(`programs: ${stats.funnel.made} made, ${questions.length} kept; filtered: .*answeredByType ${stats.funnel.filtered.answeredByType}`));
    const skipped = JSON.parse(readFileSync(join(out, "skipped.json"), "utf8")) as { file: string }[];
    assert.deepEqual(skipped.map((s) => relative(source, s.file)), ["zz-broken/traj_data.json"]);
    // ALFRED has no frames: the set is for judges only, said when made and when an agent is asked to answer it
    assert.ok(questions.every((q) => q.episode_history === null));
    assert.match(result.stdout, new RegExp(`${questions.length} of ${questions.length} questions have no observations \\(episode_history null\\): they are for judges only`));
    const answer = await runCli(["answer", "--benchmark", join(out, "questions.json"), "--agent", "blind", "--model", "openai/gpt-4o", "--model-base-url", "http://127.0.0.1:9/v1", "--out", join(home, "run")], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
    assert.equal(answer.code, 2, answer.stderr);
    assert.match(answer.stderr, /questions\.json, record 1 .*field "episode_history": a TAG-EQA set whose questions have no observations .* is for judges only: no agent can answer it/);
    assert.match(answer.stderr, /eqa score-tag/);
  });

  test("a bad source or an empty directory is a usage error", async () => {
    const home = temporaryDir();
    const bad = await runCli(["generate", "tag", "--source", "habitat:/tmp", "--out", join(home, "x")], cliEnv(home));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown source "habitat:\/tmp"/);
    const empty = await runCli(["generate", "tag", "--source", `sim:${temporaryDir()}`, "--out", join(home, "y")], cliEnv(home));
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /no trajectory\.json below this directory/);
  });
});
