import { readFileSync } from "node:fs";
import { basename, resolve, sep } from "node:path";
import { OPENEQA_CATEGORIES } from "../core/index.js";
import { abstentionAnalysis, type AbstentionRow } from "../eval/index.js";
import { formatDollars } from "../models/index.js";
import { REPORT_SCRIPT, REPORT_STYLE } from "./assets.js";
import { comparisonSection, histogramSection } from "./html-compare.js";
import { failuresByReason, runInfoSection } from "./html-info.js";
import { Html, barChart, escapeHtml, fmt, html, scriptHash, RUN_COLOURS, type BarSeries } from "./html-parts.js";
import { questionView } from "./question-views.js";
import { loadRuns, type HeadlineMetric, type LoadedRun, type RunQuestion, type UsageRead } from "./runs.js";
import { reproducedTablesSection } from "./reproduce-html.js";
import { tagSection } from "./tag-html.js";
import { answerKey, collectRecordingThumbnails, collectThumbnails, planLink, recordingsFigures, thumbnailStrip, thumbnailStyle, type Thumbnails } from "./thumbnails.js";
import { RUN_KIND } from "../store/index.js";

export interface ReportOptions {
  title?: string;
  /** Thumbnails per question and run (default 4; 0 for none). */
  thumbnails?: number;
  /** Longest side of a thumbnail in pixels (default 128). */
  thumbnailSize?: number;
  /**
   * Write the thumbnails as JPEG files into this folder, named relative to `reportDir`, instead
   * of embedding them in the page (`eqa report --frames-dir`).
   */
  framesDir?: string;
  /** The folder the report is written to (default: the working directory). */
  reportDir?: string;
  /**
   * A folder of simulator recordings (`eqa demo`'s `recordings/`, one `home-N/` each): the
   * report shows each one's plan and `recordingFrames` of its colour frames.
   */
  recordings?: string;
  /** Frames shown per recording, evenly spaced (default 4). */
  recordingFrames?: number;
}

/**
 * `eqa report`: one self-contained HTML file (no network, charts as inline SVG, each frame's
 * thumbnail embedded once however many answers show it) with the runs side by side. Every text
 * taken from a run or a model is escaped; the page's one inline script is pinned by its hash
 * in the page's CSP, so even markup that slipped through could not run.
 */
