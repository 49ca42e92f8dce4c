import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, ftruncateSync, openSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli, type CliResult } from "../helpers/cli.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

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
