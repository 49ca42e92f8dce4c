import { basename } from "node:path";
import { Command } from "commander";
import { UserError, type Question } from "../core/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection, unpackOpenEqaArchive } from "../data/index.js";
import { OPENEQA_SCANNET_MAX_FRAMES, SCANNET_PNG_COMPRESSION, prepareScanNetFrames, scanNetEpisodes } from "../episodes/index.js";
import { formatHm3dPrepare, formatOpenEqaSources, formatScanNetPrepare } from "../report/index.js";
import { OPENEQA_HM3D_RENDER, hm3dEpisodes, prepareHm3dFrames } from "../sim/index.js";
import { oneOf, outputDirectory, positiveInteger } from "./options.js";
import { createItemsProgress, createProgress } from "./progress.js";

interface PrepareFlags {
  out?: string;
  benchmark?: string;
  subset?: string;
  scannet?: string;
  hm3d?: string;
  states?: string;
  width: number;
  height: number;
  standin?: boolean;
  bridgePython: string;
  rgbOnly?: boolean;
  list?: boolean;
  archive?: string[];
  concurrency?: number;
  pngCompression: number;
}

/** zlib's levels, 0 (stored) to 9. */
const PNG_COMPRESSION_LEVELS = Array.from({ length: 10 }, (_, level) => String(level));

