import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

/** How the eqa command speaks to its user: one prefix for every error, phrases without "a explore run" or "the model model". */
const home = temporaryDir("eqakit-messages-");

describe("eqa's messages", () => {
  test("a usage error commander finds (an unknown option, a missing one) and one eqakit finds print the same prefix, exit 2", async () => {
    const unknown = await runCli(["score", "--prediction", "p.json"], cliEnv(home), home);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^eqa: unknown option '--prediction'/);
    const missing = await runCli(["score"], cliEnv(home), home);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^eqa: required option/);
    const invalid = await runCli(["answer-tag", "--questions", "q.json", "--agent", "llm-api", "--out", "o", "--concurrency", "none"], cliEnv(home), home);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /^eqa: option '--concurrency/);
    const user = await runCli(["report", "/nonexistent-eqakit-folder"], cliEnv(home), home);
    assert.equal(user.code, 2);
    assert.match(user.stderr, /^eqa: /);
    for (const result of [unknown, missing, invalid, user]) assert.doesNotMatch(result.stderr, /^error:/m);
  });

  test("a --ROLE-option flag of the role named model says what the model is sent, not 'the model model'", async () => {
    const help = await runCli(["answer-tag", "--help"], cliEnv(home), home);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--model-option <key=value>\s+what the model is sent/);
    assert.match(help.stdout, /--captioner-option <key=value>\s+what the captioner model is\s+sent/);
    assert.doesNotMatch(help.stdout.replace(/\s+/g, " "), /model model/);
  });
});
