import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { UserError } from "../../src/core/index.js";
import { KNOWN_DATASETS } from "../../src/data/index.js";
import {
  buildEacRequest,
  eacPromptTexts,
  eacScore,
  expressMetrics,
  judgeEac,
  loadGroundTruthPathLengths,
  openEqaEfficiency,
  parseEacReply,
  reliabilityMetrics,
} from "../../src/eval/index.js";
import { ModelRuntime, resolveModel } from "../../src/models/index.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { openEqaDir, projectRoot, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const close = (actual: number | null, expected: number, what: string): void => {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);
};

describe("OpenEQA efficiency (Eq. 2)", () => {
  test("matches hand-computed values and names the unit", () => {
    const summary = openEqaEfficiency(
      [
        { questionId: "a", score: 5, agentLength: 10, groundTruthLength: 5 }, // 100 · 0.5 = 50
        { questionId: "b", score: 3, agentLength: 2, groundTruthLength: 4 }, // 50 · 1 = 50
        { questionId: "c", score: 1, agentLength: 1, groundTruthLength: 1 }, // 0
        { questionId: "d", score: 4, agentLength: 0, groundTruthLength: 0 }, // 75 · 1 (0/0 → 1)
      ],
      "steps",
    );
    assert.equal(summary.unit, "steps");
    assert.equal(summary.n, 4);
    close(summary.efficiency, 175 / 4, "E");
    close(summary.correctness, 225 / 4, "C");
    close(summary.meanPathRatio, 0.875, "ratio");
    // A missing answer (σ = 0) scores 0, as in LLM-Match.
    close(openEqaEfficiency([{ questionId: "x", score: 0, agentLength: 1, groundTruthLength: 1 }], "metres").efficiency, 0, "E(σ=0)");
    assert.deepEqual(openEqaEfficiency([], "metres"), { efficiency: 0, correctness: 0, meanPathRatio: 0, n: 0, unit: "metres" });
  });

  test("bad lengths name the question", () => {
    assert.throws(() => openEqaEfficiency([{ questionId: "q7", score: 5, agentLength: -1, groundTruthLength: 2 }], "metres"), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.match(e.message, /id q7, field "agentLength"/);
      return true;
    });
    assert.throws(() => openEqaEfficiency([{ questionId: "q8", score: 5, agentLength: 1, groundTruthLength: Number.NaN }], "steps"), /id q8, field "groundTruthLength"/);
  });

  test("loads the ground-truth path lengths of the 557 HM3D questions, in metres", async () => {
    const file = join(openEqaDir, "third_party", "3d-mem-aeqa-eval", "gt_path_length.json");
    const lengths = await loadGroundTruthPathLengths(file);
    const hm3d = readRawBenchmark().filter((q) => q.episode_history.startsWith("hm3d"));
    assert.equal(lengths.size, 557);
    assert.deepEqual(new Set(lengths.keys()), new Set(hm3d.map((q) => q.question_id)));
    assert.equal(lengths.get("f2e82760-5c3c-41b1-88b6-85921b9e7b32"), 5.537014797329903);
    const dir = temporaryDir();
    const bad = join(dir, "gt.json");
    writeFileSync(bad, JSON.stringify({ q1: 3, q2: "far" }));
    await assert.rejects(loadGroundTruthPathLengths(bad), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.ok(e.message.includes(bad));
      assert.match(e.message, /id q2: expected a path length ≥ 0, found "far"/);
      return true;
    });
    writeFileSync(bad, "[1, 2]");
    await assert.rejects(loadGroundTruthPathLengths(bad), /expected a JSON object/);
  });
});

