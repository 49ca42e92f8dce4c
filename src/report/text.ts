import type { AnswerSummary } from "../agents/index.js";
import { formatJudgeUnreadable } from "../core/index.js";
import type { LaEqaScoreSummary, MeanEstimate, ScoreSummary } from "../eval/index.js";
import { formatDollars, type PlannedRole, type PlannedRow, type RunCost, type UsageTotals } from "../models/index.js";

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]): string =>
    cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/**
 * What a reader must know about the model calls of a run: replies that were not answers (by
 * status) and every parameter a model was sent differently than asked (its family refuses
 * it), so that a reference setting that could not be kept is never silent.
 */
export function modelCallNotes(summary: { config?: Record<string, unknown>; replyStatuses?: Partial<Record<string, number>>; usage?: { thisProcess?: { deviations?: Record<string, string[]> } | null } }): string[] {
  const notes: string[] = [];
  const reference = summary.config?.parametersSentDifferently;
  if (Array.isArray(reference) && reference.length > 0) notes.push(`the judge could not take the reference's parameters as they are: ${reference.join("; ")}`);
  const statuses = Object.entries(summary.replyStatuses ?? {}).filter(([, n]) => (n ?? 0) > 0);
  if (statuses.length > 0) notes.push(`replies that were not answers: ${statuses.map(([status, n]) => `${n} ${status}`).join(", ")} (not scored; run again to ask again)`);
  for (const [model, deviations] of Object.entries(summary.usage?.thisProcess?.deviations ?? {})) {
    notes.push(`${model} was sent differently than asked: ${deviations.join("; ")}`);
  }
  return notes;
}

function estimateRow(label: string, estimate: MeanEstimate): string[] {
  return [label, String(estimate.n), estimate.mean.toFixed(1), `±${estimate.stderr.toFixed(1)}`, `[${estimate.ci[0].toFixed(1)}, ${estimate.ci[1].toFixed(1)}]`];
}

/** The table `eqa score` prints: LLM-Match by category, by source and overall. */
export function formatScoreSummary(summary: ScoreSummary, options: SummaryTextOptions = {}): string {
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
    `LLM-Match (${config.mode} mode, judge ${judge}): ${counts.scored} of ${counts.questions} questions scored, ${counts.failed} failed, ${counts.judgeUnreadable} unreadable by the judge`,
    "",
    formatTable(["", "n", "LLM-Match", "±SE", ciLabel], rows),
  ];
  const notes: string[] = [];
  if (counts.reused > 0) notes.push(`${counts.reused} judgement(s) reused from the run directory`);
  if (counts.noAnswer > 0) notes.push(`${counts.noAnswer} question(s) without an answer scored 0`);
  if (counts.missingPredictions > 0) notes.push(`${counts.missingPredictions} of them had no prediction (--allow-missing)`);
  if (counts.neutralised > 0) notes.push(`${counts.neutralised} prediction(s) had text addressed to the judge, neutralised`);
  if (counts.predictionsOutsideSubset > 0) notes.push(`${counts.predictionsOutsideSubset} prediction(s) outside the subset ignored`);
  notes.push(formatCallCounts("judge", summary.usage.judgements, summary.cost));
  notes.push(...modelCallNotes(summary));
  lines.push("", ...notes.map((n) => `  ${n}`));
  if (summary.cost && options.cost !== false) lines.push("", formatRunCost(summary.cost));
  lines.push(...judgeFailureLines(summary));
  return lines.join("\n");
}

/** What `eqa answer` prints: counts, abstention, failures. */
export function formatAnswerSummary(summary: AnswerSummary, options: SummaryTextOptions = {}): string {
  const { counts, config } = summary;
  const lines = [`${String(config.agent)} agent (${String(config.model)}): ${counts.answered} of ${counts.questions} questions answered, ${counts.failed} failed`];
  if (counts.reused > 0) lines.push(`  ${counts.reused} answer(s) reused from the run directory`);
  if (summary.abstentionRate !== null) {
    lines.push(`  force-a-guess: ${counts.abstained} of ${counts.forceGuessChecked} answers abstained (${(100 * summary.abstentionRate).toFixed(1)}%), replaced by the blind LLM's guess`);
  }
  const unreadable = formatJudgeUnreadable(summary.judgeUnreadable, "force-a-guess: the verdicts", false);
  if (unreadable) lines.push(`  ${unreadable}; those answers were kept`);
  lines.push(`  ${formatCallCounts("model", summary.usage.answers, summary.cost)}`);
  lines.push(...modelCallNotes(summary).map((n) => `  ${n}`));
  if (summary.failures.length > 0) {
    lines.push("", `failed (${summary.failures.length}):`);
    for (const failure of summary.failures.slice(0, 20)) lines.push(`  ${failure.questionId}: ${failure.error}`);
    if (summary.failures.length > 20) lines.push(`  … and ${summary.failures.length - 20} more, listed in summary.json`);
  }
  if (summary.cost && options.cost !== false) lines.push("", formatRunCost(summary.cost));
  return lines.join("\n");
}

