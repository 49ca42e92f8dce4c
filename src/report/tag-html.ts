/**
 * The report's TAG-EQA section: structured-judge runs side by side, as the TAG-EQA paper shows
 * its baselines (Table 2: mean score grounded and not; Fig. 4: valid answers; Fig. 5: error
 * types; Fig. 6: scores per condition category), and every question with its true structured
 * answer and each run's answer. All text from the runs is escaped by the `html` template.
 */
import type { StructuredAnswer } from "../data/index.js";
import { Html, RUN_COLOURS, barChart, fmt, html, type BarSeries, type ChartAxis } from "./html-parts.js";
import type { LoadedRun } from "./runs.js";
import { answerKey, thumbnailStrip, type Thumbnails } from "./thumbnails.js";
import { valueText, type TagEstimate, type TagRunQuestion, type TagRunSummary, type TagScorePair } from "./tag-runs.js";

interface TagRunEntry {
  run: LoadedRun;
  /** The run's index among all the report's runs (its colour and filter value). */
  r: number;
}

const SCORE_AXIS: ChartAxis = { min: 1, max: 5, ticks: [1, 2, 3, 4, 5], digits: 2 };
const PERCENT_AXIS: ChartAxis = { unit: "%" };

export const TAG_ERROR_TYPES = [
  ["objectFalsePositives", "object false positives"],
  ["objectFalseNegatives", "object false negatives"],
  ["predicateFalsePositives", "predicate false positives"],
  ["predicateFalseNegatives", "predicate false negatives"],
] as const;

/** Fig. 6's categories in display order: the summary's dimension and how its keys are named. */
const CATEGORY_DIMENSIONS: [keyof TagRunSummary["categories"] & string, string][] = [
  ["predicateType", "predicate: "],
  ["combined", ""],
  ["conditions", "conditions: "],
  ["ambiguous", ""],
  ["queryType", "query: "],
];

/** A score on TAG's 1-5 scale as the 0-100 points the question filters compare (50 is a score of 3). */
export const tagPoints = (score: number): number => (100 * (Math.min(5, Math.max(1, score)) - 1)) / 4;

function tagEntries(runs: LoadedRun[]): TagRunEntry[] {
  return runs.flatMap((run, r) => (run.tag ? [{ run, r }] : []));
}

function barValue(estimate: TagEstimate | undefined): BarSeries["values"][string] {
  if (!estimate || estimate.n === 0 || estimate.mean === null) return undefined;
  return { mean: estimate.mean, ci: [estimate.ci[0] ?? Number.NaN, estimate.ci[1] ?? Number.NaN], n: estimate.n };
}

/** A mean's ±SE and interval cells (the mean has its own cell). */
function intervalCells(estimate: TagEstimate | undefined): Html {
  if (!estimate || estimate.n === 0 || estimate.mean === null) return html`<td>–</td><td>–</td>`;
  return html`<td class="num">±${fmt(estimate.stderr, 2)}</td><td class="num">[${fmt(estimate.ci[0], 2)}, ${fmt(estimate.ci[1], 2)}]</td>`;
}

function configName(value: unknown, absent: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "name" in value && typeof value.name === "string") return value.name;
  return absent;
}

function swatch(r: number): Html {
  return html`<i class="swatch" style="background:${RUN_COLOURS[r % RUN_COLOURS.length]!}"></i>`;
}

