import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/index.js";
import { loadTrajectoryLog } from "../../src/data/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { HouseholdEnvironment, TASK_TYPES, TaskDoer, frontSide, generateHome, objectName, planTasks, recordTask, type PlannedTask, type SimEvent, type TaskType } from "../../src/sim/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

/** The events a task must produce, in order (others, such as heating what else is in the microwave, may come between). */
function expectedEvents(task: PlannedTask): string[] {
  const o = task.object.id;
  const r = task.receptacle?.id;
  switch (task.type) {
    case "pick_and_place":
      return [`pickup ${o}`, `put ${o} ${r}`];
    case "heat":
      return [`pickup ${o}`, `open ${r}`, `put ${o} ${r}`, `close ${r}`, `toggle_on ${r}`, `heat ${o}`, `toggle_off ${r}`, `open ${r}`, `pickup ${o}`, `close ${r}`, `put ${o}`];
    case "cool":
      return [`pickup ${o}`, `open ${r}`, `put ${o} ${r}`, `close ${r}`, `cool ${o}`, `open ${r}`, `pickup ${o}`, `close ${r}`, `put ${o}`];
    case "clean":
      return [`pickup ${o}`, `put ${o} ${r}`, `toggle_on ${r}`, `clean ${o}`, `toggle_off ${r}`, `pickup ${o}`, `put ${o}`];
    case "toggle":
      return [`toggle_on ${o}`];
    case "look_at_in_light":
      return [`pickup ${o}`, `toggle_on ${r}`];
  }
}

function isSubsequence(wanted: string[], seen: string[]): boolean {
  let i = 0;
  for (const s of seen) if (i < wanted.length && s.startsWith(wanted[i] as string)) i++;
  return i === wanted.length;
}

describe("the task-doer", () => {
  for (const seed of [1, 2]) {
    test(`finishes every task type in the home of seed ${seed}, with the expected events in order`, async () => {
      const home = generateHome(seed);
      for (const type of TASK_TYPES) {
        const env = new HouseholdEnvironment(home, { width: 64, height: 48 });
        const [task] = planTasks(home, [type], seed);
        assert.ok(task);
        const events: SimEvent[] = [];
        const doer = new TaskDoer(env, { seed, failureRate: 0.3, onStep: (_action, result) => void events.push(...(result.events ?? [])) });
        const outcome = await doer.perform(task);
        assert.ok(outcome.done, `${type}: ${outcome.reason}`);
        const seen = events.map((e) => [e.type, e.object, e.target].filter((v) => v !== undefined).join(" "));
        assert.ok(isSubsequence(expectedEvents(task), seen), `${type}: expected ${expectedEvents(task).join(", ")}; saw ${seen.join(", ")}`);
        assert.ok(doer.steps > 5, `${type}: walked`);
        if (type !== "toggle") assert.equal(env.held, type === "look_at_in_light" ? task.object.id : null, `${type}: the hand at the end`);
      }
    });
  }

  test("small objects on a TV stand or a desk stand in front of its screen, where the task-doer sees them", async () => {
    for (let seed = 0; seed < 30; seed++) {
      const home = generateHome(seed);
      for (const o of home.objects) {
        const under = home.objects.find((f) => f.id === o.on);
        if (!under || (under.type !== "tv stand" && under.type !== "desk")) continue;
        const front = frontSide(home, under);
        const fromBack = [under.max[0] - o.max[0], o.min[0] - under.min[0], under.max[2] - o.max[2], o.min[2] - under.min[2]][front] as number;
        assert.ok(fromBack >= 0.2, `seed ${seed}: ${objectName(o)} ${fromBack.toFixed(2)} m from the back of ${objectName(under)}`);
      }
    }
    // the remote control on home 8's TV stand was once placed behind the television
    const home = generateHome(8);
    const [task] = planTasks(home, ["pick_and_place"], 8);
    assert.ok(task && task.object.type === "remote control");
    const outcome = await new TaskDoer(new HouseholdEnvironment(home, { width: 64, height: 48 }), { seed: 8, failureRate: 0 }).perform(task);
    assert.ok(outcome.done, outcome.reason);
  });

  test("failures and detours are seeded: a failure rate makes failed actions, the same seed the same actions", async () => {
    const home = generateHome(5);
    const run = async (failureRate: number): Promise<{ actions: string[]; failed: number }> => {
      const env = new HouseholdEnvironment(home, { width: 64, height: 48 });
      const actions: string[] = [];
      let failed = 0;
      const doer = new TaskDoer(env, { seed: 5, failureRate, onStep: (action, result) => {
        actions.push(JSON.stringify(action));
        if (!result.success) failed++;
      } });
      for (const task of planTasks(home, ["pick_and_place", "heat", "look_at_in_light"], 5)) assert.ok((await doer.perform(task)).done);
      return { actions, failed };
    };
    const calm = await run(0);
    const clumsy = await run(0.6);
    const again = await run(0.6);
    assert.equal(calm.failed, 0);
    assert.ok(clumsy.failed > 0, "some actions failed");
    assert.ok(clumsy.actions.length > calm.actions.length, "detours make the trajectory longer");
    assert.deepEqual(again.actions, clumsy.actions);
  });
});

