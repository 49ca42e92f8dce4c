import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildEpisodeMemory, inferRelations, memoryAgainstRecording, mergeViews, viewsFromMasks, type MemoryInstance, type ObjectView } from "../../src/agents/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { aabbOf } from "../../src/geometry/index.js";
import { recordTask } from "../../src/sim/index.js";
import { temporaryDir } from "../helpers/paths.js";

const same = (a: string, b: string): number => (a === b ? 1 : 0);

describe("memoryAgainstRecording", () => {
  test("the memory a short built-in recording's masks make finds every object seen in 3 frames, splits none, places them within 10 cm and reads on/inside as the trajectory has them", async () => {
    const out = join(temporaryDir("memory-truth"), "home-3");
    await recordTask({ seed: 3, tasks: ["random"], out, width: 160, height: 120, minSteps: 40 });
    const { graph } = await buildEpisodeMemory(await openEpisode(join(out, "frames"), "home-3"), { detector: false, ignoreLabels: ["wall", "floor", "ceiling"] });
    const truth = await memoryAgainstRecording(graph, out);
    assert.ok(truth.objects >= 10, `${truth.objects} objects seen`);
    assert.deepEqual(truth.missed, []);
    assert.ok(truth.rightInstances / truth.instances >= 0.95, `${truth.rightInstances} of ${truth.instances} instances at their object`);
    // before, the bed's headboard and its mattress were two instances
    assert.deepEqual(truth.split, []);
    const errors = [...truth.centreErrors].sort((a, b) => a - b);
    assert.ok(errors[Math.floor(errors.length / 2)]! <= 0.05, `median centre error ${errors[Math.floor(errors.length / 2)]}`);
    assert.ok(errors.filter((e) => e <= 0.1).length / errors.length >= 0.75, `centre errors ${errors.map((e) => e.toFixed(2)).join(" ")}`);
    const r = truth.relations;
    // before, vases on the dining table (its box up its chairs' backs) were inside it
    assert.ok(r.truth >= 4 && r.predicted >= 4, JSON.stringify(r));
    assert.ok(r.right / r.predicted >= 0.9, `wrong: ${r.wrong.join("; ")}`);
    assert.ok(r.recalled / r.truth >= 0.75, `missed: ${r.missedTruth.join("; ")}`);
  });
});

describe("viewsFromMasks", () => {
  test("a mask whose pieces lie apart in depth (a TV over its stand) is one view holding every piece, not its largest", () => {
    const width = 40;
    const height = 30;
    const camera = { width, height, fx: 20, fy: 20, cx: 20, cy: 15 };
    const depth = new Float32Array(width * height).fill(2);
    const ids = new Uint32Array(width * height);
    // rows 0-9: the larger piece; rows 22-29: the smaller one, a metre lower
    for (let v = 0; v < height; v++) for (let u = 10; u < 30; u++) if (v < 10 || v >= 22) ids[v * width + u] = 7;
    const pose = new Float64Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    const [view] = viewsFromMasks(0, { width, height, ids, labels: { "7": "tv stand" } }, { depth, camera, pose });
    assert.ok(view?.box, "the view has a box");
    assert.ok(view.box.max[1] - view.box.min[1] > 1.2, `the box spans ${view.box.min[1].toFixed(2)} to ${view.box.max[1].toFixed(2)} m`);
  });
});

/** A view from masks of `maskId` whose points fill the box [min, max] on a 2 cm grid. */
function maskView(frame: number, maskId: number, label: string, min: [number, number, number], max: [number, number, number]): ObjectView {
  const points = gridPoints(min, max);
  return { frame, label, score: 1, source: "mask", box2d: [0, 0, 0.1, 0.1], area: 100, maskId, points, box: aabbOf(points)! };
}

function gridPoints(min: readonly number[], max: readonly number[], step = 0.02): Float32Array {
  const out: number[] = [];
  for (let x = min[0]!; x <= max[0]! + 1e-9; x += step) for (let y = min[1]!; y <= max[1]! + 1e-9; y += step) for (let z = min[2]!; z <= max[2]! + 1e-9; z += step) out.push(x, y, z);
  return new Float32Array(out);
}

describe("mergeViews with instance masks", () => {
  test("views of one mask id that overlap nothing of each other (a corner seen past something in front) are one object", () => {
    const merged = mergeViews([maskView(0, 5, "tv stand", [0, 0.9, 0], [0.04, 1.2, 0.7]), maskView(1, 5, "tv stand", [0, 1.1, 0.78], [0.04, 1.2, 0.9])], same);
    assert.equal(merged.length, 1);
  });

  test("views of two mask ids are two objects however they overlap, and one mask id seen metres apart (carried away) is kept at each place", () => {
    const merged = mergeViews([maskView(0, 5, "mug", [0, 0.75, 0], [0.08, 0.85, 0.08]), maskView(0, 6, "mug", [0.04, 0.75, 0], [0.12, 0.85, 0.08]), maskView(3, 5, "mug", [2, 0.5, 2], [2.08, 0.6, 2.08])], same);
    assert.deepEqual(merged.map((d) => d.views.map((v) => v.maskId)).sort(), [[5], [5], [6]]);
  });
});

