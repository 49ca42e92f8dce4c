import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { UserError } from "../../src/core/index.js";

describe("UserError's message", () => {
  test("counts records from 1: the record at index 3 is the fourth, record 4", () => {
    assert.equal(new UserError("duplicate question id", { file: "preds.json", index: 3, id: "q4", field: "question_id" }).message, 'preds.json, record 4 (id q4), field "question_id": duplicate question id');
    assert.equal(new UserError("not a number", { file: "choices.csv", line: 2, index: 0, field: "floor" }).message, 'choices.csv:2, record 1, field "floor": not a number');
  });

  test("calls a command-line flag an option, not a field", () => {
    assert.equal(new UserError("OPENAI_API_KEY is not set", { field: "--judge" }, "set it").message, "option --judge: OPENAI_API_KEY is not set\n  set it");
  });
});