export async function buildHtmlReport(given: readonly (LoadedRun | string)[], options: ReportOptions = {}): Promise<{ html: string; notes: string[] }> {
  // a path is read by the one run loader (a folder of runs gives each of its runs)
  const runs: LoadedRun[] = [];
  for (const item of given) runs.push(...(typeof item === "string" ? await loadRuns([item]) : [item]));
  const notes: string[] = [];
  const thumbs = await collectThumbnails(runs, { perQuestion: options.thumbnails ?? 4, size: options.thumbnailSize ?? 128, ...(options.framesDir ? { dir: options.framesDir, reportDir: options.reportDir ?? process.cwd() } : {}) }, notes);
  const recordings = options.recordings
    ? await collectRecordingThumbnails(options.recordings, thumbs, { perRecording: options.recordingFrames ?? 4, size: options.thumbnailSize ?? 128, ...(options.framesDir ? { dir: options.framesDir, reportDir: options.reportDir ?? process.cwd() } : {}) }, notes)
    : [];
  const title = options.title ?? `eqakit report: ${runs.map((r) => r.label).join(", ")}`;
  const body = html`
<header><h1>${title}</h1><p class="meta">${runs.length} run(s); generated ${new Date().toISOString()}</p></header>
${runsNotes(runs, notes)}
${headlineSection(runs)}
${recordings.length > 0 ? html`<section id="recordings"><h2>Recordings</h2>${recordingsFigures(recordings)}</section>` : html``}
${reproducedTablesSection(runs)}
${runInfoSection(runs)}
${chartsSection(runs)}
${histogramSection(runs)}
${comparisonSection(runs)}
${tagSection(runs, thumbs)}
${abstentionSection(runs)}
${metricsSection(runs)}
<section id="cost"><h2>Cost</h2>${costTable(runs)}</section>
<section id="failures"><h2>Failures</h2>${failuresSection(runs)}</section>
${runs.some((r) => r.questions.length > 0) ? html`<section id="questions"><h2>Questions</h2>${questionTable(runs, thumbs)}</section>` : html``}
`;
  const csp = `default-src 'none'; img-src data: file: 'self'; media-src file:; style-src 'unsafe-inline'; script-src ${scriptHash(REPORT_SCRIPT)}`;
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<style>${REPORT_STYLE}</style>${thumbs.frames.length > 0 ? `\n<style>${thumbnailStyle(thumbs)}</style>` : ""}</head>
<body class="report">${boxTables(body.text)}
<script>${REPORT_SCRIPT}</script>
</body></html>
`;
  return { html: page, notes };
}

/** Every table in a box of its own that scrolls sideways when the table is wider than the page: the page itself never does. */
function boxTables(page: string): string {
  return page.replace(/<table\b/g, '<div class="table-box"><table').replace(/<\/table>/g, "</table></div>");
}

function runsNotes(runs: LoadedRun[], extra: string[]): Html {
  const items = runs.flatMap((r) => r.notes.map((n) => html`<li><b>${r.label}</b>: ${n}</li>`));
  items.push(...extra.map((n) => html`<li>${n}</li>`));
  return items.length === 0 ? html`` : html`<section id="notes"><h2>Notes</h2><ul>${items}</ul></section>`;
}

function configText(config: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = config?.[key];
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "name" in value && typeof value.name === "string") return value.name;
  return undefined;
}

type EstimateRead = { n: number; mean: number | null; stderr: number | null; ci: [number | null, number | null] };

function estimateCells(estimate: EstimateRead | undefined, field: string): Html {
  if (!estimate || estimate.n === 0 || estimate.mean === null) return html`<td>–</td><td>–</td><td>–</td><td>–</td>`;
  return html`<td class="num">${estimate.n}</td><td class="num" data-field="${field}" data-value="${estimate.mean}">${fmt(estimate.mean)}</td><td class="num">±${fmt(estimate.stderr)}</td><td class="num">[${fmt(estimate.ci[0])}, ${fmt(estimate.ci[1])}]</td>`;
}

/** A headline figure as text: "C* 40.0 %". */
function metricText(m: HeadlineMetric): string {
  if (m.value === null) return `${m.name} –`;
  const value = Number.isInteger(m.value) && m.unit === "" ? String(m.value) : fmt(m.value, m.unit === "" && Math.abs(m.value) < 10 ? 2 : 1);
  return `${m.name} ${value}${m.unit === "" ? "" : ` ${m.unit}`}`;
}

/** What made a run's answers and judged them, as the headline names them. */
function agentAndJudge(run: LoadedRun): { agent?: string; model?: string; judge?: Html } {
  const score = run.score;
  if (run.explore) {
    const config = run.explore.config;
    const answerer = config.answerer;
    const model = configText(config, "vlm") ?? configText(config, "model") ?? (typeof answerer === "object" && answerer !== null && "model" in answerer && typeof answerer.model === "string" ? answerer.model : undefined);
    const judged = run.explore.judged;
    return { ...(configText(config, "explorer") ? { agent: configText(config, "explorer") } : {}), ...(model ? { model } : {}), judge: judged ? html`${judged.judge} · ${judged.mode}` : html`<span class="hint">not judged: eqa explore --judge</span>` };
  }
  const judge = configText(score?.config, "judge");
  const variant = configText(score?.config, "promptVariant");
  // a kind whose summary keeps no configuration (eqa answer-tag's): its manifest's settings
  const agent = configText(run.answer?.config, "agent") ?? configText(run.settings, "agent");
  const model = configText(run.answer?.config, "model") ?? configText(run.settings, "model");
  const scoredBy = questionView(run.kind).scoredBy ?? (run.answer ? "eqa score" : undefined);
  return { ...(agent ? { agent } : {}), ...(model ? { model } : {}), ...(score ? { judge: html`${judge ?? "–"} · ${String(score.config.mode ?? "")}${variant ? ` · ${variant}` : ""}` } : scoredBy ? { judge: html`<span class="hint">not scored: run ${scoredBy}</span>` } : {}) };
}

/** Every run but TAG-EQA's (they have their own headline): LLM-Match where the run has it, each kind's own figures beside. */
function headlineSection(runs: LoadedRun[]): Html {
  const shown = runs.flatMap((run, i) => (run.tag ? [] : [{ run, i }]));
  if (shown.length === 0) return html``;
  const rows = shown.map(({ run, i }) => {
    const swatch = html`<i class="swatch" style="background:${RUN_COLOURS[i % RUN_COLOURS.length]!}"></i>`;
    const { agent, model, judge } = agentAndJudge(run);
    const own = run.metrics.filter((m) => m.name !== "LLM-Match" && m.name !== "abstained");
    const figures = own.length > 0 ? html`<div class="figures">${own.slice(0, 8).map((m) => html`<span class="figure-chip" title="${m.about}">${metricText(m)}</span> `)}${own.length > 8 ? html`<span class="hint">… see Metrics</span>` : html``}</div>` : html``;
    const exploreMatch = run.explore?.judged?.llmMatch;
    const llmMatch = run.score ? estimateCells(run.score.llmMatch.overall, "overall") : exploreMatch && exploreMatch.correctness !== null ? html`<td class="num">${exploreMatch.n}</td><td class="num" data-field="overall" data-value="${exploreMatch.correctness}">${fmt(exploreMatch.correctness)}</td><td>–</td><td>–</td>` : html`<td>–</td><td>–</td><td>–</td><td>–</td>`;
    const status =
      run.kind === RUN_KIND.reproduce
        ? html`<div class="hint">its table: <a href="#reproduced">Reproduced tables</a></div>`
        : !run.score && !run.answer && run.metrics.length === 0
          ? html`<div class="hint">${run.questions.length > 0 ? `no summary yet: ${run.questions.length} question(s) recorded so far` : "no summary: nothing to show yet"}</div>`
          : html``;
    return html`<tr data-run="${i}"><td class="nowrap">${swatch}${run.label}</td><td class="nowrap">${run.kind}</td><td>${agent ?? "–"}${model ? ` (${model})` : ""}</td><td>${judge ?? "–"}</td>${llmMatch}<td class="num">${run.answer?.abstentionRate !== null && run.answer?.abstentionRate !== undefined ? `${fmt(100 * run.answer.abstentionRate)}%` : "–"}</td><td class="text">${figures}${status}</td></tr>`;
  });
  const confidence = runs.find((r) => r.score)?.score?.llmMatch.overall.confidence ?? 0.95;
  return html`<section id="headline"><h2>Headline</h2><table class="grid"><thead><tr><th>run</th><th>kind</th><th>agent</th><th>judge</th><th>n</th><th>LLM-Match</th><th>±SE</th><th>${Math.round(confidence * 100)}% CI</th><th>abstained</th><th>the kind's own figures</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function chartsSection(runs: LoadedRun[]): Html {
  // each run keeps its index among all the runs: its colour, and the data-run of its bars
  const scored = runs.filter((r) => r.score);
  const indexOf = new Map(runs.map((r, i) => [r, i]));
  // a report of structured-judge runs only has its own charts
  if (scored.length === 0 && runs.some((r) => r.tag || r.metrics.length > 0)) return html``;
  if (scored.length === 0) return html`<section id="charts"><h2>By category and source</h2><p>No run has figures yet: run <code>eqa score</code> to see LLM-Match by category.</p></section>`;
  const categories = [...OPENEQA_CATEGORIES.filter((c) => scored.some((r) => r.score!.llmMatch.byCategory[c])), ...new Set(scored.flatMap((r) => Object.keys(r.score!.llmMatch.byCategory)).filter((c) => !(OPENEQA_CATEGORIES as readonly string[]).includes(c)))];
  const sources = [...new Set(scored.flatMap((r) => Object.keys(r.score!.llmMatch.bySource)))].sort();
  const series = (pick: (r: LoadedRun) => Record<string, EstimateRead>): BarSeries[] =>
    scored.map((r) => ({ label: r.label, run: indexOf.get(r)!, values: Object.fromEntries(Object.entries(pick(r)).map(([k, e]) => [k, { mean: e.mean ?? Number.NaN, ci: [e.ci[0] ?? Number.NaN, e.ci[1] ?? Number.NaN] as [number, number], n: e.n }])) }));
  const table = (groups: string[], pick: (r: LoadedRun) => Record<string, EstimateRead>, kind: string): Html =>
    html`<table class="grid compact"><thead><tr><th>${kind}</th>${scored.map((r) => html`<th>${r.label}</th>`)}</tr></thead><tbody>${groups.map(
      (g) => html`<tr><td>${g}</td>${scored.map((r) => {
        const e = pick(r)[g];
        return e ? html`<td class="num" data-group="${g}" data-value="${e.mean}">${fmt(e.mean)} ±${fmt(e.stderr)}</td>` : html`<td>–</td>`;
      })}</tr>`,
    )}</tbody></table>`;
  return html`<section id="charts"><h2>By category (OpenEQA Fig. 10, Table IV)</h2>${barChart("chart-category", categories, series((r) => r.score!.llmMatch.byCategory))}${table(categories, (r) => r.score!.llmMatch.byCategory, "category")}
<h2>By source</h2>${barChart("chart-source", sources, series((r) => r.score!.llmMatch.bySource))}${table(sources, (r) => r.score!.llmMatch.bySource, "source")}</section>`;
}

