import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as eqakit from "../../src/index.js";
import { fixturesDir, projectRoot } from "../helpers/paths.js";

/**
 * The public API is the list of names src/index.ts exports, one at a time. The stored list
 * (test/fixtures/public-api.txt: values by name, types as `type Name`) makes every change to it
 * deliberate: update the file in the same change, and say why.
 */

const indexText = readFileSync(join(projectRoot, "src", "index.ts"), "utf8");
const storedFile = join(fixturesDir, "public-api.txt");

/** The names of src/index.ts's `export { … } from` and `export type { … } from` statements. */
function declaredExports(text: string): { values: string[]; types: string[] } {
  const values: string[] = [];
  const types: string[] = [];
  for (const m of text.matchAll(/^export (type )?\{([^}]*)\} from "[^"]+";/gm)) {
    const allTypes = m[1] !== undefined;
    for (const raw of m[2]!.split(",").map((n) => n.trim()).filter((n) => n !== "")) {
      const isType = allTypes || raw.startsWith("type ");
      const name = raw.replace(/^type /, "").split(/\s+as\s+/).pop()!;
      (isType ? types : values).push(name);
    }
  }
  return { values, types };
}

const byName = (a: string, b: string): number => a.replace(/^type /, "").localeCompare(b.replace(/^type /, "")) || a.localeCompare(b);

describe("src/index.ts", () => {
  test("names each export: no export * of a folder", () => {
    assert.doesNotMatch(indexText, /^export \*/m);
  });

  test("exports at run time exactly the values it declares", () => {
    const { values } = declaredExports(indexText);
    assert.deepEqual(Object.keys(eqakit).sort(), [...values].sort());
  });

  test("exports the names stored in test/fixtures/public-api.txt, no more, no fewer", () => {
    const { values, types } = declaredExports(indexText);
    const current = [...values, ...types.map((t) => `type ${t}`)].sort(byName);
    assert.equal(new Set(current).size, current.length, "no name exported twice");
    const stored = readFileSync(storedFile, "utf8").split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#"));
    assert.deepEqual(current, stored, "the public API changed: update test/fixtures/public-api.txt in the same change if that was meant");
    assert.ok(current.length <= 130, `${current.length} public names: keep the root to what a user composes`);
  });
});