function instance(id: number, label: string, points: Float32Array): MemoryInstance {
  return { id, label, caption: label, captionSource: "label", views: [], bestView: 0, pointCount: points.length / 3, box: aabbOf(points)! };
}

describe("inferRelations with the instances' points", () => {
  // a desk: its top at 0.75 m, a monitor at its back up to 1.2 m and its chair's back beyond its
  // front edge, so its box holds what stands on its top; a pillow-like lump over a corner of the mug
  const desk = new Float32Array([...gridPoints([0, 0.73, 0], [1.2, 0.75, 0.6]), ...gridPoints([0.3, 0.75, 0], [0.9, 1.2, 0.04]), ...gridPoints([0.3, 0.45, 0.66], [0.9, 1.0, 0.68]), ...gridPoints([0.56, 0.9, 0.36], [0.6, 0.92, 0.4])]);
  const mug = gridPoints([0.5, 0.75, 0.3], [0.58, 0.85, 0.38]);
  // a basin: its floor at 0.1 m, walls round it up to 0.85 m
  const basin = new Float32Array([...gridPoints([0, 0.08, 0], [0.5, 0.1, 0.5]), ...gridPoints([0, 0.1, 0], [0.02, 0.85, 0.5]), ...gridPoints([0.48, 0.1, 0], [0.5, 0.85, 0.5]), ...gridPoints([0, 0.1, 0], [0.5, 0.85, 0.02]), ...gridPoints([0, 0.1, 0.48], [0.5, 0.85, 0.5])]);
  const cup = gridPoints([0.2, 0.1, 0.2], [0.28, 0.2, 0.28]);

  test("a mug on a desk's top is on the desk, though the desk's box, up its monitor, holds it (the boxes alone say inside)", () => {
    const instances = [instance(0, "desk", desk), instance(1, "mug", mug)];
    assert.deepEqual(inferRelations(instances, new Map([[0, desk], [1, mug]])).filter((r) => r.relation !== "next to"), [{ subject: 1, relation: "on", object: 0 }]);
    assert.deepEqual(inferRelations(instances).filter((r) => r.relation !== "next to"), [{ subject: 1, relation: "inside", object: 0 }]);
  });

  test("a lamp standing in a basin and rising above its rim is inside it (its box, mostly above the rim, is neither inside nor on by the boxes)", () => {
    const lamp = gridPoints([0.2, 0.1, 0.2], [0.3, 1.2, 0.3]);
    const instances = [instance(0, "sink", basin), instance(1, "lamp", lamp)];
    assert.deepEqual(inferRelations(instances, new Map([[0, basin], [1, lamp]])).filter((r) => r.relation !== "next to"), [{ subject: 1, relation: "inside", object: 0 }]);
  });

  test("a lamp beside a basin, on the floor it stands on, is not inside it", () => {
    const lamp = gridPoints([0.7, 0, 0.2], [0.8, 1.2, 0.3]);
    const instances = [instance(0, "sink", basin), instance(1, "lamp", lamp)];
    assert.deepEqual(inferRelations(instances, new Map([[0, basin], [1, lamp]])).filter((r) => r.relation !== "next to"), []);
  });

  test("a lamp on a bed's top, rising above the headboard its box reaches, is on the bed (its box is neither inside nor on the bed's by the boxes)", () => {
    // the bed's top at 0.55 m, its headboard at one end up to 0.92 m
    const bed = new Float32Array([...gridPoints([0, 0.53, 0], [1.6, 0.55, 2.0], 0.04), ...gridPoints([0, 0.55, 0], [1.6, 0.92, 0.06], 0.04)]);
    const lamp = gridPoints([0.5, 0.56, 0.97], [0.7, 1.06, 1.17]);
    const instances = [instance(0, "bed", bed), instance(1, "lamp", lamp)];
    assert.deepEqual(inferRelations(instances, new Map([[0, bed], [1, lamp]])).filter((r) => r.relation !== "next to"), [{ subject: 1, relation: "on", object: 0 }]);
  });

  test("a cup in a basin, its walls round it, is inside it", () => {
    const instances = [instance(0, "sink", basin), instance(1, "mug", cup)];
    assert.deepEqual(inferRelations(instances, new Map([[0, basin], [1, cup]])).filter((r) => r.relation !== "next to"), [{ subject: 1, relation: "inside", object: 0 }]);
  });
});
