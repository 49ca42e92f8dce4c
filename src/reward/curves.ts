import { environmentLabel } from "../data/index.js";
import { loadSharp } from "../episodes/index.js";

/** One line of a test-time-scaling plot: a value per K. */
export interface CurveSeries {
  label: string;
  points: { k: number; value: number; ci?: [number, number] }[];
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function niceRange(values: number[]): [number, number] {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return [0, 1];
  let low = Math.min(...finite);
  let high = Math.max(...finite);
  if (high - low < 1e-9) {
    low -= 1;
    high += 1;
  }
  const pad = (high - low) * 0.08;
  return [low - pad, high + pad];
}

/** One panel: value against K on a log2 axis, with the bootstrap interval as a band. */
function panel(title: string, yLabel: string, series: CurveSeries[], x0: number, width: number, height: number, bounds: [number, number]): string {
  const margin = { left: 62, right: 16, top: 36, bottom: 46 };
  const ks = [...new Set(series.flatMap((s) => s.points.map((p) => p.k)))].sort((a, b) => a - b);
  const values = series.flatMap((s) => s.points.flatMap((p) => [p.value, ...(p.ci ?? [])]));
  const [rawMin, rawMax] = niceRange(values);
  const yMin = Math.max(bounds[0], rawMin);
  const yMax = Math.min(bounds[1], rawMax);
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const logMin = Math.log2(ks[0] ?? 1);
  const logMax = Math.log2(ks[ks.length - 1] ?? 2);
  const x = (k: number): number => x0 + margin.left + (logMax === logMin ? plotW / 2 : ((Math.log2(k) - logMin) / (logMax - logMin)) * plotW);
  const y = (v: number): number => margin.top + (1 - (v - yMin) / (yMax - yMin)) * plotH;
  const parts: string[] = [];
  parts.push(`<text x="${x0 + width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  parts.push(`<rect x="${x0 + margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#444"/>`);
  for (let t = 0; t <= 4; t++) {
    const v = yMin + ((yMax - yMin) * t) / 4;
    parts.push(`<line x1="${x0 + margin.left}" x2="${x0 + margin.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${x0 + margin.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v.toFixed(yMax - yMin < 2 ? 2 : 1)}</text>`);
  }
  for (const k of ks) parts.push(`<text x="${x(k)}" y="${margin.top + plotH + 16}" text-anchor="middle" font-size="11">${k}</text>`);
  parts.push(`<text x="${x0 + margin.left + plotW / 2}" y="${height - 8}" text-anchor="middle" font-size="12">K (sampled critiques)</text>`);
  parts.push(`<text x="${x0 + 14}" y="${margin.top + plotH / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 ${x0 + 14} ${margin.top + plotH / 2})">${escapeXml(yLabel)}</text>`);
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const pts = s.points.filter((p) => Number.isFinite(p.value));
    const band = pts.filter((p) => p.ci && Number.isFinite(p.ci[0]) && Number.isFinite(p.ci[1]));
    if (band.length > 1) {
      const upper = band.map((p) => `${x(p.k)},${y(p.ci![1])}`);
      const lower = [...band].reverse().map((p) => `${x(p.k)},${y(p.ci![0])}`);
      parts.push(`<polygon points="${[...upper, ...lower].join(" ")}" fill="${colour}" fill-opacity="0.12" stroke="none"/>`);
    }
    if (pts.length > 0) parts.push(`<polyline points="${pts.map((p) => `${x(p.k)},${y(p.value)}`).join(" ")}" fill="none" stroke="${colour}" stroke-width="2.5"/>`);
    for (const p of pts) parts.push(`<circle cx="${x(p.k)}" cy="${y(p.value)}" r="3.5" fill="${colour}"/>`);
    parts.push(`<rect x="${x0 + margin.left + 10}" y="${margin.top + 10 + i * 18}" width="14" height="4" fill="${colour}"/>`);
    parts.push(`<text x="${x0 + margin.left + 30}" y="${margin.top + 16 + i * 18}" font-size="12">${escapeXml(s.label)}</text>`);
  });
  return parts.join("\n");
}

/** The accuracy and RMSE curves against K, side by side (as the paper's Fig. 3), as SVG. */
export function scalingCurvesSvg(title: string, accuracy: CurveSeries[], rmse: CurveSeries[]): string {
  const width = 480;
  const height = 340;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width * 2}" height="${height + 24}" font-family="DejaVu Sans, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<g transform="translate(0,24)">`,
    panel("Accuracy (%)", "accuracy within τ (%)", accuracy, 0, width, height, [0, 100]),
    panel("RMSE", "RMSE", rmse, width, width, height, [0, Number.POSITIVE_INFINITY]),
    `</g>`,
    `<text x="${width}" y="18" text-anchor="middle" font-size="13">${escapeXml(title)}</text>`,
    `</svg>`,
  ].join("\n");
}

export async function svgToPng(svg: string): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(Buffer.from(svg)).png().toBuffer();
}

export function seriesLabel(group: string): string {
  return group === "overall" ? "Overall" : environmentLabel(group);
}
