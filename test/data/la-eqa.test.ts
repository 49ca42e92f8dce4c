import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../../src/core/index.js";
import { LA_EQA_CATEGORIES, laEqaAlternatives, loadLaEqaBenchmark, loadLaEqaPlaces, loadLaEqaPredictions } from "../../src/data/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { LA_EQA_RECORDS, LA_EQA_PLACES, writeLaEqaFiles } from "../helpers/la-eqa.js";
import { temporaryDir } from "../helpers/paths.js";

/** Asserts that `work` throws a UserError whose location names `field` (and the record, when given). */
async function rejectsNaming(work: () => Promise<unknown>, field: string, index?: number): Promise<void> {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof UserError, String(error));
    assert.equal(error.location.field, field, error.message);
    if (index !== undefined) assert.equal(error.location.index, index, error.message);
    return true;
  });
}

describe("loadLaEqaBenchmark", () => {
  test("keeps every question and every field of LA-EQA's records, with the answer's alternatives split at \" OR \"", async () => {
    const { questions } = writeLaEqaFiles(temporaryDir());
    const benchmark = await loadLaEqaBenchmark(questions);
    assert.equal(benchmark.questions.length, LA_EQA_RECORDS.length);
    assert.match(benchmark.sha256, /^[0-9a-f]{64}$/);
    benchmark.questions.forEach((q, i) => {
      const record = LA_EQA_RECORDS[i]!;
      assert.deepEqual(
        [q.question, q.category, q.questionId, q.sceneName, q.answer, q.bestPath, q.startPlace],
        [record.question, record.category, record.question_id, record.scene_name, record.answer, record.best_path, record.start_place],
      );
      assert.equal(q.alternatives.join(" OR "), record.answer.split(/\s+OR\s+/).join(" OR "));
      assert.equal(benchmark.byId.get(q.questionId), q);
    });
    assert.deepEqual(new Set(benchmark.questions.map((q) => q.category)), new Set(LA_EQA_CATEGORIES), "every category");
    assert.deepEqual(benchmark.byId.get("syn_5")!.alternatives, ["By the door", "at or near the key bowl"], "a lower-case or stays inside its alternative");
  });

  test("alternatives are split at OR in upper case whatever the white space around it, and trimmed", () => {
    assert.deepEqual(laEqaAlternatives("Yes OR Yes, it is open"), ["Yes", "Yes, it is open"]);
    assert.deepEqual(laEqaAlternatives(" Aisle 1  OR\tAisle 3 OR Aisle 5 "), ["Aisle 1", "Aisle 3", "Aisle 5"]);
    assert.deepEqual(laEqaAlternatives("ORANGE juice OR more"), ["ORANGE juice", "more"]);
    assert.deepEqual(laEqaAlternatives("Tuesday, there were no workers on Tuesday."), ["Tuesday, there were no workers on Tuesday."]);
  });

  test("a bad record is refused naming the file, the record and the field", async () => {
    const dir = temporaryDir();
    const cases: [string, Record<string, unknown>, string][] = [
      ["category", { category: "future" }, "category"],
      ["best path", { best_path: [1, "2"] }, "best_path.1"],
      ["start place", { start_place: 1.5 }, "start_place"],
      ["answer", { answer: "" }, "answer"],
      ["scene", { scene_name: undefined }, "scene_name"],
    ];
    for (const [name, change, field] of cases) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(LA_EQA_RECORDS.map((r, i) => (i === 2 ? { ...r, ...change } : r))));
      await rejectsNaming(() => loadLaEqaBenchmark(file), field, 2);
    }
    const duplicate = join(dir, "duplicate.json");
    writeFileSync(duplicate, JSON.stringify([...LA_EQA_RECORDS, LA_EQA_RECORDS[0]]));
    await rejectsNaming(() => loadLaEqaBenchmark(duplicate), "question_id", LA_EQA_RECORDS.length);
  });

  test("eqa score exits 2 on a bad record of an LA-EQA file, naming the record and the field", async () => {
    const home = temporaryDir();
    const files = writeLaEqaFiles(home, LA_EQA_RECORDS.map((r, i) => (i === 3 ? { ...r, category: "someday" } : r)));
    const result = await runCli(["score", "--benchmark", files.questions, "--predictions", files.predictions, "--judge", "openai/gpt-4o", "--judge-base-url", "http://127.0.0.1:9/v1"], cliEnv(home, { OPENAI_API_KEY: "test" }));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /eqa-questions\.json, record 4 \(id syn_4\), field "category": unknown category/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  });
});

describe("loadLaEqaPredictions and loadLaEqaPlaces", () => {
  test("predictions keep the answer and the distance travelled; places keep each scene's order", async () => {
    const files = writeLaEqaFiles(temporaryDir());
    const predictions = await loadLaEqaPredictions(files.predictions);
    assert.deepEqual(predictions[0], { questionId: "syn_1", answer: "answer to syn_1", distanceTraveled: 0 });
    const places = await loadLaEqaPlaces(files.places);
    assert.deepEqual([...places.keys()], Object.keys(LA_EQA_PLACES));
    assert.deepEqual(places.get("001-synthetic-home")!.map((p) => p.id), [0, 1, 2, 3, 4, 6, 8]);
  });

  test("a negative distance, a duplicate prediction, a bad position or a place listed twice is refused naming the field", async () => {
    const dir = temporaryDir();
    const predictions = join(dir, "predictions.json");
    writeFileSync(predictions, JSON.stringify([{ question_id: "syn_1", answer: "a", distance_traveled: -1 }]));
    await rejectsNaming(() => loadLaEqaPredictions(predictions), "distance_traveled", 0);
    writeFileSync(predictions, JSON.stringify([{ question_id: "syn_1", answer: "a" }, { question_id: "syn_1", answer: "b" }]));
    await rejectsNaming(() => loadLaEqaPredictions(predictions), "question_id", 1);
    const places = join(dir, "places.json");
    writeFileSync(places, JSON.stringify({ home: [{ id: 0, position: [0, 0] }] }));
    await rejectsNaming(() => loadLaEqaPlaces(places), "0.position");
    writeFileSync(places, JSON.stringify({ home: [{ id: 0, position: [0, 0, 0] }, { id: 0, position: [1, 0, 0] }] }));
    await rejectsNaming(() => loadLaEqaPlaces(places), "1.id");
  });
});
