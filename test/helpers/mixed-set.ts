/**
 * A small Mixed EQA set made the way a user could make one by hand: one day recorded in the
 * built-in simulator (home 2: the candle taken from the dining room's shelf to the office desk),
 * the world as that day ended (the home with every object where the day's log leaves it), then
 * the present made by changing a copy with the simulator's own rules (the candle taken from the
 * desk to the bed, the dresser opened), and `episodes.json` written after the contract
 * (`eqakit-mixed/1`) with one question of each category.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MixedEpisode, MixedSet, TrajectoryLog } from "../../src/data/index.js";
import { HouseholdEnvironment, manipulate, objectName, recordTask, type Home, type Point3 } from "../../src/sim/index.js";
import { temporaryDir } from "./paths.js";

export const MIXED_SCENE = "home-2";
const CANDLE = 53;
const DESK = 42;
const BED = 29;
const DRESSER = 30;
/** In the kitchen, far from the office desk. */
export const MIXED_START = { position: [2.0, 0, 2.5] as [number, number, number], yaw: 0 };

/** The home as the log's step leaves it: each logged object where, on what and in which states the log has it. */
export function homeAtStep(home: Home, log: TrajectoryLog, step: number): Home {
  const at = log.steps[step]!.objects;
  const byName = new Map(home.objects.map((o) => [objectName(o), o.id]));
  const out = structuredClone(home);
  for (const o of out.objects) {
    const state = at[objectName(o)];
    if (!state) continue;
    if (state.position) {
      const centre = [0, 1, 2].map((a) => (o.min[a]! + o.max[a]!) / 2);
      const shift = [0, 1, 2].map((a) => state.position![a]! - centre[a]!);
      o.min = o.min.map((v, a) => v + shift[a]!) as Point3;
      o.max = o.max.map((v, a) => v + shift[a]!) as Point3;
    }
    delete o.on;
    delete o.inside;
    delete o.held;
    const receptacle = state.receptacle ? byName.get(state.receptacle) : undefined;
    if (state.relation === "on" && receptacle !== undefined) o.on = receptacle;
    if (state.relation === "inside" && receptacle !== undefined) o.inside = receptacle;
    if (state.relation === "held") o.held = true;
    o.states = { ...o.states, ...state.states };
  }
  return out;
}

/** Moves an object onto a receptacle with the simulator's rules (as if someone did it while the agent was away). */
function moveObject(home: Home, object: number, receptacle: number): void {
  const centre = (id: number): Point3 => {
    const o = home.objects.find((x) => x.id === id)!;
    return [(o.min[0] + o.max[0]) / 2, (o.min[1] + o.max[1]) / 2, (o.min[2] + o.max[2]) / 2];
  };
  const all = new Set(home.objects.map((o) => o.id));
  const picked = manipulate(home, { type: "pickup", object }, { visible: all, camera: centre(object) });
  if (!picked.ok) throw new Error(`pickup: ${picked.reason}`);
  const put = manipulate(home, { type: "put", receptacle }, { visible: all, camera: centre(receptacle) });
  if (!put.ok) throw new Error(`put: ${put.reason}`);
}

export interface MixedFixture {
  dir: string;
  file: string;
  set: MixedSet;
  present: Home;
}

function episode(fields: Pick<MixedEpisode, "question_id" | "question" | "answer" | "answer_value" | "category" | "history_answers" | "program" | "gt_path_length"> & Partial<MixedEpisode>): MixedEpisode {
  return { scene: MIXED_SCENE, alternatives: [fields.answer], evidence: { frames: [], objects: [] }, start: MIXED_START, split: "test", ...fields };
}

