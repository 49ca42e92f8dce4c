import { z } from "zod";

/** A mean with its uncertainty, as summaries and tables print it. */
export interface MeanEstimate {
  n: number;
  mean: number;
  /**
   * Standard error of the mean, estimated as the standard deviation of the bootstrap means:
   * the `±` that OpenEQA's tables print.
   */
  stderr: number;
  /** Percentile bootstrap interval. */
  ci: [number, number];
  confidence: number;
}

/** A MeanEstimate as a summary file holds it: an undefined figure (NaN, no items) is written as null. */
export const storedMeanEstimateSchema = z.object({ n: z.number(), mean: z.number().nullable(), stderr: z.number().nullable(), ci: z.tuple([z.number().nullable(), z.number().nullable()]), confidence: z.number() });

export interface BootstrapOptions {
  resamples?: number;
  seed?: number;
  confidence?: number;
}

export const DEFAULT_BOOTSTRAP = { resamples: 10_000, seed: 0, confidence: 0.95 } as const;

export function mean(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return values.length === 0 ? Number.NaN : sum / values.length;
}

/** The mean of `values` with a seeded percentile-bootstrap interval: the same seed, the same interval. */
export function bootstrapMean(values: readonly number[], options: BootstrapOptions = {}): MeanEstimate {
  const resamples = options.resamples ?? DEFAULT_BOOTSTRAP.resamples;
  const confidence = options.confidence ?? DEFAULT_BOOTSTRAP.confidence;
  const n = values.length;
  if (n === 0) return { n, mean: Number.NaN, stderr: Number.NaN, ci: [Number.NaN, Number.NaN], confidence };
  const data = Float64Array.from(values);
  const means = resampledMeans(data, resamples, options.seed ?? DEFAULT_BOOTSTRAP.seed);
  means.sort();
  const alpha = (1 - confidence) / 2;
  return {
    n,
    mean: mean(data),
    stderr: standardDeviation(means),
    ci: [quantileSorted(means, alpha), quantileSorted(means, 1 - alpha)],
    confidence,
  };
}

/**
 * Means of `resamples` resamples with replacement. A hot loop (16 M draws for OpenEQA), so
 * the generator is inlined: the same mulberry32 sequence as `seededRandom(seed)`.
 */
function resampledMeans(data: Float64Array, resamples: number, seed: number): Float64Array {
  const n = data.length;
  const means = new Float64Array(resamples);
  let state = seed >>> 0;
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      state = (state + 0x6d2b79f5) | 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      sum += data[Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)]!;
    }
    means[r] = sum / n;
  }
  return means;
}

export function standardDeviation(values: ArrayLike<number>): number {
  const m = mean(values);
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i]! - m) ** 2;
  return values.length < 2 ? 0 : Math.sqrt(squares / (values.length - 1));
}

/**
 * Linear interpolation between order statistics (NumPy's default `percentile` method), with
 * NumPy's arithmetic so that the result is the same to the last bit.
 */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const position = (n - 1) * q;
  if (position >= n - 1) return sorted[n - 1]!;
  if (position <= 0) return sorted[0]!;
  const below = Math.floor(position);
  const low = sorted[below]!;
  const high = sorted[below + 1]!;
  const weight = position - below;
  const difference = high - low;
  return weight >= 0.5 ? high - difference * (1 - weight) : low + difference * weight;
}
