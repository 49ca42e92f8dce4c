import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ai2thorCatalogue, alfredTypesOutsideCatalogue, AlfredTrajectoryError, findAlfredFiles, loadAlfredTrajectories, parseAlfredId, parseTrajectoryLog, replayAlfredTrajectory, type TrajectoryLog } from "../../src/data/index.js";
import { UserError } from "../../src/core/index.js";
import { alfredDir, temporaryDir } from "../helpers/paths.js";

/** The parts of `traj_data.json` the checks read, as ALFRED spells them. */
interface RawAction {
  high_idx: number;
  api_action: { action: string; objectId?: string; receptacleObjectId?: string };
}
interface RawTrajectory {
  task_type: string;
  pddl_params: { object_target: string; object_sliced: boolean };
  scene: { init_action: { x: number; y: number; z: number; rotation: number; horizon: number }; object_poses: { objectName: string }[] };
  plan: { high_pddl: { high_idx: number; discrete_action: { action: string } }[]; low_actions: RawAction[] };
}

function trial(name: string): string {
  const path = join(alfredDir, "valid_seen", name);
  return join(path, "traj_data.json");
}
const FILES = {
  pickAndPlace: trial("pick_and_place_simple-Book-None-SideTable-329/trial_T20190908_050633_745514"),
  heat: trial("pick_heat_then_place_in_recep-Apple-None-DiningTable-26/trial_T20190907_060234_011675"),
  cool: trial("pick_cool_then_place_in_recep-Apple-None-CounterTop-14/trial_T20190909_044933_815840"),
  clean: trial("pick_clean_then_place_in_recep-AppleSliced-None-DiningTable-27/trial_T20190907_151802_277016"),
  light: trial("look_at_obj_in_light-AlarmClock-None-DeskLamp-323/trial_T20190909_044715_250790"),
  movable: trial("pick_and_place_with_movable_recep-ButterKnife-Cup-DiningTable-23/trial_T20190908_233553_192059"),
};

function readRaw(file: string): RawTrajectory {
  return JSON.parse(readFileSync(file, "utf8")) as RawTrajectory;
}

function replay(file: string): { raw: RawTrajectory; log: TrajectoryLog } {
  const raw = readRaw(file);
  return { raw, log: parseTrajectoryLog(replayAlfredTrajectory(raw, file), file) };
}

const INTERACTIONS: Record<string, string> = {
  PickupObject: "pickup",
  PutObject: "put",
  OpenObject: "open",
  CloseObject: "close",
  ToggleObjectOn: "toggle_on",
  ToggleObjectOff: "toggle_off",
  SliceObject: "slice",
};

/** The log's object id for an ALFRED id: the same string (every id an action names is kept). */
function typeOf(log: TrajectoryLog, id: string): string | undefined {
  return log.objects.find((o) => o.id === id)?.type;
}

