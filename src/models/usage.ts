import type { CallUsage } from "./types.js";

/** Usage summed over calls, per model and overall, as written into summaries. */
export interface UsageTotals {
  calls: number;
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  images: number;
  retries: number;
  failures: number;
  /** Sum of per-call latencies of the calls that reached the endpoint. */
  latencyMs: number;
}

export function emptyUsage(): UsageTotals {
  return { calls: 0, cacheHits: 0, promptTokens: 0, completionTokens: 0, images: 0, retries: 0, failures: 0, latencyMs: 0 };
}

export function addUsage(totals: UsageTotals, call: CallUsage): void {
  totals.calls++;
  if (call.cached) totals.cacheHits++;
  totals.promptTokens += call.promptTokens;
  totals.completionTokens += call.completionTokens;
  totals.images += call.images;
  totals.retries += call.retries;
  if (!call.cached) totals.latencyMs += call.latencyMs;
}

/** Adds every count of `from` into `into`. */
export function mergeUsage(into: UsageTotals, from: UsageTotals): void {
  for (const key of Object.keys(into) as (keyof UsageTotals)[]) into[key] += from[key];
}

/** The sum of several usage totals (per item of a run, into the run's). */
export function sumUsage(parts: Iterable<UsageTotals>): UsageTotals {
  const total = emptyUsage();
  for (const part of parts) mergeUsage(total, part);
  return total;
}

/** Records every call's usage, by model name. */
export class UsageLedger {
  private readonly byModel = new Map<string, UsageTotals>();

  record(model: string, call: CallUsage): void {
    addUsage(this.totalsFor(model), call);
  }

  recordFailure(model: string, retries: number): void {
    const totals = this.totalsFor(model);
    totals.failures++;
    totals.retries += retries;
  }

  private totalsFor(model: string): UsageTotals {
    let totals = this.byModel.get(model);
    if (!totals) {
      totals = emptyUsage();
      this.byModel.set(model, totals);
    }
    return totals;
  }

  snapshot(): { total: UsageTotals; byModel: Record<string, UsageTotals> } {
    const byModel = Object.fromEntries([...this.byModel].map(([model, totals]) => [model, { ...totals }]));
    return { total: sumUsage(this.byModel.values()), byModel };
  }
}
