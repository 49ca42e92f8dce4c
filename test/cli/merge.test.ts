import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { lastUserText, openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const readLines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** What two runs of the same work may differ in: when it happened and how long it took. */
const TIMES = new Set(["finishedAt", "createdAt", "wallTimeMs", "latencyMs", "thisProcess", "explorerMsPerStep"]);

function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !TIMES.has(k)).map(([k, v]) => [k, withoutTimes(v)]));
}

/** The records of a JSONL file by id, times left out. */
function recordsById(path: string): Map<string, unknown> {
  return new Map(readLines(path).map((r) => [String(r.questionId), withoutTimes(r)]));
}

const questions = readRawBenchmark().slice(0, 14);

/** A model that answers each question (and judges each answer) the same way whichever process asks. */
function scripted(request: ReceivedRequest): ReturnType<typeof openAiReply> {
  const text = lastUserText(request);
  if (text.includes("Your mark")) return openAiReply(`Your mark: ${(text.length % 5) + 1}`);
  return openAiReply(`A: thing number ${text.length % 7}`);
}

function writeSubset(dir: string): string {
  const file = join(dir, "subset.json");
  writeFileSync(file, JSON.stringify(questions.map((q) => q.question_id)));
  return file;
}

describe("eqa answer --shard and eqa merge", () => {
  test("two shards (one by --shard, one from a Slurm job array task) merged equal one unsharded run, record for record", async () => {
    const dir = temporaryDir();
    const subset = writeSubset(dir);
    await withModelServer(scripted, async (server) => {
      const args = (out: string): string[] => ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out, "--no-cache"];
      const whole = await runCli(args(join(dir, "whole")), cliEnv(dir));
      assert.equal(whole.code, 0, whole.stderr);
      const first = await runCli([...args(join(dir, "s0")), "--shard", "0/2"], cliEnv(dir));
      assert.equal(first.code, 0, first.stderr);
      // sbatch --array=1-2: task 2 is the second shard, 1/2
      const second = await runCli(args(join(dir, "s1")), cliEnv(dir, { SLURM_ARRAY_TASK_ID: "2", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_COUNT: "2" }));
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, /shard 1\/2 \(from the Slurm job array task 2/);
      const s0 = readLines(join(dir, "s0", "traces.jsonl")).length;
      const s1 = readLines(join(dir, "s1", "traces.jsonl")).length;
      assert.equal(s0 + s1, questions.length);
      assert.ok(s0 > 0 && s1 > 0, "each shard has questions");
      assert.equal((readJson(join(dir, "s1", "summary.json")) as { config: { shard: string } }).config.shard, "1/2");

      const merged = await runCli(["merge", join(dir, "s1"), join(dir, "s0"), "--out", join(dir, "merged")], cliEnv(dir));
      assert.equal(merged.code, 0, merged.stderr);
      assert.match(merged.stdout, /merged 2 shard\(s\)/);
      assert.deepEqual(recordsById(join(dir, "merged", "traces.jsonl")), recordsById(join(dir, "whole", "traces.jsonl")));
      assert.deepEqual(readJson(join(dir, "merged", "predictions.json")), readJson(join(dir, "whole", "predictions.json")));
      assert.deepEqual(withoutTimes(readJson(join(dir, "merged", "summary.json"))), withoutTimes(readJson(join(dir, "whole", "summary.json"))));
      const note = readJson(join(dir, "merged", "merge.json")) as { shards: { shard: string }[] };
      assert.deepEqual(note.shards.map((s) => s.shard), ["0/2", "1/2"]);

      // refusals, each naming the directories
      const missing = await runCli(["merge", join(dir, "s0"), "--out", join(dir, "m2")], cliEnv(dir));
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /shard 1\/2 of 2 not given/);
      const unsharded = await runCli(["merge", join(dir, "whole"), join(dir, "s0"), "--out", join(dir, "m3")], cliEnv(dir));
      assert.equal(unsharded.code, 2);
      assert.match(unsharded.stderr, /whole: holds a run made without a shard \(no shard\.json\)/);
      const full = await runCli(["merge", join(dir, "s0"), join(dir, "s1"), "--out", join(dir, "merged")], cliEnv(dir));
      assert.equal(full.code, 2);
      assert.match(full.stderr, /merged: already holds files/);
      const other = await runCli([...args(join(dir, "t1")), "--shard", "1/2", "--agent", "blind", "--model", "openai/gpt-4o"], cliEnv(dir));
      assert.equal(other.code, 0, other.stderr);
      const mixed = await runCli(["merge", join(dir, "s0"), join(dir, "t1"), "--out", join(dir, "m4")], cliEnv(dir));
      assert.equal(mixed.code, 2);
      assert.match(mixed.stderr, /s0, .*t1 were run with different configurations \(model/);
      const three = await runCli([...args(join(dir, "u0")), "--shard", "0/3"], cliEnv(dir));
      assert.equal(three.code, 0, three.stderr);
      const counts = await runCli(["merge", join(dir, "u0"), join(dir, "s1"), "--out", join(dir, "m5")], cliEnv(dir));
      assert.equal(counts.code, 2);
      assert.match(counts.stderr, /are not shards of one run: they split into different numbers of shards/);
      assert.ok(!existsSync(join(dir, "m4")) && !existsSync(join(dir, "m5")), "nothing written when refused");
    });
  });

  test("--shard takes i/n with i from 0 to n-1; a job array with gaps is refused; --no-shard works on all", async () => {
    const dir = temporaryDir();
    const subset = writeSubset(dir);
    await withModelServer(scripted, async (server) => {
      const args = (out: string): string[] => ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", join(dir, out), "--no-cache"];
      const bad = await runCli([...args("a"), "--shard", "2/2"], cliEnv(dir));
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /expected i\/n with i from 0 to 1 \(shards count from 0\), got "2\/2"/);
      const gaps = await runCli(args("b"), cliEnv(dir, { SLURM_ARRAY_TASK_ID: "9", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_COUNT: "3" }));
      assert.equal(gaps.code, 2);
      assert.match(gaps.stderr, /the job array task 9 is not one of 3 consecutive tasks/);
      const all = await runCli([...args("c"), "--no-shard"], cliEnv(dir, { SLURM_ARRAY_TASK_ID: "0", SLURM_ARRAY_TASK_COUNT: "4" }));
      assert.equal(all.code, 0, all.stderr);
      assert.equal(readLines(join(dir, "c", "traces.jsonl")).length, questions.length);
      assert.ok(!existsSync(join(dir, "c", "shard.json")));
    });
  });
});