describe("ALFRED replay: events follow the plan", () => {
  for (const [name, file] of Object.entries(FILES)) {
    it(`${name}: one event per interaction, at its step, on its object`, () => {
      const { raw, log } = replay(file);
      const expected = raw.plan.low_actions.flatMap((a, i) => {
        const type = INTERACTIONS[a.api_action.action];
        return type ? [{ step: i + 1, type, object: a.api_action.objectId }] : [];
      });
      const interactions = log.events.filter((e) => !["heat", "cool", "clean"].includes(e.type)).map((e) => ({ step: e.step, type: e.type, object: e.object }));
      assert.deepEqual(interactions, expected);
      const puts = raw.plan.low_actions.filter((a) => a.api_action.action === "PutObject").map((a) => a.api_action.receptacleObjectId);
      assert.deepEqual(log.events.filter((e) => e.type === "put").map((e) => e.target), puts);
      assert.equal(log.steps.length, raw.plan.low_actions.length + 1);
      assert.equal(log.environment, `FloorPlan${/-(\d+)\/trial/.exec(file)?.[1]}`);
      assert.equal(log.source, "alfred");
      assert.equal(log.task?.type, raw.task_type);
    });
  }

  it("heat, cool and clean happen once per HeatObject, CoolObject and CleanObject, to the task's object, in the right appliance", () => {
    for (const [file, high, type, appliance] of [
      [FILES.heat, "HeatObject", "heat", "Microwave"],
      [FILES.cool, "CoolObject", "cool", "Fridge"],
      [FILES.clean, "CleanObject", "clean", "SinkBasin"],
    ] as const) {
      const { raw, log } = replay(file);
      const treated = log.events.filter((e) => e.type === type);
      assert.equal(treated.length, raw.plan.high_pddl.filter((h) => h.discrete_action.action === high).length, file);
      for (const event of treated) {
        const target = `${raw.pddl_params.object_target}${raw.pddl_params.object_sliced ? "Sliced" : ""}`;
        assert.equal(typeOf(log, event.object)?.toLowerCase(), target.toLowerCase());
        assert.equal(typeOf(log, event.target ?? ""), appliance);
        const highIdx = raw.plan.low_actions[event.step - 1]?.high_idx;
        assert.equal(raw.plan.high_pddl.find((h) => h.high_idx === highIdx)?.discrete_action.action, high);
        assert.equal(log.steps[event.step]?.objects[event.object]?.receptacle, event.target, "treated where it lies");
      }
    }
  });

  it("look_at_obj_in_light: the lamp starts off (object_toggles) and is on after the toggle", () => {
    const { log } = replay(FILES.light);
    const on = log.events.find((e) => e.type === "toggle_on");
    assert.ok(on);
    assert.equal(log.steps[0]?.objects[on.object]?.states.toggled, false);
    assert.equal(log.steps[on.step]?.objects[on.object]?.states.toggled, true);
    assert.equal(log.steps.at(-1)?.held, log.events.find((e) => e.type === "pickup")?.object);
  });

  it("a carried receptacle carries what was put in it", () => {
    const { log } = replay(FILES.movable);
    const puts = log.events.filter((e) => e.type === "put");
    const inner = puts[0];
    assert.ok(inner?.target);
    const last = log.steps.at(-1);
    assert.deepEqual(last?.objects[inner.object]?.position, last?.objects[inner.target]?.position);
    assert.notDeepEqual(log.steps[inner.step]?.objects[inner.target]?.position, last?.objects[inner.target]?.position, "the receptacle moved");
  });
});

describe("ALFRED replay: answers recomputed from the raw file", () => {
  it("how many times the fridge was opened", () => {
    const { raw, log } = replay(FILES.cool);
    const fromRaw = raw.plan.low_actions.filter((a) => a.api_action.action === "OpenObject" && a.api_action.objectId?.startsWith("Fridge|")).length;
    const fromLog = log.events.filter((e) => e.type === "open" && typeOf(log, e.object) === "Fridge").length;
    assert.equal(fromRaw, 2);
    assert.equal(fromLog, fromRaw);
    const second = log.events.filter((e) => e.type === "open" && typeOf(log, e.object) === "Fridge")[1];
    assert.equal(second?.index, 2);
  });

  it("where each picked object ended up", () => {
    for (const file of Object.values(FILES)) {
      const { raw, log } = replay(file);
      const finalPlace = new Map<string, string | null>();
      for (const a of raw.plan.low_actions) {
        if (a.api_action.action === "PickupObject" && a.api_action.objectId) finalPlace.set(a.api_action.objectId, null);
        if (a.api_action.action === "PutObject" && a.api_action.objectId) finalPlace.set(a.api_action.objectId, a.api_action.receptacleObjectId ?? null);
      }
      const last = log.steps.at(-1);
      assert.ok(finalPlace.size > 0);
      for (const [object, receptacle] of finalPlace) {
        const state = last?.objects[object];
        if (receptacle === null) assert.equal(state?.relation, "held", `${file}: ${object}`);
        else assert.equal(state?.receptacle, receptacle, `${file}: ${object}`);
      }
    }
  });

  it("the agent's final position and heading (integer grid walk in THOR's frame, then mirrored)", () => {
    for (const file of Object.values(FILES)) {
      const { raw, log } = replay(file);
      const init = raw.scene.init_action;
      let quarter = Math.round(init.rotation / 90) % 4; // 0: +z, 1: +x, 2: −z, 3: −x (clockwise from above)
      let [gx, gz] = [0, 0];
      let horizon = init.horizon;
      for (const a of raw.plan.low_actions) {
        const act = a.api_action.action;
        if (act === "MoveAhead") [gx, gz] = [gx + [0, 1, 0, -1][quarter]!, gz + [1, 0, -1, 0][quarter]!];
        if (act === "RotateRight") quarter = (quarter + 1) % 4;
        if (act === "RotateLeft") quarter = (quarter + 3) % 4;
        if (act === "LookUp") horizon -= 15;
        if (act === "LookDown") horizon += 15;
      }
      const agent = log.steps.at(-1)?.agent;
      assert.ok(agent);
      assert.ok(Math.abs(agent.position[0] - (init.x + gx * 0.25)) < 1e-6);
      assert.ok(Math.abs(agent.position[2] - -(init.z + gz * 0.25)) < 1e-6);
      assert.ok(Math.abs(agent.position[1] - (init.y - 0.9)) < 1e-6);
      const expectedYaw = -quarter * (Math.PI / 2);
      assert.ok(Math.abs(Math.cos(agent.yaw) - Math.cos(expectedYaw)) < 1e-9 && Math.abs(Math.sin(agent.yaw) - Math.sin(expectedYaw)) < 1e-9);
      assert.ok(Math.abs(agent.pitch - (-horizon * Math.PI) / 180) < 1e-9);
    }
  });
});

