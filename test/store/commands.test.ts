import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS_FILE, recordCommand } from "../../src/store/index.js";
import { temporaryDir } from "../helpers/paths.js";

describe("recordCommand", () => {
  test("appends the command as a shell would read it back, secrets hidden, and writes nothing beside a file", () => {
    const dir = temporaryDir();
    recordCommand(dir, ["view", "runs/a b", "--token", "s3cret-token-value", "--host=0.0.0.0", "--token=another-secret"], 0);
    recordCommand(dir, ["answer", "--out", dir, "--model", "it's/model"], 1);
    const records = readFileSync(join(dir, COMMANDS_FILE), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { command: string; exitCode: number; eqakitVersion: string });
    assert.equal(records[0]!.command, "eqa view 'runs/a b' --token '***' --host=0.0.0.0 '--token=***'");
    assert.ok(!readFileSync(join(dir, COMMANDS_FILE), "utf8").includes("secret"));
    assert.equal(records[1]!.command, `eqa answer --out ${dir} --model 'it'\\''s/model'`);
    assert.deepEqual(records.map((r) => r.exitCode), [0, 1]);
    const file = join(dir, "report.html");
    writeFileSync(file, "");
    recordCommand(file, ["report"], 0);
    recordCommand(join(dir, "absent"), ["report"], 0);
    assert.ok(!existsSync(join(dir, "absent")));
  });
});