/** How a stage's summary is printed: `cost: false` leaves its cost table out (`eqa run` prints one for both stages). */
export interface SummaryTextOptions {
  cost?: boolean;
}

/**
 * The line a stage prints above its cost table, counted as the table counts (`formatRunCost`):
 * the calls billed, the failed requests and the cache hits from the run's ledger (`cost`), the
 * retries from the records' usage. Without a ledger (summaries written before it), from the usage,
 * whose calls hold the cache hits.
 */
export function formatCallCounts(noun: string, usage: UsageTotals, cost?: RunCost): string {
  const t = cost?.total;
  const billed = t ? t.calls : usage.calls - usage.cacheHits;
  const failed = t ? (t.failed ?? 0) : (usage.failures ?? 0);
  const cacheHits = t ? t.cacheHits : usage.cacheHits;
  const tokens = t ? t.promptTokens + t.completionTokens : usage.promptTokens - (usage.cachedPromptTokens ?? 0) + usage.completionTokens - (usage.cachedCompletionTokens ?? 0);
  const images = t ? (t.images ?? 0) : usage.images;
  return `${billed} ${noun} call(s) billed, ${failed} failed, ${cacheHits} from the cache, ${images} image(s), ${tokens} tokens billed, ${usage.retries} retries`;
}

/**
 * A run's cost per role, from its ledger of model calls: the calls sent (billed), the replies
 * read from the model-call cache (not billed), tokens (thinking is part of completion), images
 * and dollars at the prices named; a role's batch calls on their own row, at the batch price.
 */
export function formatRunCost(cost: RunCost): string {
  const rows = cost.roles.map((r) => [r.role, r.model, String(r.calls), r.failed === undefined ? "–" : String(r.failed), String(r.cacheHits), String(r.promptTokens), String(r.completionTokens), String(r.thinkingTokens), String(r.images ?? 0), formatDollars(r.dollars)]);
  const t = cost.total;
  if (cost.roles.length > 1) rows.push(["total", "", String(t.calls), t.failed === undefined ? "–" : String(t.failed), String(t.cacheHits), String(t.promptTokens), String(t.completionTokens), String(t.thinkingTokens), String(t.images ?? 0), formatDollars(t.dollars)]);
  const lines = [`cost (${cost.prices.join(", then ")}):`, indent(formatTable(["role", "model", "calls", "failed", "cache hits", "prompt tokens", "completion tokens", "of which thinking", "images", "dollars"], rows))];
  lines.push("  calls: requests a model answered, billed; failed: requests that got no reply after their retries, not billed; cache hits: replies read from the model-call cache, not billed" + (cost.roles.some((r) => r.role.endsWith(" (batch)")) ? "; (batch): sent through the provider's batch API, at half the price" : ""));
  if (cost.unpriced.length > 0) lines.push(`  no price for ${cost.unpriced.join(", ")}: add it to a file named by EQA_PRICES`);
  return lines.join("\n");
}

/**
 * What `--dry-run` prints: per role, the calls the run would make (how many the model-call
 * cache already holds), the estimated tokens and dollars; with `rows` (`eqa reproduce`), the
 * same per table row, every role summed.
 */