function headline(entries: TagRunEntry[]): Html {
  const rows = entries.map(({ run, r }) => {
    const s = run.tag!.summary;
    if (!s) return html`<tr data-run="${r}"><td>${swatch(r)}${run.label}</td><td colspan="9">no summary yet: ${run.tag!.questions.length} judgement(s) so far</td></tr>`;
    return html`<tr data-run="${r}"><td>${swatch(r)}${run.label}</td><td>${configName(s.config.judge, "no judge")} · ${configName(s.config.similarity, "?")}${run.tag!.grounded ? " · grounded questions" : ""}</td><td class="num">${s.counts.scored} / ${s.counts.questions}</td><td class="num" data-field="tag-grounded" data-value="${s.scores.grounded.mean ?? ""}">${fmt(s.scores.grounded.mean, 2)}</td>${intervalCells(s.scores.grounded)}<td class="num" data-field="tag-ungrounded" data-value="${s.scores.ungrounded.mean ?? ""}">${fmt(s.scores.ungrounded.mean, 2)}</td>${intervalCells(s.scores.ungrounded)}<td class="num" data-field="tag-valid" data-value="${s.validAnswerRate ?? ""}">${s.validAnswerRate === null ? "–" : `${fmt(100 * s.validAnswerRate)}%`}</td><td class="num">${s.counts.failed}</td></tr>`;
  });
  const ci = `${Math.round(100 * (entries.find(({ run }) => run.tag!.summary)?.run.tag!.summary!.scores.grounded.confidence ?? 0.95))}% CI`;
  return html`<table id="tag-headline" class="grid"><thead><tr><th>run</th><th>judge · text similarity</th><th>scored</th><th>grounded</th><th>±SE</th><th>${ci}</th><th>ungrounded</th><th>±SE</th><th>${ci}</th><th>valid answers</th><th>failed</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function scoresChart(entries: TagRunEntry[]): Html {
  const series = entries.map(({ run, r }) => ({ label: run.label, run: r, values: { grounded: barValue(run.tag!.summary?.scores.grounded), ungrounded: barValue(run.tag!.summary?.scores.ungrounded) } }));
  return html`<h3>Mean structured score, 1-5 (TAG-EQA Table 2)</h3>${barChart("chart-tag-scores", ["grounded", "ungrounded"], series, SCORE_AXIS)}`;
}

const SCORE_BINS = ["1-2", "2-3", "3-4", "4-5"];

/** Each run's grounded scores as a histogram: the share of its scored questions in each unit band (5 counts in 4-5). */
function histogramChart(entries: TagRunEntry[]): Html {
  const series = entries.map(({ run, r }) => {
    const scores = run.tag!.questions.flatMap((q) => (q.score === null ? [] : [q.score]));
    const bin = (s: number): number => Math.min(SCORE_BINS.length - 1, Math.max(0, Math.floor(s) - 1));
    return { label: run.label, run: r, values: Object.fromEntries(SCORE_BINS.map((label, b) => [label, scores.length === 0 ? undefined : { mean: (100 * scores.filter((s) => bin(s) === b).length) / scores.length, ci: [Number.NaN, Number.NaN] as [number, number], n: scores.length }])) };
  });
  return html`<h3>Grounded scores, share of questions</h3>${barChart("chart-tag-histogram", SCORE_BINS, series, PERCENT_AXIS)}`;
}

function validChart(entries: TagRunEntry[]): Html {
  const series = entries.map(({ run, r }) => {
    const s = run.tag!.summary;
    const rate = s?.validAnswerRate;
    return { label: run.label, run: r, values: { "valid answers": rate === null || rate === undefined ? undefined : { mean: 100 * rate, ci: [Number.NaN, Number.NaN] as [number, number], n: s!.counts.scored } } };
  });
  return html`<h3>Valid answers (TAG-EQA Fig. 4)</h3>${barChart("chart-tag-valid", ["valid answers"], series, PERCENT_AXIS)}<p class="hint">An answer is valid when it has some content: it is not necessarily right.</p>`;
}

function errorsChart(entries: TagRunEntry[]): Html {
  const labels = TAG_ERROR_TYPES.map(([, label]) => label);
  const series = entries.map(({ run, r }) => {
    const s = run.tag!.summary;
    const values: BarSeries["values"] = {};
    for (const [key, label] of TAG_ERROR_TYPES) {
      const share = s?.errors[key]?.answers;
      if (s && share !== null && share !== undefined) values[label] = { mean: 100 * share, ci: [Number.NaN, Number.NaN], n: s.counts.scored };
    }
    return { label: run.label, run: r, values };
  });
  const table = html`<table id="tag-errors" class="grid compact"><thead><tr><th>error type</th>${entries.map(({ run }) => html`<th>${run.label}: answers with one</th><th>per answer</th><th>rate</th>`)}</tr></thead><tbody>${TAG_ERROR_TYPES.map(
    ([key, label]) =>
      html`<tr><td>${label}</td>${entries.map(({ run }) => {
        const e = run.tag!.summary?.errors[key];
        return e ? html`<td class="num" data-group="${key}" data-value="${e.answers ?? ""}">${e.answers === null ? "–" : `${fmt(100 * e.answers)}%`}</td><td class="num">${fmt(e.perAnswer, 2)}</td><td class="num">${e.rate === null ? "–" : `${fmt(100 * e.rate)}%`}</td>` : html`<td>–</td><td>–</td><td>–</td>`;
      })}</tr>`,
  )}</tbody></table>`;
  return html`<h3>Error types (TAG-EQA Fig. 5): share of answers with each</h3>${barChart("chart-tag-errors", labels, series, PERCENT_AXIS)}${table}<p class="hint">The rate counts the errors among the objects or predicates where they could occur (predicted ones for false positives, true ones for false negatives).</p>`;
}

function categoryGroups(entries: TagRunEntry[]): { label: string; pick: (s: TagRunSummary) => TagScorePair | undefined }[] {
  const groups: { label: string; pick: (s: TagRunSummary) => TagScorePair | undefined }[] = [];
  const known = new Set(CATEGORY_DIMENSIONS.map(([d]) => d));
  const dimensions: [string, string][] = [...CATEGORY_DIMENSIONS, ...[...new Set(entries.flatMap(({ run }) => Object.keys(run.tag!.summary?.categories ?? {})))].filter((d) => !known.has(d as never)).map((d): [string, string] => [d, `${d}: `])];
  for (const [dimension, prefix] of dimensions) {
    const keys = [...new Set(entries.flatMap(({ run }) => Object.keys(run.tag!.summary?.categories[dimension] ?? {})))].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    for (const key of keys) groups.push({ label: `${prefix}${key}`, pick: (s) => s.categories[dimension]?.[key] });
  }
  return groups;
}

function categoriesChart(entries: TagRunEntry[]): Html {
  const groups = categoryGroups(entries);
  if (groups.length === 0) return html``;
  const series = entries.map(({ run, r }) => {
    const s = run.tag!.summary;
    return { label: run.label, run: r, values: Object.fromEntries(groups.map((g) => [g.label, s ? barValue(g.pick(s)?.grounded) : undefined])) };
  });
  const cell = (pair: TagScorePair | undefined, group: string): Html =>
    pair && pair.grounded.n > 0 ? html`<td class="num" data-group="${group}" data-value="${pair.grounded.mean ?? ""}">${fmt(pair.grounded.mean, 2)} ±${fmt(pair.grounded.stderr, 2)}</td><td class="num">${fmt(pair.ungrounded.mean, 2)}</td><td class="num">${pair.grounded.n}</td>` : html`<td>–</td><td>–</td><td>–</td>`;
  const table = html`<table id="tag-categories" class="grid compact"><thead><tr><th>category</th>${entries.map(({ run }) => html`<th>${run.label}: grounded</th><th>ungrounded</th><th>n</th>`)}</tr></thead><tbody>${groups.map(
    (g) => html`<tr><td>${g.label}</td>${entries.map(({ run }) => cell(run.tag!.summary ? g.pick(run.tag!.summary) : undefined, g.label))}</tr>`,
  )}</tbody></table>`;
  return html`<h3>Grounded score per category (TAG-EQA Fig. 6)</h3>${barChart("chart-tag-category", groups.map((g) => g.label), series, SCORE_AXIS)}${table}`;
}

/** A structured answer, readably: one item per group with its predicate, value and objects (type, caption, coordinates). */
export function structuredAnswerHtml(answer: StructuredAnswer, className = "structured"): Html {
  if (answer.length === 0) return html`<span class="hint">(empty structure)</span>`;
  return html`<ol class="${className}">${answer.map(
    (g) =>
      html`<li class="group"><span class="predicate">${g.predicate === "" ? "(any)" : g.predicate}</span> → <b class="value">${valueText(g.value)}</b>${
        g.objects.length > 0
          ? html`<ul class="objects">${g.objects.map((o) => html`<li><span class="type">${o.type}</span>${o.caption ? html` <span class="caption">“${o.caption}”</span>` : html``}${o.position ? html` <span class="position">@ (${o.position.map((v) => v.toFixed(2)).join(", ")})</span>` : html``}</li>`)}</ul>`
          : html``
      }</li>`,
  )}</ol>`;
}

function errorsLine(q: TagRunQuestion): Html {
  const e = q.errors;
  if (!e) return html``;
  const total = e.objectFalsePositives + e.objectFalseNegatives + e.predicateFalsePositives + e.predicateFalseNegatives;
  if (total === 0) return html`<div class="hint tag-errors">no errors</div>`;
  return html`<div class="hint tag-errors" title="false positives / false negatives">objects +${e.objectFalsePositives} −${e.objectFalseNegatives} · predicates +${e.predicateFalsePositives} −${e.predicateFalseNegatives}</div>`;
}

function predictionHtml(q: TagRunQuestion): Html {
  if (q.prediction === undefined) return q.predicted ? html`<div class="hint">the structure scored:</div>${structuredAnswerHtml(q.predicted, "structured answer")}` : html`<span class="hint">(prediction not read)</span>`;
  if (q.prediction === null) return html`<span class="hint">(no answer)</span>`;
  if (typeof q.prediction === "string") return q.prediction.trim() === "" ? html`<span class="hint">(empty answer)</span>` : html`<span class="text answer">${q.prediction}</span>`;
  return structuredAnswerHtml(q.prediction, "structured answer");
}

/** One run's answer and score; `first` is the first run's score, which this run's is compared with (undefined for the first run). */
function tagAnswerCell(q: TagRunQuestion | undefined, r: number, thumbs: Thumbnails, first?: number | null): Html {
  if (!q) return html`<td class="missing" data-sort="">–</td><td class="num score" data-sort="-1" data-run="${r}" data-points="" data-csv="">–</td>`;
  const extracted = q.source === "judge" && q.predicted ? html`<details><summary>structure the judge read</summary>${structuredAnswerHtml(q.predicted)}</details>` : html``;
  const replies = q.replies.length > 0 ? html`<details><summary>judge's reply</summary><pre class="text">${q.replies.map((reply) => reply ?? "(empty)").join("\n---\n")}</pre></details>` : html``;
  const invalid = q.status === "scored" && !q.valid ? html`<div class="hint invalid">invalid answer (no content)</div>` : html``;
  const error = q.error ? html`<div class="error text">${q.error}</div>` : html``;
  const points = q.score === null ? undefined : tagPoints(q.score);
  const sortText = typeof q.prediction === "string" ? q.prediction : q.prediction ? JSON.stringify(q.prediction) : "";
  const score = q.score === null ? "failed" : html`${fmt(q.groundedScore ?? q.score, 2)} <small title="ungrounded">(${fmt(q.ungroundedScore, 2)})</small>`;
  // the frames the answering agent was sent (a language-model agent answering in the run's answers/)
  const strip = thumbnailStrip(thumbs.byAnswer.get(answerKey(r, q.questionId)) ?? []);
  return html`<td data-sort="${sortText}">${predictionHtml(q)}${invalid}${errorsLine(q)}${error}${extracted}${replies}${strip}</td><td class="num score${typeof first === "number" && q.score !== null && q.score !== first ? (q.score > first ? " up" : " down") : ""}" data-sort="${q.score ?? -1}" data-run="${r}" data-points="${points ?? ""}" data-score="${q.score ?? ""}" data-csv="${q.score ?? ""}">${score}</td>`;
}

