/** What `eqa explore` prints after a Mixed EQA run: accuracy, SPL, wasted metres and history frames per category, with intervals, and the cost. */
import { MIXED_CATEGORIES } from "../data/index.js";
import type { MixedEstimate, MixedFigure, MixedSummary } from "../eval/index.js";
import { formatRunCost } from "./text.js";

function cell(e: MixedEstimate | null, digits: number): string {
  return e === null ? "-" : `${e.mean.toFixed(digits)} ± ${e.stderr.toFixed(digits)} (n=${e.n})`;
}

function row(name: string, figure: MixedFigure, digits: number, categories: readonly string[]): string {
  return `| ${name} | ${categories.map((c) => cell(figure.byCategory[c] ?? null, digits)).join(" | ")} | ${cell(figure.overall, digits)} |`;
}

export function formatMixedRun(run: { runDir: string; summary: MixedSummary }, agent: string): string {
  const s = run.summary;
  const categories = [...new Set([...MIXED_CATEGORIES, ...Object.keys(s.metrics.accuracy.byCategory)])];
  const lines = [
    `eqa explore (Mixed EQA, ${agent}): ${s.counts.finished}/${s.counts.episodes} episodes finished, ${s.counts.failed} failed, ${s.counts.correct} answered right (exact match, no judge)`,
    "",
    `| figure | ${categories.join(" | ")} | overall |`,
    `|---|${categories.map(() => "---|").join("")}---|`,
    row("accuracy %", s.metrics.accuracy, 1, categories),
    row("SPL (needs the present)", s.metrics.spl, 3, categories),
    row("wasted m (history answers)", s.metrics.wastedMetres, 2, categories),
    row("history frames retrieved", s.metrics.historyFrames, 1, categories),
    row("metres walked", s.metrics.pathLength, 2, categories),
    "",
    formatRunCost(s.cost),
    ...(s.failures.length > 0 ? ["", "failed episodes:", ...s.failures.slice(0, 10).map((f) => `  ${f.questionId}: ${f.error}`)] : []),
    "",
    `wrote ${run.runDir}/{mixed.jsonl,predictions.json,summary.json,trajectories/,frames/}`,
  ];
  return lines.join("\n");
}
