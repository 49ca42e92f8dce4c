import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UserError } from "../../src/core/index.js";
import { linspaceRoundIndices, parseSamplingSpec, sampleFrameIndices } from "../../src/episodes/index.js";

/**
 * `np.round(np.linspace(0, n - 1, k)).astype(int)` as numpy 2.4 prints it (computed with
 * python3 and numpy, then copied here).
 */
const NUMPY: [number, number, number[]][] = [
  [600, 50, [0, 12, 24, 37, 49, 61, 73, 86, 98, 110, 122, 134, 147, 159, 171, 183, 196, 208, 220, 232, 244, 257, 269, 281, 293, 306, 318, 330, 342, 355, 367, 379, 391, 403, 416, 428, 440, 452, 465, 477, 489, 501, 513, 526, 538, 550, 562, 575, 587, 599]],
  [168, 50, [0, 3, 7, 10, 14, 17, 20, 24, 27, 31, 34, 37, 41, 44, 48, 51, 55, 58, 61, 65, 68, 72, 75, 78, 82, 85, 89, 92, 95, 99, 102, 106, 109, 112, 116, 119, 123, 126, 130, 133, 136, 140, 143, 147, 150, 153, 157, 160, 164, 167]],
  [10, 50, [0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 9, 9, 9]],
  [4, 3, [0, 2, 3]],
  [6, 3, [0, 2, 5]],
  [1, 5, [0, 0, 0, 0, 0]],
  [7, 7, [0, 1, 2, 3, 4, 5, 6]],
  [2, 2, [0, 1]],
  [1000, 15, [0, 71, 143, 214, 285, 357, 428, 500, 571, 642, 714, 785, 856, 928, 999]],
  [585, 20, [0, 31, 61, 92, 123, 154, 184, 215, 246, 277, 307, 338, 369, 400, 430, 461, 492, 523, 553, 584]],
  [9, 4, [0, 3, 5, 8]],
  [11, 4, [0, 3, 7, 10]],
  [5, 1, [0]],
  [3, 0, []],
  [100, 8, [0, 14, 28, 42, 57, 71, 85, 99]],
];

describe("uniform sampling: OpenEQA's round(linspace(0, n-1, K))", () => {
  for (const [n, k, expected] of NUMPY) {
    it(`n=${n}, K=${k}`, () => assert.deepEqual(linspaceRoundIndices(n, k), expected));
  }

  it("rounds halves to even, as numpy does (1.5 → 2, 2.5 → 2)", () => {
    assert.deepEqual(linspaceRoundIndices(4, 3), [0, 2, 3]);
    assert.deepEqual(linspaceRoundIndices(6, 3), [0, 2, 5]);
  });

  it("gives nothing for an empty episode and refuses negative counts", () => {
    assert.deepEqual(linspaceRoundIndices(0, 50), []);
    assert.throws(() => linspaceRoundIndices(10, -1), RangeError);
    assert.throws(() => linspaceRoundIndices(10, 2.5), RangeError);
  });

  it("is what sampleFrameIndices gives for uniform:K", () => {
    assert.deepEqual(sampleFrameIndices(600, { kind: "uniform", count: 50 }), NUMPY[0]![2]);
  });
});

describe("every-n and by-seconds sampling", () => {
  it("every:N keeps frames 0, N, 2N, …", () => {
    assert.deepEqual(sampleFrameIndices(25, { kind: "every", step: 10 }), [0, 10, 20]);
    assert.deepEqual(sampleFrameIndices(3, { kind: "every", step: 1 }), [0, 1, 2]);
    assert.deepEqual(sampleFrameIndices(0, { kind: "every", step: 4 }), []);
  });

  it("seconds:S keeps the first frame at or after each S seconds from the first frame", () => {
    // 10 fps from t = 5 s, then a gap of 3 s
    const timestamps = [5, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9, 6.0, 6.1, 9.2, 9.3];
    assert.deepEqual(sampleFrameIndices(timestamps.length, { kind: "seconds", interval: 0.5 }, timestamps), [0, 5, 10, 12]);
    assert.deepEqual(sampleFrameIndices(timestamps.length, { kind: "seconds", interval: 1 }, timestamps), [0, 10, 12]);
    // 0.1 + 0.2 in floating point is 0.30000000000000004: still reaches 0.3
    assert.deepEqual(sampleFrameIndices(4, { kind: "seconds", interval: 0.3 }, [0, 0.1, 0.1 + 0.2, 0.6]), [0, 2, 3]);
  });

  it("seconds:S needs timestamps", () => {
    assert.throws(() => sampleFrameIndices(10, { kind: "seconds", interval: 1 }), (error: unknown) => error instanceof UserError && /needs the frames' timestamps/.test(error.message));
  });
});

describe("parseSamplingSpec", () => {
  it("reads the three forms and a bare count", () => {
    assert.deepEqual(parseSamplingSpec("uniform:50"), { kind: "uniform", count: 50 });
    assert.deepEqual(parseSamplingSpec("15"), { kind: "uniform", count: 15 });
    assert.deepEqual(parseSamplingSpec("every:10"), { kind: "every", step: 10 });
    assert.deepEqual(parseSamplingSpec("seconds:2"), { kind: "seconds", interval: 2 });
    assert.deepEqual(parseSamplingSpec(" seconds:0.5 "), { kind: "seconds", interval: 0.5 });
  });

  it("refuses anything else with a UserError that shows the forms", () => {
    for (const text of ["", "uniform:", "uniform:0", "every:2.5", "seconds:0", "seconds:-1", "random:5", "uniform:5:6", "ten", "every:x"]) {
      assert.throws(() => parseSamplingSpec(text), (error: unknown) => error instanceof UserError && error.message.includes(`"${text}"`) && error.message.includes("uniform:K"), text);
    }
  });
});
