import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, ftruncateSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli, type CliResult } from "../helpers/cli.js";
import { lastUserText, openAiReply, withModelServer } from "../helpers/model-server.js";
import { expressBenchDir, openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const BOM = "\uFEFF";
const GIB = 2 ** 30;
const MIB = 2 ** 20;

/** A file of `bytes` zero bytes that takes no disk space (a hole, as `truncate -s` makes). */
function sparseFile(path: string, bytes: number): string {
  const fd = openSync(path, "w");
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
  return path;
}

function write(path: string, content: string | Buffer): string {
  writeFileSync(path, content);
  return path;
}

const benchmark = readRawBenchmark();
const firstQuestions = benchmark.slice(0, 2);
const predictionsJson = JSON.stringify(firstQuestions.map((q) => ({ question_id: q.question_id, answer: q.answer })));

/** `eqa score` with a judge at a closed port: input errors come before any model call. */
function scoreWithoutJudge(home: string, args: string[]): Promise<CliResult> {
  return runCli(["score", "--judge", "openai/gpt-4o", "--judge-base-url", "http://127.0.0.1:9/v1", "--no-cache", "--out", join(home, "run"), ...args], cliEnv(home, { OPENAI_API_KEY: "test" }));
}

function assertUserError(result: CliResult, ...words: (string | RegExp)[]): void {
  assert.equal(result.code, 2, result.stderr);
  assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  for (const word of words) {
    if (typeof word === "string") assert.ok(result.stderr.includes(word), `"${word}" in: ${result.stderr}`);
    else assert.match(result.stderr, word);
  }
}

describe("eqa on data files too large to read", () => {
  test("a 3 GiB predictions file is refused before reading, naming the file, its size and the limit", async () => {
    const home = temporaryDir();
    const huge = sparseFile(join(home, "huge.json"), 3 * GIB);
    assert.ok(statSync(huge).blocks * 512 < MIB, "the file is sparse");
    const result = await scoreWithoutJudge(home, ["--benchmark", openEqaBenchmarkFile, "--predictions", huge]);
    assertUserError(result, huge, "3.0 GiB", "500.0 MiB");
    assert.doesNotMatch(result.stderr, /ERR_FS_FILE_TOO_LARGE/);
  });

  test("a benchmark just over the JSON limit is refused, not read into one string", async () => {
    const home = temporaryDir();
    const big = sparseFile(join(home, "open-eqa-big.json"), 512 * MIB);
    const result = await scoreWithoutJudge(home, ["--benchmark", big, "--predictions", write(join(home, "p.json"), predictionsJson)]);
    assertUserError(result, big, "512.0 MiB", "larger than the 500.0 MiB");
    assert.doesNotMatch(result.stderr, /ERR_STRING_TOO_LONG/);
  });
});

describe("eqa on the text encoding of data files", () => {
  test("eqa score accepts a benchmark and predictions saved as UTF-8 with a byte-order mark", async () => {
    const home = temporaryDir();
    const bench = write(join(home, "bench.json"), BOM + JSON.stringify(firstQuestions));
    const predictions = write(join(home, "predictions.json"), BOM + predictionsJson);
    await withModelServer(() => openAiReply("Your mark: 5"), async (server) => {
      const result = await runCli(
        ["score", "--benchmark", bench, "--predictions", predictions, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--no-cache", "--out", join(home, "run")],
        cliEnv(home, { OPENAI_API_KEY: "test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(readFileSync(join(home, "run", "metrics.json"), "utf8")), Object.fromEntries(firstQuestions.map((q) => [q.question_id, 5])));
    });
  });

  test("eqa judge-agreement accepts CSV and JSON score files with a byte-order mark", async () => {
    const home = temporaryDir();
    const ids = ["q1", "q2", "q3", "q4"];
    const csv = write(join(home, "human.csv"), `${BOM}question_id,score\r\n${ids.map((id, i) => `${id},${i + 1}`).join("\r\n")}\r\n`);
    const json = write(join(home, "judge.json"), BOM + JSON.stringify(Object.fromEntries(ids.map((id, i) => [id, i + 2]))));
    const result = await runCli(["judge-agreement", csv, json, "--resamples", "50"], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /human: 4 item\(s\)/);
    assert.match(result.stdout, /judge: 4 item\(s\)/);
  });

  test("eqa rm review accepts a JSONL instance file with a byte-order mark", async () => {
    const home = temporaryDir();
    const instance = { id: "i1", question: "What colour is the sofa?", predicted_answer: "red", reasoning_trace: ["I saw a red sofa."], episode_history: "hm3d-v0/000-hm3d-BFRyYbPCCPE", ground_truth_score: 8 };
    const instances = write(join(home, "instances.jsonl"), `${BOM}${JSON.stringify(instance)}\n${JSON.stringify({ ...instance, id: "i2" })}\n`);
    const sheet = join(home, "review.csv");
    const result = await runCli(["rm", "review", "--instances", instances, "--export", sheet], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /2 rows/);
  });

  test("a Latin-1 predictions file is refused, naming the file and the offset of the first byte that is not UTF-8", async () => {
    const home = temporaryDir();
    const id = firstQuestions[0]!.question_id;
    const head = `[{"question_id": "${id}", "answer": "caf`;
    const latin1 = write(join(home, "latin1.json"), Buffer.concat([Buffer.from(head, "latin1"), Buffer.from([0xe9]), Buffer.from('"}]', "latin1")]));
    const result = await scoreWithoutJudge(home, ["--benchmark", openEqaBenchmarkFile, "--predictions", latin1, "--allow-missing"]);
    assertUserError(result, latin1, "not valid UTF-8", `byte offset ${Buffer.byteLength(head)}`, "0xE9");
  });
});

describe("eqa on an empty question selection", () => {
  test("eqa score with a --subset file that lists no question ids is refused, naming the flag and the file", async () => {
    const home = temporaryDir();
    const subset = write(join(home, "subset.json"), "[]");
    const result = await scoreWithoutJudge(home, ["--benchmark", openEqaBenchmarkFile, "--subset", subset, "--predictions", write(join(home, "p.json"), predictionsJson)]);
    assertUserError(result, subset, "the file holds no question ids", "--subset");
    assert.doesNotMatch(result.stdout, /NaN/);
  });

  test("eqa answer with a benchmark that holds no questions is refused, naming the file", async () => {
    const home = temporaryDir();
    const empty = write(join(home, "empty.json"), "[]");
    const result = await runCli(["answer", "--agent", "blind", "--model", "openai/gpt-4o", "--model-base-url", "http://127.0.0.1:9/v1", "--benchmark", empty, "--out", join(home, "run"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "test" }));
    assertUserError(result, empty, "the file holds no questions", "--benchmark");
  });

  test("eqa score-tag with a questions file that holds no questions is refused, naming the flag and the file", async () => {
    const home = temporaryDir();
    const questions = write(join(home, "questions.json"), "[]");
    const result = await runCli(["score-tag", "--questions", questions, "--predictions", write(join(home, "p.json"), "[]"), "--out", join(home, "run"), "--no-cache"], cliEnv(home));
    assertUserError(result, questions, "the file holds no TAG-EQA questions", "--questions");
  });
});

describe("eqa on OpenEQA records with null fields", () => {
  test('"extra_answers": null is read as absent: eqa score judges the record with the template without extra answers, as OpenEQA does', async () => {
    const home = temporaryDir();
    const records = firstQuestions.map((q) => ({ ...q, extra_answers: null }));
    const bench = write(join(home, "bench.json"), JSON.stringify(records));
    await withModelServer(() => openAiReply("Your mark: 4"), async (server) => {
      const result = await runCli(
        ["score", "--benchmark", bench, "--predictions", write(join(home, "p.json"), predictionsJson), "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--no-cache", "--out", join(home, "run")],
        cliEnv(home, { OPENAI_API_KEY: "test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, 2);
      for (const request of server.requests) {
        const prompt = lastUserText(request);
        assert.match(prompt, /given the question and the correct answer\./);
        assert.doesNotMatch(prompt, /Extra Answers/);
      }
    });
  });
});

describe("eqa on EXPRESS-Bench records with a field missing", () => {
  const records = (): Record<string, unknown>[] => JSON.parse(readFileSync(join(expressBenchDir, "express-bench.synthetic.json"), "utf8")) as Record<string, unknown>[];

  for (const at of [0, 1]) {
    test(`eqa explore names record ${at + 1} (index ${at}) and its missing start_rotation instead of calling the file the wrong format`, async () => {
      const home = temporaryDir();
      const bench = records();
      delete bench[at]!.start_rotation;
      const file = write(join(home, "express-bench.json"), JSON.stringify(bench));
      const result = await runCli(["explore", "--episodes", file, "--agent", "frontier", "--out", join(home, "run")], cliEnv(home));
      assertUserError(result, file, `record ${at + 1}`, 'field "start_rotation"', "is missing");
      assert.doesNotMatch(result.stderr, /"question_id"|"scene"/);
    });
  }

  test("eqa explore names the path of a bad field inside a trajectory step", async () => {
    const home = temporaryDir();
    const bench = records();
    (bench[1]!.actions as Record<string, { position: unknown }>).step_2!.position = [1, "up", 3];
    const file = write(join(home, "express-bench.json"), JSON.stringify(bench));
    const result = await runCli(["explore", "--episodes", file, "--agent", "frontier", "--out", join(home, "run")], cliEnv(home));
    assertUserError(result, file, "record 2", 'field "actions.step_2.position.1"', "expected number, found a string");
  });

  test("eqa explore refuses an episodes file that holds no episodes", async () => {
    const home = temporaryDir();
    const file = write(join(home, "episodes.json"), "[]");
    const result = await runCli(["explore", "--episodes", file, "--agent", "frontier", "--out", join(home, "run")], cliEnv(home));
    assertUserError(result, file, "the file holds no episodes", "--episodes");
  });
});
