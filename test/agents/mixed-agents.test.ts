import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { renameSync } from "node:fs";
import { join } from "node:path";
import { answerMixedQuestion, asksAboutNow, historyView, logSnapshot, lookFor, momentStep, type MixedHistory, type RecalledDay } from "../../src/agents/index.js";
import { executeMixedProgram, type TrajectoryLog } from "../../src/data/index.js";
import { exploreMixedSet, mixedSpl, type MixedSummary } from "../../src/eval/index.js";
import { loadMixedHistory, recallMixedDay } from "../../src/generate/index.js";
import { HouseholdEnvironment, generateHome, type Home } from "../../src/sim/index.js";
import { buildMixedFixture, type MixedFixture } from "../helpers/mixed-set.js";
import { temporaryDir } from "../helpers/paths.js";

const OBSERVATION = { width: 128, height: 96 };
const MAX_STEPS = 300;
let fixture: MixedFixture;
const runs = new Map<string, { summary: MixedSummary; answers: Map<string, string | null>; walked: Map<string, number | null> }>();

before(async () => {
  fixture = await buildMixedFixture(OBSERVATION);
  for (const agent of ["memory-only", "explore-only", "recall-explore"] as const) {
    const run = await exploreMixedSet({ setFile: fixture.file, agent, outDir: join(temporaryDir(), agent), maxSteps: MAX_STEPS, observation: OBSERVATION }, { history: loadMixedHistory, recall: recallMixedDay });
    runs.set(agent, { summary: run.summary, answers: new Map(run.records.map((r) => [r.questionId, r.answer])), walked: new Map(run.records.map((r) => [r.questionId, r.pathLengthM])) });
  }
});

describe("the built-in Mixed EQA agents on a set of one recorded day and a changed present", () => {
  test("memory-only answers the past from its memory without moving, and the changed present from its last memory: wrong", () => {
    const run = runs.get("memory-only")!;
    assert.equal(run.answers.get("past-where-candle"), "desk");
    assert.equal(run.answers.get("present-where-candle"), "desk", "where it left the candle, not where it is now");
    assert.notEqual(run.answers.get("present-desk"), "nothing");
    assert.equal(run.answers.get("past-present-candle"), "no");
    assert.ok([...run.walked.values()].every((m) => m === 0), "it never moves");
    assert.equal(run.summary.metrics.accuracy.byCategory.past?.mean, 100);
    assert.equal(run.summary.metrics.accuracy.byCategory.present?.mean, 0);
    assert.equal(run.summary.metrics.wastedMetres.overall?.mean, 0);
    assert.ok((run.summary.metrics.historyFrames.byCategory.past?.mean ?? 0) >= 1, "it retrieved the frames of the candle");
  });

  test("explore-only finds the present by exploring and answers the past from the present: wrong", () => {
    const run = runs.get("explore-only")!;
    assert.equal(run.answers.get("present-where-candle"), "bed");
    assert.equal(run.answers.get("present-desk"), "nothing");
    assert.notEqual(run.answers.get("past-where-candle"), "desk");
    assert.equal(run.summary.metrics.accuracy.byCategory.present?.mean, 100);
    assert.equal(run.summary.metrics.accuracy.byCategory.past?.mean, 0);
    assert.ok((run.walked.get("past-where-candle") ?? 0) > 1, "it walks on a question its history would have answered");
    assert.ok((run.summary.metrics.wastedMetres.overall?.mean ?? 0) > 1);
    assert.equal(run.summary.metrics.historyFrames.overall?.mean, 0, "it ignores its history");
  });

  test("recall-explore is right on every question, stays put on the past, and walks less than explore-only to what it remembers", () => {
    const run = runs.get("recall-explore")!;
    const explore = runs.get("explore-only")!;
    assert.deepEqual(Object.fromEntries(run.answers), { "past-where-candle": "desk", "present-where-candle": "bed", "present-desk": "nothing", "past-present-candle": "yes" });
    assert.equal(run.summary.metrics.accuracy.overall?.mean, 100);
    assert.equal(run.walked.get("past-where-candle"), 0, "the history answers it: no step taken");
    assert.ok(run.walked.get("present-desk")! < explore.walked.get("present-desk")!, `${run.walked.get("present-desk")} m against explore-only's ${explore.walked.get("present-desk")} m`);
    assert.ok(run.summary.metrics.spl.byCategory.present!.mean > explore.summary.metrics.spl.byCategory.present!.mean);
    assert.equal(run.summary.questions.find((q) => q.questionId === "past-where-candle")?.spl, null, "SPL only where the present is needed");
  });

  test("the summary counts, with an interval per figure, and no model call", () => {
    const { summary } = runs.get("recall-explore")!;
    assert.equal(summary.kind, "mixed");
    assert.deepEqual(summary.counts, { episodes: 4, finished: 4, failed: 0, reused: 0, answered: 4, correct: 4 });
    const present = summary.metrics.accuracy.byCategory.present!;
    assert.equal(present.n, 2);
    assert.ok(present.ci[0] <= present.mean && present.mean <= present.ci[1]);
    assert.equal(summary.cost.total.calls, 0);
  });
});

