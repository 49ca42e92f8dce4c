import { Command, InvalidArgumentError, Option } from "commander";
import { rmBenchCommand } from "./rm-bench.js";
import { rmBuildCommand, rmReviewCommand } from "./rm-build.js";
import { rmExportCommand } from "./rm-export.js";
import { rmScoreCommand } from "./rm-score.js";
import { rmServeCommand } from "./rm-serve.js";
import { framesPath, oneOf, positiveInteger } from "./options.js";

/** `eqa rm …`: reward models for EQA (EQA-RM). */
export function rmCommand(): Command {
  const command = new Command("rm").description("reward models for EQA (EQA-RM): build a benchmark, score, benchmark, export training data, serve C-GRPO rewards");
  for (const sub of [rmBuildCommand(), rmReviewCommand(), rmScoreCommand(), rmBenchCommand(), rmExportCommand(), rmServeCommand()]) command.addCommand(sub);
  return command;
}

/** Flags of the commands that show keyframes to a model. */
export interface FrameFlags {
  frames?: string;
  imageSize: number;
  imageFormat: "png" | "jpeg";
}

export function addFrameOptions(command: Command): Command {
  return command
    .option("--frames <dir>", "episode histories: a folder of <episode_history> folders or videos (instances with their own frames path need none)", framesPath)
    .option("--image-size <pixels>", "longest side of the keyframes sent", positiveInteger, 512)
    .addOption(new Option("--image-format <format>", "png or jpeg").argParser(oneOf(["png", "jpeg"] as const)).default("png"));
}

export function finiteNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError("expected a number");
  return n;
}