export function formatCallPlan(roles: readonly PlannedRole[], notes: readonly string[] = [], rows: readonly PlannedRow[] = []): string {
  const roleRows = roles.map((r) => [r.role, r.model, `${r.upperBound ? "≤ " : ""}${r.calls}`, String(r.cached), r.promptTokens === null ? "?" : String(r.promptTokens), r.completionTokens === null ? "?" : String(r.completionTokens), `${r.dollarsAtLeast ? "≥ " : ""}${formatDollars(r.dollars)}`]);
  const dollars = roles.some((r) => r.dollars === null) ? null : roles.reduce((total, r) => total + (r.dollars ?? 0), 0);
  const atLeast = roles.some((r) => r.dollarsAtLeast);
  const lines = [
    "dry run: no model was called and nothing was written",
    "",
    indent(formatTable(["role", "model", "calls", "cached", "prompt tokens", "completion tokens", "dollars"], roleRows)),
    "",
    ...(rows.length > 0 ? [indent(formatTable(["row", "calls", "cached", "dollars"], rows.map((r) => [r.row, `${r.upperBound ? "≤ " : ""}${r.calls}`, String(r.cached), `${r.dollarsAtLeast && r.dollars !== null ? "≥ " : ""}${formatDollars(r.dollars)}`]))), ""] : []),
    `  estimated cost: ${atLeast && dollars !== null ? "≥ " : ""}${formatDollars(dollars === null ? null : Math.round(dollars * 1e9) / 1e9)}${dollars === null ? " (a model without a price, or tokens not estimated)" : ""}; calls the cache holds cost nothing`,
    "  prompt tokens: characters / 4 plus each image at its provider's documented cost; completion tokens: each request's max tokens",
    ...(atLeast ? ["  ≥: some requests set no token limit (?), so their output is not priced"] : []),
    ...notes.map((n) => `  ${n}`),
  ];
  return lines.join("\n");
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/** What `eqa score` prints for LA-EQA questions: the judge's mark, LLM-Match points and SPL per category and overall, counts, cost. */
export function formatLaEqaSummary(summary: LaEqaScoreSummary): string {
  const { counts, config, score, llmMatch, spl } = summary;
  const judge = (config.judge as { name?: string } | undefined)?.name ?? "?";
  const cell = (e: MeanEstimate | undefined, digits: number): string => (e && e.n > 0 ? `${e.mean.toFixed(digits)} ± ${e.stderr.toFixed(digits)}` : "");
  const n = (e: MeanEstimate | undefined): string => (e ? String(e.n) : "0");
  const categories = [...new Set([...Object.keys(score.byCategory), ...Object.keys(spl.byCategory)])];
  const row = (label: string, s: MeanEstimate | undefined, l: MeanEstimate | undefined, p: MeanEstimate | undefined): string[] => [label, n(s), cell(s, 2), cell(l, 1), n(p), cell(p, 3)];
  const rows = [...categories.map((c) => row(c, score.byCategory[c], llmMatch.byCategory[c], spl.byCategory[c])), ["", "", "", "", "", ""], row("overall", score.overall, llmMatch.overall, spl.overall)];
  const lines = [
    `LA-EQA (judge ${judge}): ${counts.scored} of ${counts.questions} questions scored, ${counts.failed} failed, ${counts.judgeUnreadable} unreadable by the judge`,
    "",
    formatTable(["", "n", "score 1-5 ±SE", "LLM-Match ±SE", "n SPL", "SPL ±SE"], rows),
  ];
  const notes: string[] = [];
  if (counts.reused > 0) notes.push(`${counts.reused} judgement(s) reused from the run directory`);
  if (counts.noAnswer > 0) notes.push(`${counts.noAnswer} question(s) without an answer marked 1 (--allow-missing)`);
  if (counts.outOfRange > 0) notes.push(`${counts.outOfRange} mark(s) outside 1-5, kept as the reference keeps them (LLM-Match clips them)`);
  if (counts.withoutDistance > 0) notes.push(`${counts.withoutDistance} prediction(s) without distance_traveled: no SPL`);
  if (counts.predictionsOutsideSubset > 0) notes.push(`${counts.predictionsOutsideSubset} prediction(s) outside the subset ignored`);
  notes.push(formatCallCounts("judge", summary.usage.judgements, summary.cost));
  notes.push(...modelCallNotes(summary));
  lines.push("", ...notes.map((note) => `  ${note}`), "", formatRunCost(summary.cost));
  lines.push(...judgeFailureLines(summary));
  return lines.join("\n");
}

/** A score run's judge replies no mark could be read from, and its failed questions (the first 20). */
function judgeFailureLines(summary: { judgeUnreadable: Parameters<typeof formatJudgeUnreadable>[0]; failures: readonly { questionId: string; error: string }[] }): string[] {
  const lines: string[] = [];
  const unreadable = formatJudgeUnreadable(summary.judgeUnreadable);
  if (unreadable) lines.push("", `${unreadable}; left out of the aggregates`);
  if (summary.failures.length > 0) {
    lines.push("", `failed (${summary.failures.length}):`);
    for (const failure of summary.failures.slice(0, 20)) lines.push(`  ${failure.questionId}: ${failure.error}`);
    if (summary.failures.length > 20) lines.push(`  … and ${summary.failures.length - 20} more, listed in summary.json`);
  }
  return lines;
}
