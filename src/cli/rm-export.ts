import { Command, Option } from "commander";
import { loadRewardInstances, type RewardInstanceFile } from "../data/index.js";
import { REWARD_MODEL_ROLE, ledgerCost, readCallLedger, type ModelSpec } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { TTS_PARAMS, VARIANTS, exportGrpo, exportRft, type Variant } from "../reward/index.js";
import { defaultRunPath } from "../store/index.js";
import { choiceList, nonNegativeInteger, nonNegativeNumber, outputDirectory, positiveInteger } from "./options.js";
import { type ModelCallFlags, addFrameOptions, type FrameFlags } from "./model-options.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";

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
  const rft = defineRunCommand<RftFlags, { spec: ModelSpec; file: RewardInstanceFile }>({
    name: "rft",
    path: "rm export rft",
    description: "N candidate evaluations per instance from an auxiliary model without the ground truth, kept per Eq. 1; chat JSONL for TRL and LLaMA-Factory",
    roles: [{ role: "model", env: "EQA_RM_MODEL", help: "the auxiliary evaluator R^aux", baseUrlHelp: "its endpoint" }],
    out: "own",
    options: (command, place) => {
      command.requiredOption("--instances <file>", "fine-tuning instances with ground-truth scores (JSONL)");
      place.role("model");
      command
        .option("--candidates <n>", "N_RFT, candidates per instance", positiveInteger, 8)
        .option("--tolerance <tau>", "τ: a candidate is correct when |s_gt − s| < τ, score points (2; fractions allowed)", nonNegativeNumber, 2)
        .option("--out <dir>", "output directory (default: runs/rm-rft-DATE); an existing one resumes", outputDirectory);
      addFrameOptions(command);
    },
    prepare: async (session) => ({ spec: session.role("model"), file: await loadRewardInstances(session.flags.instances) }),
    run: (inputs, session) => exportRftCandidates(session, inputs.spec, inputs.file),
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

/** RFT's candidates from the auxiliary model, kept per Eq. 1 and written as chat JSONL. */
async function exportRftCandidates(session: RunSession<RftFlags>, spec: ModelSpec, file: RewardInstanceFile): Promise<number> {
  const { flags } = session;
  const opened = await session.runtime();
  const progress = session.progress("candidates");
  const outDir = flags.out ?? defaultRunPath("rm-rft");
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
    settings: session.callSettings(opened),
    onProgress: (p) => progress.update(p.done, p.total, ""),
  });
  progress.stop();
  const c = summary.counts;
  console.log(`${c.kept} evaluations kept of ${c.candidates} candidates (${c.correct} correct; ${c.tooEasyInstances} instances too easy: all N correct)`);
  console.log(`\n${formatRunCost(ledgerCost(readCallLedger(outDir)))}\n`);
  console.log(wroteLine(outDir, ["rft.trl.jsonl", "rft.llamafactory.jsonl", "dataset_info.json", "images/", "rft-summary.json"]));
  return 0;
}
