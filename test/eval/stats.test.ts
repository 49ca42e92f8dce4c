import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { randomInt, seededRandom, type OpenEqaCategory, type Question } from "../../src/core/index.js";
import { loadOpenEqaBenchmark } from "../../src/data/index.js";
import {
  aggregateLlmMatch,
  bootstrapMean,
  DEFAULT_BOOTSTRAP,
  llmMatchPoints,
  mean,
  quantileSorted,
  standardDeviation,
  type MeanEstimate,
  type ScoredQuestion,
} from "../../src/eval/index.js";
import { openEqaBenchmarkFile, pr15Dir } from "../helpers/paths.js";

function assertClose(actual: number, expected: number, tolerance = 1e-9, what = ""): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what} expected ${expected}, got ${actual}`);
}

function assertInterval(estimate: MeanEstimate): void {
  assert.ok(estimate.ci[0] <= estimate.mean && estimate.mean <= estimate.ci[1], `the interval [${estimate.ci.join(", ")}] holds the mean ${estimate.mean}`);
  assert.ok(estimate.stderr >= 0);
}

describe("llmMatchPoints", () => {
  const cases: [number, number][] = [
    [0, 0],
    [-1, 0],
    [1, 0],
    [2, 25],
    [3, 50],
    [4, 75],
    [5, 100],
    [7, 100],
  ];
  for (const [score, points] of cases) {
    test(`score ${score} gives ${points} points`, () => assert.equal(llmMatchPoints(score), points));
  }
});

describe("aggregateLlmMatch", () => {
  const sourceEpisodes = { hm3d: "hm3d-v0/000-hm3d-BFRyYbPCCPE", scannet: "scannet-v0/002-scannet-scene0709_00" };

  function scored(id: string, category: OpenEqaCategory, source: keyof typeof sourceEpisodes, score: number): ScoredQuestion {
    const question: Question = { questionId: id, question: `question ${id}`, answer: "answer", category, episodeHistory: sourceEpisodes[source] };
    return { question, score };
  }

  // points: a1 100, a2 50, a3 0 (a null answer), b1 75, b2 100 (a compat mark of 7), c1 0, c2 25, c3 0 (a mark of -1)
  const set: ScoredQuestion[] = [
    scored("b1", "world knowledge", "scannet", 4),
    scored("a1", "object recognition", "hm3d", 5),
    scored("c1", "object localization", "hm3d", 1),
    scored("a2", "object recognition", "scannet", 3),
    scored("b2", "world knowledge", "scannet", 7),
    scored("a3", "object recognition", "hm3d", 0),
    scored("c2", "object localization", "scannet", 2),
    scored("c3", "object localization", "hm3d", -1),
  ];
  const options = { resamples: 2000, seed: 7 };

  test("means overall, per category and per source equal the hand-computed ones", () => {
    const result = aggregateLlmMatch(set, options);
    assert.equal(result.overall.n, 8);
    assertClose(result.overall.mean, 350 / 8, 1e-12, "overall");

    assert.deepEqual(Object.keys(result.byCategory), ["object recognition", "object localization", "world knowledge"]);
    assertClose(result.byCategory["object recognition"]!.mean, 50, 1e-12, "object recognition");
    assertClose(result.byCategory["object localization"]!.mean, 25 / 3, 1e-12, "object localization");
    assertClose(result.byCategory["world knowledge"]!.mean, 87.5, 1e-12, "world knowledge");
    assert.deepEqual(
      Object.values(result.byCategory).map((e) => e.n),
      [3, 3, 2],
    );

    assert.deepEqual(Object.keys(result.bySource), ["hm3d-v0", "scannet-v0"]);
    assertClose(result.bySource["hm3d-v0"]!.mean, 25, 1e-12, "hm3d");
    assertClose(result.bySource["scannet-v0"]!.mean, 62.5, 1e-12, "scannet");
    assert.deepEqual(
      Object.values(result.bySource).map((e) => e.n),
      [4, 4],
    );

    for (const estimate of [result.overall, ...Object.values(result.byCategory), ...Object.values(result.bySource)]) {
      assertInterval(estimate);
      assert.ok(estimate.ci[0] >= 0 && estimate.ci[1] <= 100);
      assert.equal(estimate.confidence, 0.95);
    }
  });

  test("each group's interval is the bootstrap of its own points, whatever the other groups", () => {
    const result = aggregateLlmMatch(set, options);
    assert.deepEqual(result.byCategory["world knowledge"], bootstrapMean([75, 100], options));
    assert.deepEqual(result.bySource["hm3d-v0"], bootstrapMean([100, 0, 0, 0], options));
    const alone = aggregateLlmMatch(
      set.filter((s) => s.question.category === "world knowledge"),
      options,
    );
    assert.deepEqual(alone.byCategory["world knowledge"], result.byCategory["world knowledge"]);
    assert.deepEqual(Object.keys(alone.bySource), ["scannet-v0"]);
  });

  test("the same inputs and seed give the same aggregates, in any order of the questions", () => {
    const a = aggregateLlmMatch(set, options);
    const b = aggregateLlmMatch([...set].reverse(), options);
    assert.equal(a.overall.mean, b.overall.mean);
    assert.deepEqual(aggregateLlmMatch(set, options), a);
  });

  test("an empty set gives NaN, not a crash", () => {
    const result = aggregateLlmMatch([], options);
    assert.equal(result.overall.n, 0);
    assert.ok(Number.isNaN(result.overall.mean));
    assert.deepEqual(result.byCategory, {});
    assert.deepEqual(result.bySource, {});
  });

  test("the GPT-4o scores of open-eqa PR 15 give the reference's final scores (75.0 and 20.0)", async () => {
    const benchmark = await loadOpenEqaBenchmark(openEqaBenchmarkFile);
    for (const [file, expected] of [
      ["gpt4o-dry_run-predictions-metrics.json", 75],
      ["blind-gpt4-dry_run-predictions-metrics.json", 20],
    ] as const) {
      const metrics = JSON.parse(readFileSync(join(pr15Dir, file), "utf8")) as Record<string, number>;
      const result = aggregateLlmMatch(
        Object.entries(metrics).map(([id, score]) => ({ question: benchmark.byId.get(id)!, score })),
        options,
      );
      assert.equal(result.overall.n, 5);
      assert.equal(result.overall.mean, expected, file);
      assert.equal(result.overall.mean.toFixed(1), `${expected}.0`);
    }
  });
});

describe("bootstrapMean", () => {
  const values = [0, 25, 25, 50, 75, 100, 100, 0, 50, 75, 100, 25];

  test("the same seed gives the same estimate; another seed another interval", () => {
    // marks spread irregularly, so that two different resamplings end on different quantiles
    const spread = [3.1, 17.4, 29.9, 41.2, 58.6, 62.3, 77.7, 85.05, 91.8, 100, 12.25, 44.4];
    const a = bootstrapMean(spread, { seed: 1 });
    const b = bootstrapMean(spread, { seed: 1 });
    const c = bootstrapMean(spread, { seed: 2 });
    assert.deepEqual(a, b);
    assert.equal(c.mean, a.mean);
    assert.notDeepEqual(c.ci, a.ci);
    assert.notEqual(c.stderr, a.stderr);
  });

  test("is the percentile bootstrap of mulberry32 draws from seededRandom", () => {
    const resamples = 500;
    const seed = 1234;
    const random = seededRandom(seed);
    const means = new Float64Array(resamples);
    for (let r = 0; r < resamples; r++) {
      let sum = 0;
      for (let i = 0; i < values.length; i++) sum += values[randomInt(random, values.length)]!;
      means[r] = sum / values.length;
    }
    means.sort();
    const estimate = bootstrapMean(values, { resamples, seed });
    assert.equal(estimate.n, values.length);
    assert.equal(estimate.mean, mean(values));
    assert.equal(estimate.stderr, standardDeviation(means));
    assert.deepEqual(estimate.ci, [quantileSorted(means, 0.025000000000000022), quantileSorted(means, 0.975)]);
  });

  test("defaults: 10,000 resamples, seed 0, 95%", () => {
    assert.deepEqual({ ...DEFAULT_BOOTSTRAP }, { resamples: 10_000, seed: 0, confidence: 0.95 });
    assert.deepEqual(bootstrapMean(values), bootstrapMean(values, { resamples: 10_000, seed: 0, confidence: 0.95 }));
  });

  test("the interval contains the mean and widens with the confidence", () => {
    const narrow = bootstrapMean(values, { confidence: 0.5, seed: 3 });
    const usual = bootstrapMean(values, { seed: 3 });
    const wide = bootstrapMean(values, { confidence: 0.99, seed: 3 });
    for (const estimate of [narrow, usual, wide]) assertInterval(estimate);
    assert.equal(usual.confidence, 0.95);
    assert.equal(wide.confidence, 0.99);
    const width = (e: MeanEstimate): number => e.ci[1] - e.ci[0];
    assert.ok(width(narrow) < width(usual) && width(usual) < width(wide));
    assert.ok(usual.ci[0] >= 0 && usual.ci[1] <= 100);
  });

  test("constant data: a zero-width interval and zero standard error", () => {
    for (const value of [0, 50, 100]) {
      const estimate = bootstrapMean(Array.from({ length: 40 }, () => value), { resamples: 1000 });
      assert.equal(estimate.mean, value);
      assert.deepEqual(estimate.ci, [value, value]);
      assert.equal(estimate.stderr, 0);
    }
    const single = bootstrapMean([75]);
    assert.deepEqual([single.n, single.mean, single.stderr, ...single.ci], [1, 75, 0, 75, 75]);
  });

  test("no values: NaN everywhere, n = 0", () => {
    const estimate = bootstrapMean([]);
    assert.equal(estimate.n, 0);
    assert.ok([estimate.mean, estimate.stderr, ...estimate.ci].every(Number.isNaN));
  });

  test("for a large sample the standard error is close to sd/sqrt(n) and the interval to mean ± 1.96 of it", () => {
    const random = seededRandom(99);
    const sample = Array.from({ length: 3000 }, () => [0, 25, 50, 75, 100][randomInt(random, 5)]!);
    const estimate = bootstrapMean(sample, { resamples: 4000, seed: 5 });
    const expected = standardDeviation(sample) / Math.sqrt(sample.length);
    assert.ok(Math.abs(estimate.stderr / expected - 1) < 0.05, `stderr ${estimate.stderr} vs sd/sqrt(n) ${expected}`);
    assert.ok(Math.abs(estimate.mean - estimate.ci[0] - 1.96 * expected) < 0.15 * 1.96 * expected);
    assert.ok(Math.abs(estimate.ci[1] - estimate.mean - 1.96 * expected) < 0.15 * 1.96 * expected);
  });
});

describe("mean and standardDeviation", () => {
  test("match NumPy's mean and std(ddof=1)", () => {
    assert.equal(mean([1, 2, 3, 4, 10]), 4);
    assert.equal(standardDeviation([1, 2, 3, 4, 10]), 3.5355339059327378);
    assert.equal(standardDeviation([5]), 0);
    assert.ok(Number.isNaN(mean([])));
    assert.equal(mean(Float64Array.from([0.5, 1.5])), 1);
  });
});

describe("quantileSorted equals NumPy's default percentile to the last bit", () => {
  // numpy.percentile(a, p) computed with NumPy 2.4 and copied here
  const percents = [0, 2.5, 10, 25, 100 / 3, 50, 60, 70, 75, 90, 97.5, 100];
  const cases: [number[], number[]][] = [
    [[1.0, 2.5, 3.0, 7.0, 10.0, 12.5, 20.0], [1.0, 1.225, 1.9000000000000001, 2.75, 3.0, 7.0, 8.799999999999999, 10.499999999999998, 11.25, 15.500000000000004, 18.874999999999996, 20.0]],
    [[0.0, 0.0, 25.0, 25.0, 50.0, 50.0, 75.0, 100.0, 100.0, 100.0], [0.0, 0.0, 0.0, 25.0, 25.00000000000001, 50.0, 59.999999999999986, 82.5, 93.75, 100.0, 100.0, 100.0]],
    [[0.1, 0.2, 0.7, 1.3, 2.9], [0.1, 0.11000000000000001, 0.14, 0.2, 0.3666666666666667, 0.7, 0.94, 1.18, 1.3, 2.2600000000000002, 2.7399999999999998, 2.9]],
    [[-3.5, 4.25, 11.0], [-3.5, -3.1125, -1.95, 0.375, 1.6666666666666674, 4.25, 5.6, 6.949999999999999, 7.625, 9.65, 10.6625, 11.0]],
    [[42.0], [42.0, 42.0, 42.0, 42.0, 42.0, 42.0, 42.0, 42.0, 42.0, 42.0, 42.0, 42.0]],
  ];
  for (const [sorted, expected] of cases) {
    test(`[${sorted.join(", ")}]`, () => {
      percents.forEach((p, i) => assert.equal(quantileSorted(sorted, p / 100), expected[i], `percentile ${p}`));
      assert.equal(quantileSorted(Float64Array.from(sorted), 0.5), expected[5]);
    });
  }

  test("an empty array gives NaN", () => {
    assert.ok(Number.isNaN(quantileSorted([], 0.5)));
  });
});