/** `eqa data prepare openeqa`: OpenEQA's episode histories from the user's own ScanNet and HM3D copies. */
export function dataPrepareCommand(): Command {
  const prepare = new Command("prepare").description("make a benchmark's episode histories from data you have");
  prepare
    .command("openeqa")
    .description(`OpenEQA's frame folders as its extract-frames.py scripts write them: ScanNet episodes from your .sens files (the first ${OPENEQA_SCANNET_MAX_FRAMES} frames), HM3D episodes rendered from OpenEQA's agent states in your HM3D scenes (colour, depth, poses, intrinsics)`)
    .option("--out <dir>", "the frames folder to write (episodes go to DIR/scannet-v0/<episode>/ and DIR/hm3d-v0/<episode>/, as --frames reads them)", outputDirectory)
    .option("--benchmark <file>", "OpenEQA benchmark (default: the one eqa data fetch openeqa wrote)")
    .option("--subset <file>", "only the episodes of these question ids (a JSON list, e.g. the A-EQA subset)")
    .option("--scannet <root>", "your ScanNet copy: the folder holding scans/ and scans_test/, as ScanNet's download-scannet.py -o lays them out")
    .option("--hm3d <root>", "your HM3D copy: the folder holding val/ (habitat-sim's datasets_download), under which the scene paths of the state files are found")
    .option("--states <dir>", "--hm3d: the folder holding hm3d-v0/<episode>/*.pkl, OpenEQA's agent states (open-eqa-hm3d-states-v0.tgz unpacked, e.g. by --archive)")
    .option("--width <px>", `--hm3d: frame width (default ${OPENEQA_HM3D_RENDER.width}, OpenEQA's)`, positiveInteger, OPENEQA_HM3D_RENDER.width)
    .option("--height <px>", `--hm3d: frame height (default ${OPENEQA_HM3D_RENDER.height}, OpenEQA's)`, positiveInteger, OPENEQA_HM3D_RENDER.height)
    .option("--bridge-python <path>", "--hm3d: the Python that has habitat-sim (it runs bridges/habitat/bridge.py)", "python3")
    .option("--standin", "--hm3d: render the Habitat bridge's stand-in grid world instead of habitat-sim (checks the path without habitat-sim; the frames are not HM3D's)")
    .option("--rgb-only", "colour frames only (extract-frames.py's --rgb-only): no depth, poses or intrinsics")
    .option("--archive <file...>", "OpenEQA's HM3D archives you already have (open-eqa-hm3d-frames-v0.tgz, open-eqa-hm3d-states-v0.tgz): checked against OpenEQA's published MD5 and unpacked into --out, resumable")
    .option("--list", "print the ScanNet scans and HM3D scenes the benchmark (or --subset) uses, with the command that downloads each scan; write nothing")
    .option("--png-compression <level>", "ScanNet: zlib level of the PNGs written, 0-9; 0 stores them uncompressed: the same pixels with less CPU and more disk", (v: string) => Number(oneOf(PNG_COMPRESSION_LEVELS)(v)), SCANNET_PNG_COMPRESSION)
    .option("--concurrency <n>", "ScanNet: frames decoded and written at once over all scans; HM3D: scenes rendered at once, one bridge process each (default: the machine's cores)", positiveInteger)
    .action(async (flags: PrepareFlags) => {
      checkFlags(flags);
      for (const archive of flags.list ? [] : (flags.archive ?? [])) await unpackArchive(archive, flags.out!);
      if (!flags.list && !flags.scannet && !flags.hm3d) return;
      const selection = await loadQuestionSelection({ ...(flags.benchmark ? { benchmark: flags.benchmark } : {}), ...(flags.subset ? { subset: flags.subset } : {}), defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      const histories = selection.questions.map((q) => q.episodeHistory);
      if (flags.list) {
        process.stdout.write(formatOpenEqaSources(histories, scanNetEpisodes(histories).map((e) => e.scan), flags.scannet));
        return;
      }
      const from = flags.subset ?? selection.benchmark.path;
      if (flags.scannet) await prepareScanNet(flags, selection.questions, from);
      if (flags.hm3d) await prepareHm3d(flags, histories, from);
    });
  return prepare;
}

function checkFlags(flags: PrepareFlags): void {
  if (flags.list) return;
  if (!flags.scannet && !flags.hm3d && !flags.archive) throw new UserError("nothing to prepare", { field: "--scannet" }, "give --scannet ROOT (your ScanNet copy), --hm3d ROOT --states DIR (your HM3D copy and OpenEQA's agent states), --archive FILE (OpenEQA's HM3D archive), or --list to see what the benchmark needs");
  if (!flags.out) throw new UserError("no output folder", { field: "--out" }, "give --out FRAMES: the folder that eqa answer --frames reads");
  if (flags.hm3d && !flags.states) throw new UserError("--hm3d needs --states", { field: "--states" }, "give --states DIR, the folder holding hm3d-v0/<episode>/*.pkl from OpenEQA's open-eqa-hm3d-states-v0.tgz (eqa data prepare openeqa --archive unpacks it)");
  if (!flags.hm3d && (flags.states || flags.standin)) throw new UserError(`${flags.states ? "--states" : "--standin"} goes with --hm3d`, { field: flags.states ? "--states" : "--standin" }, "give --hm3d ROOT to render OpenEQA's HM3D episodes");
}

async function unpackArchive(archive: string, out: string): Promise<void> {
  const progress = createProgress(basename(archive));
  let unpacked;
  try {
    unpacked = await unpackOpenEqaArchive(archive, out, { onProgress: (p) => progress.update(Math.round(p.bytes / 1e6), Math.round(p.total / 1e6), `MB ${p.stage}`) });
  } finally {
    progress.stop();
  }
  console.log(`${archive} (${unpacked.checked}): ${unpacked.written} files unpacked into ${out}, ${unpacked.kept} kept from before`);
}

async function prepareScanNet(flags: PrepareFlags, questions: readonly Question[], from: string): Promise<void> {
  const episodes = scanNetEpisodes(questions.map((q) => q.episodeHistory));
  if (episodes.length === 0) throw new UserError("the questions use no ScanNet episode", { file: from });
  const progress = createItemsProgress("frames");
  let outcomes;
  try {
    outcomes = await prepareScanNetFrames({
      episodes,
      scannetRoot: flags.scannet!,
      out: flags.out!,
      rgbOnly: flags.rgbOnly ?? false,
      pngCompression: flags.pngCompression,
      ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
      onProgress: (p) => {
        progress.overall(p.framesDone, p.frames, `scans ${p.scansDone}/${p.scans}${p.scansFailed > 0 ? ` (${p.scansFailed} failed)` : ""}`);
        if (p.scan) progress.item(p.scan.episodeHistory, p.scan.framesDone, p.scan.frames, p.scan.finished);
      },
    });
  } finally {
    progress.stop();
  }
  process.stdout.write(formatScanNetPrepare(outcomes, flags.out!));
  if (outcomes.some((o) => o.error !== undefined)) process.exitCode = 1;
}

async function prepareHm3d(flags: PrepareFlags, histories: readonly string[], from: string): Promise<void> {
  const episodes = hm3dEpisodes(histories);
  if (episodes.length === 0) throw new UserError("the questions use no HM3D episode", { file: from });
  const progress = createItemsProgress("frames");
  let outcomes;
  try {
    outcomes = await prepareHm3dFrames({
      episodes,
      states: flags.states!,
      hm3dRoot: flags.hm3d!,
      out: flags.out!,
      rgbOnly: flags.rgbOnly ?? false,
      width: flags.width,
      height: flags.height,
      python: flags.bridgePython,
      standin: flags.standin ?? false,
      ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
      onProgress: (p) => {
        progress.overall(p.framesDone, p.frames, `episodes ${p.episodesDone}/${p.episodes}${p.episodesFailed > 0 ? ` (${p.episodesFailed} failed)` : ""}`);
        if (p.episode) progress.item(p.episode.episodeHistory, p.episode.framesDone, p.episode.frames, p.episode.finished);
      },
    });
  } finally {
    progress.stop();
  }
  process.stdout.write(formatHm3dPrepare(outcomes, flags.out!));
  if (outcomes.some((o) => o.error !== undefined)) process.exitCode = 1;
}