function metricsOf(run: LoadedRun): Map<string, number> {
  return new Map(run.questions.flatMap((q) => (typeof q.score === "number" ? [[q.questionId, q.score] as [string, number]] : [])));
}

/** The score run of the same answers without force-a-guess (`eqa score --without-guess`), among the given runs. */
function withoutGuessRun(run: LoadedRun, runs: LoadedRun[]): LoadedRun | undefined {
  return runs.find((other) => {
    if (other === run || other.score?.config.withoutGuess !== true) return false;
    const predictions = other.score.config.predictions;
    const path = typeof predictions === "object" && predictions !== null && "path" in predictions && typeof predictions.path === "string" ? resolve(predictions.path) : "";
    return path.startsWith(run.dir + sep);
  });
}

function abstentionSection(runs: LoadedRun[]): Html {
  const rows: { run: LoadedRun; row: AbstentionRow; without?: LoadedRun }[] = [];
  for (const run of runs) {
    if (!run.answer || run.answer.counts.forceGuessChecked === 0) continue;
    const outcomes = run.questions.flatMap((q) => (q.forceGuess ? [{ questionId: q.questionId, action: q.forceGuess }] : []));
    const without = withoutGuessRun(run, runs);
    rows.push({ run, row: abstentionAnalysis(outcomes, run.score ? metricsOf(run) : undefined, without ? metricsOf(without) : undefined, { resamples: 1000 }), ...(without ? { without } : {}) });
  }
  if (rows.length === 0) return html``;
  return html`<section id="abstention"><h2>Force-a-guess (OpenEQA Table III)</h2><table class="grid"><thead><tr><th>run</th><th>checked</th><th>abstained</th><th>rate</th><th>LLM-Match</th><th>w/o guess</th><th>difference</th></tr></thead><tbody>${rows.map(
    ({ run, row, without }) =>
      html`<tr><td>${run.label}</td><td class="num">${row.checked}</td><td class="num">${row.abstained}</td><td class="num">${row.rate === null ? "–" : `${fmt(100 * row.rate)}%`}</td><td class="num">${fmt(row.withGuess?.mean)}</td><td class="num">${without ? fmt(row.withoutGuess?.mean) : html`<span class="hint">score the agent's own answers: eqa score --without-guess --predictions ${run.dir}/predictions.json</span>`}</td><td class="num">${row.difference === null ? "–" : `${row.difference >= 0 ? "+" : ""}${fmt(row.difference)}`}</td></tr>`,
  )}</tbody></table><p class="hint">LLM-Match with the guess, without it, and their difference are computed on the questions both scorings judged.</p></section>`;
}

