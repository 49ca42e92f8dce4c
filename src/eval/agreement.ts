import { seededRandom } from "../core/index.js";
import { mean, quantileSorted } from "./stats.js";

/**
 * Agreement between judges (OpenEQA appendix X and XI): Spearman's ρ with a paired
 * percentile-bootstrap interval (the paper's N = 9,999), Pearson's r, a matrix for several
 * judges (Tables VI, VIII-X) and per-annotator tables (Table VII).
 */

/** Ranks from 1, ties sharing their average rank (SciPy's `rankdata(method="average")`). */
export function averageRanks(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && values[order[j + 1]!]! === values[order[i]!]!) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k]!] = rank;
    i = j + 1;
  }
  return ranks;
}

/** Pearson's r; NaN when either side is constant or fewer than 2 pairs. */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = x.length;
  if (n !== y.length) throw new RangeError(`pearson: ${n} values against ${y.length}`);
  if (n < 2) return Number.NaN;
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx;
    const dy = y[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return Number.NaN;
  const r = sxy / Math.sqrt(sxx * syy);
  return Math.max(-1, Math.min(1, r));
}

/** Spearman's ρ: Pearson's r of the average ranks (SciPy's `spearmanr`). */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number {
  return pearson(averageRanks(x), averageRanks(y));
}

export interface CorrelationOptions {
  /** Bootstrap resamples (default 9,999, as OpenEQA's human-alignment study). */
  resamples?: number;
  seed?: number;
  confidence?: number;
}

export const DEFAULT_AGREEMENT_BOOTSTRAP = { resamples: 9_999, seed: 0, confidence: 0.95 } as const;

export interface CorrelationEstimate {
  /** Pairs compared (items both score sets have). */
  n: number;
  spearman: number;
  /** Percentile-bootstrap interval of ρ over resampled pairs; resamples where ρ is undefined (a constant side) are left out. */
  spearmanCi: [number, number];
  pearson: number;
  resamples: number;
  /** Resamples whose ρ was undefined and left out of the interval. */
  undefinedResamples: number;
  confidence: number;
  seed: number;
}

/**
 * Spearman's ρ and Pearson's r of paired scores, with a seeded bootstrap interval of ρ:
 * each resample draws n pair indices with replacement, `floor(u·n)` for u from
 * `seededRandom(seed)` in order, and recomputes ρ with ties re-ranked.
 */
export function correlate(x: readonly number[], y: readonly number[], options: CorrelationOptions = {}): CorrelationEstimate {
  const resamples = options.resamples ?? DEFAULT_AGREEMENT_BOOTSTRAP.resamples;
  const confidence = options.confidence ?? DEFAULT_AGREEMENT_BOOTSTRAP.confidence;
  const seed = options.seed ?? DEFAULT_AGREEMENT_BOOTSTRAP.seed;
  const n = x.length;
  if (n !== y.length) throw new RangeError(`correlate: ${n} values against ${y.length}`);
  const random = seededRandom(seed);
  const rhos: number[] = [];
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  let undefinedResamples = 0;
  if (n >= 2) {
    for (let r = 0; r < resamples; r++) {
      for (let i = 0; i < n; i++) {
        const k = Math.floor(random() * n);
        xs[i] = x[k]!;
        ys[i] = y[k]!;
      }
      const rho = spearman(xs, ys);
      if (Number.isNaN(rho)) undefinedResamples++;
      else rhos.push(rho);
    }
  }
  const sorted = Float64Array.from(rhos).sort();
  const alpha = (1 - confidence) / 2;
  return {
    n,
    spearman: spearman(x, y),
    spearmanCi: [quantileSorted(sorted, alpha), quantileSorted(sorted, 1 - alpha)],
    pearson: pearson(x, y),
    resamples,
    undefinedResamples,
    confidence,
    seed,
  };
}

/** Scores by item (a question id, or any key naming what was scored). */
export type ScoreMap = ReadonlyMap<string, number>;

/** The items both sets scored, in the first set's order, and their paired values. */
export function pairScores(a: ScoreMap, b: ScoreMap): { items: string[]; x: number[]; y: number[] } {
  const items = [...a.keys()].filter((k) => b.has(k));
  return { items, x: items.map((k) => a.get(k)!), y: items.map((k) => b.get(k)!) };
}

export interface AgreementCell {
  a: string;
  b: string;
  estimate: CorrelationEstimate;
}

export interface AgreementMatrix {
  labels: string[];
  /** Every pair i < j, in row order (the upper triangle the paper prints). */
  pairs: AgreementCell[];
}

/** ρ (with its interval) and r between every two of several score sets, on the items each pair shares. */
export function agreementMatrix(sets: readonly { label: string; scores: ScoreMap }[], options: CorrelationOptions = {}): AgreementMatrix {
  const pairs: AgreementCell[] = [];
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) {
      const { x, y } = pairScores(sets[i]!.scores, sets[j]!.scores);
      pairs.push({ a: sets[i]!.label, b: sets[j]!.label, estimate: correlate(x, y, options) });
    }
  }
  return { labels: sets.map((s) => s.label), pairs };
}

export interface AnnotatorRow {
  annotator: string;
  /** Items this annotator scored. */
  n: number;
  /** ρ against the mean of the other annotators' scores on the same items (items no other annotator scored are left out). */
  vsOtherHumans: CorrelationEstimate | null;
  /** ρ against each reference judge (e.g. an LLM), by its label. */
  vsJudges: Record<string, CorrelationEstimate>;
}

/**
 * OpenEQA Table VII: for each annotator, ρ against the other annotators (their mean score
 * on each item) and against each judge.
 */
export function perAnnotatorAgreement(
  annotators: ReadonlyMap<string, ScoreMap>,
  judges: readonly { label: string; scores: ScoreMap }[],
  options: CorrelationOptions = {},
): AnnotatorRow[] {
  const rows: AnnotatorRow[] = [];
  for (const [annotator, scores] of annotators) {
    const others = new Map<string, number>();
    for (const item of scores.keys()) {
      const values: number[] = [];
      for (const [other, otherScores] of annotators) {
        if (other === annotator) continue;
        const value = otherScores.get(item);
        if (value !== undefined) values.push(value);
      }
      if (values.length > 0) others.set(item, mean(values));
    }
    const paired = pairScores(scores, others);
    const vsJudges: Record<string, CorrelationEstimate> = {};
    for (const judge of judges) {
      const { x, y } = pairScores(scores, judge.scores);
      vsJudges[judge.label] = correlate(x, y, options);
    }
    rows.push({ annotator, n: scores.size, vsOtherHumans: paired.items.length > 0 ? correlate(paired.x, paired.y, options) : null, vsJudges });
  }
  return rows;
}

/** Each item's mean over annotators: one "human" score set from several annotators. */
export function meanOverAnnotators(annotators: ReadonlyMap<string, ScoreMap>): Map<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const scores of annotators.values()) {
    for (const [item, value] of scores) {
      const entry = sums.get(item) ?? { sum: 0, n: 0 };
      entry.sum += value;
      entry.n++;
      sums.set(item, entry);
    }
  }
  return new Map([...sums].map(([item, { sum, n }]) => [item, sum / n]));
}
