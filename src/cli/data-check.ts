import { Command } from "commander";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { checkOpenEqaFrames } from "../episodes/index.js";
import { formatFramesCheck } from "../report/index.js";
import { framesPath, positiveInteger } from "./options.js";
import { createProgress } from "./progress.js";

interface CheckFlags {
  frames: string;
  benchmark?: string;
  subset?: string;
  rgbd?: boolean;
  concurrency?: number;
}

/** `eqa data check openeqa`: are the episode histories the benchmark uses all there and readable? */
export function dataCheckCommand(): Command {
  const check = new Command("check").description("check that a benchmark's episode histories are complete");
  check
    .command("openeqa")
    .description("check OpenEQA's frame folders: every episode the benchmark (or --subset) uses is there, its frames run without a gap and decode; exit 0 when complete, 1 naming each missing or broken episode and frame")
    .requiredOption("--frames <dir>", "the frames folder (holding hm3d-v0/ and scannet-v0/)", framesPath)
    .option("--benchmark <file>", "OpenEQA benchmark (default: the one eqa data fetch openeqa wrote)")
    .option("--subset <file>", "only the episodes of these question ids (a JSON list, e.g. the A-EQA subset)")
    .option("--rgbd", "also require each frame's depth image and pose, and each episode's intrinsics (what the scene-graph agents and eqa memory build read)")
    .option("--concurrency <n>", "images decoded at once (default: the machine's cores)", positiveInteger)
    .action(async (flags: CheckFlags) => {
      const selection = await loadQuestionSelection({ ...(flags.benchmark ? { benchmark: flags.benchmark } : {}), ...(flags.subset ? { subset: flags.subset } : {}), defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      const progress = createProgress("images");
      let checks;
      try {
        checks = await checkOpenEqaFrames({
          frames: flags.frames,
          episodeHistories: selection.questions.map((q) => q.episodeHistory),
          rgbd: flags.rgbd ?? false,
          ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
          onProgress: (done, total) => progress.update(done, total, ""),
        });
      } finally {
        progress.stop();
      }
      process.stdout.write(formatFramesCheck(checks, flags.frames));
      if (checks.some((c) => c.problems.length > 0)) process.exitCode = 1;
    });
  return check;
}
