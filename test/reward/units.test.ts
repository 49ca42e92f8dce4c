import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { UserError } from "../../src/core/index.js";
import { parseRewardInstances, toRewardInstanceRecord, type RewardInstance } from "../../src/data/index.js";
import {
  accuracyAndRmse,
  accuracyReward,
  aggregateScores,
  batchRewards,
  chooseMaskedPatches,
  evaluatorRequest,
  formatReasoningTrace,
  formatReward,
  groupAdvantages,
  parseAgentResponse,
  parseCsv,
  parseEvaluation,
  permuteReasoningSteps,
  rejectiveFilter,
  spatialMask,
  splitByEpisode,
  temporalShuffle,
  toCsv,
  CONTRASTIVE_DEFAULTS,
  KeyframeLoader,
  rewardModelMetrics,
} from "../../src/reward/index.js";
import { fixturesDir, temporaryDir } from "../helpers/paths.js";
import { writeRgbEpisode } from "../helpers/frames.js";

interface PaperRecord {
  id: string;
  question: string;
  predicted_answer: string;
  reasoning_trace?: string[];
  ground_truth_answer: string;
  ground_truth_score: number | null;
}
const paper = (JSON.parse(readFileSync(join(fixturesDir, "eqa-rm", "paper-case-studies.reconstructed.json"), "utf8")) as { records: PaperRecord[] }).records;
/** The paper's two complete worked examples (Tables 6 and 7) as eqakit instances. */
const paperJsonl = paper
  .filter((r) => r.reasoning_trace !== undefined)
  .map((r) =>
    JSON.stringify({ id: r.id, question: r.question, predicted_answer: r.predicted_answer, reasoning_trace: r.reasoning_trace, episode_history: `scannet-v0/${r.id}`, ground_truth_answer: r.ground_truth_answer, ground_truth_score: r.ground_truth_score, category: "object localization" }),
  )
  .join("\n");

/** EQA-RM's own output on Table 6, as the paper prints it: prose around the tags, then "Score: 7". */
const TABLE6_OUTPUT =
  "As we pan across the room in the images, the initial focus is on the floor near the bed and desk area. <critique> The backpack is clearly visible in the room, located next to a chair on the floor. The location of the backpack is straightforward, as it is clearly situated between the bed and the chair. </critique> <score>7</score> The backpack is clearly visible in the scene, identifiable by its shape and color.\n\nScore: 7";

describe("instances", () => {
  test("the paper's two worked examples load as instances, with 7 and 6 reasoning steps", () => {
    const instances = parseRewardInstances(paperJsonl, "paper.jsonl");
    assert.equal(instances.length, 2);
    assert.deepEqual(instances.map((i) => [i.groundTruthScore, i.reasoningTrace.length, i.source, i.numKeyframes]), [
      [7, 7, "scannet", 5],
      [10, 6, "scannet", 5],
    ]);
    const back = parseRewardInstances(instances.map((i) => JSON.stringify(toRewardInstanceRecord(i))).join("\n"), "x");
    assert.deepEqual(back, instances);
  });

  test("a bad record names the file, the line, the id and the field", () => {
    const lines = paperJsonl.split("\n");
    const bad = JSON.parse(lines[1]!) as Record<string, unknown>;
    bad.ground_truth_score = 11;
    assert.throws(() => parseRewardInstances([lines[0], JSON.stringify(bad)].join("\n"), "set.jsonl"), (e: unknown) => e instanceof UserError && /set\.jsonl:2, id paper-table7, field "ground_truth_score": must be from 0 to 10/.test(e.message));
    delete bad.ground_truth_score;
    delete bad.reasoning_trace;
    assert.throws(() => parseRewardInstances(JSON.stringify(bad), "set.jsonl"), /field "reasoning_trace": is missing/);
    assert.throws(() => parseRewardInstances(`${lines[0]}\n${lines[0]}`, "set.jsonl"), /duplicate instance id/);
    assert.throws(() => parseRewardInstances("{not json", "set.jsonl"), /set\.jsonl:1: malformed JSON/);
  });

  test("the evaluator request fills the paper's prompt, steps as the paper's tables print them, frames after 'Video Frames (attached)'", () => {
    const [instance] = parseRewardInstances(paperJsonl, "p");
    const image = { type: "image" as const, data: new Uint8Array([1, 2, 3]), mediaType: "image/png" };
    const request = evaluatorRequest(instance!, [image, image], { temperature: 0.8, topP: 0.9 }, 3);
    const content = request.messages[0]!.content;
    assert.ok(Array.isArray(content));
    assert.equal(content.length, 4);
    const texts = content.map((p) => (p.type === "text" ? p.text : null));
    assert.ok(texts[0]!.startsWith("Role: You are an Expert EQA evaluator") && texts[0]!.endsWith("Video Frames (attached)\n"));
    assert.deepEqual([texts[1], texts[2]], [null, null]);
    assert.ok(texts[3]!.includes(`User Query: Where is the black backpack?\nReasoning Trace: "The user is asking to locate`));
    assert.ok(!texts[3]!.includes("On the floor, next to the bed."), "no ground truth");
    assert.equal(request.sampleIndex, 3);
    assert.equal(formatReasoningTrace(["a \"b\"", "c"]), '"a \\"b\\"", "c"');
  });
});

