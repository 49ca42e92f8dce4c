import { Command } from "commander";
import { rmBenchCommand } from "./rm-bench.js";
import { rmBuildCommand, rmReviewCommand } from "./rm-build.js";
import { rmExportCommand } from "./rm-export.js";
import { rmScoreCommand } from "./rm-score.js";
import { rmServeCommand } from "./rm-serve.js";

/** `eqa rm …`: reward models for EQA (EQA-RM). */
export function rmCommand(): Command {
  const command = new Command("rm").description("reward models for EQA (EQA-RM): build a benchmark, score, benchmark, export training data, serve C-GRPO rewards");
  for (const sub of [rmBuildCommand(), rmReviewCommand(), rmScoreCommand(), rmBenchCommand(), rmExportCommand(), rmServeCommand()]) command.addCommand(sub);
  return command;
}
