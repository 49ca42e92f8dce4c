import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { collect } from "../helpers/cli.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

const VERSION = (JSON.parse(readFileSync(join(projectRoot, "node_modules", "@sparticuz", "chromium", "package.json"), "utf8")) as { version: string }).version;

/** A test process that launches the report tests' browser, opens a page and reads it back. */
const LAUNCH = `
const { launchBrowser } = await import(${JSON.stringify(pathToFileURL(join(projectRoot, "test", "helpers", "browser.ts")).href)});
const browser = await launchBrowser();
const page = await browser.newPage();
await page.setContent("<p>drawn</p>");
console.log(await page.textContent("p"));
await browser.close();
`;

describe("launchBrowser on a machine without a system Chromium", () => {
  test("two test processes starting at once in a new TMPDIR both get the packaged Chromium, unpacked once (no ETXTBSY)", async () => {
    const tmp = temporaryDir("eqakit-first-run-");
    // A PATH that holds node alone: no chromium for the helper to find.
    const bin = join(tmp, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node"));
    const env = { ...process.env, PATH: bin, TMPDIR: join(tmp, "tmp") };
    mkdirSync(env.TMPDIR);
    const start = () => collect(spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", LAUNCH], { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] }));
    const results = await Promise.all([start(), start()]);
    for (const result of results) {
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), "drawn");
      assert.doesNotMatch(result.stderr, /ETXTBSY/);
    }
    const left = readdirSync(env.TMPDIR).filter((name) => name.startsWith("eqakit-chromium"));
    assert.deepEqual(left, [`eqakit-chromium-${VERSION}`], "one unpacked folder, no lock or partial folder left");
  });
});
