import type { AgreementMatrix, AnnotatorRow, CorrelationEstimate } from "../eval/index.js";
import { formatTable } from "./text.js";

const fixed = (value: number, digits = 3): string => (Number.isNaN(value) ? "n/a" : value.toFixed(digits));

/** The ρ matrix as OpenEQA prints it (Tables VI, VIII-X): the upper triangle, 1.00 on the diagonal. */
export function formatRhoMatrix(matrix: AgreementMatrix): string {
  const { labels, pairs } = matrix;
  const rho = (a: string, b: string): string => {
    const cell = pairs.find((p) => (p.a === a && p.b === b) || (p.a === b && p.b === a));
    return cell ? fixed(cell.estimate.spearman, 2) : "";
  };
  const rows = labels.map((row, i) => [row, ...labels.map((column, j) => (j < i ? "-" : j === i ? "1.00" : rho(row, column)))]);
  return formatTable(["Spearman ρ", ...labels], rows);
}

function interval(estimate: CorrelationEstimate): string {
  return `[${fixed(estimate.spearmanCi[0])}, ${fixed(estimate.spearmanCi[1])}]`;
}

/** Every pair: n, ρ with its bootstrap interval, Pearson's r. */
export function formatAgreementPairs(matrix: AgreementMatrix): string {
  const first = matrix.pairs[0]?.estimate;
  const ci = first ? `ρ ${Math.round(first.confidence * 100)}% CI (N=${first.resamples})` : "ρ CI";
  const rows = matrix.pairs.map((p) => [`${p.a} vs ${p.b}`, String(p.estimate.n), fixed(p.estimate.spearman), interval(p.estimate), fixed(p.estimate.pearson)]);
  return formatTable(["pair", "n", "Spearman ρ", ci, "Pearson r"], rows);
}

/** OpenEQA Table VII: each annotator against the other humans and against each judge. */
export function formatAnnotatorTable(rows: AnnotatorRow[]): string {
  const judges = [...new Set(rows.flatMap((r) => Object.keys(r.vsJudges)))];
  const header = ["annotator", "n", "vs. other humans", ...judges.map((j) => `vs. ${j}`)];
  const body = rows.map((r) => [
    r.annotator,
    String(r.n),
    r.vsOtherHumans ? `${fixed(r.vsOtherHumans.spearman, 2)} ${interval(r.vsOtherHumans)}` : "n/a",
    ...judges.map((j) => {
      const e = r.vsJudges[j];
      return e ? `${fixed(e.spearman, 2)} ${interval(e)}` : "n/a";
    }),
  ]);
  return formatTable(header, body);
}
