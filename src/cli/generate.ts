import { Command } from "commander";
import { generateMixedCommand } from "./generate-mixed.js";
import { generateTagCommand } from "./generate-tag.js";

/** `eqa generate`: its subcommands, each in a file of its own. */
export function generateCommand(): Command {
  return new Command("generate").description("generate benchmark data from trajectory logs").addCommand(generateTagCommand()).addCommand(generateMixedCommand());
}
