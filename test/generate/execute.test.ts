import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { TagCondition, TagProgram, TagQueryType } from "../../src/data/index.js";
import { executeProgram, executeProgramDetailed, groundingTransform } from "../../src/generate/index.js";
import { kitchenLog } from "./fixtures.js";

const log = kitchenLog();

function program(target: string, query: TagQueryType, filters: TagCondition[] = [], modifier: string | null = null): TagProgram {
  return { target, filters, query: { type: query, modifier } };
}

const onCountertop: TagCondition = { type: "location", key: "on", args: ["countertop"] };
const beforePickup: TagCondition = { type: "moment", key: "before", args: ["pickup", "cup", 1] };
const rightAfterOpen: TagCondition = { type: "moment", key: "right_after", args: ["open", "fridge", 1] };

/** The values of the groups, in order. */
function values(p: TagProgram): unknown[] {
  return executeProgram(p, log).map((g) => g.value);
}

describe("grounding frame", () => {
  test("puts the agent's camera at the origin at step 0, looking along −z", () => {
    const m = groundingTransform(log);
    // the world point 2 m in front of the camera at step 0 is (0, 0, -2)
    const x = m[0]! * 0 + m[1]! * 1.5 + m[2]! * -2 + m[3]!;
    const y = m[4]! * 0 + m[5]! * 1.5 + m[6]! * -2 + m[7]!;
    const z = m[8]! * 0 + m[9]! * 1.5 + m[10]! * -2 + m[11]!;
    assert.deepEqual([x, y, z].map((v) => Math.round(v * 1e9) / 1e9), [0, 0, -2]);
  });
});

describe("executeProgram: queries (Table 3)", () => {
  test("countObjects without conditions: every cup at the last step, positions in the grounding frame", () => {
    const answer = executeProgram(program("cup", "countObjects"), log);
    assert.equal(answer.length, 1);
    assert.equal(answer[0]!.predicate, "");
    assert.equal(answer[0]!.value, 3);
    assert.deepEqual(
      answer[0]!.objects.map((o) => o.position),
      [
        [-1.2, -0.55, -2],
        [-0.8, -0.55, -2],
        [3, -0.3, -1],
      ],
    );
    assert.deepEqual(answer[0]!.objects.map((o) => o.caption), ["green plastic", "red ceramic", "green ceramic"]);
  });

  test("listObjects: the objects inside the fridge at the end, and under the table", () => {
    assert.deepEqual(values(program("object", "listObjects", [{ type: "location", key: "inside", args: ["fridge"] }])), [["cup", "mug"]]);
    assert.deepEqual(values(program("object", "listObjects", [{ type: "location", key: "under", args: ["table"] }])), [["box"]]);
  });

  test("countTimes: events in the window on matching objects", () => {
    assert.deepEqual(values(program("cup", "countTimes", [], "pickup")), [2]);
    assert.deepEqual(values(program("cup", "countTimes", [{ type: "property", key: "material", args: ["ceramic"] }], "pickup")), [1]);
    assert.deepEqual(values(program("fridge", "countTimes", [{ type: "moment", key: "before", args: ["close", "fridge", 1] }], "open")), [1]);
    assert.deepEqual(values(program("fridge", "countTimes", [{ type: "moment", key: "right_after", args: ["close", "fridge", 1] }], "open")), [0]);
    const answer = executeProgram(program("cup", "countTimes", [], "pickup"), log);
    assert.deepEqual(answer[0]!.objects.map((o) => o.caption), ["green plastic", "green ceramic"]);
  });

  test("getState: closed at the end, open right after it was opened", () => {
    assert.deepEqual(values(program("fridge", "getState", [], "open")), ["closed"]);
    assert.deepEqual(values(program("fridge", "getState", [rightAfterOpen], "open")), ["open"]);
    assert.deepEqual(values(program("mug", "getState", [], "filled")), ["filled with liquid"]);
  });

  test("getProperty: use, and colours grouped by countertop", () => {
    assert.deepEqual(values(program("knife", "getProperty", [], "use")), ["used for cutting food"]);
    assert.deepEqual(values(program("cup", "getProperty", [onCountertop], "colour")), [["green", "red"], null]);
  });

  test("getLocation: receptacle and its coordinates, one value per object", () => {
    assert.deepEqual(values(program("apple", "getLocation")), ["on the countertop (x=1.5, y=-1.05, z=-2)"]);
    const afterPut: TagCondition = { type: "moment", key: "right_after", args: ["put", "cup", 1] };
    assert.deepEqual(values(program("cup", "getLocation", [afterPut, { type: "property", key: "colour", args: ["green"] }])), [
      ["on the countertop (x=-1, y=-1.05, z=-2)", "inside the fridge (x=3, y=-0.6, z=-1)"],
    ]);
    const between: TagCondition = { type: "moment", key: "between", args: ["pickup", "cup", 1, "put", "cup", 1] };
    assert.deepEqual(values(program("cup", "getLocation", [between, { type: "property", key: "material", args: ["ceramic"] }])), [
      ["on the countertop (x=-1, y=-1.05, z=-2)", "in your hand"],
    ]);
  });
});

