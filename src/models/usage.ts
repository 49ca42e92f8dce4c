import { resolve } from "node:path";
import { z } from "zod";
import { CallLedgerWriter, type CallEntry, type CallRecord } from "./ledger.js";
import type { CallUsage, ReplyStatus } from "./types.js";

/** Usage summed over calls, per model and overall, as written into summaries. */
export interface UsageTotals {
  calls: number;
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  /** Of completionTokens, those spent thinking. */
  thinkingTokens: number;
  /** Of promptTokens, those of replies taken from the model-call cache (no call made, nothing billed). */
  cachedPromptTokens: number;
  /** Of completionTokens, those of replies taken from the model-call cache. */
  cachedCompletionTokens: number;
  images: number;
  retries: number;
  failures: number;
  /** Sum of per-call latencies of the calls that reached the endpoint. */
  latencyMs: number;
}

const count = z.number().default(0);

/**
 * UsageTotals as a stored record holds them: a total a record written by an earlier version lacks
 * is 0, and a record without any usage has none (every total 0).
 */
export const usageTotalsSchema = z.preprocess(
  (value) => (typeof value === "object" && value !== null && !Array.isArray(value) ? value : {}),
  z.looseObject({ calls: count, cacheHits: count, promptTokens: count, completionTokens: count, thinkingTokens: count, cachedPromptTokens: count, cachedCompletionTokens: count, images: count, retries: count, failures: count, latencyMs: count }),
) satisfies z.ZodType<UsageTotals>;

export function emptyUsage(): UsageTotals {
  return { calls: 0, cacheHits: 0, promptTokens: 0, completionTokens: 0, thinkingTokens: 0, cachedPromptTokens: 0, cachedCompletionTokens: 0, images: 0, retries: 0, failures: 0, latencyMs: 0 };
}

export function addUsage(totals: UsageTotals, call: CallUsage): void {
  totals.calls++;
  if (call.cached) totals.cacheHits++;
  totals.promptTokens += call.promptTokens;
  totals.completionTokens += call.completionTokens;
  totals.thinkingTokens += call.thinkingTokens;
  if (call.cached) {
    totals.cachedPromptTokens += call.promptTokens;
    totals.cachedCompletionTokens += call.completionTokens;
  }
  totals.images += call.images;
  totals.retries += call.retries;
  if (!call.cached) totals.latencyMs += call.latencyMs;
}

/** Adds every count of `from` into `into`. */
export function mergeUsage(into: UsageTotals, from: UsageTotals): void {
  // totals written by older versions lack newer counts: those add nothing
  for (const key of Object.keys(into) as (keyof UsageTotals)[]) into[key] += from[key] ?? 0;
}

/** The sum of several usage totals (per item of a run, into the run's). */
export function sumUsage(parts: Iterable<UsageTotals>): UsageTotals {
  const total = emptyUsage();
  for (const part of parts) mergeUsage(total, part);
  return total;
}

/** The usage totals of a ledger's calls (every process's): a summary's usage section kept in one bookkeeping with its cost. */
export function ledgerUsage(calls: readonly CallEntry[]): UsageTotals {
  const totals = emptyUsage();
  for (const call of calls) {
    if (call.status === "failed") {
      totals.failures++;
      totals.retries += call.retries;
    } else addUsage(totals, call);
  }
  return totals;
}

/** A ledger's totals, with what was sent differently than asked and the replies that were not answers. */
export interface UsageSnapshot {
  total: UsageTotals;
  byModel: Record<string, UsageTotals>;
  /** Per model: each parameter sent differently than the caller asked, in words. */
  deviations?: Record<string, string[]>;
  /** Per model: replies that were cut, filtered or refused. */
  replyStatuses?: Record<string, Partial<Record<ReplyStatus, number>>>;
}

/**
 * Records every call: appended to the ledger of the run it is attached to (`calls.jsonl`, the
 * run's bill, from which its cost is computed), and summed by model name for this process.
 */
export class UsageLedger {
  private readonly byModel = new Map<string, UsageTotals>();
  private readonly deviations = new Map<string, Set<string>>();
  private readonly statuses = new Map<string, Partial<Record<ReplyStatus, number>>>();
  private writer: CallLedgerWriter | undefined;

  /** Appends every later call to the ledger of the run folder `runDir` (a run opens it before its first call). */
  attach(runDir: string): void {
    const path = resolve(runDir);
    if (this.writer?.runDir !== path) this.writer = new CallLedgerWriter(path);
  }

  /** Parameters a model was sent differently than asked (families.ts), each once. */
  noteDeviations(model: string, deviations: readonly string[]): void {
    if (deviations.length === 0) return;
    let known = this.deviations.get(model);
    if (!known) this.deviations.set(model, (known = new Set()));
    for (const deviation of deviations) known.add(deviation);
  }

  /** One call as it completed: answered (from the endpoint or the cache), a reply that is not an answer, or failed. */
  record(call: CallRecord): void {
    this.writer?.append(call);
    const totals = this.totalsFor(call.model);
    if (call.status === "failed") {
      totals.failures++;
      totals.retries += call.retries;
      return;
    }
    const usage: CallUsage = { promptTokens: call.promptTokens, completionTokens: call.completionTokens, thinkingTokens: call.thinkingTokens, images: call.images, latencyMs: call.latencyMs, retries: call.retries, cached: call.cached };
    addUsage(totals, usage);
    if (call.status !== "ok") {
      const counts = this.statuses.get(call.model) ?? {};
      counts[call.status] = (counts[call.status] ?? 0) + 1;
      this.statuses.set(call.model, counts);
    }
  }

  private totalsFor(model: string): UsageTotals {
    let totals = this.byModel.get(model);
    if (!totals) {
      totals = emptyUsage();
      this.byModel.set(model, totals);
    }
    return totals;
  }

  snapshot(): UsageSnapshot {
    const byModel = Object.fromEntries([...this.byModel].map(([model, totals]) => [model, { ...totals }]));
    const deviations = Object.fromEntries([...this.deviations].map(([model, set]) => [model, [...set]]));
    const statuses = Object.fromEntries([...this.statuses].map(([model, counts]) => [model, { ...counts }]));
    return { total: sumUsage(this.byModel.values()), byModel, ...(this.deviations.size > 0 ? { deviations } : {}), ...(this.statuses.size > 0 ? { replyStatuses: statuses } : {}) };
  }
}
