import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cliEnv, collect } from "../helpers/cli.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

/**
 * docs/library.md's examples run as written: each ```ts block, with "eqakit" pointing at
 * src/index.ts, is run from the repository's root by node with tsx and must exit 0.
 */

const doc = readFileSync(join(projectRoot, "docs", "library.md"), "utf8");
const blocks = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
const heading = (code: string): string => {
  const before = doc.slice(0, doc.indexOf(code));
  return [...before.matchAll(/^## (.+)$/gm)].pop()?.[1] ?? "example";
};
const indexUrl = pathToFileURL(join(projectRoot, "src", "index.ts")).href;

describe("docs/library.md", () => {
  test("has an example for each noun, each importing from eqakit", () => {
    assert.ok(blocks.length >= 8, `${blocks.length} examples`);
    for (const code of blocks) assert.match(code, /from "eqakit";/, heading(code));
  });

  const dir = temporaryDir("eqakit-library-");
  blocks.forEach((code, i) => {
    test(`example ${i + 1} (${heading(code)}) runs and exits 0`, async () => {
      const file = join(dir, `example-${i + 1}.mts`);
      writeFileSync(file, code.replaceAll('from "eqakit";', `from ${JSON.stringify(indexUrl)};`));
      const env = cliEnv(join(dir, `home-${i + 1}`));
      const result = await collect(spawn(process.execPath, ["--import", "tsx", file], { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] }));
      assert.equal(result.code, 0, `${heading(code)}:\n${result.stderr}`);
      assert.notEqual(result.stdout.trim(), "", "the example prints what it did");
    });
  });
});
