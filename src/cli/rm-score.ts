import { Option } from "commander";
import { loadRewardInstances } from "../data/index.js";
import { AGGREGATIONS, TTS_PARAMS, formatRewardMetrics, planRewardScores, rmRunContract, scoreRewardInstances, type Aggregation, type RmScoreSetup } from "../reward/index.js";
import { REWARD_MODEL_ROLE } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { checkRun } from "../store/index.js";
import { addFrameOptions, type FrameFlags, type ModelCallFlags, nonNegativeInteger, nonNegativeNumber, oneOf, positiveInteger } from "./options.js";
import type { BatchFlags } from "./batch.js";
import { defineRunCommand, wroteLine } from "./lifecycle.js";

interface RmScoreFlags extends ModelCallFlags, FrameFlags, BatchFlags {
  instances: string;
  model?: string;
  modelBaseUrl?: string;
  samples: number;
  aggregate: Aggregation;
  tolerance: number;
  out?: string;
  bootstrapSeed: number;
}

/** The reward model's run of `eqa rm score`, as its flags give it. */
type RmScoreRun = RmScoreSetup;

export function rmScoreCommand() {
  return defineRunCommand<RmScoreFlags, RmScoreRun>({
    name: "score",
    path: "rm score",
    description: "score agents' responses with a generative reward model: critiques and 0-10 scores, K samples aggregated (resumable)",
    roles: [{ role: "model", help: "the reward model, a vision-language model, e.g. openai/gpt-4o", env: "EQA_RM_MODEL", baseUrlHelp: "the reward model's endpoint" }],
    batch: true,
    options: (command, place) => {
      command.requiredOption("--instances <file>", "reward-model instances (JSONL)");
      place.role("model");
      command
        .option("--samples <k>", "K sampled critiques per instance (test-time scaling; temperature 0.8, top-p 0.9)", positiveInteger, 1)
        .addOption(new Option("--aggregate <method>", "vote (majority, ties broken by the mean) or mean").argParser(oneOf(AGGREGATIONS)).default("vote"))
        .option("--tolerance <tau>", "accuracy tolerance τ against ground-truth scores, score points (2 as the paper; fractions allowed)", nonNegativeNumber, 2);
      place.out();
      command.option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
      addFrameOptions(command);
    },
    prepare: async (session) => {
      const { flags } = session;
      const spec = session.role("model");
      const file = await loadRewardInstances(flags.instances);
      return {
        file,
        model: { spec },
        samples: flags.samples,
        aggregate: flags.aggregate,
        params: TTS_PARAMS,
        ...(flags.frames ? { framesRoot: flags.frames } : {}),
        image: { maxSide: flags.imageSize, format: flags.imageFormat },
        outDir: session.outDir,
        concurrency: flags.concurrency,
        tolerance: flags.tolerance,
        bootstrap: { seed: flags.bootstrapSeed },
      };
    },
    run: async (run, session) => {
      const { flags } = session;
      // --batch: the reward model's requests answered through the batch API first, then read from the cache;
      // the folder is checked before the batch writes in it
      if (flags.batch) checkRun(rmRunContract(run));
      const batched = flags.batch ? await session.batch(run.model.spec, REWARD_MODEL_ROLE, run.outDir, (collector) => planRewardScores(run, collector)) : undefined;
      const opened = batched ?? (await session.runtime());
      const progress = session.progress("scoring");
      const result = await scoreRewardInstances({
        ...run,
        model: opened.runtime.model(run.model.spec, { role: REWARD_MODEL_ROLE }),
        usage: opened.runtime.usage,
        settings: { ...session.callSettings(opened), ...(batched ? { batch: batched.report } : {}) },
        onProgress: (p) => progress.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : ""),
      });
      progress.stop();
      const c = result.summary.counts;
      console.log(`${run.model.spec.name}: ${c.scored}/${c.instances} instances scored (K = ${flags.samples}, ${flags.aggregate}); ${c.failedSamples} of ${c.samples} samples without a score`);
      if (result.summary.metrics) console.log(formatRewardMetrics(result.summary.metrics));
      console.log(`\n${formatRunCost(result.summary.cost)}`);
      console.log(wroteLine(result.runDir, ["evaluations.jsonl", "scores.json", "summary.json"], { blank: true }));
      return c.failed > 0 ? 1 : 0;
    },
  });
}
