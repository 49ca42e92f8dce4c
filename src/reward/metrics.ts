import { seededRandom } from "../core/index.js";
import { quantileSorted, type BootstrapOptions } from "../eval/index.js";

/**
 * Reward-model metrics of EQARewardBench (seed 004, §5.1, Eqs. 8-9): accuracy within a
 * tolerance τ, `mean(|s − s_gt| ≤ τ)` in percent, and RMSE, per environment, overall and
 * per question category, each with a seeded percentile-bootstrap interval.
 *
 * "Overall" is as the paper's tables compute it: the mean of the per-environment figures
 * (Table 1: HM3D 33.71 and ScanNet 32.44 give 33.08), bootstrapped by resampling within each
 * environment. `pooled` is the plain figure over every instance.
 */
export interface ScoredInstance {
  score: number;
  groundTruth: number;
  source: string;
  category?: string;
}

export interface MetricEstimate {
  value: number;
  ci: [number, number];
}

export interface GroupMetrics {
  n: number;
  /** Percent of instances with |s − s_gt| ≤ τ. */
  accuracy: MetricEstimate;
  rmse: MetricEstimate;
}

export interface RewardMetrics {
  tolerance: number;
  confidence: number;
  resamples: number;
  environments: Record<string, GroupMetrics>;
  /** Mean of the environments' figures (the paper's "Overall"). */
  overall: GroupMetrics;
  pooled: GroupMetrics;
  categories: Record<string, GroupMetrics>;
}

export const DEFAULT_TOLERANCE = 2;
export const DEFAULT_RM_BOOTSTRAP = { resamples: 2000, seed: 0, confidence: 0.95 } as const;

/** Accuracy (percent) and RMSE of paired scores: the two formulas alone. */
export function accuracyAndRmse(pairs: readonly { score: number; groundTruth: number }[], tolerance = DEFAULT_TOLERANCE): { accuracy: number; rmse: number } {
  if (pairs.length === 0) return { accuracy: Number.NaN, rmse: Number.NaN };
  let hits = 0;
  let squares = 0;
  for (const p of pairs) {
    const d = p.score - p.groundTruth;
    if (Math.abs(d) <= tolerance) hits++;
    squares += d * d;
  }
  return { accuracy: (100 * hits) / pairs.length, rmse: Math.sqrt(squares / pairs.length) };
}

export function rewardModelMetrics(pairs: readonly ScoredInstance[], options: { tolerance?: number; bootstrap?: BootstrapOptions } = {}): RewardMetrics {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
  const resamples = options.bootstrap?.resamples ?? DEFAULT_RM_BOOTSTRAP.resamples;
  const confidence = options.bootstrap?.confidence ?? DEFAULT_RM_BOOTSTRAP.confidence;
  const seed = options.bootstrap?.seed ?? DEFAULT_RM_BOOTSTRAP.seed;
  const settings = { tolerance, resamples, confidence, seed };
  const bySource = groupBy(pairs, (p) => p.source);
  const byCategory = groupBy(pairs.filter((p) => p.category !== undefined), (p) => p.category!);
  const environments: Record<string, GroupMetrics> = {};
  for (const [source, group] of [...bySource].sort(([a], [b]) => a.localeCompare(b))) environments[source] = groupMetrics([group], settings);
  const categories: Record<string, GroupMetrics> = {};
  for (const [category, group] of [...byCategory].sort(([a], [b]) => a.localeCompare(b))) categories[category] = groupMetrics([group], settings);
  return {
    tolerance,
    confidence,
    resamples,
    environments,
    overall: groupMetrics([...bySource.values()], settings),
    pooled: groupMetrics([pairs], settings),
    categories,
  };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    let group = groups.get(k);
    if (!group) groups.set(k, (group = []));
    group.push(item);
  }
  return groups;
}

/**
 * Metrics of the mean over `strata` (one stratum: the plain figures): each resample draws
 * every stratum with replacement from itself and recomputes each figure (the RMSE as the
 * square root of the resample's mean squared error).
 */
function groupMetrics(strata: readonly (readonly ScoredInstance[])[], s: { tolerance: number; resamples: number; confidence: number; seed: number }): GroupMetrics {
  const nonEmpty = strata.filter((g) => g.length > 0);
  const n = nonEmpty.reduce((a, g) => a + g.length, 0);
  if (n === 0) return { n: 0, accuracy: { value: Number.NaN, ci: [Number.NaN, Number.NaN] }, rmse: { value: Number.NaN, ci: [Number.NaN, Number.NaN] } };
  const hits = nonEmpty.map((g) => Float64Array.from(g, (p) => (Math.abs(p.score - p.groundTruth) <= s.tolerance ? 1 : 0)));
  const squares = nonEmpty.map((g) => Float64Array.from(g, (p) => (p.score - p.groundTruth) ** 2));
  const meanOf = (a: Float64Array): number => a.reduce((x, y) => x + y, 0) / a.length;
  const accuracy = (100 * hits.reduce((a, h) => a + meanOf(h), 0)) / nonEmpty.length;
  const rmse = squares.reduce((a, q) => a + Math.sqrt(meanOf(q)), 0) / nonEmpty.length;
  const random = seededRandom(s.seed);
  const accuracies = new Float64Array(s.resamples);
  const rmses = new Float64Array(s.resamples);
  for (let r = 0; r < s.resamples; r++) {
    let acc = 0;
    let err = 0;
    for (let g = 0; g < nonEmpty.length; g++) {
      const h = hits[g]!;
      const q = squares[g]!;
      const m = h.length;
      let sumH = 0;
      let sumQ = 0;
      for (let i = 0; i < m; i++) {
        const j = Math.floor(random() * m);
        sumH += h[j]!;
        sumQ += q[j]!;
      }
      acc += sumH / m;
      err += Math.sqrt(sumQ / m);
    }
    accuracies[r] = (100 * acc) / nonEmpty.length;
    rmses[r] = err / nonEmpty.length;
  }
  accuracies.sort();
  rmses.sort();
  const alpha = (1 - s.confidence) / 2;
  const interval = (sorted: Float64Array): [number, number] => (s.resamples === 0 ? [Number.NaN, Number.NaN] : [quantileSorted(sorted, alpha), quantileSorted(sorted, 1 - alpha)]);
  return { n, accuracy: { value: accuracy, ci: interval(accuracies) }, rmse: { value: rmse, ci: interval(rmses) } };
}