describe("executeProgram: predicates (Table 4)", () => {
  test("property: colour, material, use", () => {
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "property", key: "colour", args: ["green"] }])), [2]);
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "property", key: "material", args: ["ceramic"] }])), [2]);
    assert.deepEqual(values(program("object", "listObjects", [{ type: "property", key: "use", args: ["used for eating"] }])), [["apple"]]);
  });

  test("location: on (grouped by countertop), inside, same as another object, above", () => {
    assert.deepEqual(values(program("cup", "countObjects", [onCountertop])), [2, 0]);
    assert.deepEqual(values(program("cup", "countObjects", [onCountertop, beforePickup])), [2, 1]);
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "location", key: "inside", args: ["fridge"] }])), [1]);
    const sameAsApple: TagCondition = { type: "location", key: "same_on", args: ["countertop", "apple"] };
    assert.deepEqual(values(program("cup", "countObjects", [sameAsApple, beforePickup])), [1]);
    assert.deepEqual(values(program("cup", "countObjects", [sameAsApple])), [0]);
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "location", key: "above", args: ["countertop"] }])), [2, 0]);
  });

  test("state: open only while it was open", () => {
    const open: TagCondition = { type: "state", key: "open", args: ["true"] };
    assert.deepEqual(values(program("fridge", "countObjects", [open])), [0]);
    assert.deepEqual(values(program("fridge", "countObjects", [open, rightAfterOpen])), [1]);
    assert.deepEqual(values(program("mug", "countObjects", [{ type: "state", key: "broken", args: ["false"] }])), [1]);
  });

  test("position: from the agent's latest view of both objects", () => {
    // cup-1 and cup-2 were last seen with the knife to their right; cup-3, held at step 3, to its right
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "position", key: "left_of", args: ["knife"] }])), [2]);
    const rightOfKnife: TagCondition = { type: "position", key: "right_of", args: ["knife"] };
    assert.deepEqual(values(program("cup", "countObjects", [rightOfKnife, { type: "moment", key: "right_after", args: ["pickup", "cup", 1] }])), [1]);
    // cup-3 has been in the closed fridge since step 4: the view of step 3 is stale, so no cup is to the knife's right now
    assert.deepEqual(values(program("cup", "countObjects", [rightOfKnife])), [0]);
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "position", key: "in_front_of", args: ["chair"] }])), [2]);
    // the chair is behind cup-1 and cup-2 (one group per cup), not behind cup-3
    assert.deepEqual(values(program("chair", "countObjects", [{ type: "position", key: "behind", args: ["cup"] }])), [1, 1, 0]);
  });

  test("moment: before, after, right before, right after, between", () => {
    const cupsOnCountertop2 = (m: TagCondition): unknown[] => values(program("cup", "countObjects", [{ type: "location", key: "on", args: ["countertop"], at: [1.5, -1.05, -2] }, m]));
    assert.deepEqual(cupsOnCountertop2(beforePickup), [1]);
    assert.deepEqual(cupsOnCountertop2({ type: "moment", key: "after", args: ["pickup", "cup", 1] }), [0]);
    assert.deepEqual(cupsOnCountertop2({ type: "moment", key: "right_before", args: ["pickup", "cup", 1] }), [1]);
    assert.deepEqual(cupsOnCountertop2({ type: "moment", key: "right_after", args: ["pickup", "cup", 1] }), [0]);
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "location", key: "inside", args: ["fridge"] }, { type: "moment", key: "between", args: ["pickup", "cup", 1, "put", "cup", 1] }])), [0]);
    // an event the log does not have selects no step
    assert.deepEqual(values(program("cup", "countObjects", [{ type: "moment", key: "after", args: ["open", "fridge", 2] }])), [0]);
  });
});

