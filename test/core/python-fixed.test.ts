import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { pythonFixed } from "../../src/core/index.js";

describe("pythonFixed", () => {
  test('formats as Python\'s "%f" does (numpy savetxt fmt="%f"): ties to even on the exact value, -0, -inf, nan', () => {
    // outputs of python3 -c "print('|'.join('%f' % x for x in xs))" (CPython 3.12), stored here
    const cases: [number, string][] = [
      [0.0078125, "0.007812"],
      [-0.0078125, "-0.007812"],
      [-0, "-0.000000"],
      [0, "0.000000"],
      [-1e-9, "-0.000000"],
      [1.5, "1.500000"],
      [2.5e-6, "0.000003"],
      [1234567.1234565, "1234567.123457"],
      [Math.fround(0.1), "0.100000"],
      [Math.fround(-0.70710677), "-0.707107"],
      [1e22, "10000000000000000000000.000000"],
      [5e-324, "0.000000"],
      [Number.NaN, "nan"],
      [-Infinity, "-inf"],
      [Infinity, "inf"],
      [0.0000005, "0.000000"],
      [0.0000015, "0.000002"],
    ];
    for (const [x, text] of cases) assert.equal(pythonFixed(x), text, String(x));
    assert.equal(pythonFixed(2.5, 0), "2");
    assert.equal(pythonFixed(0.125, 2), "0.12");
  });
});
