/** The flags `eqa rm score` and `eqa rm bench` share: the instances, the reward model, how its samples are aggregated and read, and the frames. */
import { Option, type Command } from "commander";
import { AGGREGATIONS, TTS_PARAMS, type Aggregation, type RmScoreSetup } from "../reward/index.js";
import { loadRewardInstances } from "../data/index.js";
import { nonNegativeInteger, nonNegativeNumber, oneOf } from "./options.js";
import { type ModelCallFlags, addFrameOptions, type FrameFlags } from "./model-options.js";
import type { BatchFlags } from "./batch.js";
import type { OptionPlacer, RoleFlags, RunSession } from "./lifecycle.js";

export interface RewardSamplingFlags extends ModelCallFlags, FrameFlags, BatchFlags {
  instances: string;
  model?: string;
  modelBaseUrl?: string;
  aggregate: Aggregation;
  tolerance: number;
  out?: string;
  bootstrapSeed: number;
}

/** The reward model's role, `--model` (or `EQA_RM_MODEL`). */
export function rewardModelRole(help: string): RoleFlags {
  return { role: "model", help, env: "EQA_RM_MODEL", baseUrlHelp: "the reward model's endpoint" };
}

/** Each command's words for the shared flags, and its own flags: `samples` after the model, `more` before `--out`. */
export interface RewardSamplingHelp {
  instances: string;
  aggregate: string;
  tolerance: string;
  samples: (command: Command) => void;
  more?: (command: Command) => void;
}

/** The shared flags in their order: instances, model, the command's samples, aggregate, tolerance, out, bootstrap seed, frames. */
export function addRewardSamplingOptions(command: Command, place: OptionPlacer, help: RewardSamplingHelp): void {
  command.requiredOption("--instances <file>", help.instances);
  place.role("model");
  help.samples(command);
  command
    .addOption(new Option("--aggregate <method>", help.aggregate).argParser(oneOf(AGGREGATIONS)).default("vote"))
    .option("--tolerance <tau>", help.tolerance, nonNegativeNumber, 2);
  help.more?.(command);
  place.out();
  command.option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
  addFrameOptions(command);
}

/** The reward model's sampling of the instances, K = `samples`, as the flags give it. */
export async function rewardSampling(session: RunSession<RewardSamplingFlags>, samples: number): Promise<RmScoreSetup & { samples: number }> {
  const { flags } = session;
  const spec = session.role("model");
  const file = await loadRewardInstances(flags.instances);
  return { file, model: { spec }, samples, params: TTS_PARAMS, ...(flags.frames ? { framesRoot: flags.frames } : {}), image: { maxSide: flags.imageSize, format: flags.imageFormat }, outDir: session.outDir };
}
