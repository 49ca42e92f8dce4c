import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { RunDirectory, recordParser, resumeItems, type ResumeRule } from "../../src/store/index.js";
import { llmMatchJudgementSchema, tagJudgementSchema } from "../../src/eval/index.js";
import { answerRecordSchema } from "../../src/agents/index.js";
import { temporaryDir } from "../helpers/paths.js";

const recordSchema = z.looseObject({ questionId: z.string(), inputKey: z.string(), score: z.number().nullable(), note: z.string().default("none") });
type Item = { id: string; key: string };
const items: Item[] = ["q1", "q2", "q3", "q4", "q5"].map((id) => ({ id, key: `key-${id}` }));
const rule: ResumeRule<Item, z.infer<typeof recordSchema>> = { file: "records.jsonl", schema: recordSchema, items, id: (i) => i.id, inputKey: (i) => i.key, succeeded: (r) => r.score !== null };

/** q1 stands; q2's line fails the schema (a score that is text); q3 was made from other inputs; q4 failed; q5 has no line but a cut one. */
function writeRecords(dir: string): string {
  const lines = [
    { questionId: "q1", inputKey: "key-q1", score: 4, extra: [1, 2] },
    { questionId: "q2", inputKey: "key-q2", score: "4" },
    { questionId: "q3", inputKey: "other", score: 5 },
    { questionId: "q4", inputKey: "key-q4", score: null },
  ].map((r) => JSON.stringify(r));
  const path = join(dir, "records.jsonl");
  writeFileSync(path, `${lines.join("\n")}\n{"questionId":"q5","inp`);
  return path;
}

describe("resumeItems", () => {
  test("a record that fails its schema, was made from other inputs, failed or was cut is not reused: its item is done again", () => {
    const dir = temporaryDir();
    const path = writeRecords(dir);
    const { reusable, pending } = resumeItems(new RunDirectory(dir), rule);
    assert.deepEqual([...reusable.keys()], ["q1"]);
    assert.deepEqual(pending.map((i) => i.id), ["q2", "q3", "q4", "q5"]);
    // the record as its line had it, with the field the schema adds by default after the others
    assert.deepEqual(JSON.stringify(reusable.get("q1")), '{"questionId":"q1","inputKey":"key-q1","score":4,"extra":[1,2],"note":"none"}');
    // the open run folder cuts the line a kill left; the last of the same id wins
    assert.ok(readFileSync(path, "utf8").endsWith("}\n"));
    writeFileSync(path, `${readFileSync(path, "utf8")}${JSON.stringify({ questionId: "q4", inputKey: "key-q4", score: 2 })}\n`);
    assert.deepEqual(resumeItems(new RunDirectory(dir), rule).pending.map((i) => i.id), ["q2", "q3", "q5"]);
  });

  test("a look at a folder's path (a dry run) changes nothing, and a missing folder leaves every item to do", () => {
    const dir = temporaryDir();
    const path = writeRecords(dir);
    const before = readFileSync(path, "utf8");
    assert.deepEqual(resumeItems(dir, rule).pending.map((i) => i.id), ["q2", "q3", "q4", "q5"]);
    assert.equal(readFileSync(path, "utf8"), before);
    const missing = join(dir, "nothing");
    assert.deepEqual(resumeItems(missing, rule).pending, items);
    assert.equal(existsSync(missing), false);
  });

  test("the writers' schemas decide as the guards they replace: what a record lacks from an older version is filled, a malformed one is refused", () => {
    const answer = { questionId: "q1", answer: "a sofa", agent: "blind", inputKey: "k", episode: null, trace: null, finishedAt: "2026-12-01T00:00:00.000Z" };
    assert.deepEqual(recordParser(answerRecordSchema)(answer), { ...answer, error: null });
    assert.equal(recordParser(answerRecordSchema)({ ...answer, answer: 3 }), undefined);
    assert.equal(recordParser(answerRecordSchema)({ ...answer, questionId: 7 }), undefined);
    const judgement = { questionId: "q1", score: 3, mode: "robust", judge: "openai/gpt-4o", inputKey: "k", promptName: "p", promptSha256: "s", prediction: "a", neutralised: false, replies: ["Your mark: 3"], error: null, usage: { calls: 1, promptTokens: 10 }, finishedAt: "2026-12-01T00:00:00.000Z" };
    const parsed = recordParser(llmMatchJudgementSchema)(judgement);
    assert.equal(parsed?.usage.calls, 1);
    assert.equal(parsed?.usage.cachedPromptTokens, 0, "a usage total an older version did not write is 0");
    assert.equal(recordParser(llmMatchJudgementSchema)({ ...judgement, score: "3" }), undefined);
    assert.equal(recordParser(llmMatchJudgementSchema)({ ...judgement, score: undefined }), undefined);
    const tag = { questionId: "q1", inputKey: "k", status: "scored", valid: true, source: "structured", score: 5, groundedScore: 5, ungroundedScore: 5, errors: null, predicted: [], groups: [], replies: [], error: null, usage: {}, finishedAt: "2026-12-01T00:00:00.000Z" };
    assert.ok(recordParser(tagJudgementSchema)(tag));
    assert.equal(recordParser(tagJudgementSchema)({ ...tag, status: "done" }), undefined);
  });
});
