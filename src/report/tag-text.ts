import type { MeanEstimate, ScorePair, TagScoreSummary, ValidationResult } from "../eval/index.js";
import { formatTable } from "./text.js";

/* What `eqa score-tag` prints: the structured judge's scores and errors, and a validation of the judge. */

const fixed = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");
const estimate = (e: MeanEstimate): string => (e.n === 0 ? "n/a" : `${fixed(e.mean)} [${fixed(e.ci[0])}, ${fixed(e.ci[1])}]`);
const percent = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "n/a");

function categoryRows(label: string, categories: Record<string, ScorePair>): string[][] {
  return Object.entries(categories).map(([key, pair]) => [`${label} ${key}`, String(pair.grounded.n), estimate(pair.ungrounded), estimate(pair.grounded)]);
}

export function formatTagSummary(summary: TagScoreSummary): string {
  const rows = [
    ["overall", String(summary.scores.grounded.n), estimate(summary.scores.ungrounded), estimate(summary.scores.grounded)],
    ...categoryRows("predicate", summary.categories.predicateType),
    ...categoryRows("query", summary.categories.queryType),
    ...categoryRows("conditions", summary.categories.conditions),
    ...categoryRows("", summary.categories.ambiguous).map((r) => [r[0]!.trim(), ...r.slice(1)]),
    ...categoryRows("", summary.categories.combined).map((r) => [r[0]!.trim(), ...r.slice(1)]),
  ];
  const scores = formatTable(["category", "n", "score (1-5)", "grounded score"], rows);
  const errors = formatTable(
    ["error", "answers with it", "per answer", "rate"],
    Object.entries(summary.errors).map(([kind, e]) => [kind, percent(e.answers), fixed(e.perAnswer), percent(e.rate)]),
  );
  const counted = `${summary.counts.scored} of ${summary.counts.questions} scored, ${summary.counts.failed} failed, ${summary.counts.judgeUnreadable} unreadable by the judge`;
  return `${scores}\n\n${counted}\nvalid answers: ${percent(summary.validAnswerRate)} of ${summary.counts.scored}\n\n${errors}`;
}

export function formatValidation(result: ValidationResult): string {
  const c = result.correlation;
  return [
    `items: ${result.items.length} (${result.failed} failed)`,
    `mean score: direct ${fixed(result.meanHardScore)}, through the judge ${fixed(result.meanJudgeScore)}`,
    `grounded: Pearson r ${fixed(c.pearson, 3)}, Spearman ρ ${fixed(c.spearman, 3)} [${fixed(c.spearmanCi[0], 3)}, ${fixed(c.spearmanCi[1], 3)}]`,
    `ungrounded: Pearson r ${fixed(result.ungroundedCorrelation.pearson, 3)}, Spearman ρ ${fixed(result.ungroundedCorrelation.spearman, 3)}`,
  ].join("\n");
}
