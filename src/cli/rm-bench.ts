import { Command, Option } from "commander";
import { loadRewardInstances } from "../data/index.js";
import { AGGREGATIONS, CURVES_PNG, SCALING_KS, TTS_PARAMS, benchRewardModel, formatRewardMetrics, planRewardScores, rmRunContract, type Aggregation, type RmSamplePlan } from "../reward/index.js";
import { REWARD_MODEL_ROLE, checkPriceFile } from "../models/index.js";
import { addBatchOptions, runBatch, type BatchFlags } from "./batch.js";
import { formatCallPlan, formatRunCost } from "../report/index.js";
import { RUN_KIND, checkRun, defaultRunPath } from "../store/index.js";
import { addFrameOptions, addModelCallOptions, type FrameFlags, type ModelCallFlags, modelCallSettings, nonNegativeInteger, nonNegativeNumber, oneOf, openModelRuntime, outputDirectory, positiveInteger, powerOfTwo, resolveRoleModel } from "./options.js";
import { createProgress } from "./progress.js";
import { addDryRunOption, openCallPlan, type DryRunFlags } from "./dry-run.js";

interface RmBenchFlags extends ModelCallFlags, FrameFlags, DryRunFlags, BatchFlags {
  instances: string;
  model?: string;
  modelBaseUrl?: string;
  maxK: number;
  aggregate: Aggregation;
  tolerance: number;
  resamples: number;
  out?: string;
  bootstrapSeed: number;
}

export function rmBenchCommand(): Command {
  const command = new Command("bench")
    .description("benchmark a reward model against ground-truth scores at K = 1, 2, 4, … 32 from one set of shared samples; draws the scaling curves")
    .requiredOption("--instances <file>", "benchmark instances with ground-truth scores (JSONL)")
    .addOption(new Option("--model <provider/model>", "the reward model").env("EQA_RM_MODEL"))
    .option("--model-base-url <url>", "the reward model's endpoint")
    .option("--max-k <k>", "the largest K, a power of two (32 as the paper's Fig. 3)", powerOfTwo, 32)
    .addOption(new Option("--aggregate <method>", "the aggregation plotted (both are in bench.json)").argParser(oneOf(AGGREGATIONS)).default("vote"))
    .option("--tolerance <tau>", "accuracy tolerance τ, score points (2 as the paper; fractions allowed)", nonNegativeNumber, 2)
    .option("--resamples <n>", "bootstrap resamples", positiveInteger, 2000)
    .option("--out <dir>", "run directory (default: runs/rm-bench-DATE); an existing one resumes", outputDirectory)
    .option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
  addFrameOptions(command);
  addModelCallOptions(command);
  addDryRunOption(command);
  addBatchOptions(command);
  return command.action(async (flags: RmBenchFlags) => {
    const spec = resolveRoleModel(flags, "model");
    const file = await loadRewardInstances(flags.instances);
    const ks = SCALING_KS.filter((k) => k <= flags.maxK);
    if (!ks.includes(flags.maxK)) ks.push(flags.maxK);
    const outDir = flags.out ?? defaultRunPath("rm-bench");
    // the reward model's K samples of every instance, as the dry run, the batch and the run ask for them
    const sampling = { file, model: { spec }, samples: flags.maxK, params: TTS_PARAMS, ...(flags.frames ? { framesRoot: flags.frames } : {}), image: { maxSide: flags.imageSize, format: flags.imageFormat }, outDir };
    if (flags.dryRun) {
      const opened = await openCallPlan(flags);
      try {
        const planned = await planRewardScores(sampling, opened.plan);
        console.log(formatCallPlan(opened.plan.roles(), rewardPlanNotes(planned, flags.maxK, outDir)));
      } finally {
        opened.close();
      }
      return;
    }
    checkPriceFile();
    // --batch: the reward model's samples answered through the batch API first, then read from the cache;
    // the folder is checked before the batch writes in it
    if (flags.batch) checkRun(rmRunContract({ ...sampling, aggregate: flags.aggregate, tolerance: flags.tolerance, runKind: RUN_KIND["rm-bench"], runSettings: { ks } }));
    const batched = flags.batch ? await runBatch(flags, spec, REWARD_MODEL_ROLE, outDir, (collector) => planRewardScores(sampling, collector)) : undefined;
    const opened = batched?.opened ?? (await openModelRuntime(flags));
    const progress = createProgress("sampling");
    try {
      const result = await benchRewardModel({
        ...sampling,
        model: opened.runtime.model(spec, { role: REWARD_MODEL_ROLE }),
        ks,
        aggregate: flags.aggregate,
        concurrency: flags.concurrency,
        tolerance: flags.tolerance,
        bootstrap: { seed: flags.bootstrapSeed, resamples: flags.resamples },
        usage: opened.runtime.usage,
        settings: { ...modelCallSettings(flags, opened.cachePath), ...(batched ? { batch: batched.report } : {}) },
        onProgress: (p) => progress.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : ""),
      });
      progress.stop();
      const byK = result.summary.scaling[flags.aggregate];
      console.log(`${spec.name}: ${result.summary.counts.instances} instances, ${result.summary.counts.samples} samples (${result.summary.counts.failedSamples} without a score)\n`);
      console.log(`K     ${"Overall Acc".padEnd(12)} Overall RMSE`);
      for (const k of ks) {
        const m = byK[String(k)]!;
        console.log(`${String(k).padEnd(5)} ${m.overall.accuracy.value.toFixed(2).padEnd(12)} ${m.overall.rmse.value.toFixed(3)}`);
      }
      console.log(`\nat K = ${ks[ks.length - 1]} (${flags.aggregate}):\n${formatRewardMetrics(byK[String(ks[ks.length - 1])]!)}`);
      console.log(`\n${formatRunCost(result.summary.cost)}`);
      console.log(`\nwrote ${result.runDir}/{evaluations.jsonl,bench.json,${CURVES_PNG},scaling-curves.svg}`);
    } finally {
      progress.stop();
      opened.close();
    }
  });
}

/** What a dry run of the reward model's samples says beside its table: instances to resume, K, and what the Ks below it cost. */
export function rewardPlanNotes(planned: RmSamplePlan, maxK: number, outDir: string): string[] {
  return [
    `${planned.instances} instance(s): ${planned.reused} already sampled in ${outDir}, ${planned.pending} to sample, ${maxK} sample(s) each (${planned.calls} call(s))`,
    ...(maxK > 1 ? [`K = 1 … ${maxK} are scored from the same ${maxK} samples per instance: the smaller Ks cost no call of their own`] : []),
  ];
}
