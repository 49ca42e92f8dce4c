/**
 * The report's distributions and comparisons: each run's marks as a histogram, and each run
 * against the first, per category, on the questions both scored. A difference's interval is a
 * paired percentile bootstrap (the mean of the per-question differences in LLM-Match points,
 * resampled by question with `bootstrapMean`, seed 0), so that questions both runs find hard do
 * not widen it; a difference whose interval leaves out 0 is marked.
 */
import { OPENEQA_CATEGORIES } from "../core/index.js";
import { bootstrapMean, type MeanEstimate } from "../eval/index.js";
import { Html, RUN_COLOURS, barChart, fmt, html, type BarSeries } from "./html-parts.js";
import type { LoadedRun } from "./runs.js";

const MARKS = [1, 2, 3, 4, 5];
/** A group smaller than this is never marked: a percentile bootstrap of a handful of questions is too narrow to trust. */
const MIN_MARKED = 10;

/** Runs with per-question LLM-Match marks, with their index among the report's runs. */
function marked(runs: LoadedRun[]): { run: LoadedRun; r: number }[] {
  return runs.flatMap((run, r) => (run.questions.some((q) => typeof q.score === "number") ? [{ run, r }] : []));
}

/** Share of each mark σ among a run's judged questions (0, no answer, counts as 1 as LLM-Match scores it). */
export function histogramSection(runs: LoadedRun[]): Html {
  const entries = marked(runs);
  if (entries.length === 0) return html``;
  const series: BarSeries[] = entries.map(({ run, r }) => {
    const marks = run.questions.flatMap((q) => (typeof q.score === "number" ? [Math.min(5, Math.max(1, Math.round(q.score)))] : []));
    return { label: run.label, run: r, values: Object.fromEntries(MARKS.map((m) => [`σ = ${m}`, { mean: (100 * marks.filter((x) => x === m).length) / marks.length, ci: [Number.NaN, Number.NaN] as [number, number], n: marks.length }])) };
  });
  return html`<section id="histograms"><h2>Marks</h2>${barChart("chart-marks", MARKS.map((m) => `σ = ${m}`), series, { unit: "%" })}<p class="hint">Share of each run's judged questions given each mark (1-5; an answer missing is marked 1, as LLM-Match scores it).</p></section>`;
}

export interface PairedDifference {
  group: string;
  /** Questions both runs scored in the group. */
  n: number;
  base: number;
  other: number;
  /** other − base, LLM-Match points, with its paired bootstrap interval. */
  difference: MeanEstimate;
  higher: number;
  lower: number;
  significant: boolean;
}

/** `other` against `base` overall and per category, on the questions both scored. */
export function pairedDifferences(base: LoadedRun, other: LoadedRun, resamples = 2000): PairedDifference[] {
  const points = new Map(base.questions.flatMap((q) => (q.points !== undefined ? [[q.questionId, q] as const] : [])));
  const pairs = other.questions.flatMap((q) => {
    const b = points.get(q.questionId);
    return b && q.points !== undefined ? [{ category: b.category ?? q.category ?? "", base: b.points!, other: q.points }] : [];
  });
  const present = new Set(pairs.map((p) => p.category));
  const categories = [...OPENEQA_CATEGORIES.filter((c) => present.has(c)), ...[...present].filter((c) => c !== "" && !(OPENEQA_CATEGORIES as readonly string[]).includes(c)).sort()];
  const groups: [string, typeof pairs][] = [["overall", pairs], ...categories.map((c): [string, typeof pairs] => [c, pairs.filter((p) => p.category === c)])];
  return groups.flatMap(([group, list]) => {
    if (list.length === 0) return [];
    const difference = bootstrapMean(list.map((p) => p.other - p.base), { resamples, seed: 0 });
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    return [{ group, n: list.length, base: mean(list.map((p) => p.base)), other: mean(list.map((p) => p.other)), difference, higher: list.filter((p) => p.other > p.base).length, lower: list.filter((p) => p.other < p.base).length, significant: list.length >= MIN_MARKED && (difference.ci[0] > 0 || difference.ci[1] < 0) }];
  });
}

const signed = (x: number): string => `${x > 0 ? "+" : ""}${fmt(x)}`;

/**
 * The differences as a forest plot: a dot at each group's difference, its interval as a line,
 * a vertical line at 0; a marked difference is drawn filled. The axis is symmetric about 0.
 */
