import { Command, InvalidArgumentError } from "commander";
import { generateHome, writeHome } from "../sim/index.js";

function seedNumber(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError("expected a non-negative integer");
  return n;
}

export function simCommand(): Command {
  const sim = new Command("sim").description("the built-in household simulator");
  sim
    .command("home")
    .description("generate the home of a seed: home.json and a top-down plan.png")
    .requiredOption("--seed <n>", "the home's seed (a non-negative integer)", seedNumber)
    .requiredOption("--out <dir>", "the directory to write into")
    .action(async (flags: { seed: number; out: string }) => {
      const home = generateHome(flags.seed);
      const written = await writeHome(home, flags.out);
      const rooms = home.rooms.map((r) => r.type).join(", ");
      console.log(`eqa sim home: seed ${flags.seed}: ${home.rooms.length} rooms (${rooms}), ${home.doors.length} doors, ${home.objects.filter((o) => o.kind !== "structure").length} objects`);
      console.log(`wrote ${written.json} and ${written.png}`);
    });
  return sim;
}