function tagsText(q: TagRunQuestion): string {
  if (!q.tags) return "";
  return [q.tags.predicate_types.join(", ") || "no predicate", `${q.tags.conditions} condition(s)`, q.tags.ambiguous ? "ambiguous" : ""].filter((t) => t !== "").join(" · ");
}

function questionTable(entries: TagRunEntry[], thumbs: Thumbnails): Html {
  const byRun = entries.map(({ run }) => new Map(run.tag!.questions.map((q) => [q.questionId, q])));
  const order: string[] = [];
  const seen = new Set<string>();
  for (const { run } of entries) for (const q of run.tag!.questions) if (!seen.has(q.questionId)) (seen.add(q.questionId), order.push(q.questionId));
  const info = (id: string): TagRunQuestion | undefined => byRun.map((m) => m.get(id)).find((q) => q?.question !== undefined) ?? byRun.map((m) => m.get(id)).find((q) => q !== undefined);
  const categories = [...new Set(order.map((id) => info(id)?.tags?.query_type).filter((c): c is NonNullable<typeof c> => c !== undefined))].sort();
  const rows = order.map((id) => {
    const q = info(id);
    const category = q?.tags?.query_type ?? "";
    const truth = html`${q?.answerText ? html`<div class="text truth-text">${q.answerText}</div>` : html``}${q?.truth ? structuredAnswerHtml(q.truth, "structured truth") : html`<span class="hint">–</span>`}`;
    const scores = entries.map((_, i) => byRun[i]!.get(id)?.score ?? "none");
    const differs = entries.length > 1 && new Set(scores).size > 1;
    return html`<tr data-category="${category}" data-id="${id}"${differs ? new Html(' class="differs"') : ""}><td data-sort="${id}"><code>${id}</code></td><td data-sort="${category}">${category || "–"}</td><td class="text" data-sort="${q?.question ?? ""}">${q?.question ?? "–"}${q?.tags ? html`<div class="hint">${tagsText(q)}</div>` : html``}</td><td data-sort="${q?.answerText ?? ""}">${truth}</td>${entries.map(({ r }, i) => tagAnswerCell(byRun[i]!.get(id), r, thumbs, i === 0 ? undefined : (byRun[0]!.get(id)?.score ?? null)))}</tr>`;
  });
  const filters = html`<div class="filters"><label>search <input id="t-search" type="search" placeholder="question, answer, id…"></label>
<label>query type <select id="t-category"><option value="">all</option>${categories.map((c) => html`<option value="${c}">${c}</option>`)}</select></label>
<label>run <select id="t-run">${entries.map(({ run, r }) => html`<option value="${r}">${run.label}</option>`)}</select></label>
<label>score <select id="t-score"><option value="">any</option><option value="low">below 3</option><option value="high">3 or more</option><option value="failed">not scored</option></select></label>
${entries.length > 1 ? html`<label><input id="t-differ" type="checkbox"> differs only</label>` : html``}
<button type="button" id="t-csv">CSV</button>
<span id="t-count" aria-live="polite"></span></div>`;
  return html`<h3>Questions</h3><p class="hint">Scores are grounded (positions count), the ungrounded score in brackets; the true answer's groups list their predicate → value and the objects with their coordinates.</p>${filters}<table id="tag-table" class="grid questions"><thead><tr><th data-col="0" tabindex="0">id</th><th data-col="1" tabindex="0">query type</th><th data-col="2" tabindex="0">question</th><th data-col="3" tabindex="0">true answer</th>${entries.map(({ run }, i) => html`<th data-col="${4 + 2 * i}" tabindex="0">${run.label}: answer</th><th data-col="${5 + 2 * i}" tabindex="0">${run.label}: score</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** The TAG-EQA section, or nothing when no run is a structured-judge run. */
export function tagSection(runs: LoadedRun[], thumbs: Thumbnails): Html {
  const entries = tagEntries(runs);
  if (entries.length === 0) return html``;
  return html`<section id="tag"><h2>TAG-EQA structured scores</h2>${headline(entries)}${scoresChart(entries)}${histogramChart(entries)}${validChart(entries)}${errorsChart(entries)}${categoriesChart(entries)}${questionTable(entries, thumbs)}</section>`;
}
