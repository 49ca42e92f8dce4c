import { Option } from "commander";
import { loadRewardInstances } from "../data/index.js";
import { AGGREGATIONS, CURVES_PNG, SCALING_KS, TTS_PARAMS, benchRewardModel, formatRewardMetrics, planRewardScores, rmRunContract, type Aggregation, type RmSamplePlan } from "../reward/index.js";
import { REWARD_MODEL_ROLE } from "../models/index.js";
import type { BatchFlags } from "./batch.js";
import { formatRunCost } from "../report/index.js";
import { RUN_KIND, checkRun } from "../store/index.js";
import { addFrameOptions, type FrameFlags, type ModelCallFlags, nonNegativeInteger, nonNegativeNumber, oneOf, positiveInteger, powerOfTwo } from "./options.js";
import type { DryRunFlags } from "./dry-run.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";

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

/** The reward model's K samples of every instance, as the dry run, the batch and the run ask for them. */
interface RmBenchRun {
  sampling: Parameters<typeof planRewardScores>[0];
  ks: number[];
}

export function rmBenchCommand() {
  return defineRunCommand<RmBenchFlags, RmBenchRun>({
    name: "bench",
    path: "rm bench",
    description: "benchmark a reward model against ground-truth scores at K = 1, 2, 4, … 32 from one set of shared samples; draws the scaling curves",
    roles: [{ role: "model", help: "the reward model", env: "EQA_RM_MODEL", baseUrlHelp: "the reward model's endpoint" }],
    dryRun: true,
    batch: true,
    options: (command, place) => {
      command.requiredOption("--instances <file>", "benchmark instances with ground-truth scores (JSONL)");
      place.role("model");
      command
        .option("--max-k <k>", "the largest K, a power of two (32 as the paper's Fig. 3)", powerOfTwo, 32)
        .addOption(new Option("--aggregate <method>", "the aggregation plotted (both are in bench.json)").argParser(oneOf(AGGREGATIONS)).default("vote"))
        .option("--tolerance <tau>", "accuracy tolerance τ, score points (2 as the paper; fractions allowed)", nonNegativeNumber, 2)
        .option("--resamples <n>", "bootstrap resamples", positiveInteger, 2000);
      place.out();
      command.option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0);
      addFrameOptions(command);
    },
    prepare: async (session) => {
      const { flags, outDir } = session;
      const spec = session.role("model");
      const file = await loadRewardInstances(flags.instances);
      const ks = SCALING_KS.filter((k) => k <= flags.maxK);
      if (!ks.includes(flags.maxK)) ks.push(flags.maxK);
      return { ks, sampling: { file, model: { spec }, samples: flags.maxK, params: TTS_PARAMS, ...(flags.frames ? { framesRoot: flags.frames } : {}), image: { maxSide: flags.imageSize, format: flags.imageFormat }, outDir } };
    },
    plan: async ({ sampling }, plan, { flags, outDir }) => {
      return rewardPlanNotes(await planRewardScores(sampling, plan), flags.maxK, outDir);
    },
    run: runBench,
  });
}

async function runBench({ sampling, ks }: RmBenchRun, session: RunSession<RmBenchFlags>): Promise<number> {
  const { flags, outDir } = session;
  const spec = sampling.model.spec;
  // --batch: the reward model's samples answered through the batch API first, then read from the cache;
  // the folder is checked before the batch writes in it
  if (flags.batch) checkRun(rmRunContract({ ...sampling, aggregate: flags.aggregate, tolerance: flags.tolerance, runKind: RUN_KIND["rm-bench"], runSettings: { ks } }));
  const batched = flags.batch ? await session.batch(spec, REWARD_MODEL_ROLE, outDir, (collector) => planRewardScores(sampling, collector)) : undefined;
  const opened = batched ?? (await session.runtime());
  const progress = session.progress("sampling");
  const result = await benchRewardModel({
    ...sampling,
    model: opened.runtime.model(spec, { role: REWARD_MODEL_ROLE }),
    ks,
    aggregate: flags.aggregate,
    concurrency: flags.concurrency,
    tolerance: flags.tolerance,
    bootstrap: { seed: flags.bootstrapSeed, resamples: flags.resamples },
    usage: opened.runtime.usage,
    settings: { ...session.callSettings(opened), ...(batched ? { batch: batched.report } : {}) },
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
  console.log(wroteLine(result.runDir, ["evaluations.jsonl", "bench.json", CURVES_PNG, "scaling-curves.svg"], { blank: true }));
  return 0;
}

/** What a dry run of the reward model's samples says beside its table: instances to resume, K, and what the Ks below it cost. */
export function rewardPlanNotes(planned: RmSamplePlan, maxK: number, outDir: string): string[] {
  return [
    `${planned.instances} instance(s): ${planned.reused} already sampled in ${outDir}, ${planned.pending} to sample, ${maxK} sample(s) each (${planned.calls} call(s))`,
    ...(maxK > 1 ? [`K = 1 … ${maxK} are scored from the same ${maxK} samples per instance: the smaller Ks cost no call of their own`] : []),
  ];
}
