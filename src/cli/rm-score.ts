import { formatRewardMetrics, planRewardScores, rmRunContract, scoreRewardInstances, type RmScoreSetup } from "../reward/index.js";
import { REWARD_MODEL_ROLE } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { positiveInteger } from "./options.js";
import { defineRunCommand, wroteLine } from "./lifecycle.js";
import { addRewardSamplingOptions, rewardModelRole, rewardSampling, type RewardSamplingFlags } from "./rm-flags.js";

interface RmScoreFlags extends RewardSamplingFlags {
  samples: number;
}

/** The reward model's run of `eqa rm score`, as its flags give it. */
type RmScoreRun = RmScoreSetup;

export function rmScoreCommand() {
  return defineRunCommand<RmScoreFlags, RmScoreRun>({
    name: "score",
    path: "rm score",
    description: "score agents' responses with a generative reward model: critiques and 0-10 scores, K samples aggregated (resumable)",
    roles: [rewardModelRole("the reward model, a vision-language model, e.g. openai/gpt-4o")],
    batch: true,
    options: (command, place) =>
      addRewardSamplingOptions(command, place, {
        instances: "reward-model instances (JSONL)",
        samples: (c) => c.option("--samples <k>", "K sampled critiques per instance (test-time scaling; temperature 0.8, top-p 0.9)", positiveInteger, 1),
        aggregate: "vote (majority, ties broken by the mean) or mean",
        tolerance: "accuracy tolerance τ against ground-truth scores, score points (2 as the paper; fractions allowed)",
      }),
    prepare: async (session) => {
      const { flags } = session;
      return { ...(await rewardSampling(session, flags.samples)), aggregate: flags.aggregate, concurrency: flags.concurrency, tolerance: flags.tolerance, bootstrap: { seed: flags.bootstrapSeed } };
    },
    run: async (run, session) => {
      const { flags } = session;
      // --batch: the reward model's requests answered through the batch API first, then read from the cache
      const { opened, batched } = await session.runtimeOrBatch(run.model.spec, REWARD_MODEL_ROLE, run.outDir, () => rmRunContract(run), (collector) => planRewardScores(run, collector));
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
