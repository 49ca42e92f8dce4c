import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { loadPromptFile, promptFileFrom, withPromptFiles } from "../../src/core/index.js";

const NAME = "fine-eqa-stop-check";

describe("withPromptFiles", () => {
  test("sends a replacement within its work, awaits included, and eqakit's own prompt before, after and beside it", async () => {
    const own = loadPromptFile(NAME);
    const original = promptFileFrom(NAME, "the benchmark's own words\n", "/data/express-bench/prompt/explore.txt");
    assert.equal(original.sha256.length, 64);
    const inside = withPromptFiles([original], async () => {
      await sleep(5);
      return loadPromptFile(NAME);
    });
    // a run beside it, in the same process at the same time, keeps eqakit's prompt
    const beside = (async () => {
      await sleep(1);
      return loadPromptFile(NAME);
    })();
    assert.deepEqual(await inside, original);
    assert.deepEqual(await beside, own);
    assert.deepEqual(loadPromptFile(NAME), own);
  });

  test("two runs with different replacements at once each see their own", async () => {
    const a = promptFileFrom(NAME, "a\n", "a.txt");
    const b = promptFileFrom(NAME, "b\n", "b.txt");
    const read = (p: typeof a) => withPromptFiles([p], async () => {
      await sleep(3);
      return loadPromptFile(NAME).text;
    });
    assert.deepEqual(await Promise.all([read(a), read(b), read(a)]), ["a\n", "b\n", "a\n"]);
  });
});
