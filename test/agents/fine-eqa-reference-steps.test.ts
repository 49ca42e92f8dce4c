import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { CELL_FREE, CELL_UNKNOWN, OccupancyMap, ReferenceMaps, activeRegion, advanceExplorationPlan, explorationPlan, integrateRegion, integrateValue, nextPose, nextRegionPoint } from "../../src/agents/index.js";
import { seededRandom } from "../../src/core/index.js";

/** A 4 m × 4 m room on a 0.1 m grid (no margin): 40 × 40 cells. */
function maps(seed = 42): ReferenceMaps {
  return new ReferenceMaps(new OccupancyMap({ min: [0, 0, 0], max: [4, 2.5, 4] }, { cellSize: 0.1, margin: 0 }), seededRandom(seed));
}
const cell = (m: ReferenceMaps, r: number, c: number): number => r * m.cols + c;

describe("advanceExplorationPlan (get_exp_state, tsdf.py)", () => {
  test("with no relevant region the agent always explores frontiers", () => {
    const plan = explorationPlan([]);
    for (let i = 0; i < 5; i++) assert.equal(advanceExplorationPlan(plan), true);
  });

  test("a region with a goal point is visited for 3 rounds of four looks, then frontiers again", () => {
    const plan = explorationPlan([2]);
    assert.equal(advanceExplorationPlan(plan), true, "no goal point yet");
    plan.regions[0]!.points.push(7);
    const modes: boolean[] = [];
    for (let i = 0; i < 13; i++) modes.push(advanceExplorationPlan(plan));
    // the first step enters the region (round 1, look 0); 11 more advance to round 3, look 3; the 13th completes it
    assert.deepEqual(modes, [...Array(12).fill(false), true]);
    assert.deepEqual(plan.regions[0], { region: 2, count: 0, dir: 0, points: [] }, "a completed region is reset");
  });

  test("with two regions the second is visited when the first has no point, and a third region never is", () => {
    const two = explorationPlan([1, 4]);
    two.regions[1]!.points.push(3);
    assert.equal(advanceExplorationPlan(two), false);
    assert.equal(activeRegion(two), 1);
    const three = explorationPlan([1, 4, 5]);
    three.regions[1]!.points.push(3);
    three.regions[2]!.points.push(3);
    assert.equal(advanceExplorationPlan(three), true);
  });
});

describe("the reference's semantic and region maps", () => {
  test("integrate_sem averages each candidate's value into a 1 m disc, weight 1 per update", () => {
    const m = maps();
    const centre = cell(m, 20, 20);
    integrateValue(m, [centre], [3]);
    integrateValue(m, [centre], [1]);
    assert.equal(m.value[centre], 2);
    assert.equal(m.valueWeight[centre], 2);
    assert.equal(m.value[cell(m, 20, 30)], 2, "10 cells away is inside the 1 m disc");
    assert.equal(m.value[cell(m, 20, 31)], 0);
  });

  test("a point in a relevant region becomes its goal unless a visited point is within half the radius; other regions only colour the map", () => {
    const m = maps();
    const plan = explorationPlan([3]);
    assert.equal(integrateRegion(m, plan, cell(m, 10, 10), 3), true);
    assert.deepEqual(plan.regions[0]!.points, [cell(m, 10, 10)]);
    assert.equal(m.regionMap[cell(m, 10, 15)], 3);
    assert.equal(integrateRegion(m, plan, cell(m, 30, 30), 5), false, "not a relevant region");
    assert.equal(m.regionMap[cell(m, 30, 30)], 5);
    m.visited.push(cell(m, 20, 12));
    assert.equal(integrateRegion(m, plan, cell(m, 20, 14), 3), false, "2 cells from a visited point");
    // joined to the earlier point 10 cells away: the cells between are the region's too
    assert.equal(m.regionMap[cell(m, 15, 12)], 3);
  });

  test("find_next_point_region takes the region's goal point of highest smoothed value and marks it visited", () => {
    const m = maps();
    const plan = explorationPlan([3]);
    const low = cell(m, 10, 10);
    const high = cell(m, 28, 28);
    integrateRegion(m, plan, low, 3);
    integrateRegion(m, plan, high, 3);
    integrateValue(m, [high], [1]);
    assert.equal(nextRegionPoint(m, plan.regions[0]!), high);
    assert.deepEqual(plan.regions[0]!.points, [low]);
    assert.deepEqual(m.visited, [high]);
  });
});

describe("nextPose (find_next_pose, tsdf.py)", () => {
  test("with no frontier the agent stays and turns to a random heading", () => {
    const m = maps(7);
    m.map.cells.fill(CELL_FREE);
    const agent = cell(m, 20, 20);
    const a = nextPose(m, { position: [2.05, 0, 2.05], yaw: 0, pitch: 0 }, 5, agent);
    const b = nextPose(m, { position: [2.05, 0, 2.05], yaw: 0, pitch: 0 }, 5, agent);
    assert.equal(a.kind, "random");
    assert.equal(a.cell, agent);
    assert.notEqual(a.yaw, b.yaw, "each draw a new heading");
  });

  test("a frontier within 3 m is reached in one move, facing the unknown beyond it", () => {
    const m = maps();
    // free floor on the west half, unknown on the east: the frontier runs down column 19
    for (let r = 0; r < m.rows; r++) for (let c = 0; c < m.cols; c++) m.map.cells[cell(m, r, c)] = c < 20 ? CELL_FREE : CELL_UNKNOWN;
    const agent = cell(m, 20, 17);
    const next = nextPose(m, { position: [1.75, 0, 2.05], yaw: 0, pitch: 0 }, 5, agent);
    assert.equal(next.kind, "frontier");
    const [r, c] = m.rc(next.cell);
    assert.ok(c < 19 && c >= 4, `backed off into the free half: column ${c}`);
    assert.ok(Math.hypot(r - 20, c - 17) * m.cellSize <= 3 + 1e-9);
    assert.equal(m.committed, undefined);
  });
});