describe("keyframes", () => {
  test("an instance's own frames path (relative to its file), N spread evenly or explicit keyframes", async () => {
    const dir = temporaryDir();
    await writeRgbEpisode(join(dir, "episodes", "ep"), 11, 40, 30);
    const file = join(dir, "set.jsonl");
    const [even, explicit, outside] = parseRewardInstances(
      [
        { id: "a", frames: "episodes/ep" },
        { id: "b", frames: "episodes/ep", keyframes: [10, 0, 3] },
        { id: "c", frames: "episodes/ep", keyframes: [11] },
      ]
        .map((r) => JSON.stringify({ ...r, question: "q", predicted_answer: "a", reasoning_trace: ["s"], episode_history: "scannet-v0/ep" }))
        .join("\n"),
      file,
    );
    const loader = new KeyframeLoader({ instanceFile: file });
    assert.deepEqual(await loader.keyframeIndices(even!), [0, 2, 5, 8, 10]);
    const images = await loader.keyframes(explicit!);
    assert.deepEqual(images.map((i) => i.index), [10, 0, 3], "in the given order");
    await assert.rejects(loader.keyframes(outside!), /set\.jsonl, id c, field "keyframes": keyframe 11 is outside the episode \(frames 0-10\)/);
  });
});

describe("parsing reward-model replies", () => {
  test("real-looking replies", () => {
    const p = parseEvaluation(TABLE6_OUTPUT);
    assert.equal(p.score, 7);
    assert.match(p.critique!, /^The backpack is clearly visible/);
    assert.equal(p.wellFormed, false, "prose around the tags is not the exact structure");
    const clean = parseEvaluation("<critique>\nThe agent found the power strip.\n</critique>\n<score>\n10\n</score>");
    assert.deepEqual([clean.score, clean.wellFormed], [10, true]);
    assert.equal(parseEvaluation("<Critique>ok</Critique> < score > **6** </score>").score, 6);
    assert.equal(parseEvaluation("<critique>ok</critique><score>8/10</score>").score, 8);
    assert.equal(parseEvaluation("<critique>ok</critique><score>7.5</score>").score, 7.5);
    // the template echoed first, then the answer: the last score with a number wins
    assert.equal(parseEvaluation("<critique>[Your analysis]</critique><score>[Your final score]</score>\n<critique>fine</critique><score>4</score>").score, 4);
    // a reply cut at its token limit inside <score>
    assert.equal(parseEvaluation("<critique>long…</critique><score>3").score, 3);
  });

  test("broken replies are failures with the reason", () => {
    assert.deepEqual(parseEvaluation(null), { score: null, critique: null, wellFormed: false, error: "empty reply" });
    assert.equal(parseEvaluation("<critique>good</critique>").error, "no <score> tag in the reply");
    assert.equal(parseEvaluation("<critique>good</critique> Score: 7").score, null);
    assert.equal(parseEvaluation("<critique>x</critique><score>eleven</score>").error, "no score number inside <score>");
    const template = "<critique>\n[Your analysis and summary covering the Evaluation Criteria]\n</critique>\n<score>\n[Your final 1-10 weighted score of the response based on the critique. Do not always output extreme score (e.g., 10 and 0)]\n</score>";
    assert.equal(parseEvaluation(template).score, null, "the template's placeholder is no score");
    assert.equal(parseEvaluation(`${template}\n<critique>Grounded.</critique><score>[6]</score>`).score, 6);
    assert.equal(parseEvaluation("<critique>x</critique><score>Score: 9.</score>").score, 9);
    assert.equal(parseEvaluation("<critique>x</critique><score>11</score>").error, "score 11 is outside 0-10");
    assert.equal(parseEvaluation("<critique>x</critique><score>-1</score>").score, null);
  });

  test("marks written as '7 out of 10' and 'Score: 7' inside <score> are read", () => {
    assert.equal(parseEvaluation("<critique>x</critique><score>7 out of 10</score>").score, 7);
    assert.equal(parseEvaluation("<critique>x</critique><score>Score: 7 out of 10.</score>").score, 7);
    assert.equal(parseEvaluation("<critique>x</critique><score>Score: 7</score>").score, 7);
    assert.equal(parseEvaluation("<critique>x</critique><score>**Score:** 6.5 OUT OF 10</score>").score, 6.5);
    assert.equal(parseEvaluation("<critique>x</critique><score>7 out of 9</score>").score, null);
  });

  test("megabyte replies full of tags or spaces are read in one pass, with the same results as short ones", () => {
    const mb = 1 << 20;
    assert.equal(parseEvaluation("<score>".repeat(mb / 7)).error, "no score number inside <score>");
    assert.equal(parseEvaluation(`<critique>a</critique>${"<score>1</score>".repeat(mb / 16)}`).score, 1);
    assert.equal(parseEvaluation(`<critique>x</critique><score>7${" ".repeat(mb)}x</score>`).score, null);
    assert.equal(parseEvaluation(`<critique>a${"</critique><score>7</score>".repeat(mb / 26)}`).wellFormed, false);
    const wellFormed = parseEvaluation(`<critique>${"grounded ".repeat(mb / 9)}</critique><score>7</score>${" ".repeat(1000)}`);
    assert.deepEqual([wellFormed.score, wellFormed.wellFormed], [7, true]);
  });

  test("a responder's reasoning trace and answer", () => {
    const reply = "<reasoning_trace>\n<think>\nI look at the room.\n</think>\n<think>The sofa is grey.</think>\n<think>  </think>\n</reasoning_trace>\n<predicted_answer>\nGrey.\n</predicted_answer>";
    assert.deepEqual(parseAgentResponse(reply), { reasoningTrace: ["I look at the room.", "The sofa is grey."], predictedAnswer: "Grey." });
    assert.equal(parseAgentResponse("<think>a</think>").error, "no <predicted_answer>");
  });
});