/** Each run's headline figures as its kind's paper names them, with what each averages, and the figures the run drew. */
function metricsSection(runs: LoadedRun[]): Html {
  const shown = runs.filter((r) => r.metrics.length > 0 || r.figures.length > 0);
  if (shown.length === 0) return html``;
  return html`<section id="metrics"><h2>Metrics</h2>${shown.map(
    (r) =>
      html`<h3>${r.label} (${r.kind})</h3>${r.figures.map((f) => html`<img class="figure" alt="figure ${basename(f)}" src="data:image/png;base64,${readFileSync(f).toString("base64")}">`)}<table class="grid compact metrics"><thead><tr><th>figure</th><th>value</th><th>n</th><th>interval</th><th>what it is</th></tr></thead><tbody>${r.metrics.map(
        (m) => html`<tr data-metric="${m.name}"><td>${m.name}</td><td class="num" data-value="${m.value ?? ""}">${m.value === null ? "–" : metricText({ ...m, name: "" }).trim()}</td><td class="num">${m.n ?? "–"}</td><td class="num">${m.ci ? `[${fmt(m.ci[0])}, ${fmt(m.ci[1])}]` : "–"}</td><td class="text">${m.about}</td></tr>`,
      )}</tbody></table>`,
  )}</section>`;
}

