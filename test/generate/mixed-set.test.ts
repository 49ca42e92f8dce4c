import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { canonicalMixedValue, executeMixedProgram, loadMixedSet, loadTrajectoryLog, MIXED_CATEGORIES, type MixedSet } from "../../src/data/index.js";
import { applyChanges, judgeCandidate, lastSightings, maskSightings, presentCandidates, registerSightings, rememberedView, TrajectoryWorld, truthView, ViewPaths, homeSnapshot, type HomeContext, type MixedCandidate, type RecordedDay } from "../../src/generate/index.js";
import { loadRun, startViewer } from "../../src/report/index.js";
import { catalogueType, generateHome, objectName, readHomeFile, type Home } from "../../src/sim/index.js";
import { seededRandom } from "../../src/core/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

/** One small set (one home, two days of one task each) made by the command, read by every test. */
const home = temporaryDir("eqakit-mixed-");
const setDir = join(home, "set");
const ARGS = ["generate", "mixed", "--seeds", "1", "--days", "2", "--tasks-per-day", "1", "--changes", "5", "--per-category", "8"];
let set: MixedSet;
let stdout = "";

/** Every file below `dir` with its bytes, by path relative to it (the manifest aside: it records when the run was made). */
function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!["manifest.json", "commands.jsonl"].includes(name)) out.set(relative(dir, path), readFileSync(path));
    }
  };
  walk(dir);
  return out;
}

function assertSameFiles(a: string, b: string): void {
  const left = filesOf(a);
  const right = filesOf(b);
  assert.deepEqual([...right.keys()], [...left.keys()]);
  for (const [name, bytes] of left) assert.ok(bytes.equals(right.get(name)!), `${name} differs`);
}

/** A home's days and present world, read from the set's files alone. */
async function readHome(scene: string): Promise<{ days: RecordedDay[]; present: Home }> {
  const entry = set.homes.find((h) => h.scene === scene)!;
  const days: RecordedDay[] = [];
  for (const d of entry.days) {
    const log = await loadTrajectoryLog(join(setDir, d.recording, "trajectory.json"));
    const sightings = await maskSightings(log, join(setDir, d.recording, "frames"));
    if (sightings) registerSightings(log, sightings);
    days.push({ day: d.day, when: d.when, adverbial: d.when, recording: d.recording, endState: d.end_state, log, world: new TrajectoryWorld(log), end: await readHomeFile(join(setDir, d.end_state)) });
  }
  return { days, present: await readHomeFile(join(setDir, entry.present)) };
}

before(async () => {
  const made = await runCli([...ARGS, "--out", setDir], cliEnv(home));
  assert.equal(made.code, 0, made.stderr);
  stdout = made.stdout;
  set = await loadMixedSet(join(setDir, "episodes.json"));
});