describe("EXPRESS-Bench metrics", () => {
  test("C, C*, E_path and d_T match hand-computed values", () => {
    const m = expressMetrics([
      { id: "1", judgement: { grounding: 1, accuracy: 5 }, pathLength: 10, geodesicDistance: 5, goalDistance: 0.5 }, // C 100, C* 100, E 50
      { id: "2", judgement: { grounding: 0.5, accuracy: 4 }, pathLength: 3, geodesicDistance: 6, goalDistance: 1.5 }, // C 40, C* 80, E 40
      { id: "3", judgement: { grounding: 0, accuracy: 5 }, pathLength: 2, geodesicDistance: 1, goalDistance: Infinity }, // C 0, C* 100, E 0
      { id: "4", judgement: null, pathLength: 5, geodesicDistance: 5, goalDistance: 2 }, // unjudged
      { id: "5", judgement: { grounding: 1, accuracy: 3 }, pathLength: Infinity, geodesicDistance: 4, goalDistance: 1 }, // no path
    ]);
    close(m.c, 140 / 3, "C");
    close(m.cStar, 280 / 3, "C*");
    close(m.ePath, 90 / 3, "E_path");
    close(m.dT, 5 / 4, "d_T");
    assert.deepEqual([m.nScored, m.nGoal, m.unjudged, m.noPath], [3, 4, 1, 1]);
    // The seed's Fig. 1 examples: EAC 5·1 = 5, 5·0 = 0, 1·0.5 = 0.5, 1·0 = 0.
    const fig1 = expressMetrics(
      [[1, 5], [0, 5], [0.5, 1], [0, 1]].map(([g, a], i) => ({ id: String(i), judgement: { grounding: g!, accuracy: a! }, pathLength: 1, geodesicDistance: 1, goalDistance: 0 })),
    );
    close(fig1.c, (100 * (5 + 0 + 0.5 + 0)) / 5 / 4, "C(Fig. 1)");
    close(fig1.cStar, (100 * (5 + 5 + 1 + 1)) / 5 / 4, "C*(Fig. 1)");
    const empty = expressMetrics([]);
    assert.deepEqual([empty.c, empty.cStar, empty.ePath, empty.dT], [null, null, null, null]);
    assert.throws(() => expressMetrics([{ id: "z", judgement: null, pathLength: -2, geodesicDistance: 1, goalDistance: 1 }]), /id z, field "pathLength"/);
  });

  test("C and C* need no ground-truth length nor goal: E_path and d_T leave such episodes out and say why", () => {
    const m = expressMetrics([
      { id: "1", judgement: { grounding: 1, accuracy: 5 }, pathLength: 10, geodesicDistance: 5, goalDistance: 0.5 }, // C 100, E 50
      { id: "2", judgement: { grounding: 0.5, accuracy: 4 }, pathLength: 3, geodesicDistance: null, goalDistance: null }, // C 40, no lᵢ, no goal
      { id: "3", judgement: { grounding: 1, accuracy: 3 }, pathLength: 4, geodesicDistance: null, goalDistance: Infinity }, // C 60, unreachable
    ]);
    close(m.c, 200 / 3, "C");
    close(m.cStar, 240 / 3, "C*");
    close(m.ePath, 50, "E_path");
    close(m.dT, 0.5, "d_T");
    assert.deepEqual([m.nScored, m.nPath, m.nGoal], [3, 1, 1]);
    assert.deepEqual(
      m.leftOut.map((l) => [l.metric, l.episodes]),
      [["E_path", 2], ["d_T", 1], ["d_T", 1]],
    );
    assert.match(m.leftOut[0]!.reason, /no ground-truth path length/);
    assert.match(m.leftOut[1]!.reason, /no goal_position/);
    assert.match(m.leftOut[2]!.reason, /unreachable/);
    assert.deepEqual(expressMetrics([{ id: "1", judgement: { grounding: 1, accuracy: 5 }, pathLength: 1, geodesicDistance: 1, goalDistance: 0 }]).leftOut, []);
  });

  test("ACE, NPL and WCE match hand-computed values", () => {
    const r = reliabilityMetrics([
      { id: "1", confidence: 0.9, pathLength: 10, groundTruthLength: 5 }, // ratio 0.5
      { id: "2", confidence: 0.6, pathLength: 2, groundTruthLength: 4 }, // ratio 1
      { id: "3", confidence: 0.3, pathLength: Infinity, groundTruthLength: 3 }, // ratio 0
    ]);
    close(r.ace, 0.6, "ACE");
    close(r.npl, 0.5, "NPL");
    close(r.wce, 0.35, "WCE");
    assert.equal(r.n, 3);
    assert.deepEqual(reliabilityMetrics([]), { ace: null, npl: null, wce: null, n: 0 });
  });
});