describe("what an agent is handed", () => {
  test("the history holds each day's when, frames and the agent's own actions, and the agents answer with the recordings' ground truth gone", async () => {
    const history: MixedHistory = await loadMixedHistory(fixture.set.homes[0]!, fixture.dir, fixture.file);
    const [day] = history.days;
    assert.deepEqual(Object.keys(day!).sort(), ["actions", "cameraHeight", "day", "frameCount", "frames", "toWorld", "when"]);
    assert.equal(day!.toWorld.length, 16, "the day's grounding frame → the world frame");
    assert.deepEqual(day!.actions.map((a) => [a.action, a.object.type, a.target?.type ?? a.from?.type]), [["pickup", "candle", "shelf"], ["put", "candle", "desk"]]);
    // the recording's trajectory log (every object's state at every step) and the world states are taken away
    const dayDir = join(fixture.dir, "homes", "home-2", "day-1");
    for (const name of ["trajectory.json", "end.json", "home.json"]) renameSync(join(dayDir, name), join(dayDir, `${name}.away`));
    try {
      const recalled = new Map<number, Promise<RecalledDay>>();
      const recall = (d: number): Promise<RecalledDay> => {
        if (!recalled.has(d)) recalled.set(d, recallMixedDay(history, history.days.find((x) => x.day === d)!));
        return recalled.get(d)!;
      };
      const env = new HouseholdEnvironment(fixture.present, OBSERVATION);
      const start = { ...fixture.set.episodes[0]!.start, pitch: 0 };
      const outcome = await answerMixedQuestion("memory-only", { questionId: "q", question: "Where did you put the candle yesterday?", program: { query: "where", object: "candle", at: { day: 1, at: "end" } } }, { env, start, history, recall, framesDir: join(temporaryDir(), "frames"), maxSteps: 10 });
      assert.equal(outcome.answer, "desk");
    } finally {
      for (const name of ["trajectory.json", "end.json", "home.json"]) renameSync(join(dayDir, `${name}.away`), join(dayDir, name));
    }
  });
});

