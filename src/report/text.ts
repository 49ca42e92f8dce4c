import type { AnswerSummary } from "../agents/index.js";
import type { MeanEstimate, ScoreSummary } from "../eval/index.js";

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]): string =>
    cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

function estimateRow(label: string, estimate: MeanEstimate): string[] {
  return [label, String(estimate.n), estimate.mean.toFixed(1), `±${estimate.stderr.toFixed(1)}`, `[${estimate.ci[0].toFixed(1)}, ${estimate.ci[1].toFixed(1)}]`];
}

/** The table `eqa score` prints: LLM-Match by category, by source and overall. */
export function formatScoreSummary(summary: ScoreSummary): string {
  const { llmMatch, counts, config } = summary;
  const judge = (config.judge as { name?: string } | undefined)?.name ?? "?";
  const ciLabel = `${Math.round(llmMatch.overall.confidence * 100)}% CI`;
  const rows = [
    ...Object.entries(llmMatch.byCategory).map(([category, e]) => estimateRow(category, e)),
    ["", "", "", "", ""],
    ...Object.entries(llmMatch.bySource).map(([source, e]) => estimateRow(source, e)),
    ["", "", "", "", ""],
    estimateRow("overall", llmMatch.overall),
  ];
  const lines = [
    `LLM-Match (${config.mode} mode, judge ${judge}): ${counts.scored} of ${counts.questions} questions scored, ${counts.failed} failed`,
    "",
    formatTable(["", "n", "LLM-Match", "±SE", ciLabel], rows),
  ];
  const notes: string[] = [];
  if (counts.reused > 0) notes.push(`${counts.reused} judgement(s) reused from the run directory`);
  if (counts.noAnswer > 0) notes.push(`${counts.noAnswer} question(s) without an answer scored 0`);
  if (counts.missingPredictions > 0) notes.push(`${counts.missingPredictions} of them had no prediction (--allow-missing)`);
  if (counts.neutralised > 0) notes.push(`${counts.neutralised} prediction(s) had text addressed to the judge, neutralised`);
  if (counts.predictionsOutsideSubset > 0) notes.push(`${counts.predictionsOutsideSubset} prediction(s) outside the subset ignored`);
  const usage = summary.usage.judgements;
  notes.push(`${usage.calls} judge call(s), ${usage.cacheHits} from the cache, ${usage.promptTokens + usage.completionTokens} tokens, ${usage.retries} retries`);
  lines.push("", ...notes.map((n) => `  ${n}`));
  if (summary.failures.length > 0) {
    lines.push("", `failed (${summary.failures.length}):`);
    for (const failure of summary.failures.slice(0, 20)) lines.push(`  ${failure.questionId}: ${failure.error}`);
    if (summary.failures.length > 20) lines.push(`  … and ${summary.failures.length - 20} more, listed in summary.json`);
  }
  return lines.join("\n");
}

/** What `eqa answer` prints: counts, abstention, failures. */
export function formatAnswerSummary(summary: AnswerSummary): string {
  const { counts, config } = summary;
  const lines = [`${String(config.agent)} agent (${String(config.model)}): ${counts.answered} of ${counts.questions} questions answered, ${counts.failed} failed`];
  if (counts.reused > 0) lines.push(`  ${counts.reused} answer(s) reused from the run directory`);
  if (summary.abstentionRate !== null) {
    lines.push(`  force-a-guess: ${counts.abstained} of ${counts.forceGuessChecked} answers abstained (${(100 * summary.abstentionRate).toFixed(1)}%), replaced by the blind LLM's guess`);
  }
  const usage = summary.usage.answers;
  lines.push(`  ${usage.calls} model call(s), ${usage.cacheHits} from the cache, ${usage.images} image(s), ${usage.promptTokens + usage.completionTokens} tokens, ${usage.retries} retries`);
  if (summary.failures.length > 0) {
    lines.push("", `failed (${summary.failures.length}):`);
    for (const failure of summary.failures.slice(0, 20)) lines.push(`  ${failure.questionId}: ${failure.error}`);
    if (summary.failures.length > 20) lines.push(`  … and ${summary.failures.length - 20} more, listed in summary.json`);
  }
  return lines.join("\n");
}
