import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { lastUserText, openAiReply, withModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyDemo, copyDemoHome } from "../helpers/recordings.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

interface Summary {
  kind: string;
  counts: { questions: number; scored: number; failed: number; structured: number; extracted: number };
  scores: { grounded: { mean: number } };
}

test("eqa demo runs offline: recordings, questions, the program agent's structured answers scored, the report; a second run reuses everything", async () => {
  const home = temporaryDir();
  const out = join(home, "demo");
  const first = await runCli(["demo", "--out", out, "--seeds", "2", "--per-trajectory", "8"], cliEnv(home));
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /recorded home 2/);
  const report = join(out, "report.html");
  assert.match(first.stdout, new RegExp(`report: ${report.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));

  const log = join(out, "recordings", "home-2", "trajectory.json");
  const questions = readJson(join(out, "dataset", "questions.json")) as { question_id: string; program: unknown }[];
  assert.ok(questions.length >= 4, `only ${questions.length} questions`);
  const predictions = readJson(join(out, "runs", "program", "predictions.json")) as { question_id: string; answer: unknown }[];
  assert.deepEqual(predictions.map((p) => p.question_id), questions.map((q) => q.question_id));
  assert.ok(predictions.every((p) => Array.isArray(p.answer)), "every program answer is a structured answer");
  const summary = readJson(join(out, "runs", "program", "summary.json")) as Summary;
  assert.equal(summary.kind, "tag-structured");
  assert.equal(summary.counts.scored, questions.length);
  assert.equal(summary.counts.structured, questions.length, "structured answers need no extraction");
  assert.ok(summary.scores.grounded.mean >= 1 && summary.scores.grounded.mean <= 5);
  const html = readFileSync(report, "utf8");
  assert.match(html, /program/);

  const recordedAt = statSync(log).mtimeMs;
  const second = await runCli(["demo", "--out", out, "--seeds", "2", "--per-trajectory", "8"], cliEnv(home));
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stdout, /recorded home|generated \d+ questions|built the memory/);
  assert.equal(statSync(log).mtimeMs, recordedAt);

  // an agent of the user's own (task tag) answers the same questions from its action history, scored beside the program agent
  const agent = join(home, "counter.mjs");
  writeFileSync(
    agent,
    `export function initialize() { return { name: "counter", version: "1", supports: ["tag"] }; }
export function answer(params) { return { answer: JSON.stringify([{ predicate: "", objects: [], value: params.tag.actions.length }]) }; }
`,
  );
  const third = await runCli(["demo", "--out", out, "--seeds", "2", "--per-trajectory", "8", "--agent", agent], cliEnv(home));
  assert.equal(third.code, 0, third.stderr);
  assert.match(third.stdout, /counter\.mjs: structured score \d\.\d\d of 5/);
  const agentSummary = readJson(join(out, "runs", "agent", "summary.json")) as Summary;
  assert.equal(agentSummary.counts.structured, questions.length, "its JSON answers are scored as structured answers");
});

test("eqa demo --model runs the language-model agents on the same questions and the judge extracts their answers' structure", async () => {
  const home = temporaryDir();
  const out = join(home, "demo");
  // the demo's recording, questions and program agent as eqa demo makes them (the demo other test files copy, made once), the demo going on from there
  await copyDemo({ seeds: [1], perTrajectory: 4 }, out);
  await withModelServer(
    (request) => {
      const text = lastUserText(request);
      if (text.startsWith("You read an answer to a question about a home")) return openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "mug", caption: "red", position: null }], value: 1 }]));
      return openAiReply("A: There is one red mug.");
    },
    async (server) => {
      const result = await runCli(["demo", "--out", out, "--seeds", "1", "--per-trajectory", "4", "--model", "openai/test-vlm", "--model-base-url", `${server.url}/v1`, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 0, result.stderr + result.stdout);
      const questions = readJson(join(out, "dataset", "questions.json")) as unknown[];
      for (const agent of ["blind", "vlm"]) {
        const summary = readJson(join(out, "runs", agent, "summary.json")) as Summary;
        assert.equal(summary.counts.scored, questions.length, agent);
        assert.equal(summary.counts.extracted, questions.length, `${agent}: free text goes through the judge's extraction`);
      }
      // the vlm agent sent frames of the recording
      assert.ok(server.requests.some((r) => JSON.stringify(r.body).includes("image_url")));
      const html = readFileSync(join(out, "report.html"), "utf8");
      for (const name of ["program", "blind", "vlm"]) assert.match(html, new RegExp(name));
    },
  );
});

test("eqa demo --model with a judge whose replies are not JSON: every such answer is counted as unreadable by the judge, named, left out of the scores, exit 1", async () => {
  const home = temporaryDir();
  const out = join(home, "demo");
  // the demo's recording, questions and program agent as eqa demo makes them (the demo other test files copy, made once), the demo going on from there
  await copyDemo({ seeds: [1], perTrajectory: 4 }, out);
  await withModelServer(
    (request) => {
      const text = lastUserText(request);
      if (text.startsWith("You read an answer to a question about a home") || text.startsWith("That reply could not be read")) return openAiReply("I would rather not write JSON.");
      if (text.includes("Proposed Answer:")) return openAiReply("Action: keep");
      return openAiReply("A: There is one red mug.");
    },
    async (server) => {
      const result = await runCli(["demo", "--out", out, "--seeds", "1", "--per-trajectory", "4", "--model", "openai/test-vlm", "--model-base-url", `${server.url}/v1`, "--agents", "blind", "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 1, result.stderr + result.stdout);
      const questions = (readJson(join(out, "dataset", "questions.json")) as unknown[]).length;
      assert.match(result.stdout, new RegExp(`blind \\(openai/test-vlm\\): structured score n/a of 5 \\(ungrounded n/a\\), valid answers n/a, 0 of ${questions} scored, 0 failed, ${questions} unreadable by the judge`));
      assert.match(result.stdout, new RegExp(`blind \\(openai/test-vlm\\): the judge's replies could not be read for ${questions} of ${questions} questions, more than 10%: exit 1 \\(first: \\S+, tag-structured: the judge's replies could not be read as a structured answer \\(asked twice\\)`));
      const summary = readJson(join(out, "runs", "blind", "summary.json")) as Summary & { judgeUnreadable: { count: number; overLimit: boolean } };
      assert.deepEqual([summary.counts.scored, summary.counts.failed, summary.judgeUnreadable.count, summary.judgeUnreadable.overLimit], [0, 0, questions, true]);
      assert.match(result.stdout, /program: structured score \d\.\d\d of 5/, "the program agent's structured answers need no judge");
    },
  );
});

test("eqa demo --agent without --model says why an agent's free-text answers failed: they need the judge of --model", async () => {
  const home = temporaryDir();
  const agent = join(home, "texter.mjs");
  writeFileSync(agent, `export function initialize() { return { name: "texter", version: "1", supports: ["tag"] }; }\nexport function answer() { return { answer: "there are two mugs" }; }\n`);
  await copyDemoHome(1, join(home, "demo"));
  const result = await runCli(["demo", "--out", join(home, "demo"), "--seeds", "1", "--per-trajectory", "2", "--agent", agent], cliEnv(home));
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, /texter\.mjs: structured score n\/a of 5 .* (\d+) failed/);
  assert.match(result.stdout, /\n {2}\d+ failed: this answer is free text: give eqa demo --model PROVIDER\/MODEL \(its judge reads free-text answers\) to extract its structure, or write the prediction as a structured answer/);
});
