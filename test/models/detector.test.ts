import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadObjectDetector } from "../../src/models/index.js";
import { suppressOverlaps } from "../../src/models/embedded/detector.js";
import { HouseholdEnvironment, generateHome } from "../../src/sim/index.js";

// CenterNet's rows: [x1, y1, x2, y2, score, class]; 56 is chair, 60 dining table
const CHAIR = 56;
const TABLE = 60;

describe("suppressOverlaps (the embedded detector's NMS)", () => {
  test("boxes of different classes never suppress each other; within a class the better box is kept", () => {
    const kept = suppressOverlaps([
      [100, 100, 200, 220, 0.4, CHAIR],
      [100, 100, 200, 220, 0.39, TABLE],
      [105, 100, 205, 220, 0.35, CHAIR],
      [300, 300, 340, 360, 0.3, CHAIR],
    ]);
    assert.deepEqual(kept.map((r) => [r[4], r[5]]), [[0.4, CHAIR], [0.39, TABLE], [0.3, CHAIR]]);
  });

  test("keeps rows at or above the least score, best first, at most maxDetections; drops rows that are not numbers", () => {
    const rows = [
      [0, 0, 10, 10, 0.1, CHAIR],
      [20, 20, 30, 30, 0.5, CHAIR],
      [40, 40, 50, 50, Number.NaN, CHAIR],
      [60, 60, 70, 70, 0.3, TABLE],
      [80, 80, 90, 90, 0.25, TABLE],
    ];
    assert.deepEqual(suppressOverlaps(rows, { minScore: 0.25 }).map((r) => r[4]), [0.5, 0.3, 0.25]);
    assert.deepEqual(suppressOverlaps(rows, { minScore: 0.25, maxDetections: 2 }).map((r) => r[4]), [0.5, 0.3]);
    assert.deepEqual(suppressOverlaps([[0, 0, 10, 10, 0.5]]), []);
  });
});

describe("the embedded detector on a built-in home", () => {
  test("finds the desk behind its chair: a dining table on the desk's pixels, kept beside the surer chair", async () => {
    const home = generateHome(7);
    const desk = home.objects.find((o) => o.type === "desk");
    assert.ok(desk, "home 7 has a desk");
    const size = 512;
    const env = new HouseholdEnvironment(home, { width: size, height: size, hfovDeg: 90 });
    // a pose from a recording of home 7, facing the desk with its chair pushed in
    assert.ok(env.actNow({ type: "teleport", state: { position: [5.099, 0, 4.316], yaw: (-2 * Math.PI) / 3, pitch: 0 } }).success);
    const observation = env.observeNow();
    const ids = observation.masks!.ids;
    const onDesk = (box: readonly number[]): boolean => ids[Math.floor(box[1]! + box[3]! / 2) * size + Math.floor(box[0]! + box[2]! / 2)] === desk.id;
    const detections = await (await loadObjectDetector()).detect({ data: observation.rgb, width: size, height: size }, { minScore: 0.3 });
    const found = detections.map((d) => `${d.label} ${d.score}`).join(", ");
    assert.ok(detections.some((d) => d.label === "chair" && onDesk(d.box)), `found ${found}`);
    assert.ok(detections.some((d) => d.label === "dining table" && onDesk(d.box)), `found ${found}`);
  });
});