describe("redoing one shard", () => {
  test("a shard that has not finished is named as such and resumes when run again; a job array of one task is refused in a larger array's shard folder", async () => {
    const dir = temporaryDir();
    const subset = writeSubset(dir);
    await withModelServer(scripted, async (server) => {
      const args = (out: string): string[] => ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", join(dir, out), "--no-cache"];
      for (const shard of ["0/2", "1/2"]) {
        const run = await runCli([...args(`s${shard[0]}`), "--shard", shard], cliEnv(dir));
        assert.equal(run.code, 0, run.stderr);
      }
      // a task stopped before its end (scancel, a time limit) leaves some records, neither shard.json nor summary.json
      const traces = readLines(join(dir, "s1", "traces.jsonl"));
      writeFileSync(join(dir, "s1", "traces.jsonl"), `${JSON.stringify(traces[0])}\n`);
      for (const name of ["shard.json", "summary.json"]) rmSync(join(dir, "s1", name));
      const early = await runCli(["merge", join(dir, "s0"), join(dir, "s1"), "--out", join(dir, "m1")], cliEnv(dir));
      assert.equal(early.code, 2);
      assert.match(early.stderr, /s1: holds a shard that has not finished \(no shard\.json yet\)/);
      assert.match(early.stderr, /run the shard's command again .*it resumes where it stopped/);
      const gone = await runCli(["merge", join(dir, "s0"), join(dir, "s9"), "--out", join(dir, "m1")], cliEnv(dir));
      assert.equal(gone.code, 2);
      assert.match(gone.stderr, /s9: does not exist/);
      const resumed = await runCli([...args("s1"), "--shard", "1/2"], cliEnv(dir));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal((readJson(join(dir, "s1", "summary.json")) as { counts: { reused: number } }).counts.reused, 1);
      const merged = await runCli(["merge", join(dir, "s0"), join(dir, "s1"), "--out", join(dir, "m1")], cliEnv(dir));
      assert.equal(merged.code, 0, merged.stderr);
      assert.equal(readLines(join(dir, "m1", "traces.jsonl")).length, questions.length);

      // sbatch --array=1 to redo shard 1: Slurm runs an array of one task, which is shard 0/1 (every question)
      const one = { SLURM_ARRAY_TASK_ID: "1", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "1", SLURM_ARRAY_TASK_STEP: "1", SLURM_ARRAY_TASK_COUNT: "1" };
      const intoShard = await runCli(args("s1"), cliEnv(dir, one));
      assert.equal(intoShard.code, 2);
      assert.match(intoShard.stderr, /a job array of one task works on every item; to redo one shard of a larger array give --shard i\/n, or scontrol requeue its task/);
      assert.match(intoShard.stderr, /s1: holds shard 1\/2 of a run, not shard 0\/1/);
      assert.match(intoShard.stderr, /to redo that shard give --shard 1\/2 \(or scontrol requeue its array task\)/);
      const unsharded = await runCli([...args("s0"), "--no-shard"], cliEnv(dir));
      assert.equal(unsharded.code, 2);
      assert.match(unsharded.stderr, /s0: holds shard 0\/2 of a run, not every item \(no shard\)/);
      assert.equal(readLines(join(dir, "s1", "traces.jsonl")).length + readLines(join(dir, "s0", "traces.jsonl")).length, questions.length, "nothing written when refused");
    });
  });
});

describe("eqa score --shard and eqa merge", () => {
  test("two shards merged equal one unsharded run: judgements, metrics and the LLM-Match summary with its intervals", async () => {
    const dir = temporaryDir();
    const subset = writeSubset(dir);
    const predictions = join(dir, "predictions.json");
    // one question without a prediction (--allow-missing) and one prediction outside the subset
    writeFileSync(predictions, JSON.stringify([...questions.slice(1).map((q, i) => ({ question_id: q.question_id, answer: i === 3 ? "" : `a ${q.answer}` })), { question_id: readRawBenchmark()[20]!.question_id, answer: "x" }]));
    await withModelServer(scripted, async (server) => {
      const args = (out: string): string[] => ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--allow-missing", "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(dir, out), "--no-cache"];
      const whole = await runCli(args("whole"), cliEnv(dir));
      assert.equal(whole.code, 0, whole.stderr);
      for (const i of [0, 1, 2]) {
        const shard = await runCli([...args(`s${i}`), "--shard", `${i}/3`], cliEnv(dir));
        assert.equal(shard.code, 0, shard.stderr);
      }
      const merged = await runCli(["merge", join(dir, "s0"), join(dir, "s1"), join(dir, "s2"), "--out", join(dir, "merged")], cliEnv(dir));
      assert.equal(merged.code, 0, merged.stderr);
      assert.match(merged.stdout, /overall/);
      assert.deepEqual(recordsById(join(dir, "merged", "judgements.jsonl")), recordsById(join(dir, "whole", "judgements.jsonl")));
      assert.deepEqual(readJson(join(dir, "merged", "metrics.json")), readJson(join(dir, "whole", "metrics.json")));
      const summary = withoutTimes(readJson(join(dir, "merged", "summary.json"))) as { counts: { missingPredictions: number; predictionsOutsideSubset: number; noAnswer: number } };
      assert.deepEqual(summary, withoutTimes(readJson(join(dir, "whole", "summary.json"))));
      assert.equal(summary.counts.missingPredictions, 1);
      assert.equal(summary.counts.predictionsOutsideSubset, 1);
      assert.equal(summary.counts.noAnswer, 2);

      // an answer run's shard is not a score run's
      const answered = await runCli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", join(dir, "a1"), "--no-cache", "--shard", "1/3"], cliEnv(dir));
      assert.equal(answered.code, 0, answered.stderr);
      const mixed = await runCli(["merge", join(dir, "s0"), join(dir, "a1"), "--out", join(dir, "m2")], cliEnv(dir));
      assert.equal(mixed.code, 2);
      assert.match(mixed.stderr, /a1: holds an answer run, not an llm-match run/);
    });
  });
});

