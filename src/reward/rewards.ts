import { isWellFormed, parseEvaluation } from "./parse.js";

/**
 * C-GRPO's rule-based rewards (EQA-RM, seed 004, §4.3, Eqs. 3-6).
 */

/** Eq. 3: R_a = max(0, 1 − (|s_r − s_gt| / 10)²). */
export function accuracyReward(score: number, groundTruth: number): number {
  return Math.max(0, 1 - (Math.abs(score - groundTruth) / 10) ** 2);
}

/** R_f: 1 when the text is exactly `<critique>…</critique><score>N</score>` (N a number 0-10), else 0. */
export function formatReward(text: string): number {
  return isWellFormed(text) ? 1 : 0;
}

export type Augmentation = "temporal" | "spatial" | "reasoning";
export type Variant = "original" | Augmentation;
export const AUGMENTATIONS: readonly Augmentation[] = ["temporal", "spatial", "reasoning"];
export const VARIANTS: readonly Variant[] = ["original", ...AUGMENTATIONS];

export interface ContrastiveParams {
  /** δ of Eq. 4 (0.95). */
  delta: number;
  /** μ of Eq. 4 (0.3). */
  mu: number;
  /**
   * Table 5's "Min. R_acc^o for boost" (H_min_acc = 0.1): an original evaluation whose own
   * accuracy reward is below it gets no boost. 0 gives Eq. 4 alone.
   */
  minAccuracyForBoost: number;
}

export const CONTRASTIVE_DEFAULTS: ContrastiveParams = { delta: 0.95, mu: 0.3, minAccuracyForBoost: 0.1 };

/** One policy output of a batch: which variant of its instance it evaluated, its text, the ground-truth score. */
export interface BatchEvaluation {
  variant: Variant;
  /** The policy's output (the evaluation text). */
  text: string;
  groundTruth: number;
}

export interface EvaluationReward {
  variant: Variant;
  /** The score read from the text; null when it has none (then R_a = 0). */
  score: number | null;
  accuracy: number;
  format: number;
  /** R^t, R^s, R^r for an original evaluation (0 for an augmented one and for inactive contrasts). */
  boosts: Record<Augmentation, number>;
  /** Eq. 5 for an original evaluation; R_a + R_f for an augmented one. */
  total: number;
}

export interface BatchRewards {
  rewards: EvaluationReward[];
  /** Batch means R̄_a^o and R̄_a^x (null for a variant absent from the batch: that contrast is inactive). */
  means: Record<Variant, number | null>;
}

/**
 * The rewards of a batch of evaluations (Eqs. 3-5). R_a and R_f per evaluation; for each
 * augmentation x present in the batch, R^x = μ for every original evaluation when
 * R̄_a^o ≥ δ·R̄_a^x (and its own R_a^o ≥ H_min_acc), else 0; the total of an original
 * evaluation is R_a^o + R_f^o + (R^t + R^s + R^r)/3 (Eq. 5, always divided by 3, an
 * inactive contrast counting 0). The paper defines no total for augmented evaluations:
 * eqakit gives them R_a + R_f, so that their own format and accuracy are still trained.
 */
export function batchRewards(batch: readonly BatchEvaluation[], params: ContrastiveParams = CONTRASTIVE_DEFAULTS): BatchRewards {
  const base = batch.map((e) => {
    const parsed = parseEvaluation(e.text);
    const score = parsed.score;
    return { variant: e.variant, score, accuracy: score === null ? 0 : accuracyReward(score, e.groundTruth), format: formatReward(e.text) };
  });
  const means = {} as Record<Variant, number | null>;
  for (const v of VARIANTS) {
    const values = base.filter((b) => b.variant === v).map((b) => b.accuracy);
    means[v] = values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  }
  const active = {} as Record<Augmentation, boolean>;
  for (const x of AUGMENTATIONS) active[x] = means.original !== null && means[x] !== null && means.original >= params.delta * means[x]!;
  const rewards = base.map((b): EvaluationReward => {
    const boosts = { temporal: 0, spatial: 0, reasoning: 0 } as Record<Augmentation, number>;
    if (b.variant !== "original") return { ...b, boosts, total: b.accuracy + b.format };
    if (b.accuracy >= params.minAccuracyForBoost) for (const x of AUGMENTATIONS) boosts[x] = active[x] ? params.mu : 0;
    return { ...b, boosts, total: b.accuracy + b.format + (boosts.temporal + boosts.spatial + boosts.reasoning) / 3 };
  });
  return { rewards, means };
}

/**
 * Eq. 6, group-relative advantages: A_i = (R_i − mean(R)) / (std(R) + ε) over the G
 * evaluations of one prompt. The printed equation takes the mean over j = 2…G, which reads
 * as a typesetting slip (GRPO normalises by the whole group's mean, and the std in the same
 * equation runs over j = 1…G): eqakit uses the whole group. std is the sample standard
 * deviation (n − 1), as TRL's and OpenRLHF's GRPO compute it; ε = 1e-4 (TRL's).
 */
export function groupAdvantages(rewards: readonly number[], epsilon = 1e-4): number[] {
  const g = rewards.length;
  if (g === 0) return [];
  const mean = rewards.reduce((a, b) => a + b, 0) / g;
  const std = g < 2 ? 0 : Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (g - 1));
  return rewards.map((r) => (r - mean) / (std + epsilon));
}
