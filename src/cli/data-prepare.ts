import { basename } from "node:path";
import { Command } from "commander";
import { UserError } from "../core/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection, unpackOpenEqaArchive } from "../data/index.js";
import { OPENEQA_SCANNET_MAX_FRAMES, prepareScanNetFrames, scanNetEpisodes } from "../episodes/index.js";
import { formatOpenEqaSources, formatScanNetPrepare } from "../report/index.js";
import { outputDirectory, positiveInteger } from "./options.js";
import { createProgress } from "./progress.js";

interface PrepareFlags {
  out?: string;
  benchmark?: string;
  subset?: string;
  scannet?: string;
  rgbOnly?: boolean;
  list?: boolean;
  archive?: string[];
  concurrency?: number;
}

/** `eqa data prepare openeqa`: OpenEQA's episode histories from the user's own ScanNet copy. */
export function dataPrepareCommand(): Command {
  const prepare = new Command("prepare").description("make a benchmark's episode histories from data you have");
  prepare
    .command("openeqa")
    .description(`OpenEQA's frame folders as its extract-frames.py writes them: ScanNet episodes from your .sens files (the first ${OPENEQA_SCANNET_MAX_FRAMES} frames, colour, depth, poses, intrinsics)`)
    .option("--out <dir>", "the frames folder to write (episodes go to DIR/scannet-v0/<episode>/, as --frames reads them)", outputDirectory)
    .option("--benchmark <file>", "OpenEQA benchmark (default: the one eqa data fetch openeqa wrote)")
    .option("--subset <file>", "only the episodes of these question ids (a JSON list, e.g. the A-EQA subset)")
    .option("--scannet <root>", "your ScanNet copy: the folder holding scans/ and scans_test/, as ScanNet's download-scannet.py -o lays them out")
    .option("--rgb-only", "colour frames only (extract-frames.py's --rgb-only): no depth, poses or intrinsics")
    .option("--archive <file...>", "OpenEQA's HM3D archives you already have (open-eqa-hm3d-frames-v0.tgz, open-eqa-hm3d-states-v0.tgz): checked against OpenEQA's published MD5 and unpacked into --out, resumable")
    .option("--list", "print the ScanNet scans and HM3D scenes the benchmark (or --subset) uses, with the command that downloads each scan; write nothing")
    .option("--concurrency <n>", "frames decoded and written at once over all scans (default: the machine's cores)", positiveInteger)
    .action(async (flags: PrepareFlags) => {
      if (!flags.list) {
        if (!flags.scannet && !flags.archive) throw new UserError("nothing to prepare", { field: "--scannet" }, "give --scannet ROOT (your ScanNet copy), --archive FILE (OpenEQA's HM3D archive), or --list to see what the benchmark needs");
        if (!flags.out) throw new UserError("no output folder", { field: "--out" }, "give --out FRAMES: the folder that eqa answer --frames reads");
      }
      for (const archive of flags.list ? [] : (flags.archive ?? [])) {
        const progress = createProgress(basename(archive));
        let unpacked;
        try {
          unpacked = await unpackOpenEqaArchive(archive, flags.out!, { onProgress: (p) => progress.update(Math.round(p.bytes / 1e6), Math.round(p.total / 1e6), `MB ${p.stage}`) });
        } finally {
          progress.stop();
        }
        console.log(`${archive} (${unpacked.checked}): ${unpacked.written} files unpacked into ${flags.out}, ${unpacked.kept} kept from before`);
      }
      if (!flags.list && !flags.scannet) return;
      const selection = await loadQuestionSelection({ ...(flags.benchmark ? { benchmark: flags.benchmark } : {}), ...(flags.subset ? { subset: flags.subset } : {}), defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      const histories = selection.questions.map((q) => q.episodeHistory);
      const episodes = scanNetEpisodes(histories);
      if (flags.list || !flags.scannet || !flags.out) {
        process.stdout.write(formatOpenEqaSources(histories, episodes.map((e) => e.scan), flags.scannet));
        return;
      }
      if (episodes.length === 0) throw new UserError("the questions use no ScanNet episode", { file: flags.subset ?? selection.benchmark.path });
      const progress = createProgress("frames");
      let outcomes;
      try {
        outcomes = await prepareScanNetFrames({
          episodes,
          scannetRoot: flags.scannet,
          out: flags.out,
          rgbOnly: flags.rgbOnly ?? false,
          ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
          onProgress: (p) => progress.update(p.framesDone, p.frames, `scans ${p.scansDone}/${p.scans}${p.scansFailed > 0 ? ` (${p.scansFailed} failed)` : ""}`),
        });
      } finally {
        progress.stop();
      }
      process.stdout.write(formatScanNetPrepare(outcomes, flags.out));
      if (outcomes.some((o) => o.error !== undefined)) process.exitCode = 1;
    });
  return prepare;
}
