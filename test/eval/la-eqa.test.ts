import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { UserError } from "../../src/core/index.js";
import { loadLaEqaBenchmark, loadLaEqaPlaces } from "../../src/data/index.js";
import { laEqaBestPathLength, laEqaPromptTemplate, laEqaSpl, parseLaEqaScore } from "../../src/eval/index.js";
import { LA_EQA_BEST_PATH_LENGTHS, writeLaEqaFiles } from "../helpers/la-eqa.js";
import { temporaryDir } from "../helpers/paths.js";

/**
 * Replies and the mark LA-EQA's `evaluate_answer_accuracy` reads from each (`int(json.loads(reply)["score"])`,
 * else the first character among 1-5, else it raises: null here), computed once with that code's
 * logic on Python 3.11 and stored.
 */
const REFERENCE_MARKS: [string, number | null][] = [
  ['{"score": 4, "reasoning": "close"}', 4],
  ['{"score": "5", "reasoning": "x"}', 5],
  ['{"score": 4.7}', 4],
  ['{"score": " 3 "}', 3],
  ['{"score": "4.5", "reasoning": "r"}', 4],
  ['{"score": true}', 1],
  ['{"score": null, "reasoning": "2 items"}', 2],
  ['{"score": 0}', 0],
  ['{"score": 7}', 7],
  ['{"score": NaN, "reasoning": "about 3"}', 3],
  ['{"score": 2, "note": NaN}', 2],
  ['{"score": 1e400, "reasoning": "x"}', 1],
  ['```json\n{"score": 4, "reasoning": "fenced"}\n```', 4],
  ["Score: 3/5", 3],
  ["[5]", 5],
  ['{"reasoning": "no score 9"}', null],
  ['{"reasoning": "none"}', null],
  ["I cannot grade this.", null],
  ['{"score": "1_0"}', 10],
  ['{"score": -3}', -3],
  ['{"score": "-0"}', 0],
  ['{"score": [4]}', 4],
  ['{"score": 6, "score": 2}', 2],
  ['{"score": "NaN", "reasoning": "x"}', null],
  ['{"s": "Infinity", "score": -Infinity, "r": "4"}', 4],
  ['  {"score": 3}  ', 3],
];

describe("parseLaEqaScore", () => {
  test("reads each reply as LA-EQA's evaluation code does: JSON score through Python's int(), else the first digit 1-5, no clip", () => {
    for (const [reply, mark] of REFERENCE_MARKS) assert.equal(parseLaEqaScore(reply) ?? null, mark, reply);
    assert.equal(parseLaEqaScore(null), undefined, "a reply without content raises in the reference");
  });
});

describe("laEqaSpl and laEqaBestPathLength", () => {
  test("SPL is 1 or 0 on an empty best path (moved at most 0.01 or not), else min(1, L / max(d, 0.01))", () => {
    assert.deepEqual([laEqaSpl(null, 0), laEqaSpl(null, 0.01), laEqaSpl(null, 0.0100001), laEqaSpl(null, 3)], [1, 1, 0, 0]);
    assert.equal(laEqaSpl(5, 10), 0.5);
    assert.equal(laEqaSpl(5, 4), 1, "capped at 1");
    assert.equal(laEqaSpl(0.004, 0), 0.4, "d below 0.01 counts as 0.01");
    assert.equal(laEqaSpl(0, 0), 0, "a best path that is the start place itself scores 0, as in the reference");
  });

  test("L sums straight lines from the start place through the best path; a missing place is the nearest id, the first of a tie", async () => {
    const files = writeLaEqaFiles(temporaryDir());
    const benchmark = await loadLaEqaBenchmark(files.questions);
    const places = await loadLaEqaPlaces(files.places);
    for (const q of benchmark.questions) {
      const length = laEqaBestPathLength(q, places.get(q.sceneName)!);
      assert.equal(length, LA_EQA_BEST_PATH_LENGTHS[q.questionId] ?? null, q.questionId);
    }
    const far = { ...benchmark.byId.get("syn_4")!, bestPath: [5000] };
    assert.throws(() => laEqaBestPathLength(far, places.get(far.sceneName)!), (e: unknown) => e instanceof UserError && /no place within 999 ids of place 5000/.test(e.message));
  });
});

describe("laEqaPromptTemplate", () => {
  test("reads the judge prompt of an evaluation file: literals joined, fields in braces, the no-extra-answers sentence written in, JSON braces doubled", () => {
    const source = [
      "class EQAEvaluation(object):",
      "    def __init__(self, question, GT_A_additional_answers=None):",
      "        if GT_A_additional_answers is None:",
      '            self.GT_A_additional_answers = "None \\"given\\"."',
      "",
      "    def evaluate_answer_accuracy(self, answer: str):",
      "        prompt = (",
      '            "Grade it," ',
      '            "carefully.\\n\\n"',
      '            "Q: " + self.question + "\\n"',
      '            "A: " + self.GT_A_answer + "\\n"',
      '            "Also: " + self.GT_A_additional_answers + "\\n"',
      '            "R: " + answer + "\\n"',
      '            "{\\"score\\": n}"',
      "        )",
      "        try:",
    ].join("\n");
    assert.equal(laEqaPromptTemplate(source, "eqa_evaluation.py"), 'Grade it,carefully.\n\nQ: {question}\nA: {answer}\nAlso: None "given".\nR: {response}\n{{"score": n}}');
    assert.throws(() => laEqaPromptTemplate("print('no prompt here')", "x.py"), UserError);
  });
});