function costTable(runs: LoadedRun[]): Html {
  const rows = runs.map((run) => {
    // a stage's dollars: its summary's cost total (other kinds: when the summary has one usage stage)
    const dollarsOf = (stage: string): number | null | undefined => run.costs.find((c) => c.stage === stage)?.cost.total.dollars;
    const otherDollars = run.otherUsage.length === 1 ? dollarsOf(run.kind) : undefined;
    const parts: { stage: string; usage: Pick<UsageRead, "calls" | "cacheHits" | "promptTokens" | "completionTokens" | "thinkingTokens" | "images" | "retries">; wall: number; dollars: number | null | undefined }[] = [
      ...(run.answer ? [{ stage: "answer", usage: run.answer.usage.answers, wall: run.answer.wallTimeMs, dollars: dollarsOf("answer") }] : []),
      ...(run.score ? [{ stage: "judge", usage: run.score.usage.judgements, wall: run.score.wallTimeMs, dollars: dollarsOf("judge") }] : []),
      ...(run.tag?.summary ? [{ stage: "structured judge", usage: run.tag.summary.usage, wall: run.tag.summary.wallTimeMs, dollars: dollarsOf("structured judge") }] : []),
    ];
    for (const [stage, usage] of run.otherUsage) parts.push({ stage, usage, wall: Number.NaN, dollars: otherDollars });
    // a stage whose calls are known only from the run's ledger (its cost): its totals, as By role sums them
    for (const { stage, cost } of run.costs) {
      if (parts.some((p) => p.stage === stage) || (stage === run.kind && run.otherUsage.length > 0)) continue;
      const t = cost.total;
      parts.push({ stage, usage: { calls: t.calls, cacheHits: t.cacheHits, promptTokens: t.promptTokens, completionTokens: t.completionTokens, thinkingTokens: t.thinkingTokens, images: t.images ?? Number.NaN, retries: Number.NaN }, wall: stage === run.kind ? (run.otherSummary?.wallTimeMs ?? Number.NaN) : Number.NaN, dollars: t.dollars });
    }
    if (parts.length === 0) return html`<tr><td>${run.label}</td><td colspan="10">no usage recorded</td></tr>`;
    const count = (n: number): string => (Number.isFinite(n) ? String(n) : "–");
    return parts.map(
      (p) =>
        html`<tr data-run="${run.label}" data-stage="${p.stage}"><td>${run.label}</td><td>${p.stage}</td><td class="num" data-field="calls">${count(p.usage.calls)}</td><td class="num">${count(p.usage.cacheHits)}</td><td class="num">${count(p.usage.promptTokens)}</td><td class="num">${count(p.usage.completionTokens)}</td><td class="num">${count(p.usage.thinkingTokens ?? 0)}</td><td class="num">${count(p.usage.images)}</td><td class="num">${count(p.usage.retries)}</td><td class="num">${Number.isFinite(p.wall) ? `${fmt(p.wall / 1000)} s` : "–"}</td><td class="num">${p.dollars === undefined ? "–" : formatDollars(p.dollars)}</td></tr>`,
    );
  });
  const usage = html`<table class="grid"><thead><tr><th>run</th><th>stage</th><th>calls</th><th>cache hits</th><th>prompt tokens</th><th>completion tokens</th><th>of which thinking</th><th>images</th><th>retries</th><th>wall time</th><th>dollars</th></tr></thead><tbody>${rows}</tbody></table>`;
  const roleRows = runs.flatMap((run) =>
    run.costs.flatMap(({ stage, cost }) =>
      cost.roles.map(
        (r) =>
          html`<tr><td>${run.label}</td><td>${stage}</td><td>${r.role}</td><td>${r.model}</td><td class="num">${r.calls}</td><td class="num">${r.failed ?? "–"}</td><td class="num">${r.cacheHits}</td><td class="num">${r.promptTokens}</td><td class="num">${r.completionTokens}</td><td class="num">${r.thinkingTokens}</td><td class="num">${r.images ?? "–"}</td><td class="num" data-value="${r.dollars ?? ""}">${formatDollars(r.dollars)}</td></tr>`,
      ),
    ),
  );
  if (roleRows.length === 0) return usage;
  const sources = [...new Set(runs.flatMap((run) => run.costs.flatMap((c) => c.cost.prices)))];
  return html`${usage}<h3>By role</h3><table class="grid"><thead><tr><th>run</th><th>stage</th><th>role</th><th>model</th><th>calls</th><th>of which failed</th><th>cache hits</th><th>prompt tokens</th><th>completion tokens</th><th>of which thinking</th><th>images</th><th>dollars</th></tr></thead><tbody>${roleRows}</tbody></table><p class="hint">Dollars at ${sources.join(", then ")}; replies from the model-call cache cost nothing; n/a: a model without a price (set one in a file named by EQA_PRICES).</p>`;
}

