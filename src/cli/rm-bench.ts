import { CURVES_PNG, SCALING_KS, benchRewardModel, formatRewardMetrics, planRewardScores, rmRunContract, type RmSamplePlan } from "../reward/index.js";
import { REWARD_MODEL_ROLE } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { RUN_KIND } from "../store/index.js";
import { positiveInteger, powerOfTwo } from "./options.js";
import type { DryRunFlags } from "./dry-run.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";
import { addRewardSamplingOptions, rewardModelRole, rewardSampling, type RewardSamplingFlags } from "./rm-flags.js";

interface RmBenchFlags extends RewardSamplingFlags, DryRunFlags {
  maxK: number;
  resamples: number;
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
    roles: [rewardModelRole("the reward model")],
    dryRun: true,
    batch: true,
    options: (command, place) =>
      addRewardSamplingOptions(command, place, {
        instances: "benchmark instances with ground-truth scores (JSONL)",
        samples: (c) => c.option("--max-k <k>", "the largest K, a power of two (32 as the paper's Fig. 3)", powerOfTwo, 32),
        aggregate: "the aggregation plotted (both are in bench.json)",
        tolerance: "accuracy tolerance τ, score points (2 as the paper; fractions allowed)",
        more: (c) => c.option("--resamples <n>", "bootstrap resamples", positiveInteger, 2000),
      }),
    prepare: async (session) => {
      const { flags } = session;
      const ks = SCALING_KS.filter((k) => k <= flags.maxK);
      if (!ks.includes(flags.maxK)) ks.push(flags.maxK);
      return { ks, sampling: await rewardSampling(session, flags.maxK) };
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
  // --batch: the reward model's samples answered through the batch API first, then read from the cache
  const contract = () => rmRunContract({ ...sampling, aggregate: flags.aggregate, tolerance: flags.tolerance, runKind: RUN_KIND["rm-bench"], runSettings: { ks } });
  const { opened, batched } = await session.runtimeOrBatch(spec, REWARD_MODEL_ROLE, outDir, contract, (collector) => planRewardScores(sampling, collector));
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
