import { Command, InvalidArgumentError } from "commander";
import { nonNegativeInteger, outputDirectory, positiveInteger } from "./options.js";
import { TASK_TYPES, generateHome, recordTask, writeHome, type TaskType } from "../sim/index.js";

function seedNumber(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError("expected a non-negative integer");
  return n;
}

function fieldOfView(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 180)) throw new InvalidArgumentError("expected degrees between 0 and 180");
  return n;
}

function probability(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError("expected a number from 0 to 1");
  return n;
}

function taskList(value: string): (TaskType | "random")[] {
  const names = value.split(",").map((t) => t.trim());
  for (const name of names) {
    if (name !== "random" && !(TASK_TYPES as readonly string[]).includes(name)) throw new InvalidArgumentError(`unknown task "${name}"; expected ${TASK_TYPES.join(", ")} or random`);
  }
  return names as (TaskType | "random")[];
}

interface RecordFlags {
  seed: number;
  task: (TaskType | "random")[];
  out: string;
  width: number;
  height: number;
  hfov: number;
  minSteps: number;
  failureRate: number;
}

export function simCommand(): Command {
  const sim = new Command("sim").description("the built-in household simulator");
  sim
    .command("home")
    .description("generate the home of a seed: home.json and a top-down plan.png")
    .requiredOption("--seed <n>", "the home's seed (a non-negative integer)", seedNumber)
    .requiredOption("--out <dir>", "the directory to write into", outputDirectory)
    .action(async (flags: { seed: number; out: string }) => {
      const home = generateHome(flags.seed);
      const written = await writeHome(home, flags.out);
      const rooms = home.rooms.map((r) => r.type).join(", ");
      console.log(`eqa sim home: seed ${flags.seed}: ${home.rooms.length} rooms (${rooms}), ${home.doors.length} doors, ${home.objects.filter((o) => o.kind !== "structure").length} objects`);
      console.log(`wrote ${written.json} and ${written.png}`);
    });
  sim
    .command("record")
    .description("record a scripted agent doing household tasks: frames/, trajectory.json, home.json, plan.png")
    .requiredOption("--seed <n>", "the home's seed (a non-negative integer)", seedNumber)
    .requiredOption("--task <types>", `tasks in order, comma-separated: ${TASK_TYPES.join(", ")}, or random`, taskList)
    .requiredOption("--out <dir>", "the directory to write into", outputDirectory)
    .option("--width <px>", "image width", positiveInteger, 320)
    .option("--height <px>", "image height", positiveInteger, 240)
    .option("--hfov <degrees>", "horizontal field of view", fieldOfView, 90)
    .option("--min-steps <n>", "keep walking and looking around until this many steps", nonNegativeInteger, 0)
    .option("--failure-rate <p>", "chance of a failed action or detour at each occasion", probability, 0.15)
    .action(async (flags: RecordFlags) => {
      const summary = await recordTask({ seed: flags.seed, tasks: flags.task, out: flags.out, width: flags.width, height: flags.height, hfovDeg: flags.hfov, minSteps: flags.minSteps, failureRate: flags.failureRate });
      const failed = summary.tasks.filter((t) => !t.done);
      const tasks = summary.tasks.map((t) => `${t.description}${t.done ? "" : " (gave up)"}`).join("; ");
      console.log(`eqa sim record: seed ${summary.seed}: ${summary.steps} steps (${summary.failedActions} failed actions), ${summary.events} events, ${summary.frames} frames; ${tasks}; wrote ${summary.trajectory} and ${summary.framesDir}`);
      for (const t of failed) console.error(`gave up on "${t.description}": ${t.reason ?? "unknown"}`);
    });
  return sim;
}