function failuresSection(runs: LoadedRun[]): Html {
  const stages = runs.flatMap((run) =>
    (
      [
        ["answer", run.answer?.failures ?? []],
        ["judge", run.score?.failures ?? []],
        ["structured judge", run.tag?.summary?.failures ?? []],
        ["explore", run.explore?.failures ?? []],
        ["judge (explore)", run.explore?.judged?.failures ?? []],
        // the kinds without those stages (rm build, memory build, …) name their failures on their rows
        [run.kind, run.answer || run.score || run.tag || run.explore ? [] : run.questions.flatMap((q) => (q.error === undefined ? [] : [{ questionId: q.questionId, error: q.error }]))],
      ] as const
    ).flatMap(([stage, failures]) => (failures.length > 0 ? [{ run, stage, failures }] : [])),
  );
  if (stages.length === 0) return html`<p>None.</p>`;
  return html`${stages.map(({ run, stage, failures }) => {
    const reasons = failuresByReason(failures);
    return html`<h3>${run.label} · ${stage}: ${failures.length}</h3><ul class="reasons">${reasons.map(([reason, n]) => html`<li><b>${n}</b> <span class="text">${reason}</span></li>`)}</ul><details><summary>each failure</summary><ul class="failures">${failures.map((f) => html`<li>${f.questionId}: <span class="text">${f.error}</span></li>`)}</ul></details>`;
  })}`;
}

