import { existsSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { UserError, writeFileAtomically } from "../core/index.js";
import { KNOWN_DATASETS, convertAEqa, defaultDatasetDir, defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { loadGroundTruthPathLengths } from "../eval/index.js";
import { outputFile } from "./options.js";

interface ConvertAEqaFlags {
  states: string;
  benchmark?: string;
  subset?: string;
  full?: boolean;
  gtPathLength?: string;
  python: string;
  out: string;
}

/** `eqa data convert a-eqa`: OpenEQA's A-EQA questions as an active-episodes file for `eqa explore --env habitat`. */
export function dataConvertCommand(): Command {
  const convert = new Command("convert").description("turn a benchmark into the files eqakit runs");
  convert
    .command("a-eqa")
    .description("OpenEQA's A-EQA questions as active episodes (HM3D scene, start pose from OpenEQA's agent-state files, ground-truth path length) for eqa explore --env habitat")
    .requiredOption("--states <dir>", "the folder holding hm3d-v0/<episode_history>/*.pkl (OpenEQA's open-eqa-hm3d-states-v0.tgz, unpacked)")
    .option("--benchmark <file>", "OpenEQA benchmark (default: the one eqa data fetch openeqa wrote)")
    .option("--subset <file>", "question ids to convert (default: the 184-question A-EQA subset eqa data fetch openeqa wrote)")
    .option("--full", "every HM3D question of the benchmark instead of a subset: A-EQA's full set (557 in OpenEQA v0), as EXPRESS-Bench's Table 1 ran Fine-EQA")
    .option("--gt-path-length <file>", "ground-truth path lengths in metres, {question_id: metres} (the 3D-Mem A-EQA evaluation's gt_path_length.json), for OpenEQA's efficiency E")
    .option("--python <path>", "the Python that reads the state files (standard library only)", "python3")
    .requiredOption("--out <file>", "the active-episodes file to write (JSON)", outputFile)
    .action(async (flags: ConvertAEqaFlags) => {
      if (flags.full && flags.subset) throw new UserError("--full converts every HM3D question: give it or --subset, not both", { field: "--full" });
      const subset = flags.full ? undefined : (flags.subset ?? join(defaultDatasetDir("openeqa"), KNOWN_DATASETS.openeqa!.files.subset!.name));
      if (subset !== undefined && !flags.subset && !existsSync(subset)) {
        throw new UserError("no subset given, and the A-EQA subset has not been downloaded", { file: subset }, "run `eqa data fetch openeqa`, or pass --subset FILE");
      }
      if (!existsSync(flags.states)) throw new UserError("no such folder", { file: flags.states, field: "--states" });
      const selection = await loadQuestionSelection({ ...(flags.benchmark ? { benchmark: flags.benchmark } : {}), ...(subset !== undefined ? { subset } : {}), defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      // A-EQA's questions are the benchmark's HM3D ones (ScanNet has no simulator state)
      const questions = flags.full ? selection.questions.filter((q) => q.episodeHistory.startsWith("hm3d-")) : selection.questions;
      const gtPathLengths = flags.gtPathLength ? await loadGroundTruthPathLengths(flags.gtPathLength) : undefined;
      const result = await convertAEqa({ questions, states: flags.states, python: flags.python, ...(gtPathLengths ? { gtPathLengths } : {}) });
      await writeFileAtomically(flags.out, `[\n${result.episodes.map((e) => JSON.stringify(e)).join(",\n")}\n]\n`);
      console.log(`wrote ${result.episodes.length} A-EQA episodes in ${result.scenes} HM3D scenes to ${flags.out}`);
      if (!gtPathLengths) console.log("no --gt-path-length: the episodes carry no ground-truth path length, so OpenEQA's efficiency E cannot be computed");
      else if (result.withoutGtPathLength.length > 0) console.log(`no ground-truth path length for ${result.withoutGtPathLength.length} question(s): ${result.withoutGtPathLength.join(", ")}`);
      console.log(`run them with: eqa explore --episodes ${flags.out} --env habitat --scenes HM3D_DIR --agent fine-eqa --model PROVIDER/MODEL`);
    });
  return convert;
}
