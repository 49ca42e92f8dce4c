import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { UserError, parseShard, selectShard, shardFromEnvironment, shardOfId } from "../../src/core/index.js";

const ids = Array.from({ length: 1000 }, (_v, i) => `question-${i}`);

describe("selectShard", () => {
  test("every id is in exactly one of n shards, whatever the order of the items", () => {
    const shards = [0, 1, 2, 3].map((index) => selectShard(ids, (id) => id, { index, count: 4 }));
    assert.equal(shards.flat().length, ids.length);
    assert.equal(new Set(shards.flat()).size, ids.length);
    const reversed = [...ids].reverse();
    assert.deepEqual(selectShard(reversed, (id) => id, { index: 2, count: 4 }).sort(), [...shards[2]!].sort());
  });

  test("adding items moves no item to another shard", () => {
    const before = new Map(ids.map((id) => [id, shardOfId(id, 8)]));
    const more = [...ids, ...Array.from({ length: 300 }, (_v, i) => `added-${i}`)];
    for (const id of more.slice(0, ids.length)) assert.equal(shardOfId(id, 8), before.get(id));
  });

  test("shards are balanced within the binomial spread (1000 ids over 8: 125 ± 3σ)", () => {
    const sizes = Array.from({ length: 8 }, (_v, index) => selectShard(ids, (id) => id, { index, count: 8 }).length);
    for (const size of sizes) assert.ok(Math.abs(size - 125) < 3 * Math.sqrt(1000 * (1 / 8) * (7 / 8)), `${sizes.join(", ")}`);
  });

  test("the partition is fixed: the first 48 bits of SHA-256 of the id, modulo n", () => {
    // sha256("q1") = c75de8c1b7c3…
    assert.equal(shardOfId("q1", 5), 0xc75de8c1b7c3 % 5);
    assert.deepEqual(selectShard(["a", "b"], (id) => id, undefined), ["a", "b"]);
  });
});

describe("parseShard and shardFromEnvironment", () => {
  test("i/n counts from 0; anything else is a UserError naming --shard", () => {
    assert.deepEqual(parseShard("0/8"), { index: 0, count: 8 });
    assert.deepEqual(parseShard(" 7 / 8 "), { index: 7, count: 8 });
    for (const bad of ["8/8", "1/0", "-1/4", "a/b", "3", "1.5/4"]) {
      assert.throws(() => parseShard(bad), (e: unknown) => e instanceof UserError && /option --shard: expected i\/n/.test(e.message), bad);
    }
  });

  test("a Slurm job array task: (ID − MIN) / STEP of COUNT; none outside a job array", () => {
    assert.equal(shardFromEnvironment({}), undefined);
    assert.equal(shardFromEnvironment({ SLURM_ARRAY_TASK_ID: "3" }), undefined);
    assert.deepEqual(shardFromEnvironment({ SLURM_ARRAY_TASK_ID: "3", SLURM_ARRAY_TASK_COUNT: "8" }), { index: 3, count: 8 });
    assert.deepEqual(shardFromEnvironment({ SLURM_ARRAY_TASK_ID: "8", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_COUNT: "8" }), { index: 7, count: 8 });
    assert.deepEqual(shardFromEnvironment({ SLURM_ARRAY_TASK_ID: "14", SLURM_ARRAY_TASK_MIN: "10", SLURM_ARRAY_TASK_STEP: "2", SLURM_ARRAY_TASK_COUNT: "3" }), { index: 2, count: 3 });
    for (const env of [
      { SLURM_ARRAY_TASK_ID: "9", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_COUNT: "3" },
      { SLURM_ARRAY_TASK_ID: "13", SLURM_ARRAY_TASK_MIN: "10", SLURM_ARRAY_TASK_STEP: "2", SLURM_ARRAY_TASK_COUNT: "3" },
      { SLURM_ARRAY_TASK_ID: "x", SLURM_ARRAY_TASK_COUNT: "3" },
    ]) {
      assert.throws(() => shardFromEnvironment(env), (e: unknown) => e instanceof UserError && /SLURM_ARRAY_TASK_ID/.test(e.message) && /--array=0-7/.test(e.message), JSON.stringify(env));
    }
  });

  test("an array with gaps (--array=1,5,9) is refused in every task, the first one included", () => {
    // what Slurm 22.05 sets in each task of sbatch --array=1,5,9
    const array = { SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "9", SLURM_ARRAY_TASK_STEP: "1", SLURM_ARRAY_TASK_COUNT: "3" };
    for (const id of ["1", "5", "9"]) {
      assert.throws(
        () => shardFromEnvironment({ ...array, SLURM_ARRAY_TASK_ID: id }),
        (e: unknown) => e instanceof UserError && /the job array's 3 tasks \(1 to 9\) are not one range with one step/.test(e.message) && /--shard i\/n/.test(e.message),
        `task ${id}`,
      );
    }
    // --array=0-6:3 and --array=1-3 are ranges: every task is a shard
    const stepped = { SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_MAX: "6", SLURM_ARRAY_TASK_STEP: "3", SLURM_ARRAY_TASK_COUNT: "3" };
    assert.deepEqual(["0", "3", "6"].map((id) => shardFromEnvironment({ ...stepped, SLURM_ARRAY_TASK_ID: id })), [0, 1, 2].map((index) => ({ index, count: 3 })));
    assert.deepEqual(shardFromEnvironment({ ...array, SLURM_ARRAY_TASK_MAX: "3", SLURM_ARRAY_TASK_ID: "1" }), { index: 0, count: 3 });
  });
});
