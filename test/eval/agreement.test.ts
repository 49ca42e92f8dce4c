import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  LLM_MATCH_PARAMS,
  abstentionAnalysis,
  agreementMatrix,
  averageRanks,
  correlate,
  llmMatchPromptName,
  loadPredictionsWithoutGuess,
  loadScoreSet,
  parseLlmMatchVariant,
  pearson,
  perAnnotatorAgreement,
  prepareLlmMatchTask,
  renderLlmMatchPrompt,
  spearman,
} from "../../src/eval/index.js";
import { loadPromptFile, sha256Hex, type Question } from "../../src/core/index.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

interface ReferenceCase {
  name: string;
  x: number[];
  y: number[];
  resamples: number;
  seed: number;
  confidence: number;
  spearman: number;
  pearson: number;
  spearmanCi: [number, number];
  undefinedResamples: number;
  scipyBootstrapCi: [number | null, number | null];
}
interface Reference {
  cases: ReferenceCase[];
  annotators: number[][];
  llm: number[];
  perAnnotator: { annotator: string; vsOtherHumans: number; vsLlm: number }[];
  ranks: { values: number[]; ranks: number[] };
}

/** Computed once with SciPy and NumPy by bench/agreement_reference.py. */
const reference = JSON.parse(readFileSync(join(projectRoot, "test", "fixtures", "agreement-reference.json"), "utf8")) as Reference;
const close = (actual: number, expected: number, tolerance = 1e-12, what = ""): void =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

describe("judge agreement against SciPy", () => {
  test("average ranks equal scipy.stats.rankdata", () => {
    assert.deepEqual([...averageRanks(reference.ranks.values)], reference.ranks.ranks);
  });

  for (const c of reference.cases) {
    test(`${c.name}: ρ, r and the bootstrap interval`, () => {
      close(spearman(c.x, c.y), c.spearman, 1e-12, "spearman");
      close(pearson(c.x, c.y), c.pearson, 1e-12, "pearson");
      const estimate = correlate(c.x, c.y, { resamples: c.resamples, seed: c.seed, confidence: c.confidence });
      assert.equal(estimate.n, c.x.length);
      assert.equal(estimate.undefinedResamples, c.undefinedResamples);
      close(estimate.spearmanCi[0], c.spearmanCi[0], 1e-9, "ci low");
      close(estimate.spearmanCi[1], c.spearmanCi[1], 1e-9, "ci high");
      if (c.scipyBootstrapCi[0] !== null && c.scipyBootstrapCi[1] !== null) {
        // SciPy's own bootstrap (another generator) lands within Monte-Carlo error
        close(estimate.spearmanCi[0], c.scipyBootstrapCi[0], 0.01, "vs scipy.stats.bootstrap low");
        close(estimate.spearmanCi[1], c.scipyBootstrapCi[1], 0.01, "vs scipy.stats.bootstrap high");
      }
    });
  }

  test("the default bootstrap is the paper's N = 9,999", () => {
    const c = reference.cases[0]!;
    assert.equal(correlate(c.x.slice(0, 20), c.y.slice(0, 20)).resamples, 9999);
  });

  test("per-annotator table (Table VII) and the matrix (Table VI)", () => {
    const items = reference.llm.map((_, i) => `q${i}`);
    const annotators = new Map(reference.annotators.map((scores, a) => [String(a), new Map(scores.map((s, i) => [items[i]!, s]))]));
    const llm = new Map(reference.llm.map((s, i) => [items[i]!, s]));
    const rows = perAnnotatorAgreement(annotators, [{ label: "LLM", scores: llm }], { resamples: 200 });
    for (const [i, row] of rows.entries()) {
      close(row.vsOtherHumans!.spearman, reference.perAnnotator[i]!.vsOtherHumans, 1e-12, `annotator ${i} vs others`);
      close(row.vsJudges.LLM!.spearman, reference.perAnnotator[i]!.vsLlm, 1e-12, `annotator ${i} vs LLM`);
    }
    const matrix = agreementMatrix([{ label: "LLM", scores: llm }, ...[...annotators].map(([a, s]) => ({ label: `human ${a}`, scores: s }))], { resamples: 100 });
    assert.equal(matrix.pairs.length, 10);
    close(matrix.pairs[0]!.estimate.spearman, reference.perAnnotator[0]!.vsLlm, 1e-12, "matrix cell");
  });
});

