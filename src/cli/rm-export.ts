import { Command, Option } from "commander";
import { loadRewardInstances } from "../data/index.js";
import { REWARD_MODEL_ROLE, ledgerCost, readCallLedger } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { TTS_PARAMS, VARIANTS, exportGrpo, exportRft, type Variant } from "../reward/index.js";
import { defaultRunPath } from "../store/index.js";
import { addFrameOptions, addModelCallOptions, choiceList, type FrameFlags, type ModelCallFlags, modelCallSettings, nonNegativeInteger, nonNegativeNumber, openModelRuntime, outputDirectory, positiveInteger, resolveRoleModel } from "./options.js";
import { createProgress } from "./progress.js";

interface RftFlags extends ModelCallFlags, FrameFlags {
  instances: string;
  model?: string;
  modelBaseUrl?: string;
  candidates: number;
  tolerance: number;
  out?: string;
}

interface GrpoFlags extends FrameFlags {
  instances: string;
  seed: number;
  variants: Variant[];
  out?: string;
}


export function rmExportCommand(): Command {
  const command = new Command("export").description("training data for a reward model: rejective fine-tuning (Eq. 1) or C-GRPO prompt sets");
  const rft = new Command("rft")
    .description("N candidate evaluations per instance from an auxiliary model without the ground truth, kept per Eq. 1; chat JSONL for TRL and LLaMA-Factory")
    .requiredOption("--instances <file>", "fine-tuning instances with ground-truth scores (JSONL)")
    .addOption(new Option("--model <provider/model>", "the auxiliary evaluator R^aux").env("EQA_RM_MODEL"))
    .option("--model-base-url <url>", "its endpoint")
    .option("--candidates <n>", "N_RFT, candidates per instance", positiveInteger, 8)
    .option("--tolerance <tau>", "τ: a candidate is correct when |s_gt − s| < τ, score points (2; fractions allowed)", nonNegativeNumber, 2)
    .option("--out <dir>", "output directory (default: runs/rm-rft-DATE); an existing one resumes", outputDirectory);
  addFrameOptions(rft);
  addModelCallOptions(rft);
  rft.action(async (flags: RftFlags) => {
    const spec = resolveRoleModel(flags, "model");
    const file = await loadRewardInstances(flags.instances);
    const opened = await openModelRuntime(flags);
    const progress = createProgress("candidates");
    const outDir = flags.out ?? defaultRunPath("rm-rft");
    try {
      const summary = await exportRft({
        file,
        model: opened.runtime.model(spec, { role: REWARD_MODEL_ROLE }),
        candidates: flags.candidates,
        tolerance: flags.tolerance,
        params: TTS_PARAMS,
        ...(flags.frames ? { framesRoot: flags.frames } : {}),
        image: { maxSide: flags.imageSize, format: flags.imageFormat },
        outDir,
        concurrency: flags.concurrency,
        usage: opened.runtime.usage,
        settings: modelCallSettings(flags, opened.cachePath),
        onProgress: (p) => progress.update(p.done, p.total, ""),
      });
      progress.stop();
      const c = summary.counts;
      console.log(`${c.kept} evaluations kept of ${c.candidates} candidates (${c.correct} correct; ${c.tooEasyInstances} instances too easy: all N correct)`);
      console.log(`\n${formatRunCost(ledgerCost(readCallLedger(outDir)))}\n`);
      console.log(`wrote ${outDir}/{rft.trl.jsonl,rft.llamafactory.jsonl,dataset_info.json,images/,rft-summary.json}`);
    } finally {
      progress.stop();
      opened.close();
    }
  });
  const grpo = new Command("grpo")
    .description("C-GRPO prompts: each instance original, with keyframes shuffled, with 15% of 16×16 patches masked, with reasoning steps permuted (seeded)")
    .requiredOption("--instances <file>", "fine-tuning instances with ground-truth scores (JSONL)")
    .option("--seed <n>", "seed of the augmentations", nonNegativeInteger, 0)
    .option("--variants <list>", "comma-separated variants", choiceList("variant", VARIANTS), [...VARIANTS])
    .option("--out <dir>", "output directory (default: runs/rm-grpo-DATE)", outputDirectory);
  addFrameOptions(grpo);
  grpo.action(async (flags: GrpoFlags) => {
    const file = await loadRewardInstances(flags.instances);
    const outDir = flags.out ?? defaultRunPath("rm-grpo");
    const result = await exportGrpo({
      file,
      ...(flags.frames ? { framesRoot: flags.frames } : {}),
      image: { maxSide: flags.imageSize, format: flags.imageFormat },
      outDir,
      seed: flags.seed,
      variants: flags.variants,
    });
    console.log(`${result.records} prompts${result.skipped > 0 ? ` (${result.skipped} instances without a ground-truth score left out)` : ""}\nwrote ${result.path} and ${outDir}/images/`);
  });
  return command.addCommand(rft).addCommand(grpo);
}