describe("ALFRED replay: eqakit's frame", () => {
  const { raw, log } = replay(FILES.heat);
  it("MoveAhead moves 0.25 m along the facing direction (−sin yaw, −cos yaw)", () => {
    let moves = 0;
    raw.plan.low_actions.forEach((a, i) => {
      if (a.api_action.action !== "MoveAhead") return;
      const before = log.steps[i]!.agent;
      const after = log.steps[i + 1]!.agent;
      assert.ok(Math.abs(after.position[0] - before.position[0] - -Math.sin(before.yaw) * 0.25) < 1e-6);
      assert.ok(Math.abs(after.position[2] - before.position[2] - -Math.cos(before.yaw) * 0.25) < 1e-6);
      moves++;
    });
    assert.ok(moves > 5);
  });

  it("RotateLeft turns left (yaw grows by 90°), LookUp looks up (pitch grows)", () => {
    const turned = (action: string): number[] =>
      raw.plan.low_actions.flatMap((a, i) => (a.api_action.action === action ? [Math.sin(log.steps[i + 1]!.agent.yaw - log.steps[i]!.agent.yaw)] : []));
    const lefts = turned("RotateLeft");
    const rights = turned("RotateRight");
    assert.ok(lefts.length + rights.length > 0);
    for (const s of lefts) assert.ok(Math.abs(s - 1) < 1e-9);
    for (const s of rights) assert.ok(Math.abs(s + 1) < 1e-9);
    raw.plan.low_actions.forEach((a, i) => {
      const dp = log.steps[i + 1]!.agent.pitch - log.steps[i]!.agent.pitch;
      if (a.api_action.action === "LookUp") assert.ok(Math.abs(dp - Math.PI / 12) < 1e-9);
      if (a.api_action.action === "LookDown") assert.ok(Math.abs(dp + Math.PI / 12) < 1e-9);
    });
    assert.equal(log.cameraHeight, 1.575);
  });

  it("object positions: z mirrored from the id, held objects travel with the agent", () => {
    const fridge = log.objects.find((o) => o.type === "Microwave");
    assert.ok(fridge);
    const parsed = parseAlfredId(fridge.id);
    assert.deepEqual(log.steps[0]?.objects[fridge.id]?.position, parsed?.position);
    const [, x, , z] = fridge.id.split("|").map(Number);
    assert.equal(parsed?.position[0], x);
    assert.equal(parsed?.position[2], -z!);
    const pickup = log.events.find((e) => e.type === "pickup");
    assert.ok(pickup);
    const held = log.steps[pickup.step + 1];
    assert.equal(held?.objects[pickup.object]?.relation, "held");
    const agent = held!.agent;
    const at = held!.objects[pickup.object]!.position!;
    assert.ok(Math.hypot(at[0] - agent.position[0], at[2] - agent.position[2]) < 0.5);
  });
});

describe("ALFRED replay: what is unknown stays unknown", () => {
  it("objects no action touched have an unknown relation; filled is never claimed; colours only from the catalogue", () => {
    const { raw, log } = replay(FILES.pickAndPlace);
    const touched = new Set(raw.plan.low_actions.flatMap((a) => [a.api_action.objectId, a.api_action.receptacleObjectId]));
    const first = log.steps[0]!;
    let untouched = 0;
    for (const object of log.objects) {
      if (object.kind === "object" && !touched.has(object.id)) {
        assert.equal(first.objects[object.id]?.relation, "unknown");
        untouched++;
      }
      const entry = ai2thorCatalogue().get(object.type);
      assert.equal(object.properties.colour, entry?.colour);
    }
    assert.ok(untouched > 3);
    for (const step of log.steps) for (const state of Object.values(step.objects)) assert.equal(state.states.filled, undefined);
  });

  it("a picked object starts on the receptacle the plan names", () => {
    const { log } = replay(FILES.heat);
    const pickup = log.events.find((e) => e.type === "pickup");
    assert.equal(pickup?.from, "DiningTable|-00.47|+00.01|+03.00");
    assert.equal(log.steps[0]?.objects[pickup!.object]?.relation, "on");
  });
});

