import { writeFileAtomically } from "../core/index.js";
import { rewardModelMetrics, type RewardMetrics } from "./metrics.js";
import { describeModel, ledgerCost, readCallLedger, sumUsage, type RunCost, type UsageLedger, type UsageTotals } from "../models/index.js";
import { AGGREGATIONS, type Aggregation } from "./aggregate.js";
import { scalingCurvesSvg, seriesLabel, svgToPng, type CurveSeries } from "./curves.js";
import { TTS_PARAMS } from "./evaluate.js";
import { RM_PROMPTS, rmPromptHashes } from "./prompts.js";
import { sampleRewardModel, scoreOfFirst, scoredPairs, type RmScoreOptions } from "./score-run.js";
import { RUN_KIND, summaryHead, type RunSummaryHead } from "../store/index.js";

export const SCALING_KS: readonly number[] = [1, 2, 4, 8, 16, 32];
export const BENCH_SUMMARY_FILE = "bench.json";
export const CURVES_PNG = "scaling-curves.png";
export const CURVES_SVG = "scaling-curves.svg";

export interface RmBenchOptions extends Omit<RmScoreOptions, "samples"> {
  /** The Ks to report; the largest is sampled once and serves every smaller K. */
  ks?: readonly number[];
}

export interface RmBenchSummary extends RunSummaryHead<typeof RUN_KIND["rm-bench"]> {
  counts: { instances: number; withGroundTruth: number; samples: number; failedSamples: number; reused: number };
  /** aggregation → K → metrics (only instances with a ground-truth score and at least one scored sample among the first K). */
  scaling: Record<Aggregation, Record<string, RewardMetrics & { failed: number }>>;
  usage: { evaluations: UsageTotals; thisProcess: ReturnType<UsageLedger["snapshot"]> | null };
  /** Tokens and dollars of the reward model, from every instance the run directory holds. */
  cost: RunCost;
}

/**
 * `eqa rm bench`: samples max(K) evaluations per instance once, then scores K = 1, 2, 4, …
 * from the first K samples of each (shared samples, so the curve compares like with like),
 * by vote and by mean, and draws the accuracy and RMSE curves (PNG and SVG).
 */
export async function benchRewardModel(options: RmBenchOptions): Promise<{ summary: RmBenchSummary; runDir: string }> {
  const ks = [...(options.ks ?? SCALING_KS)].sort((a, b) => a - b);
  const maxK = ks[ks.length - 1]!;
  const result = await sampleRewardModel({ ...options, samples: maxK, runKind: RUN_KIND["rm-bench"], runSettings: { ks } });
  const scaling = {} as Record<Aggregation, Record<string, RewardMetrics & { failed: number }>>;
  const withTruth = result.records.filter((r) => r.groundTruthScore !== null);
  for (const method of AGGREGATIONS) {
    scaling[method] = {};
    for (const k of ks) {
      const pairs = scoredPairs(withTruth, (r) => scoreOfFirst(r, k, method));
      scaling[method][String(k)] = {
        ...rewardModelMetrics(pairs, { ...(options.tolerance !== undefined ? { tolerance: options.tolerance } : {}), ...(options.bootstrap ? { bootstrap: options.bootstrap } : {}) }),
        failed: withTruth.length - pairs.length,
      };
    }
  }
  const usage = sumUsage(result.records.map((r) => r.usage));
  const samples = result.records.flatMap((r) => r.samples);
  const aggregate = options.aggregate ?? "vote";
  const summary: RmBenchSummary = {
    ...summaryHead(RUN_KIND["rm-bench"], result.wallTimeMs, {
      model: describeModel(options.model.spec),
      instances: { path: options.file.path, sha256: options.file.sha256, count: result.records.length },
      ks,
      plotted: aggregate,
      parameters: options.params ?? TTS_PARAMS,
      prompts: rmPromptHashes([RM_PROMPTS.evaluator]),
      tolerance: options.tolerance ?? 2,
      ...options.settings,
    }),
    counts: {
      instances: result.records.length,
      withGroundTruth: withTruth.length,
      samples: samples.length,
      failedSamples: samples.filter((s) => s.score === null).length,
      reused: result.reused,
    },
    scaling,
    usage: { evaluations: usage, thisProcess: options.usage?.snapshot() ?? null },
    cost: ledgerCost(readCallLedger(result.run.path)),
  };
  const svg = scalingCurves(summary, aggregate, options.model.spec.name);
  await result.run.writeJson(BENCH_SUMMARY_FILE, summary);
  await writeFileAtomically(result.run.file(CURVES_SVG), svg);
  await writeFileAtomically(result.run.file(CURVES_PNG), await svgToPng(svg));
  return { summary, runDir: result.run.path };
}

/** The curves of one aggregation: a line per environment and the overall mean. */
export function scalingCurves(summary: Pick<RmBenchSummary, "scaling">, method: Aggregation, model: string): string {
  const byK = summary.scaling[method];
  const ks = Object.keys(byK).map(Number).sort((a, b) => a - b);
  const groups = [...new Set(ks.flatMap((k) => Object.keys(byK[String(k)]!.environments))), "overall"];
  const series = (metric: "accuracy" | "rmse"): CurveSeries[] =>
    groups.map((g) => ({
      label: seriesLabel(g),
      points: ks.map((k) => {
        const m = byK[String(k)]!;
        const group = g === "overall" ? m.overall : m.environments[g];
        return group ? { k, value: group[metric].value, ci: group[metric].ci } : { k, value: Number.NaN };
      }),
    }));
  return scalingCurvesSvg(`${model}: test-time scaling (${method === "vote" ? "majority vote" : "mean"}, τ = ${ks.length > 0 ? byK[String(ks[0])]!.tolerance : 2})`, series("accuracy"), series("rmse"));
}