describe("eqa generate mixed", () => {
  test("writes the set, each day's recording and end state, the changes and the present, and says what it wrote", () => {
    assert.match(stdout, /\d+ questions on 1 homes \(2 days each\): past \d+, present \d+, multi_past \d+, past_present \d+/);
    assert.match(stdout, /wrote .*episodes\.json,stats\.json/);
    const [entry] = set.homes;
    assert.equal(entry?.days.length, 2);
    for (const day of entry!.days) for (const name of ["trajectory.json", "home.json", "plan.png", "end.json", "frames"]) assert.ok(existsSync(join(setDir, day.recording, name)), `${day.recording}/${name}`);
    assert.notEqual(entry!.days[0]!.when, entry!.days[1]!.when);
    const changes = JSON.parse(readFileSync(join(setDir, entry!.changes), "utf8")) as { kind: string; object: string; type: string }[];
    assert.equal(changes.length, 5);
    for (const category of MIXED_CATEGORIES) assert.ok(set.episodes.some((e) => e.category === category), `a ${category} question`);
    const stats = JSON.parse(readFileSync(join(setDir, "stats.json"), "utf8")) as { questions: number; funnel: Record<string, { made: number; chosen: number }> };
    assert.equal(stats.questions, set.episodes.length);
    assert.deepEqual(Object.keys(stats.funnel).sort(), [...MIXED_CATEGORIES].sort());
  });

  test("each day starts where the last left the world, and its end state is its log's last step", async () => {
    const { days } = await readHome("home-1");
    const dayTwoStart = await readHomeFile(join(setDir, days[1]!.recording, "home.json"));
    assert.deepEqual(dayTwoStart.objects, days[0]!.end.objects, "day 2 starts from day 1's end");
    for (const day of days) {
      const last = day.log.steps.at(-1)!;
      for (const o of day.end.objects.filter((x) => x.kind !== "structure")) {
        const logged = last.objects[objectName(o)]!;
        const holder = o.inside ?? o.on;
        assert.equal(logged.receptacle, holder === undefined ? null : objectName(day.end.objects.find((x) => x.id === holder)!), objectName(o));
        assert.deepEqual(logged.states, o.states);
      }
    }
  });

  test("every answer is its program executed over the written world states, and history answers need no present", async () => {
    const { days, present } = await readHome("home-1");
    const truth = truthView(days, present);
    const history = truthView(days, null);
    for (const e of set.episodes) {
      assert.equal(canonicalMixedValue(executeMixedProgram(e.program, truth) ?? "(none)"), e.answer_value, e.question_id);
      if (e.history_answers) {
        assert.equal(executeMixedProgram(e.program, history), executeMixedProgram(e.program, truth), `${e.question_id}: the history alone answers it`);
        assert.equal(e.gt_path_length, 0);
        assert.ok(e.evidence.frames.length > 0, `${e.question_id}: frames that show the answer`);
      } else {
        assert.ok(e.gt_path_length >= 0 && e.evidence.objects.length > 0, `${e.question_id}: objects in the present home`);
        const ids = new Set(homeSnapshot(present).map((o) => o.id));
        for (const id of e.evidence.objects) assert.ok(ids.has(id), `${e.question_id}: ${id} is there now`);
      }
      assert.ok(e.alternatives.map(canonicalMixedValue).includes(e.answer_value), `${e.question_id}: the answer value among the alternatives`);
      for (const f of e.evidence.frames) assert.ok(existsSync(join(setDir, set.homes[0]!.days[f.day - 1]!.recording, "frames", `${String(f.frame).padStart(5, "0")}-rgb.png`)), `frame ${f.day}/${f.frame}`);
    }
  });

  test("no present question is answerable from the history, and one that would be is dropped and counted", async () => {
    const { days, present } = await readHome("home-1");
    const remembered = rememberedView(days);
    for (const e of set.episodes.filter((x) => x.category === "present")) assert.notEqual(executeMixedProgram(e.program, remembered), e.answer_value, e.question_id);
    // an object the agent saw, where it still is now: the history answers "where is it now?"
    const seen = lastSightings(days);
    const nowObjects = homeSnapshot(present);
    const rememberedNow = remembered.snapshot({ now: true })!;
    const unchanged = nowObjects.find((o) => seen.has(o.id) && o.receptacle !== null && nowObjects.filter((x) => x.type === o.type).length === 1 && rememberedNow.find((r) => r.id === o.id)?.receptacle === o.receptacle)!;
    assert.ok(unchanged, "an object seen where it still is");
    const ctx: HomeContext = { seed: 1, scene: "home-1", days, present, presentObjects: nowObjects, changes: [], start: present.start, truth: truthView(days, present), remembered, paths: new ViewPaths(present, present.start) };
    const candidate: MixedCandidate = { category: "present", template: "present_where", program: { query: "where", object: unchanged.type, at: { now: true } }, question: `Where is the ${unchanged.type} now?`, render: (v) => ({ answer: v, alternatives: [v] }), frames: [], targets: [unchanged.id] };
    assert.deepEqual(judgeCandidate(ctx, candidate), { rule: "answeredByHistory" });
    assert.deepEqual(judgeCandidate(ctx, { ...candidate, category: "past_present" }), { value: unchanged.receptacle }, "about then and now, it stays");
    const stats = JSON.parse(readFileSync(join(setDir, "stats.json"), "utf8")) as { funnel: { present: { filtered: { answeredByHistory: number } } } };
    assert.ok(stats.funnel.present.filtered.answeredByHistory > 0, "the set's funnel counts the present questions the history answered");
  });

  test("no past question is answered by the home as it is now, and one that would be is dropped and counted", async () => {
    const { days, present } = await readHome("home-1");
    const truth = truthView(days, present);
    const now = truth.snapshot({ now: true });
    // what an agent that only looks now, assuming nothing changed, would answer
    const lookingNow = { snapshot: () => now };
    const past = set.episodes.filter((x) => x.category === "past");
    assert.ok(past.length > 0, "past questions");
    for (const e of past) assert.notEqual(canonicalMixedValue(executeMixedProgram(e.program, lookingNow) ?? "(none)"), e.answer_value, e.question_id);
    // an object the agent saw at the end of its last day, where it still is now
    const last = days.at(-1)!;
    const seen = lastSightings(days);
    const unchanged = now!.find((o) => seen.has(o.id) && o.receptacle !== null && now!.filter((x) => x.type === o.type).length === 1 && truth.snapshot({ day: last.day, at: "end" })!.find((r) => r.id === o.id)?.receptacle === o.receptacle)!;
    assert.ok(unchanged, "an object seen where it still is");
    const ctx: HomeContext = { seed: 1, scene: "home-1", days, present, presentObjects: homeSnapshot(present), changes: [], start: present.start, truth, remembered: rememberedView(days), paths: new ViewPaths(present, present.start) };
    const candidate: MixedCandidate = { category: "past", template: "past_where_end", program: { query: "where", object: unchanged.type, at: { day: last.day, at: "end" } }, question: `Where was the ${unchanged.type} when you finished your tasks?`, render: (v) => ({ answer: v, alternatives: [v] }), frames: [], targets: [] };
    assert.deepEqual(judgeCandidate(ctx, candidate), { rule: "answeredByPresent" });
    const stats = JSON.parse(readFileSync(join(setDir, "stats.json"), "utf8")) as { funnel: { past: { filtered: { answeredByPresent: number } } } };
    assert.ok(stats.funnel.past.filtered.answeredByPresent > 0, "the set's funnel counts the past questions the present answered");
  });

  test("a question about now asks with how the object rests now: in a receptacle whose things usually stand on it", async () => {
    const { days, present } = await readHome("home-1");
    const now = homeSnapshot(present);
    const unique = (type: string): boolean => now.filter((x) => x.type === type).length === 1;
    const typeOf = (id: number): string => present.objects.find((r) => r.id === id)!.type;
    // an object standing on a receptacle whose type holds things on it, put inside it instead
    const standing = present.objects.find((o) => o.kind === "object" && o.on !== undefined && unique(o.type) && unique(typeOf(o.on)) && catalogueType(typeOf(o.on)).receptacle === "on")!;
    assert.ok(standing, "an object on an 'on' receptacle");
    const receptacle = typeOf(standing.on!);
    const moved: Home = { ...present, objects: present.objects.map((o) => (o === standing ? { ...o, on: undefined, inside: o.on } : o)) };
    const ctx: HomeContext = { seed: 1, scene: "home-1", days, present: moved, presentObjects: homeSnapshot(moved), changes: [], start: present.start, truth: truthView(days, moved), remembered: rememberedView(days), paths: new ViewPaths(moved, moved.start) };
    const asked = presentCandidates(ctx).filter((c) => c.template === "present_is_on" && c.program.object === standing.type && c.program.receptacle === receptacle);
    assert.deepEqual(asked.map((c) => c.question), [`Is the ${standing.type} in the ${receptacle} now?`]);
    const before = presentCandidates({ ...ctx, present, presentObjects: now }).find((c) => c.template === "present_is_on" && c.program.object === standing.type && c.program.receptacle === receptacle);
    assert.equal(before?.question, `Is the ${standing.type} on the ${receptacle} now?`, "standing on it, asked with on");
  });

  test("the changes while away go mostly to what the agent handled on its days", async () => {
    const { days } = await readHome("home-1");
    const handled = new Set(days.flatMap((d) => d.log.events.map((e) => e.object)));
    const changes = JSON.parse(readFileSync(join(setDir, set.homes[0]!.changes), "utf8")) as { object: string }[];
    assert.ok(changes.some((c) => handled.has(c.object)), `a change to one of ${[...handled].join(", ")}`);
    // over many homes: of the small objects moved or taken away, most were handled (a few of some thirty)
    let touched = 0;
    let ofHandled = 0;
    for (const seed of [0, 1, 2, 3, 4, 5]) {
      const home = generateHome(seed);
      const small = home.objects.filter((o) => o.kind === "object" && (o.on !== undefined || o.inside !== undefined));
      const chosen = new Set(small.slice(0, 3).map(objectName));
      const { changes: made } = applyChanges(home, 6, seededRandom(seed), { handled: chosen, seen: new Set() });
      for (const c of made.filter((x) => x.kind === "moved" || x.kind === "taken_away")) {
        touched++;
        if (chosen.has(c.object)) ofHandled++;
      }
    }
    assert.ok(touched >= 6 && ofHandled / touched >= 0.4, `${ofHandled} of ${touched} changes to the handled objects`);
  });

  test("the same command gives the same files in a new folder, and redone after a kill mid-way", async () => {
    const again = join(home, "again");
    const made = await runCli([...ARGS, "--out", again], cliEnv(home));
    assert.equal(made.code, 0, made.stderr);
    assertSameFiles(setDir, again);
    // killed while recording day 2 (its end state not yet written) and before the set was written
    const day2 = join(again, set.homes[0]!.days[1]!.recording);
    rmSync(join(day2, "end.json"));
    rmSync(join(day2, "frames"), { recursive: true });
    rmSync(join(again, "episodes.json"));
    rmSync(join(again, set.homes[0]!.present));
    const redone = await runCli([...ARGS, "--out", again], cliEnv(home));
    assert.equal(redone.code, 0, redone.stderr);
    assertSameFiles(setDir, again);
  });

  test("eqa report and the viewer read the set's folder", async () => {
    const run = await loadRun(setDir);
    assert.equal(run.kind, "generate-mixed");
    assert.deepEqual(run.questions.map((q) => [q.questionId, q.groundTruth]), set.episodes.map((e) => [e.question_id, e.answer]));
    assert.equal(run.metrics.find((m) => m.name === "questions")?.value, set.episodes.length);
    const report = await runCli(["report", setDir, "--out", join(home, "report.html")], cliEnv(home), home);
    assert.equal(report.code, 0, report.stderr);
    assert.ok(readFileSync(join(home, "report.html"), "utf8").includes(set.episodes[0]!.question_id));
    const viewer = await startViewer({ runDirs: [setDir], port: 0 });
    try {
      const page = await fetch(`${viewer.url}/`);
      assert.equal(page.status, 200);
    } finally {
      await viewer.close();
    }
  });

  test("bad flags exit 2 before anything is written", async () => {
    for (const flags of [["--seeds", "5-2"], ["--seeds", "1", "--days", "0"], ["--seeds", "1", "--days", "9"], ["--seeds", "1", "--per-category", "0"]]) {
      const out = join(home, "bad");
      const result = await runCli(["generate", "mixed", ...flags, "--out", out], cliEnv(home));
      assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, /--seeds|--days|--per-category/);
      assert.equal(existsSync(out), false);
    }
  });
});