describe("ALFRED loader", () => {
  it("every type in the fixture trajectories is in the AI2-THOR catalogue (the whole set: bench/alfred.ts)", async () => {
    const missing = new Set<string>();
    for (const file of await findAlfredFiles(alfredDir)) {
      for (const type of alfredTypesOutsideCatalogue(readRaw(file), file)) missing.add(type);
    }
    assert.deepEqual([...missing], []);
    for (const entry of ai2thorCatalogue().values()) assert.match(entry.use, /^used /);
  });

  it("replays and validates every fixture trajectory, its heat/cool/clean events as its plan has them (the whole set: bench/alfred.ts)", async () => {
    const { logs, skipped } = await loadAlfredTrajectories(alfredDir);
    assert.deepEqual(skipped, []);
    assert.equal(logs.length, 8);
    assert.equal(new Set(logs.map((l) => l.id)).size, 8);
    const events = (type: string): number => logs.reduce((n, l) => n + l.events.filter((e) => e.type === type).length, 0);
    const plans = (await findAlfredFiles(alfredDir)).map((file) => readRaw(file).plan.high_pddl);
    const planned = (action: string): number => plans.reduce((n, plan) => n + plan.filter((h) => h.discrete_action.action === action).length, 0);
    assert.deepEqual([events("heat"), events("cool"), events("clean")], [1, 1, 1]);
    assert.deepEqual([planned("HeatObject"), planned("CoolObject"), planned("CleanObject")], [1, 1, 1]);
  });

  it("reports a put without a pickup and malformed JSON with their paths and steps, and goes on", async () => {
    const dir = temporaryDir("eqakit-alfred-");
    const raw = readRaw(FILES.pickAndPlace);
    const firstPickup = raw.plan.low_actions.findIndex((a) => a.api_action.action === "PickupObject");
    const broken = structuredClone(raw);
    broken.plan.low_actions.splice(firstPickup, 1);
    const putStep = broken.plan.low_actions.findIndex((a) => a.api_action.action === "PutObject") + 1;
    const files = { good: join(dir, "task-a", "trial_1", "traj_data.json"), contradiction: join(dir, "task-b", "trial_2", "traj_data.json"), malformed: join(dir, "task-c", "trial_3", "traj_data.json") };
    for (const file of Object.values(files)) await mkdir(join(file, ".."), { recursive: true });
    await writeFile(files.good, JSON.stringify(raw));
    await writeFile(files.contradiction, JSON.stringify(broken));
    await writeFile(files.malformed, JSON.stringify(raw).slice(0, 5000));

    const { logs, skipped } = await loadAlfredTrajectories(dir);
    assert.deepEqual(logs.map((l) => l.id), ["task-a/trial_1"]);
    assert.equal(skipped.length, 2);
    const [contradiction, malformed] = skipped;
    assert.equal(contradiction?.file, files.contradiction);
    assert.equal(contradiction?.step, putStep);
    assert.match(contradiction?.error ?? "", new RegExp(`step ${putStep}: puts down .* never picked up`));
    assert.ok(contradiction?.error.includes(files.contradiction));
    assert.equal(malformed?.file, files.malformed);
    assert.match(malformed?.error ?? "", /malformed JSON/);
    assert.throws(() => replayAlfredTrajectory(broken, "x.json"), (e: unknown) => e instanceof UserError && e.message.includes(`plan.low_actions.${putStep - 1}`));
  });

  it("opening the fridge twice in a row contradicts its known state", () => {
    const raw = readRaw(FILES.cool);
    const open = raw.plan.low_actions.findIndex((a) => a.api_action.action === "OpenObject" && a.api_action.objectId?.startsWith("Fridge|"));
    raw.plan.low_actions.splice(open, 0, structuredClone(raw.plan.low_actions[open]!));
    assert.throws(
      () => replayAlfredTrajectory(raw, FILES.cool),
      (e: unknown) => e instanceof AlfredTrajectoryError && e.step === open + 2 && /opens Fridge\|.*already open/.test(e.message) && e.message.includes(FILES.cool),
    );
  });
});
