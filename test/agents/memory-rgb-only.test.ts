import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildMemory, mergeViews, type ObjectView } from "../../src/agents/memory/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import type { Detection, ObjectDetector, RgbImage } from "../../src/models/index.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { temporaryDir } from "../helpers/paths.js";

const WIDTH = 320;
const HEIGHT = 240;

/** A detector that sees, in the n-th frame it is given, what `scene(n)` lists (boxes in pixels). */
function scriptedDetector(scene: (n: number) => Detection[]): ObjectDetector {
  let n = 0;
  return {
    name: "scripted",
    detect: (image: RgbImage) => {
      assert.equal(image.width, WIDTH);
      return Promise.resolve(scene(n++));
    },
  };
}

const chair = (x: number, y = 80): Detection => ({ label: "chair", score: 0.9, box: [x, y, 60, 100] });

async function rgbOnlyMemory(frames: number, scene: (n: number) => Detection[]) {
  const dir = await writeRgbEpisode(join(temporaryDir("eqakit-rgb-memory-"), "episode"), frames, WIDTH, HEIGHT);
  return buildMemory(await openEpisode(dir), { detector: scriptedDetector(scene), sampling: { kind: "every", step: 1 } });
}

function framesOf(views: readonly { frame: number }[]): number[] {
  return views.map((v) => v.frame);
}

describe("a memory without depth tells objects apart by when and where in the image they were seen", () => {
  test("a chair on the left early and a chair on the right later are two instances, a chair drifting across frames one; the notes say positions are approximate", async () => {
    const { graph } = await rgbOnlyMemory(12, (n) => [
      // the camera pans: the first chair drifts right while in view
      ...(n <= 3 ? [chair(20 + 6 * n), { label: "tv", score: 0.8, box: [150 + 4 * n, 20, 50, 40] as [number, number, number, number] }] : []),
      ...(n >= 8 ? [chair(230 - 3 * (n - 8))] : []),
    ]);
    assert.equal(graph.hasPositions, false);
    const chairs = graph.instances.filter((i) => i.label === "chair");
    assert.equal(chairs.length, 2, JSON.stringify(graph.instances.map((i) => [i.label, framesOf(i.views)])));
    assert.deepEqual(chairs.map((c) => framesOf(c.views)).sort((a, b) => a[0]! - b[0]!), [[0, 1, 2, 3], [8, 9, 10, 11]]);
    assert.deepEqual(graph.instances.filter((i) => i.label === "tv").map((i) => framesOf(i.views)), [[0, 1, 2, 3]]);
    assert.ok(graph.notes.some((n) => /positions are missing/.test(n)), graph.notes.join("; "));
    assert.ok(graph.notes.some((n) => /positions are approximate: without depth, objects are told apart by when and where in the image they were seen/.test(n)), graph.notes.join("; "));
    assert.equal(graph.relations.length, 0);
  });

  test("two chairs side by side in the same frames are two instances, each keeping its own place", async () => {
    const { graph } = await rgbOnlyMemory(5, (n) => [chair(40 + 2 * n), chair(130 + 2 * n)]);
    const chairs = graph.instances.filter((i) => i.label === "chair");
    assert.equal(chairs.length, 2);
    for (const c of chairs) {
      assert.deepEqual(framesOf(c.views), [0, 1, 2, 3, 4]);
      const xs = c.views.map((v) => v.box2d[0]);
      assert.ok(Math.max(...xs) - Math.min(...xs) < 0.05, `one chair's views stay in one place: ${xs.join(", ")}`);
    }
  });

  test("a chair seen again in the same place after more than the gap in seconds (a video's times) is counted again; within it, once", () => {
    const view = (frame: number): ObjectView => ({ frame, label: "chair", score: 0.9, source: "detector", box2d: [0.4, 0.3, 0.2, 0.4], area: 1000 });
    const same = (a: string, b: string): number => (a === b ? 1 : 0);
    const places = (seconds: number[]) => new Map(seconds.map((s, order) => [order, { order, seconds: s }]));
    assert.equal(mergeViews([view(0), view(1), view(2)], same, places([0, 0.3, 0.6])).length, 1);
    assert.equal(mergeViews([view(0), view(1), view(2)], same, places([0, 0.3, 9])).length, 2);
  });

  test("views from instance masks without depth are one instance per mask id", () => {
    const view = (frame: number, maskId: number, x: number): ObjectView => ({ frame, label: "chair", score: 1, source: "mask", box2d: [x, 0.3, 0.2, 0.4], area: 1000, maskId });
    const drafts = mergeViews([view(0, 7, 0.1), view(0, 9, 0.6), view(5, 7, 0.7), view(20, 9, 0.1)], (a, b) => (a === b ? 1 : 0));
    assert.deepEqual(drafts.map((d) => d.views.map((v) => v.maskId)), [[7, 7], [9, 9]]);
  });
});
