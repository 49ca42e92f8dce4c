import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("--out naming an existing file", () => {
  // every command that writes a run or output directory, with otherwise usable flags
  const commands: [string, (dir: string) => string[]][] = [
    ["score", (dir) => ["score", "--predictions", join(dir, "predictions.json"), "--judge", "openai/gpt-4o"]],
    ["answer", () => ["answer", "--agent", "blind", "--model", "openai/gpt-4o"]],
    ["run", () => ["run", "--agent", "blind", "--model", "openai/gpt-4o", "--judge", "openai/gpt-4o"]],
    ["rm score", (dir) => ["rm", "score", "--instances", join(dir, "instances.jsonl"), "--model", "openai/gpt-4o"]],
    ["rm bench", (dir) => ["rm", "bench", "--instances", join(dir, "instances.jsonl"), "--model", "openai/gpt-4o"]],
    ["rm build", (dir) => ["rm", "build", "--responder", "openai/gpt-4o", "--scorer", "openai/gpt-4o", "--frames", dir]],
    ["memory build", (dir) => ["memory", "build", "--frames", dir]],
    ["generate tag", (dir) => ["generate", "tag", "--source", `sim:${dir}`]],
    ["sim home", () => ["sim", "home", "--seed", "3"]],
    ["sim record", () => ["sim", "record", "--seed", "3", "--task", "random"]],
    ["explore", (dir) => ["explore", "--episodes", join(dir, "episodes.json"), "--agent", "frontier"]],
    ["score-tag", (dir) => ["score-tag", "--questions", join(dir, "questions.json"), "--predictions", join(dir, "predictions.json")]],
  ];
  for (const [name, args] of commands) {
    test(`eqa ${name} refuses it with exit 2, naming the flag and the path, before writing anything`, async () => {
      const dir = temporaryDir();
      const file = join(dir, "taken.txt");
      writeFileSync(file, "keep me\n");
      const result = await runCli([...args(dir), "--out", file], cliEnv(dir));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--out <(dir|file)>/);
      assert.match(result.stderr, new RegExp(`${escape(file)} is an existing file, not a directory`));
      assert.equal(readFileSync(file, "utf8"), "keep me\n");
      assert.deepEqual(readdirSync(dir), ["taken.txt"]);
    });
  }

  test("eqa sim home refuses an --out below a file (a file where a parent folder should be)", async () => {
    const dir = temporaryDir();
    const file = join(dir, "taken.txt");
    writeFileSync(file, "keep me\n");
    const result = await runCli(["sim", "home", "--seed", "3", "--out", join(file, "home")], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--out <dir>/);
    assert.match(result.stderr, new RegExp(`${escape(file)} is a file, so ${escape(join(file, "home"))} cannot be made a directory`));
    assert.deepEqual(readdirSync(dir), ["taken.txt"]);
  });
});

describe("eqa report --out", () => {
  function writeRun(dir: string): string {
    const run = join(dir, "run");
    mkdirSync(run);
    writeFileSync(join(run, "summary.json"), JSON.stringify({ kind: "explore", counts: { episodes: 1 } }));
    return run;
  }

  test("into folders that do not exist yet: they are made and the report written whole", async () => {
    const dir = temporaryDir();
    const run = writeRun(dir);
    const out = join(dir, "reports", "today", "report.html");
    const result = await runCli(["report", run, "--out", out], cliEnv(dir));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`wrote ${escape(out)} \\(1 run\\(s\\)`));
    assert.match(readFileSync(out, "utf8"), /^<!doctype html>/i);
    assert.deepEqual(readdirSync(join(dir, "reports", "today")), ["report.html"]);
  });

  test("naming a directory is refused with exit 2, naming the flag and the path", async () => {
    const dir = temporaryDir();
    const run = writeRun(dir);
    const result = await runCli(["report", run, "--out", run], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--out <file>/);
    assert.match(result.stderr, new RegExp(`${escape(run)} is a directory, not a file`));
    assert.deepEqual(readdirSync(run), ["summary.json"]);
  });
});
