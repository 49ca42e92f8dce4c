import { createHash } from "node:crypto";

/** Escapes text for HTML content and double-quoted attributes: nothing from a run is ever markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new Html(out);
}

export const fmt = (value: number | null | undefined, digits = 1): string => (value === null || value === undefined || !Number.isFinite(value) ? "–" : value.toFixed(digits));

/** The CSP source of an inline script: its sha256, so that it, and nothing else, runs. */
export function scriptHash(script: string): string {
  return `'sha256-${createHash("sha256").update(script, "utf8").digest("base64")}'`;
}

export const RUN_COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

export interface BarSeries {
  label: string;
  /** The run's index in the report (its colour and `data-run`); the series' own index when absent. */
  run?: number;
  /** Values by group, with their interval. */
  values: Record<string, { mean: number; ci: [number, number]; n: number } | undefined>;
}

/** A chart's value axis: 0-100 unless given (TAG-EQA's scores run 1-5). */
export interface ChartAxis {
  min?: number;
  max?: number;
  ticks?: number[];
  /** Digits of the values written beside the bars. */
  digits?: number;
  /** Appended to the values written beside the bars (e.g. "%"). */
  unit?: string;
}

/**
 * Horizontal grouped bars with interval whiskers, as an inline SVG (OpenEQA Fig. 10):
 * one group per category or source, one bar per run, scale 0-100 unless `axis` says otherwise.
 */
export function barChart(id: string, groups: string[], series: BarSeries[], axis: ChartAxis = {}): Html {
  const barHeight = 16;
  const gap = 10;
  const labelWidth = 190;
  const plotWidth = 460;
  const groupHeight = series.length * barHeight + gap;
  const height = groups.length * groupHeight + 30;
  const min = axis.min ?? 0;
  const max = axis.max ?? 100;
  const digits = axis.digits ?? 1;
  const unit = axis.unit ?? "";
  const x = (v: number): number => labelWidth + ((Math.max(min, Math.min(max, v)) - min) / (max - min)) * plotWidth;
  const parts: Html[] = [];
  for (const tick of axis.ticks ?? [0, 25, 50, 75, 100].map((t) => min + ((max - min) * t) / 100)) {
    parts.push(html`<line class="tick" x1="${x(tick)}" x2="${x(tick)}" y1="0" y2="${height - 20}" stroke="#ddd"/><text x="${x(tick)}" y="${height - 6}" font-size="11" text-anchor="middle">${tick}</text>`);
  }
  groups.forEach((group, g) => {
    const top = g * groupHeight;
    parts.push(html`<text x="${labelWidth - 6}" y="${top + (series.length * barHeight) / 2 + 4}" font-size="11" text-anchor="end">${group}</text>`);
    series.forEach((s, i) => {
      const value = s.values[group];
      if (!value || !Number.isFinite(value.mean)) return;
      const r = s.run ?? i;
      const y = top + i * barHeight;
      const colour = RUN_COLOURS[r % RUN_COLOURS.length]!;
      const whisker = Number.isFinite(value.ci[0]) && Number.isFinite(value.ci[1]);
      // the value is written past the bar and its whisker, never over them
      const labelX = Math.max(x(value.mean), whisker ? x(value.ci[1]) : 0) + 4;
      parts.push(new Html(
        html`<g class="bar" data-run="${r}" data-group="${group}" data-mean="${value.mean}"><title>${s.label}: ${fmt(value.mean, digits)}${unit}${Number.isFinite(value.ci[0]) ? ` [${fmt(value.ci[0], digits)}, ${fmt(value.ci[1], digits)}]` : ""}, n=${value.n}</title><rect x="${labelWidth}" y="${y + 1}" width="${x(value.mean) - labelWidth}" height="${barHeight - 2}" fill="${colour}"/>` +
          (whisker
            ? html`<line class="ci" x1="${x(value.ci[0])}" x2="${x(value.ci[1])}" y1="${y + barHeight / 2}" y2="${y + barHeight / 2}" stroke="#222"/><line x1="${x(value.ci[0])}" x2="${x(value.ci[0])}" y1="${y + 3}" y2="${y + barHeight - 3}" stroke="#222"/><line x1="${x(value.ci[1])}" x2="${x(value.ci[1])}" y1="${y + 3}" y2="${y + barHeight - 3}" stroke="#222"/>`.text
            : "") +
          html`<text class="value" x="${labelX}" y="${y + barHeight - 3}" font-size="11" fill="#333">${fmt(value.mean, digits)}${unit}</text></g>`.text,
      ));
    });
  });
  const legend = series.map((s, i) => html`<span class="key"><i style="background:${RUN_COLOURS[(s.run ?? i) % RUN_COLOURS.length]!}"></i>${s.label}</span>`);
  return html`<figure><div class="chart-box"><svg id="${id}" class="chart" role="img" width="${labelWidth + plotWidth + 50}" height="${height}" viewBox="0 0 ${labelWidth + plotWidth + 50} ${height}" xmlns="http://www.w3.org/2000/svg">${parts}</svg></div><figcaption>${legend}</figcaption></figure>`;
}