describe("reading a program", () => {
  test("a program asks about now when a moment is now (or left out), and names what to look at", () => {
    assert.equal(asksAboutNow({ query: "where", object: "mug" }), true);
    assert.equal(asksAboutNow({ query: "where", object: "mug", at: { day: 1, at: "end" } }), false);
    assert.equal(asksAboutNow({ query: "moved", object: "mug", since: { day: 1, at: "end" }, at: { now: true } }), true);
    assert.equal(asksAboutNow({ query: "where_days", object: "mug", days: [1, 2] }), false);
    assert.deepEqual(lookFor({ query: "contents", receptacle: "desk" }).walkTo, "desk");
    assert.deepEqual(lookFor({ query: "is_on", object: "mug", receptacle: "desk" }).types.map((t) => t.type), ["mug", "desk"]);
    assert.equal(lookFor({ query: "is_on", object: "mug", receptacle: "desk" }).walkTo, "desk", "the receptacle stays where it was; the mug may not");
  });

  test("a perceived log's moments and snapshots: after the n-th event, at the end; one object handled and also seen is one", () => {
    const state = (receptacle: string | null, position: [number, number, number]) => ({ position, relation: receptacle ? ("on" as const) : ("none" as const), receptacle, states: {} });
    const agent = { position: [0, 0, 0] as [number, number, number], yaw: 0, pitch: 0 };
    const log: TrajectoryLog = {
      format: "eqakit-trajectory/1", id: "t", source: "perceived", environment: "home-9", cameraHeight: 1.5,
      objects: [
        { id: "mug-m1", type: "mug", kind: "object", receptacle: null, properties: {}, states: [] },
        { id: "mug-a1", type: "mug", kind: "object", receptacle: null, properties: {}, states: [] },
        { id: "desk-m2", type: "desk", kind: "object", receptacle: null, properties: {}, states: [] },
        { id: "shelf-m3", type: "shelf", kind: "object", receptacle: null, properties: {}, states: [] },
      ],
      steps: [0, 1, 2].map((step) => ({ step, action: null, success: true, frame: step, agent, held: null, objects: {
        "mug-m1": state("desk-m2", [1, 1, 1]),
        "mug-a1": step < 2 ? state("shelf-m3", [5, 1, 5]) : state("desk-m2", [1.2, 1, 1]),
        "desk-m2": state(null, [1, 0.5, 1]),
        "shelf-m3": state(null, [5, 0.5, 5]),
      } })),
      events: [{ step: 2, type: "put", object: "mug-a1", index: 1 }],
    };
    assert.equal(momentStep(log, { day: 1, at: "after", event: "put", object: "mug" }), 2);
    assert.equal(momentStep(log, { day: 1, at: "after", event: "put", object: "mug", index: 2 }), undefined);
    assert.deepEqual(logSnapshot(log, 2).filter((o) => o.type === "mug").map((o) => o.id), ["mug-a1"], "the handled mug, and the one seen where it was put is the same");
    const view = historyView(new Map([[1, log]]), () => undefined);
    assert.equal(executeMixedProgram({ query: "where", object: "mug", at: { day: 1, at: "after", event: "put", object: "mug" } }, view), "desk");
    assert.equal(executeMixedProgram({ query: "where", object: "mug" }, view), undefined, "now is unknown to this view");
  });

  test("of two objects of one type that the agent handled (heated where it was seen, then carried away as another), the one it handled last is where it put it", () => {
    const state = (receptacle: string | null, position: [number, number, number], relation: "on" | "inside" | "held" = "on") => ({ position, relation: receptacle ? relation : ("held" as const), receptacle, states: {} });
    const agent = { position: [0, 0, 0] as [number, number, number], yaw: 0, pitch: 0 };
    const log: TrajectoryLog = {
      format: "eqakit-trajectory/1", id: "t", source: "perceived", environment: "home-9", cameraHeight: 1.5,
      objects: [
        { id: "bread-m1", type: "bread", kind: "object", receptacle: null, properties: {}, states: [] },
        { id: "microwave-m2", type: "microwave", kind: "object", receptacle: null, properties: {}, states: [] },
        { id: "bread-m3", type: "bread", kind: "object", receptacle: null, properties: {}, states: [] },
        { id: "shelf-m4", type: "shelf", kind: "object", receptacle: null, properties: {}, states: [] },
      ],
      steps: [0, 1, 2, 3].map((step) => ({ step, action: null, success: true, frame: step, agent, held: null, objects: {
        "bread-m1": state("microwave-m2", [1, 1, 1], "inside"),
        "microwave-m2": state(null, [1, 1, 1]),
        "bread-m3": step < 3 ? state(null, [2, 1.5, 2]) : state("shelf-m4", [5, 1.5, 5]),
        "shelf-m4": state(null, [5, 1, 5]),
      } })),
      events: [{ step: 1, type: "heat", object: "bread-m1", index: 1 }, { step: 2, type: "pickup", object: "bread-m3", index: 1 }, { step: 3, type: "put", object: "bread-m3", index: 1 }],
    };
    const view = historyView(new Map([[1, log]]), () => undefined);
    assert.equal(executeMixedProgram({ query: "where", object: "bread", at: { day: 1, at: "after", event: "put", object: "bread" } }, view), "shelf");
    assert.equal(executeMixedProgram({ query: "where", object: "bread", at: { day: 1, at: "after", event: "heat", object: "bread" } }, view), "microwave");
  });

  test("LA-EQA's SPL: capped at 1, weighted by success; without a best path, 1 only for an agent that did not move", () => {
    assert.equal(mixedSpl(1, 4, 8), 0.5);
    assert.equal(mixedSpl(1, 4, 2), 1);
    assert.equal(mixedSpl(0, 4, 4), 0);
    assert.equal(mixedSpl(1, 0, 0.005), 1);
    assert.equal(mixedSpl(1, 0, 0.5), 0);
  });
});