/** A mark as the table shows it, and the class saying how it differs from the first run's. */
function changeClass(points: number | undefined, first: number | undefined): string {
  if (points === undefined || first === undefined || points === first) return "";
  return points > first ? " up" : " down";
}

/**
 * One run's answer and mark. `first` is the first shown run's answer and mark, which this run's
 * are compared with (undefined for the first run itself).
 */
function answerCell(q: RunQuestion | undefined, thumbs: Thumbnails, r: number, first: { answer: string | null | undefined; points: number | undefined } | undefined): Html {
  if (!q) return html`<td class="missing" data-sort="">–</td><td class="num score" data-sort="-1" data-run="${r}" data-points="" data-csv="">–</td>`;
  const answer = q.answer === undefined ? html`<span class="hint">(not answered in this run)</span>` : q.answer === null ? html`<span class="hint">(no answer)</span>` : html`<span class="text answer">${q.answer}</span>`;
  const forced = q.forceGuess === "guess" ? html`<div class="forced">forced guess: the agent said “<span class="text">${q.agentAnswer ?? "(nothing)"}</span>”, and the blind guess above was submitted</div>` : html``;
  const neutralised = q.neutralised ? html`<div class="neutralised">addressed the judge; the judge read: <span class="text">${q.judgePrediction ?? "(nothing)"}</span></div>` : html``;
  const error = q.error ? html`<div class="error text">${q.failedStage ? `${q.failedStage} failed${q.status ? ` (reply ${q.status})` : ""}: ` : ""}${q.error}</div>` : html``;
  const eac = q.eac ? ("error" in q.eac ? html`<div class="error text">EAC failed: ${q.eac.error}</div>` : html`<div class="hint">EAC δ·σ ${fmt(q.eac.score, 2)} (grounding δ ${q.eac.grounding}, accuracy σ ${q.eac.accuracy})</div>`) : html``;
  const explored = q.stop !== undefined ? html`<div class="hint">stop: ${q.stop ?? "–"}${q.pathLengthM !== undefined && q.pathLengthM !== null ? ` · path ${fmt(q.pathLengthM, 2)} m` : ""}${q.choice !== undefined ? ` · choice ${q.choice ?? "(none read)"}${q.correct === undefined ? "" : q.correct ? ", right" : ", wrong"}` : q.correct !== undefined ? (q.correct ? " · right" : " · wrong") : ""}${q.history !== undefined ? ` · history: ${q.history}` : ""}</div>` : html``;
  const judge = q.judgeReplies.length > 0 ? html`<details><summary>judge's reply</summary><pre class="text">${q.judgeReplies.map((reply) => reply ?? "(empty)").join("\n---\n")}</pre></details>` : html``;
  const strip = thumbnailStrip(thumbs.byAnswer.get(answerKey(r, q.questionId)) ?? []);
  const plan = thumbs.plans.get(answerKey(r, q.questionId));
  const planned = plan ? html`<div class="answer-plan">${planLink(plan, `${q.questionId}: the path walked`)}</div>` : html``;
  const points = q.points;
  const changed = first !== undefined && q.answer !== undefined && first.answer !== undefined && q.answer !== first.answer;
  return html`<td data-sort="${q.answer ?? ""}"${changed ? new Html(' class="changed" title="a different answer than the first run\'s"') : ""}>${answer}${explored}${eac}${forced}${neutralised}${error}${judge}${strip}${planned}</td><td class="num score${changeClass(points, first?.points)}" data-sort="${points ?? -1}" data-run="${r}" data-points="${points ?? ""}" data-csv="${q.score ?? ""}">${q.score === undefined ? "–" : q.score === null ? "failed" : html`${q.score} <small>(${fmt(points)})</small>`}</td>`;
}