describe("ambiguity and grounding", () => {
  test("two countertops give two groups named by their coordinates (Fig. 2)", () => {
    const answer = executeProgram(program("cup", "countObjects", [onCountertop, { type: "property", key: "colour", args: ["green"] }, beforePickup]), log);
    assert.deepEqual(
      answer.map((g) => [g.predicate, g.value]),
      [
        ["location: on the countertop (x=-1, y=-1.05, z=-2)", 1],
        ["location: on the countertop (x=1.5, y=-1.05, z=-2)", 1],
      ],
    );
    assert.deepEqual(answer[0]!.conditions, [{ key: "location:on", value: "countertop", position: [-1, -1.05, -2] }]);
  });

  test("a grounded condition means the nearest object of its type and gives one group", () => {
    const grounded = executeProgram(program("cup", "countObjects", [{ ...onCountertop, at: [-0.9, -1.1, -2.1] }]), log);
    assert.deepEqual(grounded.map((g) => [g.predicate, g.value]), [["", 2]]);
    const nowhere = executeProgram(program("cup", "countObjects", [{ ...onCountertop, at: [9, 0, 9] }]), log);
    assert.deepEqual(nowhere.map((g) => g.value), [0]);
  });
});

describe("logs that differ", () => {
  test("the same program over another log of the same trajectory (other ids, other world frame) gives the same answer", () => {
    const other = kitchenLog({ yaw: 0.7, offset: [5, 0.2, -3], renameIds: (id) => `perceived/${id.split("-")[0]}#${id.split("-")[1]}` });
    const programs: TagProgram[] = [
      program("cup", "countObjects", [onCountertop, beforePickup]),
      program("cup", "countObjects", [{ type: "position", key: "left_of", args: ["knife"] }]),
      program("chair", "countObjects", [{ type: "position", key: "behind", args: ["cup"] }]),
      program("cup", "getLocation", [{ type: "moment", key: "right_after", args: ["put", "cup", 1] }]),
      program("object", "listObjects", [{ type: "location", key: "under", args: ["table"] }]),
      program("cup", "countObjects", [{ ...onCountertop, at: [1.5, -1.05, -2] }, beforePickup]),
    ];
    for (const p of programs) assert.deepEqual(executeProgram(p, other), executeProgram(p, log), JSON.stringify(p));
  });

  test("what the log does not know is reported, never counted", () => {
    const partial = kitchenLog({ edit: (raw) => delete (raw.objects.find((o) => o.id === "cup-2")!.properties as Record<string, string>).colour });
    const green = program("cup", "countObjects", [{ type: "property", key: "colour", args: ["green"] }]);
    const result = executeProgramDetailed(green, partial);
    assert.equal(result.unknown, true);
    assert.equal(result.answer[0]!.value, 2);
    assert.equal(executeProgramDetailed(green, log).unknown, false);
    const unknownRelation = kitchenLog({
      edit: (raw) => {
        for (const step of raw.steps) step.objects["cup-1"]!.relation = "unknown";
      },
    });
    assert.equal(executeProgramDetailed(program("cup", "countObjects", [onCountertop]), unknownRelation).unknown, true);
    const noStates = kitchenLog({ edit: (raw) => raw.steps.forEach((s) => (s.objects["fridge-1"]!.states = {})) });
    assert.equal(executeProgramDetailed(program("fridge", "getState", [], "open"), noStates).unknown, true);
  });
});