describe("recordings", () => {
  test("a recording: frames with masks, a valid log whose per-step states follow the events, deterministic", async () => {
    const out = join(temporaryDir(), "rec");
    const summary = await recordTask({ seed: 3, tasks: ["heat"], out, width: 64, height: 48, minSteps: 150 });
    assert.ok(summary.tasks.every((t) => t.done), JSON.stringify(summary.tasks));
    assert.ok(summary.steps >= 150);
    const log = await loadTrajectoryLog(join(out, "trajectory.json"));
    assert.equal(log.frames, "frames");
    assert.equal(log.source, "sim");
    assert.equal(log.environment, "home-3");
    assert.equal(log.steps.length, summary.steps);
    assert.equal(summary.frames, summary.steps);
    assert.equal(log.steps[0]?.action, null);
    log.steps.forEach((s, i) => assert.equal(s.frame, i));
    assert.ok(log.objects.every((o) => o.kind !== "structure" && /^[a-z_]+-\d+$/.test(o.id)));
    assert.ok(log.objects.every((o) => typeof o.properties.colour === "string" && typeof o.properties.material === "string"));
    // the heated object: held after its pickup, inside the microwave after the put, on a surface at the end
    const heat = log.events.find((e) => e.type === "heat");
    assert.ok(heat);
    const object = heat.object;
    const pickup = log.events.find((e) => e.type === "pickup" && e.object === object) as (typeof log.events)[number];
    assert.equal(log.steps[pickup.step]?.held, object);
    assert.equal(log.steps[pickup.step]?.objects[object]?.relation, "held");
    assert.equal(log.steps[pickup.step - 1]?.objects[object]?.relation, "on");
    const puts = log.events.filter((e) => e.type === "put" && e.object === object);
    assert.equal(puts.length, 2);
    const intoMicrowave = puts[0] as (typeof log.events)[number];
    assert.match(intoMicrowave.target ?? "", /^microwave-/);
    assert.deepEqual(log.steps[intoMicrowave.step]?.objects[object]?.relation, "inside");
    assert.equal(log.steps[intoMicrowave.step]?.objects[object]?.receptacle, intoMicrowave.target);
    const last = log.steps.at(-1)?.objects[object];
    assert.equal(last?.relation, "on");
    assert.equal(last?.receptacle, (puts[1] as (typeof log.events)[number]).target);
    const microwave = intoMicrowave.target as string;
    const toggled = log.events.find((e) => e.type === "toggle_on" && e.object === microwave) as (typeof log.events)[number];
    assert.equal(log.steps[toggled.step]?.objects[microwave]?.states.toggled, true);
    assert.equal(log.steps[toggled.step - 1]?.objects[microwave]?.states.toggled, false);
    assert.ok(log.steps.some((s) => !s.success), "the trajectory has failed actions");

    const episode = await openEpisode(join(out, "frames"));
    assert.equal(episode.frameCount, summary.steps);
    const frame = await episode.frame(pickup.step - 1);
    assert.ok(frame.masks && frame.depth && frame.pose);
    const id = Number(object.split("-").at(-1));
    assert.ok(Array.from(frame.masks.ids).includes(id), "the object is in view just before it is picked up");
    const after = await episode.frame(pickup.step);
    assert.ok(!Array.from(after.masks?.ids ?? []).includes(id), "and not drawn once held");

    const text = await readFile(join(out, "trajectory.json"), "utf8");
    const again = join(temporaryDir(), "rec");
    await recordTask({ seed: 3, tasks: ["heat"], out: again, width: 64, height: 48, minSteps: 150 });
    assert.equal(sha256Hex(await readFile(join(again, "trajectory.json"), "utf8")), sha256Hex(text));
    const name = String(pickup.step).padStart(5, "0");
    assert.ok((await readFile(join(out, "frames", `${name}-rgb.png`))).equals(await readFile(join(again, "frames", `${name}-rgb.png`))));
    for (const file of ["home.json", "plan.png"]) await readFile(join(out, file));
  });

  test("task choices name objects the log knows; an impossible task is refused with what is missing", async () => {
    const home = generateHome(27);
    assert.throws(() => planTasks(home, ["heat"], 27), /task heat is impossible in the home of seed 27: no microwave/);
    const tasks = planTasks(generateHome(4), ["random", "random", "random"], 4);
    for (const task of tasks) assert.ok((TASK_TYPES as readonly TaskType[]).includes(task.type) && objectName(task.object).length > 0);
  });

  test("eqa sim record end to end, and exit 2 on bad input", async () => {
    const dir = temporaryDir();
    const env = cliEnv(dir);
    const out = join(dir, "rec");
    const ok = await runCli(["sim", "record", "--seed", "2", "--task", "toggle,pick_and_place", "--out", out, "--width", "48", "--height", "36"], env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /eqa sim record: seed 2: \d+ steps \(\d+ failed actions\), \d+ events, \d+ frames; turn on the .+; put the .+; wrote .+trajectory\.json and .+frames/);
    const log = await loadTrajectoryLog(join(out, "trajectory.json"));
    assert.equal(log.task?.type, "toggle,pick_and_place");
    for (const [args, message] of [
      [["--task", "nope"], /unknown task "nope"/],
      [["--task", "toggle", "--width", "0"], /--width/],
      [["--task", "toggle", "--hfov", "200"], /--hfov/],
      [["--task", "heat", "--seed", "27"], /task heat is impossible in the home of seed 27: no microwave/],
    ] as const) {
      const base = ["sim", "record", "--seed", "2", "--out", join(dir, "bad"), ...args];
      const r = await runCli(base, env);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });
});