function questionTable(runs: LoadedRun[], thumbs: Thumbnails): Html {
  // runs without questions (other kinds of runs) and runs that answer none (a generated dataset) get no columns
  const shown = runs.flatMap((run, r) => (run.questions.length > 0 && questionView(run.kind).answers ? [{ run, r }] : []));
  const judged = shown.filter(({ run }) => run.questions.some((q) => q.score !== undefined));
  const byRun = runs.map((run) => new Map(run.questions.map((q) => [q.questionId, q])));
  // the benchmark's order; questions it does not hold after, in the order the runs give them
  const position = new Map<string, number>();
  for (const run of runs) for (const q of run.questions) if (!position.has(q.questionId)) position.set(q.questionId, q.position ?? Number.MAX_SAFE_INTEGER);
  const order = [...position.keys()].sort((a, b) => position.get(a)! - position.get(b)!);
  const info = (id: string): RunQuestion | undefined => byRun.map((m) => m.get(id)).find((q) => q?.question !== undefined) ?? byRun.map((m) => m.get(id)).find((q) => q !== undefined);
  const categories = [...new Set(order.map((id) => info(id)?.category).filter((c): c is string => c !== undefined))];
  const rows = order.map((id) => {
    const q = info(id);
    const gt = q?.groundTruth === undefined ? "" : q.extraAnswers ? `${q.groundTruth} (also: ${q.extraAnswers.join("; ")})` : q.groundTruth;
    // marks are compared among the runs that were judged (an answer run without a score has none)
    const marks = judged.map(({ r }) => byRun[r]!.get(id)?.points);
    const first = marks[0];
    const differs = judged.length > 1 && new Set(marks.map((m) => m ?? "none")).size > 1;
    return html`<tr data-category="${q?.category ?? ""}" data-id="${id}"${differs ? new Html(' class="differs"') : ""}><td class="qid" data-sort="${id}"><code>${id}</code></td><td data-sort="${q?.category ?? ""}">${q?.category ?? "–"}</td><td class="text" data-sort="${q?.question ?? ""}">${q?.question ?? "–"}${q?.choices ? html`<ol class="choices" type="A">${q.choices.map((c) => html`<li>${c}</li>`)}</ol>` : html``}</td><td class="text" data-sort="${gt}">${gt || "–"}</td>${shown.map(({ r }) => answerCell(byRun[r]!.get(id), thumbs, r, r === shown[0]!.r ? undefined : { answer: byRun[shown[0]!.r]!.get(id)?.answer, points: r === judged[0]?.r ? undefined : first }))}</tr>`;
  });
  const filters = html`<div class="filters"><label>search <input id="q-search" type="search" placeholder="question, answer, id…"></label>
<label>category <select id="q-category"><option value="">all</option>${categories.map((c) => html`<option value="${c}">${c}</option>`)}</select></label>
<label>run <select id="q-run">${shown.map(({ run, r }) => html`<option value="${r}">${run.label}</option>`)}</select></label>
<label>score <select id="q-score"><option value="">any</option><option value="low">below 50</option><option value="high">50 or more</option><option value="failed">not scored</option></select></label>
${judged.length > 1 ? html`<label><input id="q-differ" type="checkbox"> differs only</label>` : html``}
<button type="button" id="q-csv">CSV</button>
<span id="q-count" aria-live="polite"></span></div>`;
  const legend = judged.length > 1 ? html`<p class="hint">Rows where the runs' marks differ are highlighted; a mark above the first run's is <span class="up">green</span>, below it <span class="down">red</span>; an answer other than the first run's has a bar at its left. Click a column's header (or press Enter on it) to sort; CSV exports the rows shown.</p>` : html`<p class="hint">Click a column's header (or press Enter on it) to sort; CSV exports the rows shown.</p>`;
  return html`${legend}${filters}<table id="question-table" class="grid questions"><thead><tr><th data-col="0" tabindex="0">id</th><th data-col="1" tabindex="0">category</th><th data-col="2" tabindex="0">question</th><th data-col="3" tabindex="0">ground truth</th>${shown.map(({ run }, i) => html`<th data-col="${4 + 2 * i}" tabindex="0">${run.label}: answer</th><th data-col="${5 + 2 * i}" tabindex="0">${run.label}: mark</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
}
