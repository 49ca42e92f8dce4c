import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { indefinite, roleModelPhrase, runOfKind } from "../../src/core/index.js";

describe("indefinite", () => {
  test("a kind's name takes the article it is read with: a vowel, and an initialism read letter by letter (el, ar, aitch)", () => {
    assert.deepEqual(["explore", "answer", "answer-tag", "llm-match", "rm-score", "rm-bench", "hm-eqa"].map(indefinite), ["an explore", "an answer", "an answer-tag", "an llm-match", "an rm-score", "an rm-bench", "an hm-eqa"]);
    assert.deepEqual(["run", "memory", "tag-structured", "generate-tag", "demo", "reproduce", "vlm", "user"].map(indefinite), ["a run", "a memory", "a tag-structured", "a generate-tag", "a demo", "a reproduce", "a vlm", "a user"]);
  });

  test("a JSON type and a matrix's size: an object, a string, an 8×3, an 11×4, a 3×3", () => {
    assert.deepEqual(["object", "string", "number", "boolean", "undefined", "8×3", "11×4", "18×2", "3×3", "110×2"].map(indefinite), ["an object", "a string", "a number", "a boolean", "an undefined", "an 8×3", "an 11×4", "an 18×2", "a 3×3", "a 110×2"]);
  });
});

describe("runOfKind and roleModelPhrase", () => {
  test("messages name runs and model roles without 'a explore run' or 'the model model'", () => {
    assert.equal(runOfKind("explore"), "an explore run");
    assert.equal(runOfKind("llm-match"), "an llm-match run");
    assert.equal(runOfKind("tag-structured"), "a tag-structured run");
    assert.equal(roleModelPhrase("model"), "the model");
    assert.equal(roleModelPhrase("judge"), "the judge model");
  });
});
