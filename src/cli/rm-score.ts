import { Command, Option } from "commander";
import { loadRewardInstances } from "../data/index.js";
import { AGGREGATIONS, TTS_PARAMS, formatRewardMetrics, planRewardScores, rmRunContract, scoreRewardInstances, type Aggregation } from "../reward/index.js";
import { REWARD_MODEL_ROLE, checkPriceFile } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { checkRun, defaultRunPath } from "../store/index.js";
import { addFrameOptions, addModelCallOptions, type FrameFlags, type ModelCallFlags, modelCallSettings, nonNegativeInteger, nonNegativeNumber, oneOf, openModelRuntime, outputDirectory, positiveInteger, resolveRoleModel } from "./options.js";
import { createProgress } from "./progress.js";
import { addBatchOptions, runBatch, type BatchFlags } from "./batch.js";

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

export function rmScoreCommand(): Command {
  const command = new Command("score")
    .description("score agents' responses with a generative reward model: critiques and 0-10 scores, K samples aggregated (resumable)")
    .requiredOption("--instances <file>", "reward-model instances (JSONL)")
    .addOption(new Option("--model <provider/model>", "the reward model, a vision-language model, e.g. openai/gpt-4o").env("EQA_RM_MODEL"))
    .option("--model-base-url <url>", "the reward model's endpoint")
    .option("--samples <k>", "K sampled critiques per instance (test-time scaling; temperature 0.8, top-p 0.9)", positiveInteger, 1)
    .addOption(new Option("--aggregate <method>", "vote (majority, ties broken by the mean) or mean").argParser(oneOf(AGGREGATIONS)).default("vote"))
    .option("--tolerance <tau>", "accuracy tolerance τ against ground-truth scores, score points (2 as the paper; fractions allowed)", nonNegativeNumber, 2)
    .option("--out <dir>", "run directory (default: runs/rm-score-DATE); an existing one resumes", outputDirectory)
    .option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
  addFrameOptions(command);
  addModelCallOptions(command);
  addBatchOptions(command);
  return command.action(async (flags: RmScoreFlags) => {
    const spec = resolveRoleModel(flags, "model");
    const file = await loadRewardInstances(flags.instances);
    checkPriceFile();
    const run = {
      file,
      model: { spec },
      samples: flags.samples,
      aggregate: flags.aggregate,
      params: TTS_PARAMS,
      ...(flags.frames ? { framesRoot: flags.frames } : {}),
      image: { maxSide: flags.imageSize, format: flags.imageFormat },
      outDir: flags.out ?? defaultRunPath("rm-score"),
      concurrency: flags.concurrency,
      tolerance: flags.tolerance,
      bootstrap: { seed: flags.bootstrapSeed },
    };
    // --batch: the reward model's requests answered through the batch API first, then read from the cache;
    // the folder is checked before the batch writes in it
    if (flags.batch) checkRun(rmRunContract(run));
    const batched = flags.batch ? await runBatch(flags, spec, REWARD_MODEL_ROLE, run.outDir, (collector) => planRewardScores(run, collector)) : undefined;
    const opened = batched?.opened ?? (await openModelRuntime(flags));
    const progress = createProgress("scoring");
    try {
      const result = await scoreRewardInstances({
        ...run,
        model: opened.runtime.model(spec, { role: REWARD_MODEL_ROLE }),
        usage: opened.runtime.usage,
        settings: { ...modelCallSettings(flags, opened.cachePath), ...(batched ? { batch: batched.report } : {}) },
        onProgress: (p) => progress.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : ""),
      });
      progress.stop();
      const c = result.summary.counts;
      console.log(`${spec.name}: ${c.scored}/${c.instances} instances scored (K = ${flags.samples}, ${flags.aggregate}); ${c.failedSamples} of ${c.samples} samples without a score`);
      if (result.summary.metrics) console.log(formatRewardMetrics(result.summary.metrics));
      console.log(`\n${formatRunCost(result.summary.cost)}`);
      console.log(`\nwrote ${result.runDir}/{evaluations.jsonl,scores.json,summary.json}`);
      process.exitCode = c.failed > 0 ? 1 : 0;
    } finally {
      progress.stop();
      opened.close();
    }
  });
}
