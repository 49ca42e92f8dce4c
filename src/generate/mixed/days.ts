/**
 * A home's past days: household tasks recorded in the same home one day after another, each day
 * starting where the last left the world (its objects, their states, the agent's pose). Each day
 * is a recording (`frames/`, `trajectory.json`, `home.json`, `plan.png`) and the world as it
 * ended (`end.json`, eqakit-sim-home/1). A day whose tasks were not all done within its step
 * budget, or that ends with an object in hand, is recorded again with the next seed (up to six
 * times), so that days are short and end with the world at rest. A day whose files are all
 * there is read back, not recorded again: a killed generation redone gives the same files.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomically, type Random, randomInt } from "../../core/index.js";
import { loadTrajectoryLog, type TrajectoryLog } from "../../data/index.js";
import { generateHome, readHomeFile, recordTask, type AgentState, type Home } from "../../sim/index.js";
import { logSeed } from "../generate.js";
import { maskSightings } from "../sightings.js";
import { registerSightings, TrajectoryWorld } from "../world.js";

/** Frame size of the days' recordings (that of `eqa demo`). */
export const MIXED_FRAME_WIDTH = 160;
export const MIXED_FRAME_HEIGHT = 120;
/** Chance of a failed action or a detour at each occasion in the days' recordings. */
export const MIXED_FAILURE_RATE = 0.1;
const RECORD_ATTEMPTS = 6;
/** A day's step budget per task: a day whose doer wanders past it is recorded again with the next seed. */
const STEPS_PER_TASK = 500;
const TIMES_OF_DAY = ["morning", "afternoon", "evening"] as const;
const DAYS_AGO = ["yesterday", "two days ago", "three days ago", "four days ago", "five days ago", "six days ago", "seven days ago"];

export interface RecordedDay {
  day: number;
  /** As the set writes it: "two days ago, morning". */
  when: string;
  /** As a question says it: "yesterday evening", "in the morning two days ago". */
  adverbial: string;
  /** The recording's folder, relative to the set's folder. */
  recording: string;
  endState: string;
  log: TrajectoryLog;
  world: TrajectoryWorld;
  end: Home;
}

export interface DayOptions {
  days: number;
  tasksPerDay: number;
  seed: number;
}

/** When each of `days` days was: the last one yesterday, each at a time of day the seed picks. */
export function dayTimes(days: number, random: Random): { when: string; adverbial: string }[] {
  return Array.from({ length: days }, (_, i) => {
    const ago = DAYS_AGO[days - 1 - i] ?? `${days - i} days ago`;
    const time = TIMES_OF_DAY[randomInt(random, TIMES_OF_DAY.length)]!;
    return { when: `${ago}, ${time}`, adverbial: days - i === 1 ? `yesterday ${time}` : `in the ${time} ${ago}` };
  });
}

/** Records (or reads back) the days of the home of `homeSeed` under `setDir/homes/home-<seed>/`. */
export async function recordDays(setDir: string, homeSeed: number, options: DayOptions, random: Random, onDay?: (message: string) => void): Promise<RecordedDay[]> {
  const times = dayTimes(options.days, random);
  const out: RecordedDay[] = [];
  let home: Home = generateHome(homeSeed);
  for (let day = 1; day <= options.days; day++) {
    const recording = `homes/home-${homeSeed}/day-${day}`;
    const dir = join(setDir, recording);
    const endFile = join(dir, "end.json");
    const logFile = join(dir, "trajectory.json");
    if (!(existsSync(endFile) && existsSync(logFile))) await recordDay(dir, homeSeed, day, home, options);
    const log = await loadTrajectoryLog(logFile);
    const sightings = await maskSightings(log, join(dir, "frames"));
    if (sightings) registerSightings(log, sightings);
    const end = await readHomeFile(endFile);
    out.push({ day, ...times[day - 1]!, recording, endState: `${recording}/end.json`, log, world: new TrajectoryWorld(log), end });
    onDay?.(`home ${homeSeed}, day ${day} (${times[day - 1]!.when}): ${log.task?.description ?? ""} (${log.steps.length} steps, ${log.events.length} events)`);
    home = end;
  }
  return out;
}

async function recordDay(dir: string, homeSeed: number, day: number, start: Home, options: DayOptions): Promise<void> {
  for (let attempt = 0; attempt < RECORD_ATTEMPTS; attempt++) {
    const summary = await recordTask({
      seed: homeSeed,
      taskSeed: logSeed(options.seed, `home-${homeSeed}-day-${day}-${attempt}`),
      id: `home-${homeSeed}-day-${day}`,
      home: start,
      tasks: Array.from({ length: options.tasksPerDay }, () => "random" as const),
      out: dir,
      width: MIXED_FRAME_WIDTH,
      height: MIXED_FRAME_HEIGHT,
      failureRate: MIXED_FAILURE_RATE,
      maxSteps: STEPS_PER_TASK * options.tasksPerDay,
    });
    const done = summary.tasks.every((t) => t.done) && !summary.endHome.objects.some((o) => o.held);
    if (done || attempt === RECORD_ATTEMPTS - 1) {
      const end: Home = { ...summary.endHome, start: restingState(summary.endState) };
      await writeFileAtomically(join(dir, "end.json"), `${JSON.stringify(end, null, 2)}\n`);
      return;
    }
  }
}

/** The agent's pose at the end of a day, looking straight ahead: where the next day starts. */
function restingState(state: AgentState): AgentState {
  return { position: [state.position[0], 0, state.position[2]], yaw: state.yaw, pitch: 0 };
}
