import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildHtmlReport, startViewer } from "../../src/report/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

/** Folders that hold no run, given to eqa report and eqa view. */
const home = temporaryDir("eqakit-run-folders-");

describe("eqa report and eqa view of a folder without a run", () => {
  test("an empty folder is a usage error (exit 2) naming the folder and what was expected; no report is written", async () => {
    const empty = join(home, "empty");
    mkdirSync(empty);
    const out = join(home, "report.html");
    const cli = await runCli(["report", empty, "--out", out], cliEnv(home), home);
    assert.equal(cli.code, 2, cli.stdout);
    assert.match(cli.stderr, /^eqa: /);
    assert.ok(cli.stderr.includes(empty), cli.stderr);
    assert.match(cli.stderr, /holds no run/);
    assert.match(cli.stderr, /manifest\.json/);
    assert.equal(existsSync(out), false, "no report");
  });

  test("a folder of files eqakit did not write, and folders of them, is refused alike, by the library and by the viewer", async () => {
    const other = join(home, "photos");
    mkdirSync(join(other, "2026", "summer"), { recursive: true });
    writeFileSync(join(other, "2026", "summer", "beach.txt"), "not a run\n");
    await assert.rejects(buildHtmlReport([other]), (error: Error) => error.name === "UserError" && /holds no run/.test(error.message) && error.message.includes(other));
    await assert.rejects(startViewer({ runDirs: [other], port: 0 }), (error: Error) => error.name === "UserError" && /holds no run/.test(error.message));
  });
});
