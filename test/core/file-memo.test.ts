import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { memoByFile } from "../../src/core/index.js";
import { temporaryDir } from "../helpers/paths.js";

describe("memoByFile", () => {
  test("a file is read once while it stays as it was, and again once it changes or goes", () => {
    const file = join(temporaryDir(), "prices.json");
    writeFileSync(file, "one");
    let reads = 0;
    const read = memoByFile((path) => {
      reads++;
      try {
        return readFileSync(path, "utf8");
      } catch {
        return "(none)";
      }
    });
    assert.equal(read(file), "one");
    assert.equal(read(file), "one");
    assert.equal(reads, 1, "read once while it is unchanged");
    writeFileSync(file, "two!");
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    assert.equal(read(file), "two!", "a file changed since is read again (another run in the same process sees it as a new process would)");
    assert.equal(reads, 2);
    assert.equal(read(join(file, "..", "missing.json")), "(none)");
  });
});
