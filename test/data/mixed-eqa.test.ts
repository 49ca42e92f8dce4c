import assert from "node:assert/strict";
import { test } from "node:test";
import { UserError } from "../../src/core/index.js";
import { canonicalMixedValue, executeMixedProgram, parseMixedSet, type MixedMoment, type MixedSnapshotObject, type MixedWorldView } from "../../src/data/index.js";

const home = { scene: "home-3", days: [{ day: 1, when: "yesterday, morning", recording: "homes/home-3/day-1", end_state: "homes/home-3/day-1/end.json" }], changes: "homes/home-3/changes.json", present: "homes/home-3/present.json" };
const episode = {
  question_id: "home-3-present-q01",
  scene: "home-3",
  question: "What is on the dining table now?",
  answer: "a mug",
  alternatives: ["a mug", "mug"],
  answer_value: "mug",
  category: "present",
  history_answers: false,
  evidence: { frames: [], objects: ["mug-41"] },
  start: { position: [1, 0, 2], yaw: 0 },
  gt_path_length: 4.2,
  split: "test",
  program: { query: "contents", receptacle: "dining table", at: { now: true } },
};

test("a Mixed EQA set reads whole, and a wrong record names the file, record and field", () => {
  const set = parseMixedSet({ format: "eqakit-mixed/1", homes: [home], episodes: [episode] }, "set/episodes.json");
  assert.equal(set.episodes[0]?.program.query, "contents");
  assert.throws(() => parseMixedSet({ format: "eqakit-mixed/1", homes: [home], episodes: [{ ...episode, category: "future" }] }, "set/episodes.json"), (e: unknown) => e instanceof UserError && /episodes\.json/.test(e.message) && /category/.test(e.message));
  assert.throws(() => parseMixedSet({ format: "eqakit-mixed/1", homes: [{ ...home, present: "../outside.json" }], episodes: [episode] }, "f.json"), (e: unknown) => e instanceof UserError && /present/.test(e.message));
  assert.throws(() => parseMixedSet({ format: "eqakit-mixed/1", homes: [home], episodes: [{ ...episode, scene: "home-4" }] }, "f.json"), (e: unknown) => e instanceof UserError && /scene/.test(e.message));
  assert.throws(() => parseMixedSet([episode], "f.json"), UserError);
});

function view(moments: Record<string, MixedSnapshotObject[]>): MixedWorldView {
  const key = (m: MixedMoment): string => ("now" in m ? "now" : m.at === "end" ? `end-${m.day}` : `after-${m.day}-${m.event}-${m.object}`);
  return { snapshot: (m) => moments[key(m)] };
}

test("a program gives the answer of the world it is executed over, and none where the view knows nothing", () => {
  const mug = (receptacle: string | null, filled = false): MixedSnapshotObject => ({ id: "mug-41", type: "mug", receptacle, states: { filled } });
  const book: MixedSnapshotObject = { id: "book-7", type: "book", receptacle: "dining table", states: {} };
  const world = view({ "end-1": [mug("countertop"), book], "end-2": [mug("dining table", true)], now: [mug("dining table"), book] });
  assert.equal(executeMixedProgram({ query: "where", object: "mug", at: { day: 1, at: "end" } }, world), "countertop");
  assert.equal(executeMixedProgram({ query: "contents", receptacle: "dining table" }, world), "book, mug");
  assert.equal(executeMixedProgram({ query: "count_on", receptacle: "dining table", at: { now: true } }, world), "2");
  assert.equal(executeMixedProgram({ query: "is_on", object: "book", receptacle: "dining table", at: { day: 2, at: "end" } }, world), "no");
  assert.equal(executeMixedProgram({ query: "state", object: "mug", state: "filled", at: { day: 2, at: "end" } }, world), "yes");
  assert.equal(executeMixedProgram({ query: "moved", object: "mug", since: { day: 1, at: "end" } }, world), "yes");
  assert.equal(executeMixedProgram({ query: "where_days", object: "mug", days: [1, 2] }, world), "countertop then dining table");
  assert.equal(executeMixedProgram({ query: "where", object: "mug", at: { day: 3, at: "end" } }, world), undefined);
  assert.equal(executeMixedProgram({ query: "contents", receptacle: "sofa", at: { now: true } }, world), "nothing");
  assert.throws(() => executeMixedProgram({ query: "where" }, world), /needs object/);
});

test("answer values compare in one canonical form", () => {
  assert.equal(canonicalMixedValue("  The Dining   Table "), "dining table");
  assert.equal(canonicalMixedValue("mug, a book"), "book, mug");
  assert.equal(canonicalMixedValue("counter then table"), "counter then table");
});