describe("score sets and force-a-guess", () => {
  test("CSV with annotators, metrics.json and records load; bad input names the file and line", async () => {
    const home = temporaryDir();
    const csv = join(home, "human.csv");
    writeFileSync(csv, 'question_id,annotator,score\na,0,5\na,1,4\nb,0,1\nb,1,2\n"c",0,3\nc,1,3\n');
    const human = await loadScoreSet(csv);
    assert.equal(human.annotators?.size, 2);
    assert.deepEqual([...human.scores], [["a", 4.5], ["b", 1.5], ["c", 3]]);
    const metrics = join(home, "metrics.json");
    writeFileSync(metrics, JSON.stringify({ a: 5, b: 1, c: 2 }));
    assert.equal((await loadScoreSet(metrics, "gpt")).label, "gpt");
    const bad = join(home, "bad.csv");
    writeFileSync(bad, "question_id,score\na,five\n");
    await assert.rejects(loadScoreSet(bad), /bad\.csv:2: expected an item and a numeric score/);
    await assert.rejects(loadScoreSet(join(home, "missing")), /no such file or run directory/);
  });

  test("Table III: abstention rate, with and without the guess", async () => {
    const home = temporaryDir();
    const file = join(home, "predictions.json");
    writeFileSync(file, JSON.stringify([
      { question_id: "a", answer: "a sofa", agent: "vlm" },
      { question_id: "b", answer: "the kitchen", agent: "vlm", forced_guess: true, agent_answer: "I cannot tell from these images." },
    ]));
    const unforced = await loadPredictionsWithoutGuess(file);
    assert.equal(unforced.replaced, 1);
    assert.deepEqual(unforced.predictions, [{ questionId: "a", answer: "a sofa" }, { questionId: "b", answer: "I cannot tell from these images." }]);
    const row = abstentionAnalysis(
      [{ questionId: "a", action: "keep" }, { questionId: "b", action: "guess" }],
      new Map([["a", 5], ["b", 3]]),
      new Map([["a", 5], ["b", 1]]),
      { resamples: 100 },
    );
    assert.equal(row.rate, 0.5);
    assert.equal(row.withGuess!.mean, 75);
    assert.equal(row.withoutGuess!.mean, 50);
    assert.equal(row.difference, -25);
  });
});

describe("LLM-Match robustness variants (Tables VIII-X)", () => {
  const question: Question = { questionId: "q1", question: "What is on the table?", answer: "a vase", category: "object recognition", episodeHistory: "hm3d-v0/000" };
  const withExtra: Question = { ...question, questionId: "q2", extraAnswers: ["flowers"] };

  test("the defaults are the reference's prompts, parameters and input keys", () => {
    assert.equal(llmMatchPromptName("openeqa-mmbench", parseLlmMatchVariant("role=ai")), "openeqa-mmbench");
    assert.equal(llmMatchPromptName("openeqa-mmbench-extra", parseLlmMatchVariant("criterion=perfect")), "openeqa-mmbench-extra");
    const plain = prepareLlmMatchTask(question, "a vase", "compat", "openai/gpt-4o");
    assert.equal(plain.inputKey, sha256Hex(JSON.stringify(["openai/gpt-4o", "compat", "q1", plain.prompt, LLM_MATCH_PARAMS])));
    assert.deepEqual(prepareLlmMatchTask(question, "a vase", "compat", "openai/gpt-4o", {}), plain);
  });

  test("each variant changes one line of both templates, and a temperature changes only the parameters", () => {
    for (const text of ["role=score-master", "role=professional", "criterion=contains", "criterion=person", "criterion=professional"]) {
      const variant = parseLlmMatchVariant(text)!;
      for (const q of [question, withExtra]) {
        const base = renderLlmMatchPrompt(q, "a vase").text.split("\n");
        const varied = renderLlmMatchPrompt(q, "a vase", variant).text.split("\n");
        assert.equal(varied.length, base.length);
        const changed = base.flatMap((line, i) => (line === varied[i] ? [] : [i]));
        assert.deepEqual(changed, [variant.kind === "role" ? 0 : 2], `${text} ${q.questionId}`);
      }
      assert.ok(loadPromptFile(llmMatchPromptName("openeqa-mmbench", variant)).text.length > 0);
    }
    assert.equal(parseLlmMatchVariant("role=wizard"), undefined);
    const hot = prepareLlmMatchTask(question, "a vase", "robust", "openai/gpt-4o", { temperature: 0.01 });
    assert.deepEqual(hot.params, { ...LLM_MATCH_PARAMS, temperature: 0.01 });
    assert.equal(hot.prompt, prepareLlmMatchTask(question, "a vase", "robust", "openai/gpt-4o").prompt);
    assert.notEqual(hot.inputKey, prepareLlmMatchTask(question, "a vase", "robust", "openai/gpt-4o").inputKey);
  });
});