function forestPlot(rows: PairedDifference[], colour: string): Html {
  const labelWidth = 190;
  const plotWidth = 420;
  const rowHeight = 18;
  const height = rows.length * rowHeight + 26;
  const reach = Math.max(10, ...rows.flatMap((d) => [Math.abs(d.difference.ci[0]), Math.abs(d.difference.ci[1]), Math.abs(d.difference.mean)]).filter(Number.isFinite));
  const limit = Math.ceil(reach / 10) * 10;
  const x = (v: number): number => labelWidth + ((Math.max(-limit, Math.min(limit, v)) + limit) / (2 * limit)) * plotWidth;
  const ticks = [-limit, -limit / 2, 0, limit / 2, limit];
  const width = labelWidth + plotWidth + 20;
  return html`<div class="chart-box"><svg class="chart forest" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${ticks.map(
    (t) => html`<line class="tick${t === 0 ? " zero" : ""}" x1="${x(t)}" x2="${x(t)}" y1="0" y2="${height - 20}" stroke="#ddd"/><text x="${x(t)}" y="${height - 6}" font-size="11" text-anchor="middle">${t > 0 ? `+${t}` : t}</text>`,
  )}${rows.map((d, i) => {
    const y = i * rowHeight + rowHeight / 2;
    return html`<g class="difference" data-group="${d.group}" data-mean="${d.difference.mean}"><title>${d.group}: ${signed(d.difference.mean)} [${signed(d.difference.ci[0])}, ${signed(d.difference.ci[1])}], n=${d.n}</title><text x="${labelWidth - 6}" y="${y + 4}" font-size="11" text-anchor="end">${d.group}</text><line class="ci" x1="${x(d.difference.ci[0])}" x2="${x(d.difference.ci[1])}" y1="${y}" y2="${y}" stroke="${colour}" stroke-width="2"/><circle cx="${x(d.difference.mean)}" cy="${y}" r="4" stroke="${colour}" stroke-width="2" fill="${d.significant ? colour : "none"}"/></g>`;
  })}</svg></div>`;
}

/** Each run against the first run with marks: per category, the paired difference and its interval. */
export function comparisonSection(runs: LoadedRun[]): Html {
  const entries = marked(runs);
  if (entries.length < 2) return html``;
  const base = entries[0]!;
  const tables = entries.slice(1).map(({ run, r }) => {
    const rows = pairedDifferences(base.run, run);
    const confidence = rows[0]?.difference.confidence ?? 0.95;
    return html`<h3>${run.label} − ${base.run.label}</h3>${forestPlot(rows, RUN_COLOURS[r % RUN_COLOURS.length]!)}<table class="grid compact comparison" data-run="${r}" data-base="${base.r}"><thead><tr><th>group</th><th>n</th><th>${base.run.label}</th><th>${run.label}</th><th>difference</th><th>${Math.round(confidence * 100)}% CI (paired)</th><th></th><th>higher / lower / equal</th></tr></thead><tbody>${rows.map(
      (d) =>
        html`<tr data-group="${d.group}"${d.significant ? new Html(' class="significant"') : ""}><td>${d.group}</td><td class="num">${d.n}</td><td class="num">${fmt(d.base)}</td><td class="num">${fmt(d.other)}</td><td class="num delta ${d.difference.mean > 0 ? "up" : d.difference.mean < 0 ? "down" : ""}" data-value="${d.difference.mean}">${signed(d.difference.mean)}</td><td class="num" data-ci="${d.difference.ci.join(",")}">[${signed(d.difference.ci[0])}, ${signed(d.difference.ci[1])}]</td><td class="mark" title="${d.significant ? "the interval leaves out 0" : "the interval holds 0"}">${d.significant ? "*" : ""}</td><td class="num">${d.higher} / ${d.lower} / ${d.n - d.higher - d.lower}</td></tr>`,
    )}</tbody></table>`;
  });
  return html`<section id="comparison"><h2>Compared with ${base.run.label}</h2><p class="hint">LLM-Match points on the questions both runs scored; the interval resamples questions, keeping each question's pair together; * marks a difference whose interval leaves out 0 (in groups of ${MIN_MARKED} questions or more), drawn as a filled dot.</p>${tables}</section>`;
}