/** Builds the set in a new temporary folder (about ten seconds: one recording at 128×96). */
export async function buildMixedFixture(options: { width?: number; height?: number } = {}): Promise<MixedFixture> {
  const dir = temporaryDir("eqakit-mixed-set-");
  const homeDir = join(dir, "homes", MIXED_SCENE);
  const dayDir = join(homeDir, "day-1");
  await recordTask({ seed: 2, tasks: [{ type: "pick_and_place", object: CANDLE, receptacle: DESK }], out: dayDir, width: options.width ?? 128, height: options.height ?? 96 });
  const log = JSON.parse(readFileSync(join(dayDir, "trajectory.json"), "utf8")) as TrajectoryLog;
  const start = JSON.parse(readFileSync(join(dayDir, "home.json"), "utf8")) as Home;
  const end = homeAtStep(start, log, log.steps.length - 1);
  const present = structuredClone(end);
  moveObject(present, CANDLE, BED);
  present.objects.find((o) => o.id === DRESSER)!.states.open = true;
  writeFileSync(join(dayDir, "end.json"), JSON.stringify(end));
  writeFileSync(join(homeDir, "present.json"), JSON.stringify(present));
  writeFileSync(join(homeDir, "changes.json"), JSON.stringify([{ kind: "moved", object: `candle-${CANDLE}`, from: `desk-${DESK}`, to: `bed-${BED}` }, { kind: "opened", object: `dresser-${DRESSER}` }]));
  const put = log.events.find((e) => e.type === "put")!;
  const putFrame = { day: 1, frame: log.steps[put.step]!.frame as number };
  const env = new HouseholdEnvironment(present);
  const toward = async (id: number): Promise<number> => {
    const o = present.objects.find((x) => x.id === id)!;
    let best = Infinity;
    for (const dx of [-1.2, 0, 1.2]) for (const dz of [-1.2, 0, 1.2]) {
      const p: Point3 = [(o.min[0] + o.max[0]) / 2 + dx, 0, (o.min[2] + o.max[2]) / 2 + dz];
      if (await env.isNavigable(p)) best = Math.min(best, await env.geodesicDistance(MIXED_START.position, p));
    }
    return Math.round(best * 100) / 100;
  };
  const episodes: MixedEpisode[] = [
    episode({ question_id: "past-where-candle", question: "Where did you put the candle yesterday?", answer: "on the desk", answer_value: "desk", category: "past", history_answers: true, program: { query: "where", object: "candle", at: { day: 1, at: "end" } }, gt_path_length: 0, evidence: { frames: [putFrame], objects: [] } }),
    episode({ question_id: "present-where-candle", question: "Where is the candle now?", answer: "on the bed", answer_value: "bed", category: "present", history_answers: false, program: { query: "where", object: "candle", at: { now: true } }, gt_path_length: await toward(BED), evidence: { frames: [], objects: [`candle-${CANDLE}`] } }),
    episode({ question_id: "present-desk", question: "What is on the desk now?", answer: "nothing", answer_value: "nothing", category: "present", history_answers: false, program: { query: "contents", receptacle: "desk", at: { now: true } }, gt_path_length: await toward(DESK), evidence: { frames: [], objects: [`desk-${DESK}`] } }),
    episode({ question_id: "past-present-candle", question: "Has the candle moved since you put it down yesterday?", answer: "yes", answer_value: "yes", category: "past_present", history_answers: false, program: { query: "moved", object: "candle", since: { day: 1, at: "end" }, at: { now: true } }, gt_path_length: await toward(BED), evidence: { frames: [putFrame], objects: [`candle-${CANDLE}`] } }),
  ];
  const set: MixedSet = {
    format: "eqakit-mixed/1",
    homes: [{ scene: MIXED_SCENE, days: [{ day: 1, when: "yesterday, morning", recording: `homes/${MIXED_SCENE}/day-1`, end_state: `homes/${MIXED_SCENE}/day-1/end.json` }], changes: `homes/${MIXED_SCENE}/changes.json`, present: `homes/${MIXED_SCENE}/present.json` }],
    episodes,
  };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "episodes.json");
  writeFileSync(file, `${JSON.stringify(set, null, 2)}\n`);
  return { dir, file, set, present };
}
