import { Command } from "commander";
import { mergeAnswerRuns, mergeExploreRuns } from "../agents/index.js";
import { UserError, runOfKind } from "../core/index.js";
import { mergeMixedRuns, mergeScoreRuns, writeExploreReliability } from "../eval/index.js";
import { formatAnswerSummary, formatMixedRun, formatRunCost, formatScoreSummary } from "../report/index.js";
import { readShardKind } from "../store/index.js";
import { outputDirectory } from "./options.js";

interface MergeFlags {
  out: string;
}

/** Each kind of sharded run: how it is merged, what is printed, which files are written, whether items failed. */
const MERGERS: Record<string, (dirs: string[], out: string) => Promise<{ text: string; files: string; failed: number }>> = {
  answer: async (dirs, out) => {
    const { summary } = await mergeAnswerRuns(dirs, out);
    return { text: formatAnswerSummary(summary), files: "traces.jsonl,predictions.json,summary.json,merge.json", failed: summary.counts.failed };
  },
  "llm-match": async (dirs, out) => {
    const { summary } = await mergeScoreRuns(dirs, out);
    // a judge that could not be read for more than a tenth of the questions fails the merged run as it fails one run
    const unreadable = summary.judgeUnreadable.overLimit ? summary.judgeUnreadable.count : 0;
    return { text: formatScoreSummary(summary), files: "judgements.jsonl,metrics.json,summary.json,merge.json", failed: summary.counts.failed + unreadable };
  },
  explore: async (dirs, out) => {
    const merged = await mergeExploreRuns(dirs, out);
    const s = await writeExploreReliability(merged.runDir, merged.summary, merged.records);
    const text = `eqa explore: ${s.counts.finished}/${s.counts.episodes} episodes finished, ${s.counts.failed} failed\n\n${formatRunCost(s.cost)}\n\njudgements of the shards (--judge) are not merged: judge the merged run with the same eqa explore command, --out the merged directory and --judge (its episodes are all reused)`;
    return { text, files: "episodes.jsonl,predictions.json,summary.json,merge.json,trajectories/,frames/", failed: s.counts.failed };
  },
  mixed: async (dirs, out) => {
    const merged = await mergeMixedRuns(dirs, out);
    return { text: formatMixedRun(merged, String(merged.summary.config.agent)), files: "mixed.jsonl,predictions.json,summary.json,merge.json,trajectories/,frames/", failed: merged.summary.counts.failed };
  },
};

export function mergeCommand(): Command {
  return new Command("merge")
    .description("join the run directories of the shards of one run (--shard i/n, or a Slurm job array) into one run directory, with the summary an unsharded run would have")
    .argument("<dir...>", "the shards' run directories, every shard of the run once")
    .requiredOption("--out <dir>", "the merged run directory (new or empty)", outputDirectory)
    .action(async (dirs: string[], flags: MergeFlags) => {
      const kind = await readShardKind(dirs[0]!);
      const merge = MERGERS[kind];
      if (!merge) throw new UserError(`holds ${runOfKind(kind)}, which eqa merge does not join`, { file: dirs[0]! }, `eqa merge joins ${Object.keys(MERGERS).join(", ")} runs`);
      const result = await merge(dirs, flags.out);
      console.log(result.text);
      console.log(`\nmerged ${dirs.length} shard(s); wrote ${flags.out}/{${result.files}}`);
      process.exitCode = result.failed > 0 ? 1 : 0;
    });
}
