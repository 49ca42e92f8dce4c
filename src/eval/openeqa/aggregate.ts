import { episodeSource, OPENEQA_CATEGORIES, type Question } from "../../core/index.js";
import { bootstrapMean, type BootstrapOptions, type MeanEstimate } from "../stats.js";

/** OpenEQA's per-question points: 100·(clip(σ, 1, 5) − 1)/4 (a null answer, σ = 0, gives 0). */
export function llmMatchPoints(score: number): number {
  return (100 * (Math.min(5, Math.max(1, score)) - 1)) / 4;
}

export interface LlmMatchAggregates {
  overall: MeanEstimate;
  byCategory: Record<string, MeanEstimate>;
  bySource: Record<string, MeanEstimate>;
}

export interface ScoredQuestion {
  question: Question;
  score: number;
}

/**
 * LLM-Match overall, per category (in OpenEQA's order) and per source, each with its
 * bootstrap interval. Every group is resampled from the same seed, so a group's interval
 * does not depend on which other groups exist.
 */
export function aggregateLlmMatch(scored: readonly ScoredQuestion[], bootstrap: BootstrapOptions = {}): LlmMatchAggregates {
  const byCategory: Record<string, MeanEstimate> = {};
  for (const category of OPENEQA_CATEGORIES) {
    const points = scored.filter((s) => s.question.category === category).map((s) => llmMatchPoints(s.score));
    if (points.length > 0) byCategory[category] = bootstrapMean(points, bootstrap);
  }
  const sources = [...new Set(scored.map((s) => episodeSource(s.question.episodeHistory)))].sort();
  const bySource: Record<string, MeanEstimate> = {};
  for (const source of sources) {
    const points = scored.filter((s) => episodeSource(s.question.episodeHistory) === source).map((s) => llmMatchPoints(s.score));
    bySource[source] = bootstrapMean(points, bootstrap);
  }
  return { overall: bootstrapMean(scored.map((s) => llmMatchPoints(s.score)), bootstrap), byCategory, bySource };
}
