import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { episodeSource, isUserError, OPENEQA_CATEGORIES, UserError } from "../../src/core/index.js";
import {
  loadOpenEqaBenchmark,
  loadPredictions,
  loadQuestionSubset,
  pairPredictions,
  selectQuestions,
  type OpenEqaBenchmark,
} from "../../src/data/index.js";
import { openEqaBenchmarkFile, openEqaSubsetFile, pr15Dir, readRawBenchmark, temporaryDir, type RawOpenEqaQuestion } from "../helpers/paths.js";

const dir = temporaryDir("eqakit-openeqa-data-");
let fixtureCount = 0;

/** Writes a fixture file (a JSON value, or raw text when given a string) and returns its path. */
function fixture(content: unknown, name?: string): string {
  fixtureCount++;
  const path = join(dir, name ?? `fixture-${fixtureCount}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
}

function rawQuestion(id: string, overrides: Partial<Record<keyof RawOpenEqaQuestion, unknown>> & Record<string, unknown> = {}): Record<string, unknown> {
  return {
    question: `What is object ${id}?`,
    answer: `answer ${id}`,
    category: "object recognition",
    question_id: id,
    episode_history: "hm3d-v0/000-hm3d-BFRyYbPCCPE",
    ...overrides,
  };
}

interface ExpectedError {
  file: string;
  index?: number;
  id?: string;
  field?: string;
  line?: number;
  column?: number;
  /** Further text the message must contain. */
  says?: (string | RegExp)[];
}

/** Asserts that `action` fails with a UserError whose message and location name what is expected. */
async function assertUserError(action: () => Promise<unknown> | unknown, expected: ExpectedError): Promise<UserError> {
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught !== undefined, "expected a UserError, but nothing was thrown");
  assert.ok(isUserError(caught), `expected a UserError, got ${String(caught)}`);
  const error = caught;
  const message = error.message;
  assert.ok(message.includes(expected.file), `message names the file: ${message}`);
  assert.equal(error.location.file, expected.file);
  if (expected.line !== undefined) {
    assert.equal(error.location.line, expected.line);
    assert.equal(error.location.column, expected.column);
    assert.ok(message.startsWith(`${expected.file}:${expected.line}:${expected.column}: `), `message names line and column: ${message}`);
  }
  if (expected.index !== undefined) {
    assert.equal(error.location.index, expected.index);
    // messages count records from 1
    const record = expected.id !== undefined ? `record ${expected.index + 1} (id ${expected.id})` : `record ${expected.index + 1}`;
    assert.ok(message.includes(record), `message names ${record}: ${message}`);
  } else {
    assert.equal(error.location.index, undefined);
  }
  assert.equal(error.location.id, expected.id);
  if (expected.field !== undefined) {
    assert.equal(error.location.field, expected.field);
    assert.ok(message.includes(`field "${expected.field}"`), `message names field ${expected.field}: ${message}`);
  } else {
    assert.equal(error.location.field, undefined);
  }
  for (const text of expected.says ?? []) {
    if (typeof text === "string") assert.ok(message.includes(text), `message says ${JSON.stringify(text)}: ${message}`);
    else assert.match(message, text);
  }
  return error;
}

describe("the real OpenEQA benchmark", () => {
  test("loads all 1,636 questions with their sources, categories and extra answers", async () => {
    const benchmark = await loadOpenEqaBenchmark(openEqaBenchmarkFile);
    assert.equal(benchmark.path, openEqaBenchmarkFile);
    assert.equal(benchmark.questions.length, 1636);
    assert.equal(benchmark.byId.size, 1636);

    const bytes = readFileSync(openEqaBenchmarkFile);
    // the md5 OpenEQA publishes for open-eqa-v0.json: this is the real file
    assert.equal(createHash("md5").update(bytes).digest("hex"), "c0bd01fdce18206112a29fc3eab50cbb");
    assert.equal(benchmark.sha256, createHash("sha256").update(bytes).digest("hex"));

    const bySource = new Map<string, number>();
    for (const q of benchmark.questions) bySource.set(episodeSource(q.episodeHistory), (bySource.get(episodeSource(q.episodeHistory)) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(bySource), { "hm3d-v0": 557, "scannet-v0": 1079 });

    const byCategory = new Map<string, number>();
    for (const q of benchmark.questions) byCategory.set(q.category, (byCategory.get(q.category) ?? 0) + 1);
    assert.equal(byCategory.size, 7);
    assert.deepEqual([...byCategory.keys()].sort(), [...OPENEQA_CATEGORIES].sort());
    assert.deepEqual(Object.fromEntries(byCategory), {
      "object recognition": 231,
      "attribute recognition": 240,
      "object state recognition": 252,
      "object localization": 263,
      "spatial understanding": 220,
      "functional reasoning": 217,
      "world knowledge": 213,
    });

    const withExtra = benchmark.questions.filter((q) => q.extraAnswers !== undefined);
    assert.equal(withExtra.length, 263);
    // in v0 exactly the object-localization questions carry extra answers
    assert.ok(withExtra.every((q) => q.category === "object localization"));
    assert.ok(withExtra.every((q) => q.extraAnswers!.length >= 1 && q.extraAnswers!.every((a) => typeof a === "string")));
  });

  test("keeps each record's fields, in the file's order, without inventing extra answers", async () => {
    const benchmark = await loadOpenEqaBenchmark(openEqaBenchmarkFile);
    assert.deepEqual(benchmark.questions[0], {
      questionId: "f2e82760-5c3c-41b1-88b6-85921b9e7b32",
      question: "What is the white object on the wall above the TV?",
      answer: "Air conditioning unit",
      category: "object recognition",
      episodeHistory: "hm3d-v0/000-hm3d-BFRyYbPCCPE",
    });
    assert.equal("extraAnswers" in benchmark.questions[0]!, false);
    assert.deepEqual(benchmark.byId.get("4ccfd8a6-60ef-47ed-8de1-22943b1b4d49"), {
      questionId: "4ccfd8a6-60ef-47ed-8de1-22943b1b4d49",
      question: "where is the black bowl?",
      answer: "on the table outside the kitchen",
      category: "object localization",
      episodeHistory: "hm3d-v0/040-hm3d-HaxA7YrQdEC",
      extraAnswers: [
        "on a black cabinet next to the barstools",
        "on the black table that's on the right as you enter the house, under the three paintings",
        "On the brown cabinet below the three paintings",
        "To the left of the kitchen bar stools",
      ],
    });
    const raw = readRawBenchmark();
    assert.deepEqual(
      benchmark.questions.map((q) => q.questionId),
      raw.map((r) => r.question_id),
    );
    for (const q of benchmark.questions) assert.equal(benchmark.byId.get(q.questionId), q);
  });

  test("the real 184-question subset selects its questions in the subset's order", async () => {
    const benchmark = await loadOpenEqaBenchmark(openEqaBenchmarkFile);
    const subset = await loadQuestionSubset(openEqaSubsetFile);
    assert.equal(subset.length, 184);
    assert.equal(new Set(subset).size, 184);
    assert.equal(subset[0], "f2e82760-5c3c-41b1-88b6-85921b9e7b32");
    assert.equal(subset[183], "f739f880-79fc-4066-9ca1-b04943433974");
    const selected = selectQuestions(benchmark, subset, openEqaSubsetFile);
    assert.equal(selected.length, 184);
    assert.deepEqual(
      selected.map((q) => q.questionId),
      subset,
    );
    for (const q of selected) assert.equal(q, benchmark.byId.get(q.questionId));
    // without a subset, every question in the file's order
    assert.equal(selectQuestions(benchmark, undefined), benchmark.questions);
  });

  test("a reversed subset selects in the reversed order", async () => {
    const benchmark = await loadOpenEqaBenchmark(openEqaBenchmarkFile);
    const ids = benchmark.questions.slice(0, 5).map((q) => q.questionId).reverse();
    const path = fixture(ids);
    const selected = selectQuestions(benchmark, await loadQuestionSubset(path), path);
    assert.deepEqual(
      selected.map((q) => q.questionId),
      ids,
    );
  });
});

describe("the real predictions of open-eqa PR 15", () => {
  const files = {
    blind: join(pr15Dir, "blind-gpt4-dry_run-predictions.json"),
    gpt4o: join(pr15Dir, "gpt4o-dry_run-predictions.json"),
  };

  test("load as question ids and answers, ignoring the other fields", async () => {
    const blind = await loadPredictions(files.blind);
    assert.deepEqual(blind, [
      { questionId: "f2e82760-5c3c-41b1-88b6-85921b9e7b32", answer: "a clock" },
      { questionId: "7447d782-d1a7-4c87-86dc-b5eafc5a0f76", answer: "Drywall" },
      { questionId: "e2ccf6f4-22a9-47d1-ab8d-a05a13435b82", answer: "brown" },
      { questionId: "c841bb52-1cec-46d7-bb83-8c99b5c66fa8", answer: "a clock" },
      { questionId: "79344680-6b45-4531-8789-ad0f5ef85b3b", answer: "Yes" },
    ]);
    const gpt4o = await loadPredictions(files.gpt4o);
    assert.equal(gpt4o.length, 5);
    assert.equal(gpt4o[0]!.answer, "The white object on the wall above the TV is an air conditioning unit.");
    assert.deepEqual(
      gpt4o.map((p) => p.questionId),
      blind.map((p) => p.questionId),
    );
    for (const p of gpt4o) assert.deepEqual(Object.keys(p), ["questionId", "answer"]);
  });

  test("pair with the benchmark: refused as incomplete, accepted with allowMissing or a subset", async () => {
    const benchmark = await loadOpenEqaBenchmark(openEqaBenchmarkFile);
    const predictions = await loadPredictions(files.gpt4o);

    const error = await assertUserError(
      () => pairPredictions(benchmark.questions, predictions, { benchmark, predictionsPath: files.gpt4o }),
      { file: files.gpt4o, says: ["1631 of 1636 benchmark question(s) have no prediction", "--allow-missing"] },
    );
    // the first ten missing ids are listed, then how many more
    const missing = benchmark.questions.slice(5).map((q) => q.questionId);
    for (const id of missing.slice(0, 10)) assert.ok(error.message.includes(id));
    assert.ok(!error.message.includes(missing[10]!));
    assert.ok(error.message.includes("(1621 more)"));

    const all = pairPredictions(benchmark.questions, predictions, { benchmark, predictionsPath: files.gpt4o, allowMissing: true });
    assert.equal(all.pairs.length, 1636);
    assert.equal(all.pairs.filter((p) => p.missing).length, 1631);
    assert.ok(all.pairs.filter((p) => p.missing).every((p) => p.answer === null));
    assert.equal(all.outsideSubset, 0);
    assert.deepEqual(
      all.pairs.slice(0, 5).map((p) => p.answer),
      predictions.map((p) => p.answer),
    );

    const subsetPath = fixture(predictions.map((p) => p.questionId));
    const selected = selectQuestions(benchmark, await loadQuestionSubset(subsetPath), subsetPath);
    const paired = pairPredictions(selected, predictions, { benchmark, predictionsPath: files.gpt4o });
    assert.equal(paired.pairs.length, 5);
    assert.ok(paired.pairs.every((p) => !p.missing));
    assert.deepEqual(
      paired.pairs.map((p) => [p.question.questionId, p.answer]),
      predictions.map((p) => [p.questionId, p.answer]),
    );
  });
});

describe("benchmark input errors", () => {
  test("malformed JSON names the file, line and column", async () => {
    const path = fixture('[\n  {"question_id": "q1",\n   "answer": "x",,\n  }\n]');
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, line: 3, column: 18, says: ["malformed JSON"] });
  });

  test("a truncated file and an empty file are malformed JSON at their end", async () => {
    const truncated = fixture('[\n  {"question_id": "q1"');
    await assertUserError(() => loadOpenEqaBenchmark(truncated), { file: truncated, line: 2, column: 23, says: ["malformed JSON"] });
    const empty = fixture("");
    await assertUserError(() => loadOpenEqaBenchmark(empty), { file: empty, line: 1, column: 1, says: ["malformed JSON"] });
  });

  test("a missing comma between records is located on the second record", async () => {
    const path = fixture('[\n  {"a": 1}\n  {"b": 2}\n]');
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, line: 3, column: 3, says: ["malformed JSON"] });
  });

  test("a byte-order mark is dropped, as editors on Windows write one (Python's json.load would refuse the file)", async () => {
    const path = fixture(`\ufeff${JSON.stringify([rawQuestion("q1")])}`);
    const loaded = await loadOpenEqaBenchmark(path);
    assert.deepEqual(loaded.questions.map((q) => q.questionId), ["q1"]);
  });

  test("a file that is not an array", async () => {
    const path = fixture({ questions: [rawQuestion("q1")] });
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, says: ["expected a JSON array of questions, found an object"] });
    const text = fixture('"open-eqa-v0"');
    await assertUserError(() => loadOpenEqaBenchmark(text), { file: text, says: ["found a string"] });
  });

  test("a file that does not exist", async () => {
    const path = join(dir, "no-such-benchmark.json");
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, says: ["file not found"] });
  });

  test("a record that is not an object", async () => {
    const path = fixture([rawQuestion("q1"), "q2"]);
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, index: 1, says: ["expected object, found a string"] });
  });

  test("duplicate question ids name the second record", async () => {
    const path = fixture([rawQuestion("q1"), rawQuestion("q2"), rawQuestion("q1", { category: "world knowledge" })]);
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, index: 2, id: "q1", field: "question_id", says: ["duplicate question id"] });
  });

  test("an unknown category lists the seven valid ones", async () => {
    const path = fixture([rawQuestion("q1"), rawQuestion("q2", { category: "Object Recognition" })]);
    await assertUserError(() => loadOpenEqaBenchmark(path), {
      file: path,
      index: 1,
      id: "q2",
      field: "category",
      says: ["unknown category", ...OPENEQA_CATEGORIES],
    });
  });

  for (const field of ["question", "answer", "category", "episode_history"] as const) {
    test(`a missing required field: ${field}`, async () => {
      const record = rawQuestion("q2");
      delete record[field];
      const path = fixture([rawQuestion("q1"), record]);
      await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, index: 1, id: "q2", field, says: ["is missing"] });
    });
  }

  test("a missing question id: the record is named by its index alone", async () => {
    const record = rawQuestion("q2");
    delete record.question_id;
    const path = fixture([rawQuestion("q1"), record]);
    await assertUserError(() => loadOpenEqaBenchmark(path), { file: path, index: 1, field: "question_id", says: ["is missing"] });
  });

  test("an empty question id or episode history", async () => {
    const emptyId = fixture([rawQuestion("q1"), rawQuestion("")]);
    await assertUserError(() => loadOpenEqaBenchmark(emptyId), { file: emptyId, index: 1, id: "", field: "question_id", says: ["non-empty"] });
    const emptyEpisode = fixture([rawQuestion("q1", { episode_history: "" })]);
    await assertUserError(() => loadOpenEqaBenchmark(emptyEpisode), { file: emptyEpisode, index: 0, id: "q1", field: "episode_history", says: ["non-empty"] });
  });

  test("a field of the wrong type says what was expected and found", async () => {
    const number = fixture([rawQuestion("q1"), rawQuestion("q2", { question: 5 })]);
    await assertUserError(() => loadOpenEqaBenchmark(number), { file: number, index: 1, id: "q2", field: "question", says: ["expected string, found a number"] });
    const nullAnswer = fixture([rawQuestion("q1", { answer: null })]);
    await assertUserError(() => loadOpenEqaBenchmark(nullAnswer), { file: nullAnswer, index: 0, id: "q1", field: "answer", says: ["expected string, found null"] });
    const numericId = fixture([rawQuestion("q1"), rawQuestion("q2"), { ...rawQuestion("q3"), question_id: 3 }]);
    await assertUserError(() => loadOpenEqaBenchmark(numericId), { file: numericId, index: 2, field: "question_id", says: ["expected string, found a number"] });
  });

  test("extra_answers must be a list of strings", async () => {
    const notList = fixture([rawQuestion("q1", { extra_answers: "by the door" })]);
    await assertUserError(() => loadOpenEqaBenchmark(notList), { file: notList, index: 0, id: "q1", field: "extra_answers", says: ["expected array, found a string"] });
    const notStrings = fixture([rawQuestion("q1"), rawQuestion("q2", { extra_answers: ["by the door", 3] })]);
    await assertUserError(() => loadOpenEqaBenchmark(notStrings), { file: notStrings, index: 1, id: "q2", field: "extra_answers.1", says: ["expected string, found a number"] });
    const nullItem = fixture([rawQuestion("q1", { extra_answers: [null] })]);
    await assertUserError(() => loadOpenEqaBenchmark(nullItem), { file: nullItem, index: 0, id: "q1", field: "extra_answers.0", says: ["found null"] });
    const object = fixture([rawQuestion("q1", { extra_answers: { a: "b" } })]);
    await assertUserError(() => loadOpenEqaBenchmark(object), { file: object, index: 0, id: "q1", field: "extra_answers", says: ["expected array, found an object"] });
  });

  test("valid extra answers, including an empty list, are kept as given", async () => {
    const path = fixture([rawQuestion("q1", { extra_answers: ["it's by the door", 'the "main" door'] }), rawQuestion("q2", { extra_answers: [] }), rawQuestion("q3")]);
    const benchmark = await loadOpenEqaBenchmark(path);
    assert.deepEqual(benchmark.byId.get("q1")!.extraAnswers, ["it's by the door", 'the "main" door']);
    assert.deepEqual(benchmark.byId.get("q2")!.extraAnswers, []);
    assert.equal(benchmark.byId.get("q3")!.extraAnswers, undefined);
  });

  test("fields the loader does not know are ignored", async () => {
    const path = fixture([rawQuestion("q1", { note: "annotator 3", frames: 12 })]);
    const benchmark = await loadOpenEqaBenchmark(path);
    assert.deepEqual(Object.keys(benchmark.questions[0]!).sort(), ["answer", "category", "episodeHistory", "question", "questionId"]);
  });
});

describe("predictions input errors", () => {
  test("an answer may be null", async () => {
    const path = fixture([
      { question_id: "q1", answer: null },
      { question_id: "q2", answer: "on the table" },
      { question_id: "q3", answer: "" },
    ]);
    assert.deepEqual(await loadPredictions(path), [
      { questionId: "q1", answer: null },
      { questionId: "q2", answer: "on the table" },
      { questionId: "q3", answer: "" },
    ]);
  });

  test("malformed JSON names the file, line and column", async () => {
    const path = fixture('[\n  {"question_id": "q1", "answer": \'single quotes\'}\n]');
    await assertUserError(() => loadPredictions(path), { file: path, line: 2, column: 35, says: ["malformed JSON"] });
  });

  test("a file that is not an array", async () => {
    const path = fixture({ q1: "a clock" });
    await assertUserError(() => loadPredictions(path), { file: path, says: ["expected a JSON array of predictions, found an object"] });
  });

  test("duplicate ids name the second record", async () => {
    const path = fixture([
      { question_id: "q1", answer: null },
      { question_id: "q2", answer: "b" },
      { question_id: "q1", answer: "a" },
    ]);
    await assertUserError(() => loadPredictions(path), { file: path, index: 2, id: "q1", field: "question_id", says: ["duplicate prediction"] });
  });

  test("a missing answer is an error (null is the way to say there is none)", async () => {
    const path = fixture([{ question_id: "q1", answer: "a" }, { question_id: "q2" }]);
    await assertUserError(() => loadPredictions(path), { file: path, index: 1, id: "q2", field: "answer", says: ["is missing"] });
  });

  test("a missing question id", async () => {
    const path = fixture([{ question_id: "q1", answer: "a" }, { answer: "b" }]);
    await assertUserError(() => loadPredictions(path), { file: path, index: 1, field: "question_id", says: ["is missing"] });
  });

  test("an answer of the wrong type", async () => {
    const number = fixture([{ question_id: "q1", answer: "a" }, { question_id: "q2", answer: 7 }]);
    await assertUserError(() => loadPredictions(number), { file: number, index: 1, id: "q2", field: "answer", says: ["expected string, found a number"] });
    const list = fixture([{ question_id: "q1", answer: ["a", "b"] }]);
    await assertUserError(() => loadPredictions(list), { file: list, index: 0, id: "q1", field: "answer", says: ["found an array"] });
  });
});

describe("subset input errors", () => {
  test("malformed JSON names the file, line and column", async () => {
    const path = fixture('[\n  "q1",\n  "q2"\n  "q3"\n]');
    await assertUserError(() => loadQuestionSubset(path), { file: path, line: 4, column: 3, says: ["malformed JSON"] });
  });

  test("a file that is not an array", async () => {
    const path = fixture({ ids: ["q1"] });
    await assertUserError(() => loadQuestionSubset(path), { file: path, says: ["expected a JSON array of question ids, found an object"] });
  });

  test("duplicate ids name the second occurrence", async () => {
    const path = fixture(["q1", "q2", "q3", "q2"]);
    await assertUserError(() => loadQuestionSubset(path), { file: path, index: 3, id: "q2", says: ["duplicate question id in subset"] });
  });

  test("an id that is not a string, or is empty", async () => {
    const number = fixture(["q1", 2]);
    await assertUserError(() => loadQuestionSubset(number), { file: number, index: 1, says: ["expected string, found a number"] });
    const empty = fixture(["q1", ""]);
    await assertUserError(() => loadQuestionSubset(empty), { file: empty, index: 1, says: ["non-empty question id"] });
  });

  test("ids not in the benchmark are counted and the first ten listed", async () => {
    const benchmarkPath = fixture([rawQuestion("q1"), rawQuestion("q2")]);
    const benchmark = await loadOpenEqaBenchmark(benchmarkPath);
    const unknown = Array.from({ length: 13 }, (_, i) => `unknown-${String(i).padStart(2, "0")}`);
    const subsetPath = fixture(["q2", ...unknown, "q1"]);
    const subset = await loadQuestionSubset(subsetPath);
    const error = await assertUserError(() => selectQuestions(benchmark, subset, subsetPath), {
      file: subsetPath,
      says: [`13 question id(s) of the subset are not in the benchmark ${benchmarkPath}`, "(3 more)"],
    });
    for (const id of unknown.slice(0, 10)) assert.ok(error.message.includes(id), id);
    for (const id of unknown.slice(10)) assert.ok(!error.message.includes(id), id);
    assert.ok(!error.message.includes("q1,") && !error.message.includes("q2,"));
  });
});

describe("pairing predictions with the benchmark", () => {
  async function smallBenchmark(): Promise<OpenEqaBenchmark> {
    return loadOpenEqaBenchmark(
      fixture([
        rawQuestion("q1"),
        rawQuestion("q2", { category: "object localization", extra_answers: ["by the door"], episode_history: "scannet-v0/002-scannet-scene0709_00" }),
        rawQuestion("q3", { category: "world knowledge" }),
      ]),
    );
  }

  test("every question with its answer, a null answer kept as null", async () => {
    const benchmark = await smallBenchmark();
    const path = fixture([
      { question_id: "q3", answer: "yes" },
      { question_id: "q1", answer: null },
      { question_id: "q2", answer: "by the door" },
    ]);
    const { pairs, outsideSubset } = pairPredictions(benchmark.questions, await loadPredictions(path), { benchmark, predictionsPath: path });
    assert.equal(outsideSubset, 0);
    assert.deepEqual(
      pairs.map((p) => [p.question.questionId, p.answer, p.missing]),
      [
        ["q1", null, false],
        ["q2", "by the door", false],
        ["q3", "yes", false],
      ],
    );
  });

  test("predictions for ids not in the benchmark are refused with a count and the first ten ids", async () => {
    const benchmark = await smallBenchmark();
    const unknown = Array.from({ length: 12 }, (_, i) => `x${String(i).padStart(2, "0")}`);
    const path = fixture([
      { question_id: "q1", answer: "a" },
      ...unknown.map((id) => ({ question_id: id, answer: "a" })),
      { question_id: "q2", answer: "a" },
      { question_id: "q3", answer: "a" },
    ]);
    const error = await assertUserError(() => loadPredictions(path).then((p) => pairPredictions(benchmark.questions, p, { benchmark, predictionsPath: path })), {
      file: path,
      says: [`12 prediction(s) for question ids not in the benchmark ${benchmark.path}`, "x00, x01, x02, x03, x04, x05, x06, x07, x08, x09, … (2 more)", "--benchmark"],
    });
    assert.ok(!error.message.includes("x10"));
    assert.ok(!error.message.includes("x11"));
  });

  test("exactly ten unknown ids are all listed without 'more'", async () => {
    const benchmark = await smallBenchmark();
    const unknown = Array.from({ length: 10 }, (_, i) => `y${i}`);
    const path = fixture(unknown.map((id) => ({ question_id: id, answer: "a" })));
    const error = await assertUserError(() => loadPredictions(path).then((p) => pairPredictions(benchmark.questions, p, { benchmark, predictionsPath: path })), {
      file: path,
      says: ["10 prediction(s)", unknown.join(", ")],
    });
    assert.ok(!error.message.includes("more"));
  });

  test("questions without a prediction are refused unless allowMissing", async () => {
    const benchmark = await smallBenchmark();
    const path = fixture([{ question_id: "q2", answer: "by the door" }]);
    const predictions = await loadPredictions(path);
    const error = await assertUserError(() => pairPredictions(benchmark.questions, predictions, { benchmark, predictionsPath: path }), {
      file: path,
      says: ["2 of 3 benchmark question(s) have no prediction: q1, q3", "--allow-missing"],
    });
    assert.ok(error.hint?.includes("--subset"));

    const { pairs } = pairPredictions(benchmark.questions, predictions, { benchmark, predictionsPath: path, allowMissing: true });
    assert.deepEqual(
      pairs.map((p) => [p.question.questionId, p.answer, p.missing]),
      [
        ["q1", null, true],
        ["q2", "by the door", false],
        ["q3", null, true],
      ],
    );
  });

  test("unknown ids are refused even with allowMissing", async () => {
    const benchmark = await smallBenchmark();
    const path = fixture([{ question_id: "q9", answer: "a" }]);
    const predictions = await loadPredictions(path);
    await assertUserError(() => pairPredictions(benchmark.questions, predictions, { benchmark, predictionsPath: path, allowMissing: true }), {
      file: path,
      says: ["1 prediction(s) for question ids not in the benchmark", "q9"],
    });
  });

  test("with a subset: predictions outside it are counted, not refused, and only its questions are needed", async () => {
    const benchmark = await smallBenchmark();
    const subsetPath = fixture(["q3", "q1"]);
    const questions = selectQuestions(benchmark, await loadQuestionSubset(subsetPath), subsetPath);
    const path = fixture([
      { question_id: "q1", answer: "a" },
      { question_id: "q2", answer: "b" },
      { question_id: "q3", answer: "c" },
    ]);
    const { pairs, outsideSubset } = pairPredictions(questions, await loadPredictions(path), { benchmark, predictionsPath: path });
    assert.equal(outsideSubset, 1);
    assert.deepEqual(
      pairs.map((p) => [p.question.questionId, p.answer]),
      [
        ["q3", "c"],
        ["q1", "a"],
      ],
    );

    const partial = fixture([{ question_id: "q3", answer: "c" }]);
    await assertUserError(() => loadPredictions(partial).then((p) => pairPredictions(questions, p, { benchmark, predictionsPath: partial })), {
      file: partial,
      says: ["1 of 2 benchmark question(s) have no prediction: q1"],
    });
  });
});
