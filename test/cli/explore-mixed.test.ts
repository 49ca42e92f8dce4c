import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { assertSameRun, jsonLines, killMidway } from "../helpers/kill.js";
import { buildMixedFixture, type MixedFixture } from "../helpers/mixed-set.js";
import { temporaryDir } from "../helpers/paths.js";
import { startViewer } from "../../src/report/index.js";
import { exactMatchJudgeScript, lastUserText, startModelServer } from "../helpers/model-server.js";

let fixture: MixedFixture;
let home: string;
const size = ["--width", "128", "--height", "96"];

before(async () => {
  fixture = await buildMixedFixture({ width: 128, height: 96 });
  home = temporaryDir();
});

const summaryOf = (dir: string) => JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as { kind: string; counts: Record<string, number>; metrics: Record<string, unknown>; questions: { questionId: string; correct: boolean }[] };

describe("eqa explore on a Mixed EQA set", () => {
  test("flags and inputs that do not fit are refused before anything runs, naming what to change", async () => {
    const env = cliEnv(home);
    const frontier = await runCli(["explore", "--episodes", fixture.file, "--agent", "frontier", "--out", join(home, "r1"), ...size], env);
    assert.equal(frontier.code, 2, frontier.stderr);
    assert.match(frontier.stderr, /memory-only, explore-only, recall-explore/);
    const judged = await runCli(["explore", "--episodes", fixture.file, "--agent", "memory-only", "--judge", "openai/gpt-4o", "--out", join(home, "r2")], env);
    assert.equal(judged.code, 2);
    assert.match(judged.stderr, /--judge does not apply to a Mixed EQA set/);
    const plain = join(home, "plain.json");
    writeFileSync(plain, JSON.stringify([{ question_id: "q", question: "Is there a sofa?", scene: "home-2" }]));
    const notMixed = await runCli(["explore", "--episodes", plain, "--agent", "recall-explore", "--out", join(home, "r3")], env);
    assert.equal(notMixed.code, 2);
    assert.match(notMixed.stderr, /runs Mixed EQA sets/);
    const broken = join(home, "broken.json");
    writeFileSync(broken, JSON.stringify({ ...fixture.set, episodes: fixture.set.episodes.map((e, i) => (i === 1 ? { ...e, category: "future" } : e)) }));
    const bad = await runCli(["explore", "--episodes", broken, "--agent", "memory-only", "--out", join(home, "r4")], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /category/);
    assert.ok(!existsSync(join(home, "r4", "mixed.jsonl")), "nothing run");
  });

  test("a mixed run's folder refuses another command's run, and another agent's", async () => {
    const env = cliEnv(home);
    const out = join(home, "memory-run");
    const ran = await runCli(["explore", "--episodes", fixture.file, "--agent", "memory-only", "--out", out, ...size], env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /accuracy %/);
    assert.equal(summaryOf(out).kind, "mixed");
    const plain = join(home, "plain.json");
    writeFileSync(plain, JSON.stringify([{ question_id: "q", question: "Is there a sofa?", scene: "home-2" }]));
    const other = await runCli(["explore", "--episodes", plain, "--agent", "frontier", "--max-steps", "5", "--out", out, ...size], env);
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /mixed/);
    const otherAgent = await runCli(["explore", "--episodes", fixture.file, "--agent", "explore-only", "--out", out, ...size], env);
    assert.equal(otherAgent.code, 2, otherAgent.stderr);
    assert.match(otherAgent.stderr, /agent/);
    // the report, made from another folder: per question the answer, right or wrong, the history's days, the plan
    const elsewhere = temporaryDir();
    const report = await runCli(["report", out, "--out", join(elsewhere, "report.html")], env, elsewhere);
    assert.equal(report.code, 0, report.stderr);
    const html = readFileSync(join(elsewhere, "report.html"), "utf8");
    assert.match(html, /data-id="past-where-candle"/);
    assert.match(html, /stop: memory · path 0\.00 m · right · history: day 1 \(yesterday, morning\); retrieved day 1 frame \d+/);
    assert.match(html, /stop: memory · path 0\.00 m · wrong/, "the changed present, answered from memory");
    assert.match(html, /accuracy \(past\)/);
    assert.match(html, /class="plan f\d+"/, "the plan of each question");
    // the viewer: the same question with its history, its score and its walk on the plan
    const viewer = await startViewer({ runDirs: [out], port: 0 });
    try {
      const question = (await (await fetch(`${viewer.url}/api/runs/0/questions/present-where-candle`)).json()) as { groundTruth: string; answer: string; correct: boolean; history: string; transcript: { plan: string | null; stop: string | null; agent: string | null } };
      assert.equal(question.groundTruth, "bed");
      assert.equal(question.answer, "desk");
      assert.equal(question.correct, false);
      assert.match(question.history, /^day 1 \(yesterday, morning\)/);
      assert.equal(question.transcript.stop, "memory");
      assert.equal(question.transcript.agent, "memory-only");
      assert.match(question.transcript.plan ?? "", /trajectories\/present-where-candle\.png$/);
    } finally {
      await viewer.close();
    }
  });

  test("killed with SIGKILL mid-run and resumed, a run equals one never interrupted", async () => {
    const env = cliEnv(home);
    const args = (out: string) => ["explore", "--episodes", fixture.file, "--agent", "recall-explore", "--max-steps", "150", "--out", out, ...size];
    const whole = join(home, "whole");
    const uninterrupted = await runCli(args(whole), env);
    assert.equal(uninterrupted.code, 0, uninterrupted.stderr);
    const resumed = join(home, "resumed");
    await killMidway(args(resumed), env, () => jsonLines(join(resumed, "mixed.jsonl")).length >= 1);
    assert.ok(jsonLines(join(resumed, "mixed.jsonl")).length < 4, "killed before its end");
    const again = await runCli(args(resumed), env);
    assert.equal(again.code, 0, again.stderr);
    assertSameRun(whole, resumed, {
      records: [{ file: "mixed.jsonl" }],
      figures: ["predictions.json", { file: "summary.json", pick: (s) => [s.counts, s.metrics, s.questions, s.failures] }, join("trajectories", "present-desk.json")],
    });
  });

  test("shards merged by eqa merge give the unsharded run's records and figures", async () => {
    const env = cliEnv(home);
    const args = (out: string, extra: string[] = []) => ["explore", "--episodes", fixture.file, "--agent", "memory-only", "--out", out, ...size, ...extra];
    const whole = join(home, "unsharded");
    assert.equal((await runCli(args(whole), env)).code, 0);
    const shards = [join(home, "shard-1"), join(home, "shard-2")];
    for (const [i, dir] of shards.entries()) {
      const ran = await runCli(args(dir, ["--shard", `${i}/2`]), env);
      assert.equal(ran.code, 0, ran.stderr);
    }
    const merged = join(home, "merged");
    const merge = await runCli(["merge", ...shards, "--out", merged], env);
    assert.equal(merge.code, 0, merge.stderr);
    assert.match(merge.stdout, /merged 2 shard\(s\)/);
    assertSameRun(whole, merged, { records: [{ file: "mixed.jsonl" }], figures: ["predictions.json", { file: "summary.json", pick: (s) => [s.metrics, s.questions] }] });
  });

  test("with --model the agent's VLM answers from the frames it retrieved and saw, LLM-Match scores it, and the cost is the requests the server received", async () => {
    // the judge gives 5 when the response is the answer, else 1; the agent's model always says the desk
    const server = await startModelServer(exactMatchJudgeScript("A: on the desk"));
    try {
      const out = join(home, "model-run");
      const ran = await runCli(["explore", "--episodes", fixture.file, "--agent", "memory-only", "--model", "openai/test-vlm", "--model-base-url", `${server.url}/v1`, "--judge", "openai/test-judge", "--judge-base-url", `${server.url}/v1`, "--no-cache", "--image-size", "64", "--out", out, ...size], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(ran.code, 0, ran.stderr);
      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { cost: { total: { calls: number }; roles: { role: string; calls: number }[] }; metrics: { accuracy: { byCategory: Record<string, { mean: number } | null> } } };
      assert.equal(summary.cost.total.calls, server.requests.length, "every request the server received, and only those, in the run's cost");
      assert.deepEqual(summary.cost.roles.map((r) => [r.role, r.calls]).sort(), [["agent", 4], ["judge", 4]]);
      const asked = server.requests.filter((r) => !lastUserText(r).includes("Your mark")).map((r) => JSON.stringify(r.body));
      const past = asked.find((b) => b.includes("Where did you put the candle yesterday?"))!;
      assert.ok(past, "the question was asked");
      assert.match(past, /yesterday, morning \(day 1\), frame \d+:/, "the history frames, labelled with when they were seen");
      assert.match(past, /image_url/);
      const records = jsonLines(join(out, "mixed.jsonl")) as { questionId: string; answer: string; llmMatch: number; details: { programAnswer: string } }[];
      assert.deepEqual(records.map((r) => [r.questionId, r.answer, r.llmMatch]), [["past-where-candle", "on the desk", 5], ["present-where-candle", "on the desk", 1], ["present-desk", "on the desk", 1], ["past-present-candle", "on the desk", 1]]);
      assert.equal(records[0]!.details.programAnswer, "desk", "the program's own answer kept beside");
      assert.equal(summary.metrics.accuracy.byCategory.past?.mean, 100);
      assert.equal(summary.metrics.accuracy.byCategory.present?.mean, 0);
    } finally {
      await server.close();
    }
  });
});
