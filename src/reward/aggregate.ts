/**
 * Test-time scaling (EQA-RM §5.1): K sampled evaluations of one instance, aggregated by
 * majority voting or by averaging.
 */
export type Aggregation = "vote" | "mean";

export const AGGREGATIONS: readonly Aggregation[] = ["vote", "mean"];

/**
 * Aggregates the scores of the samples that gave one (failed samples are left out); null
 * when none did.
 * - `mean`: the arithmetic mean (a continuous score).
 * - `vote`: the most frequent score. A tie between several scores is broken by the mean of
 *   all the samples: the tied score closest to it wins, and when two tied scores are equally
 *   close, the lower one (the more cautious reward).
 */
export function aggregateScores(scores: readonly (number | null)[], method: Aggregation): number | null {
  const valid = scores.filter((s): s is number => s !== null);
  if (valid.length === 0) return null;
  const mean = valid.reduce((a, b) => a + b, 0) / valid.length;
  if (method === "mean") return mean;
  const counts = new Map<number, number>();
  for (const s of valid) counts.set(s, (counts.get(s) ?? 0) + 1);
  const most = Math.max(...counts.values());
  const tied = [...counts.entries()].filter(([, c]) => c === most).map(([s]) => s);
  tied.sort((a, b) => Math.abs(a - mean) - Math.abs(b - mean) || a - b);
  return tied[0]!;
}