describe("test-time scaling aggregation", () => {
  test("majority vote, ties broken by the mean, then by the lower score", () => {
    assert.equal(aggregateScores([7, 7, 3], "vote"), 7);
    assert.equal(aggregateScores([2, 2, 8, 8, 9], "vote"), 8); // mean 5.8: 8 is closer than 2
    assert.equal(aggregateScores([4, 4, 6, 6], "vote"), 4); // mean 5: equally close, the lower
    assert.equal(aggregateScores([5, null, 5, null, 9], "vote"), 5);
    assert.equal(aggregateScores([null, null], "vote"), null);
    assert.equal(aggregateScores([2, 3, 10], "mean"), 5);
    assert.equal(aggregateScores([null, 4, 6], "mean"), 5);
  });
});

describe("reward-model metrics", () => {
  test("accuracy within τ (≤) and RMSE, against hand-computed values", () => {
    // errors 0, 2, 3, 4 → within 2: 2 of 4; RMSE = sqrt((0 + 4 + 9 + 16) / 4) = sqrt(7.25)
    const pairs = [
      { score: 5, groundTruth: 5 },
      { score: 7, groundTruth: 5 },
      { score: 2, groundTruth: 5 },
      { score: 9, groundTruth: 5 },
    ];
    const m = accuracyAndRmse(pairs, 2);
    assert.equal(m.accuracy, 50);
    assert.equal(m.rmse, Math.sqrt(7.25));
  });

  test("overall is the mean of the environments (as the paper's Table 1), pooled is over every instance", () => {
    const pairs = [
      ...[0, 0, 3].map((e) => ({ score: 5 + e, groundTruth: 5, source: "hm3d", category: "object recognition" })),
      { score: 1, groundTruth: 5, source: "scannet", category: "world knowledge" },
    ];
    const m = rewardModelMetrics(pairs, { bootstrap: { resamples: 500, seed: 1 } });
    const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≠ ${b}`);
    close(m.environments.hm3d!.accuracy.value, 200 / 3);
    close(m.environments.scannet!.accuracy.value, 0);
    close(m.overall.accuracy.value, 100 / 3);
    close(m.pooled.accuracy.value, 50);
    close(m.environments.hm3d!.rmse.value, Math.sqrt(3));
    close(m.overall.rmse.value, (Math.sqrt(3) + 4) / 2);
    assert.equal(m.categories["world knowledge"]!.n, 1);
    const [low, high] = m.environments.hm3d!.accuracy.ci;
    assert.ok(low <= 200 / 3 && 200 / 3 <= high && low >= 0 && high <= 100);
    assert.deepEqual(rewardModelMetrics(pairs, { bootstrap: { resamples: 500, seed: 1 } }), m, "seeded: the same intervals");
  });
});

describe("C-GRPO augmentations", () => {
  test("a temporal shuffle is a permutation that moves something, the same for the same seed", () => {
    const frames = ["f0", "f1", "f2", "f3", "f4"];
    for (let seed = 0; seed < 200; seed++) {
      const { frames: shuffled, order } = temporalShuffle(frames, seed);
      assert.deepEqual([...shuffled].sort(), frames);
      assert.deepEqual([...order].sort(), [0, 1, 2, 3, 4]);
      assert.notDeepEqual(shuffled, frames);
      assert.deepEqual(temporalShuffle(frames, seed), { frames: shuffled, order });
    }
    assert.deepEqual(temporalShuffle(["only"], 3).frames, ["only"]);
  });

  test("reasoning steps are permuted, not lost", () => {
    const steps = paper[0]!.reasoning_trace!;
    for (let seed = 0; seed < 100; seed++) {
      const { steps: permuted } = permuteReasoningSteps(steps, seed);
      assert.equal(permuted.length, steps.length);
      assert.deepEqual([...permuted].sort(), [...steps].sort());
      assert.notDeepEqual(permuted, steps);
    }
    assert.deepEqual(permuteReasoningSteps(["same", "same"], 1).steps, ["same", "same"]);
  });

  test("spatial masking sets exactly the chosen 16×16 patches (15%) to 0 and leaves every other pixel", async () => {
    const width = 100;
    const height = 60; // 7 × 4 patches, the last column and row clipped
    const raw = Buffer.alloc(width * height * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = 1 + ((i * 7) % 250);
    const png = await sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
    const masked = await spatialMask(png, 42);
    assert.equal(masked.patches.length, Math.round(28 * 0.15));
    assert.deepEqual(masked.patches, chooseMaskedPatches(width, height, 42).patches);
    const out = await sharp(masked.data).raw().toBuffer();
    const inPatch = new Set<number>();
    for (const p of masked.patches) {
      const x0 = (p % 7) * 16;
      const y0 = Math.floor(p / 7) * 16;
      for (let y = y0; y < Math.min(height, y0 + 16); y++) for (let x = x0; x < Math.min(width, x0 + 16); x++) inPatch.add(y * width + x);
    }
    for (let px = 0; px < width * height; px++) {
      for (let c = 0; c < 3; c++) {
        const expected = inPatch.has(px) ? 0 : raw[px * 3 + c]!;
        if (out[px * 3 + c] !== expected) assert.fail(`pixel ${px} channel ${c}: ${out[px * 3 + c]} ≠ ${expected}`);
      }
    }
    assert.equal((await spatialMask(png, 42)).sha256, masked.sha256, "reproducible");
    assert.notEqual((await spatialMask(png, 43)).sha256, masked.sha256);
  });
});

describe("C-GRPO rewards (Eqs. 3-6)", () => {
  const ok = (s: number): string => `<critique>reasoned</critique><score>${s}</score>`;

  test("Eq. 3 accuracy reward and the format reward", () => {
    assert.equal(accuracyReward(7, 7), 1);
    assert.equal(accuracyReward(4, 7), 1 - 0.09);
    assert.equal(accuracyReward(0, 10), 0);
    assert.equal(formatReward(ok(5)), 1);
    assert.equal(formatReward(`x ${ok(5)}`), 0);
    assert.equal(formatReward("<critique>reasoned</critique>"), 0);
  });

  test("Eqs. 4-5 on a hand-made batch: boosts when the originals score at least δ times as accurately", () => {
    // gt 8. originals: 8 (R_a 1), 6 (0.96). temporal: 2 (0.64). spatial: 8 (1). reasoning: garbage (0).
    const batch = [
      { variant: "original" as const, text: ok(8), groundTruth: 8 },
      { variant: "original" as const, text: ok(6), groundTruth: 8 },
      { variant: "temporal" as const, text: ok(2), groundTruth: 8 },
      { variant: "spatial" as const, text: ok(8), groundTruth: 8 },
      { variant: "reasoning" as const, text: "no score", groundTruth: 8 },
    ];
    const { rewards, means } = batchRewards(batch);
    assert.equal(means.original, 0.98);
    assert.equal(means.temporal, 0.64);
    // R̄_o = 0.98 ≥ 0.95·0.64 → R^t = 0.3; 0.98 ≥ 0.95·1 = 0.95 → R^s = 0.3; 0.98 ≥ 0 → R^r = 0.3
    assert.deepEqual(rewards[0]!.boosts, { temporal: 0.3, spatial: 0.3, reasoning: 0.3 });
    assert.equal(rewards[0]!.total, 1 + 1 + 0.9 / 3);
    assert.equal(rewards[1]!.total, 0.96 + 1 + 0.9 / 3);
    assert.equal(rewards[2]!.total, 0.64 + 1, "augmented: R_a + R_f");
    assert.equal(rewards[4]!.total, 0);
    // originals worse than 0.95 × the spatial ones → no spatial boost
    const worse = batchRewards([
      { variant: "original", text: ok(3), groundTruth: 8 }, // 0.75
      { variant: "spatial", text: ok(8), groundTruth: 8 }, // 1 → 0.75 < 0.95
    ]);
    assert.deepEqual(worse.rewards[0]!.boosts, { temporal: 0, spatial: 0, reasoning: 0 });
    assert.equal(worse.rewards[0]!.total, 0.75 + 1);
    // H_min_acc: an original with R_a below 0.1 gets no boost; 0 gives Eq. 4 alone
    const far = [
      { variant: "original" as const, text: ok(0), groundTruth: 10 }, // R_a 0
      { variant: "temporal" as const, text: ok(0), groundTruth: 10 },
    ];
    assert.equal(batchRewards(far).rewards[0]!.total, 1);
    assert.equal(batchRewards(far, { ...CONTRASTIVE_DEFAULTS, minAccuracyForBoost: 0 }).rewards[0]!.total, 1 + 0.1);
  });

  test("Eq. 6 group-relative advantages", () => {
    const a = groupAdvantages([1, 2, 3, 4], 0);
    const std = Math.sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3);
    assert.deepEqual(a, [-1.5 / std, -0.5 / std, 0.5 / std, 1.5 / std]);
    assert.deepEqual(groupAdvantages([2, 2, 2]), [0, 0, 0]);
  });

  test("Eq. 1 rejective filter: correct (|s_gt − s| < τ) and not all N correct", () => {
    assert.deepEqual(rejectiveFilter([7, 5, 9, null], 7, 2), [true, false, false, false]); // |7-5| = 2 is not < 2
    assert.deepEqual(rejectiveFilter([7, 6, 8], 7, 2), [false, false, false], "all correct: too easy");
    assert.deepEqual(rejectiveFilter([1, 2], 9, 2), [false, false]);
  });
});

describe("benchmark building", () => {
  const instance = (id: string, episode: string, source: string): RewardInstance => ({ id, question: "q", predictedAnswer: "a", reasoningTrace: ["s"], episodeHistory: episode, numKeyframes: 5, groundTruthScore: 5, source });

  test("splits share no episode; every HM3D instance is in the benchmark", () => {
    const instances = [
      ...Array.from({ length: 6 }, (_, i) => instance(`h${i}`, `hm3d-v0/e${i % 3}`, "hm3d")),
      ...Array.from({ length: 20 }, (_, i) => instance(`s${i}`, `scannet-v0/e${i % 10}`, "scannet")),
    ];
    const split = splitByEpisode(instances, { finetuneFraction: 0.5, seed: 3 });
    const bench = new Set(split.benchmark.map((i) => i.episodeHistory));
    assert.ok(split.finetune.every((i) => !bench.has(i.episodeHistory)));
    assert.ok(split.finetune.every((i) => i.source === "scannet"));
    assert.equal(split.finetuneEpisodes, 5);
    assert.equal(split.benchmark.length + split.finetune.length, 26);
  });

  test("CSV round trip with commas, quotes and line breaks", () => {
    const text = toCsv(["a", "b"], [["x, \"y\"", "line\nbreak"], [3, null]]);
    assert.deepEqual(parseCsv(text, "f.csv").rows, [["a", "b"], ['x, "y"', "line\nbreak"], ["3", ""]]);
  });
});
