import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatJudgeUnreadable, judgeUnreadable } from "../../src/core/index.js";

const item = (questionId: string, judge = "llm-match") => ({ questionId, judge, error: "no mark", replies: ["Hmm."] });

describe("judgeUnreadable", () => {
  test("a run is over the limit when its judge could not be read for more than a tenth of its questions", () => {
    assert.equal(judgeUnreadable([item("q1")], 10).overLimit, false, "exactly a tenth is not more");
    assert.equal(judgeUnreadable([item("q1"), item("q2")], 10).overLimit, true);
    assert.equal(judgeUnreadable([], 0).overLimit, false);
  });

  test("a question counts once whichever of its judges could not be read", () => {
    const u = judgeUnreadable([item("q1", "llm-match"), item("q1", "eac"), item("q2", "eac")], 30);
    assert.deepEqual([u.count, u.of, u.items.length], [2, 30, 3]);
  });

  test("the line names the count, the first question and its judge, and the exit code only where the command exits for it", () => {
    assert.equal(formatJudgeUnreadable(judgeUnreadable([], 5)), "");
    const over = judgeUnreadable([item("q1"), item("q2")], 5);
    assert.equal(formatJudgeUnreadable(over), "the judge's replies could not be read for 2 of 5 questions, more than 10%: exit 1 (first: q1, llm-match: no mark)");
    assert.equal(formatJudgeUnreadable(over, "force-a-guess: the verdicts", false), "force-a-guess: the verdicts could not be read for 2 of 5 questions (first: q1, llm-match: no mark)");
  });
});
