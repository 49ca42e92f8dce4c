import { Command, InvalidArgumentError } from "commander";
import { choiceList, nonNegativeInteger, outputDirectory, positiveInteger, unitInterval } from "./options.js";
import { TASK_TYPES, generateHome, recordTask, writeHome, type TaskType } from "../sim/index.js";

function fieldOfView(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 180)) throw new InvalidArgumentError("expected degrees between 0 and 180");
  return n;
}

const taskList = choiceList("task", [...TASK_TYPES, "random"] as const);

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
    .requiredOption("--seed <n>", "the home's seed (a non-negative integer)", nonNegativeInteger)
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
    .requiredOption("--seed <n>", "the home's seed (a non-negative integer)", nonNegativeInteger)
    .requiredOption("--task <types>", `tasks in order, comma-separated: ${TASK_TYPES.join(", ")}, or random`, taskList)
    .requiredOption("--out <dir>", "the directory to write into", outputDirectory)
    .option("--width <px>", "image width", positiveInteger, 640)
    .option("--height <px>", "image height", positiveInteger, 480)
    .option("--hfov <degrees>", "horizontal field of view", fieldOfView, 90)
    .option("--min-steps <n>", "keep walking and looking around until this many steps", nonNegativeInteger, 0)
    .option("--failure-rate <p>", "chance of a failed action or detour at each occasion", unitInterval, 0.15)
    .action(async (flags: RecordFlags) => {
      const summary = await recordTask({ seed: flags.seed, tasks: flags.task, out: flags.out, width: flags.width, height: flags.height, hfovDeg: flags.hfov, minSteps: flags.minSteps, failureRate: flags.failureRate });
      const failed = summary.tasks.filter((t) => !t.done);
      const tasks = summary.tasks.map((t) => `${t.description}${t.done ? "" : " (gave up)"}`).join("; ");
      console.log(`eqa sim record: seed ${summary.seed}: ${summary.steps} steps (${summary.failedActions} failed actions), ${summary.events} events, ${summary.frames} frames; ${tasks}; wrote ${summary.trajectory} and ${summary.framesDir}`);
      for (const t of failed) console.error(`gave up on "${t.description}": ${t.reason ?? "unknown"}`);
    });
  return sim;
}