describe("looking at what a question is about", () => {
  // home 4's kitchen: the counter against the west wall, a knife on its top; from the start the
  // counter's near end fills the view's left edge, the knife just out of sight
  function homeWithKnife(): Home {
    const home = generateHome(4);
    home.objects.push({ id: 51, type: "knife", kind: "object", roomId: 0, min: [0.245, 0.9, 0.704], max: [0.495, 0.92, 0.744], colour: [190, 190, 200], colourName: "grey", material: "metal", use: "used for cutting food", states: {}, on: 23 });
    return home;
  }

  test("explore-only, stopped by a glimpse of the counter, looks it over and sees the knife on it", async () => {
    const env = new HouseholdEnvironment(homeWithKnife(), { width: 320, height: 240, masks: true });
    const start = { position: [1.825, 0, 1.875] as [number, number, number], yaw: 0, pitch: 0 };
    await env.reset(start);
    const context = { env, start, history: { scene: "home-4", days: [] }, recall: () => Promise.reject(new Error("explore-only recalls nothing")), framesDir: join(temporaryDir(), "knife"), maxSteps: 100 };
    const outcome = await answerMixedQuestion("explore-only", { questionId: "knife", question: "Is the knife on the counter?", program: { query: "is_on", object: "knife", receptacle: "counter", at: { now: true } } }, context);
    assert.equal(outcome.stop, "found");
    assert.equal(outcome.answer, "yes", `after ${outcome.pathLengthSteps} actions`);
  });

  test("explore-only, stopped by the bathtub seen from across the bathroom, walks up to it and sees the bottle inside", async () => {
    // home 3's bathroom: a bottle lying low in the bathtub, hidden by its rim from 2.5 m away
    const env = new HouseholdEnvironment(generateHome(3), { width: 320, height: 240, masks: true });
    const start = { position: [6.383, 0, 5.158] as [number, number, number], yaw: -Math.PI / 6, pitch: 0 };
    await env.reset(start);
    const context = { env, start, history: { scene: "home-3", days: [] }, recall: () => Promise.reject(new Error("explore-only recalls nothing")), framesDir: join(temporaryDir(), "bottle"), maxSteps: 100 };
    const outcome = await answerMixedQuestion("explore-only", { questionId: "bottle", question: "How many things are in the bathtub?", program: { query: "count_on", receptacle: "bathtub", at: { now: true } } }, context);
    assert.equal(outcome.stop, "found");
    assert.equal(outcome.answer, "1", `after ${outcome.pathLengthSteps} actions`);
  });
});