describe("EAC judge", () => {
  test("the benchmark's evaluation.txt is known by its SHA-256 for eqa data fetch; eqakit sends its own eac-judge.txt", () => {
    const original = "ba446f872e2831dc50a7b0be687229a051a935446217fca24beb2f6ca65a75de";
    assert.equal(KNOWN_DATASETS["express-bench"]!.files.evaluation!.sha256, original);
    const ours = readFileSync(join(projectRoot, "prompts", "eac-judge.txt"));
    assert.notEqual(createHash("sha256").update(ours).digest("hex"), original);
    assert.match(readFileSync(join(projectRoot, "prompts", "SOURCES.md"), "utf8"), /\| `eac-judge\.txt` \|/);
  });

  test("reads replies: exact, fractions, prose, labels; unreadable ones fail", () => {
    const ok = (reply: string, grounding: number, accuracy: number, rule: string): void => {
      const parsed = parseEacReply(reply);
      assert.deepEqual(parsed, { ok: true, rule, grounding, accuracy }, reply);
    };
    ok("1, 5", 1, 5, "exact");
    ok("0.5,4", 0.5, 4, "exact");
    ok("Your mark: 1, 4.5", 1, 4.5, "exact");
    ok("1/2, 4/5", 0.5, 4, "exact");
    ok("1,4.", 1, 4, "exact");
    ok("1, 4 (The response is correct.)", 1, 4, "pair");
    ok("There are 6 chairs in the image. Your mark: 1, 5", 1, 5, "pair");
    ok("The response matches the image. Grounding: 0.5. Accuracy: 3.", 0.5, 3, "labelled");
    ok("I would give accuracy 5 and grounding 1", 1, 5, "labelled");
    ok("Scores: 1 and 5", 1, 5, "two-numbers");
    // δ is kept as given: the reference multiplies float(δ) by σ without rounding it
    ok("0.7, 3", 0.7, 3, "exact");
    for (const [reply, error] of [
      ["I cannot evaluate this.", /no numbers/],
      ["The 3 chairs and 2 tables look fine; 1 point", /among 3 numbers/],
    ] as const) {
      const parsed = parseEacReply(reply);
      assert.equal(parsed.ok, false, reply);
      if (!parsed.ok) assert.match(parsed.error, error);
    }
  });

  test("reads signs and keeps out-of-range marks, clipped as evaluation.py clips δ·σ and σ into [0, 5]", () => {
    // float("1"), int("-2") in the reference: σ = -2, so C and C* both clip to 0
    assert.deepEqual(parseEacReply("1,-2"), { ok: true, rule: "exact", grounding: 1, accuracy: -2, clipped: true });
    assert.deepEqual(parseEacReply("Your mark: 1, 7"), { ok: true, rule: "exact", grounding: 1, accuracy: 7, clipped: true });
    assert.deepEqual(parseEacReply("2, 3"), { ok: true, rule: "exact", grounding: 2, accuracy: 3, clipped: true });
    assert.deepEqual(parseEacReply("0.5, 4"), { ok: true, rule: "exact", grounding: 0.5, accuracy: 4 });
    assert.deepEqual([eacScore({ grounding: 1, accuracy: -2 }), eacScore({ grounding: 1, accuracy: 7 }), eacScore({ grounding: 0.5, accuracy: 7 }), eacScore({ grounding: 2, accuracy: 3 })], [0, 5, 3.5, 5]);
    const m = expressMetrics(
      [[1, -2], [1, 7], [0.5, 7], [2, 3]].map(([grounding, accuracy], i) => ({ id: String(i), judgement: { grounding: grounding!, accuracy: accuracy! }, pathLength: 1, geodesicDistance: 1, goalDistance: 0 })),
    );
    // numpy: mean(100 · clip([-2, 7, 3.5, 6], 0, 5) / 5) and mean(100 · clip([-2, 7, 7, 3], 0, 5) / 5)
    close(m.c, (100 * (0 + 5 + 3.5 + 5)) / 5 / 4, "C");
    close(m.cStar, (100 * (0 + 5 + 5 + 3)) / 5 / 4, "C*");
  });

  test("a reply with several different marks is scored by the first and lists them all", () => {
    assert.deepEqual(parseEacReply("1, 4 (close to the answer). On reflection: 0.5, 2"), {
      ok: true,
      rule: "pair",
      grounding: 1,
      accuracy: 4,
      marks: [{ grounding: 1, accuracy: 4 }, { grounding: 0.5, accuracy: 2 }],
    });
    // the same mark written twice is not ambiguous
    assert.deepEqual(parseEacReply("1, 4 — again: 1, 4"), { ok: true, rule: "pair", grounding: 1, accuracy: 4 });
  });

  test("asks a real OpenAI-compatible server with the final frame and records failures", async () => {
    const frame = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 40 } } }).png().toBuffer();
    const input = { question: "Is the sofa red?", answer: "Yes, it is red.", response: "Yes.", image: { data: new Uint8Array(frame), mediaType: "image/png" } };
    const replies = ["Your mark: 1, 4.5", "The response looks plausible but I cannot tell.", null];
    await withModelServer(
      (_request, index) => openAiReply(replies[index] ?? null),
      async (server) => {
        const spec = resolveModel("openai/gpt-4o-mini", { baseURL: `${server.url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
        const model = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 }).model(spec, { role: "judge" });

        assert.deepEqual(await judgeEac(model, input), { status: "ok", grounding: 1, accuracy: 4.5, score: 4.5, raw: "Your mark: 1, 4.5", rule: "exact" });
        assert.deepEqual(await judgeEac(model, input), { status: "failed", raw: "The response looks plausible but I cannot tell.", error: "no numbers in the reply" });
        const third = await judgeEac(model, input);
        assert.equal(third.status, "failed");

        // What reached the server: the system line, the user text ending in the filled fields, the frame.
        const body = server.requests[0]!.body as { messages: { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] }[] };
        const { system, user } = eacPromptTexts(input);
        assert.equal(system, "You grade a robot's answer to a question about a home, given the correct answer and the last picture the robot saw.\n");
        assert.ok(user.startsWith("You are given a Question, the correct Answer"));
        assert.ok(user.endsWith("and nothing else.\nQuestion: Is the sofa red?\nAnswer: Yes, it is red.\nResponse: Yes.\nYour mark: "));
        assert.equal(body.messages.length, 2);
        assert.deepEqual(body.messages[0], { role: "system", content: system });
        assert.equal(body.messages[1]!.role, "user");
        const parts = body.messages[1]!.content as { type: string; text?: string; image_url?: { url: string } }[];
        assert.deepEqual(parts.map((p) => p.type), ["text", "image_url"]);
        assert.equal(parts[0]!.text, user);
        const url = parts[1]!.image_url!.url;
        assert.ok(url.startsWith("data:image/png;base64,"), url.slice(0, 40));
        const { data, info } = await sharp(Buffer.from(url.split(",")[1]!, "base64")).raw().toBuffer({ resolveWithObject: true });
        assert.deepEqual([info.width, info.height], [64, 48]);
        assert.deepEqual([...data.subarray(0, 3)], [200, 30, 40]);
        assert.equal(buildEacRequest(input).messages.length, 2);
      },
    );
  });
});