describe("eqa explore --shard and eqa merge", () => {
  test("frontier exploration in the built-in simulator: two shards merged equal one unsharded run (records, trajectories, frames)", async () => {
    const dir = temporaryDir();
    const episodes = join(dir, "episodes.json");
    writeFileSync(
      episodes,
      JSON.stringify(["q1", "q2", "q3", "q4", "q5"].map((id, i) => ({ question_id: id, question: `Where is thing ${i}?`, scene: `home-${i % 2}` }))),
    );
    const args = (out: string): string[] => ["explore", "--episodes", episodes, "--env", "builtin", "--agent", "frontier", "--width", "64", "--height", "48", "--max-steps", "25", "--no-cache", "--out", join(dir, out)];
    const whole = await runCli(args("whole"), cliEnv(dir));
    assert.equal(whole.code, 0, whole.stderr);
    for (const i of [0, 1]) {
      const shard = await runCli([...args(`s${i}`), "--shard", `${i}/2`], cliEnv(dir));
      assert.equal(shard.code, 0, shard.stderr);
    }
    const merged = await runCli(["merge", join(dir, "s0"), join(dir, "s1"), "--out", join(dir, "merged")], cliEnv(dir));
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stdout, /5\/5 episodes finished, 0 failed/);
    assert.deepEqual(recordsById(join(dir, "merged", "episodes.jsonl")), recordsById(join(dir, "whole", "episodes.jsonl")));
    assert.deepEqual(readJson(join(dir, "merged", "predictions.json")), readJson(join(dir, "whole", "predictions.json")));
    assert.deepEqual(withoutTimes(readJson(join(dir, "merged", "summary.json"))), withoutTimes(readJson(join(dir, "whole", "summary.json"))));
    assert.deepEqual(readdirSync(join(dir, "merged", "trajectories")).sort(), readdirSync(join(dir, "whole", "trajectories")).sort());
    for (const id of ["q1", "q4"]) {
      assert.deepEqual(readJson(join(dir, "merged", "trajectories", `${id}.json`)), readJson(join(dir, "whole", "trajectories", `${id}.json`)));
      assert.deepEqual(readdirSync(join(dir, "merged", "frames", id)).sort(), readdirSync(join(dir, "whole", "frames", id)).sort());
    }
  });
});
