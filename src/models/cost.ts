/**
 * What model calls cost, in US dollars, computed from a run's ledger of model calls
 * (`ledger.ts`, `calls.jsonl`) by one function, `ledgerCost`: the CLI's cost table, the
 * summary's `cost`, the report and the viewer (through the summary), `eqa run`'s total and a
 * merged run's all come from it, and `--dry-run` prices its estimates with the same rates.
 *
 * Prices per million tokens come from `prices.json` (dated, with its sources) and, before
 * them, from a file named by the `EQA_PRICES` environment variable (the same shape; its
 * entries win). Prompt tokens are billed at the input price, completion tokens (thinking
 * included, as every provider bills them) at the output price. Calls sent through a provider's
 * batch API (`--batch`) are billed at half those prices (`BATCH_PRICE_FACTOR`), as OpenAI's
 * Batch API and Anthropic's Message Batches charge. A reply taken from eqakit's model-call cache
 * costs nothing, since no call was made: it is counted as a cache hit, not as a call. A model
 * without a price costs `null`, never a guess. Self-hosted servers (`vllm/`, `ollama/`) cost 0.
 *
 * Left out: providers' own prompt caching (replies do not say which input tokens it served,
 * so its discount is not applied) and the higher rates some models charge for prompts over
 * 200k tokens.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { UserError, describeError, memoByFile } from "../core/index.js";
import pricesJson from "./prices.json" with { type: "json" };
import type { UsageTotals } from "./usage.js";

/** A price for one model named exactly (`model`: `provider/model`) or for a family (`match`: a regular expression). */
const priceEntrySchema = z
  .object({
    model: z.string().min(1).optional(),
    match: z.string().min(1).optional(),
    input: z.number().nonnegative(),
    cachedInput: z.number().nonnegative().optional(),
    output: z.number().nonnegative(),
  })
  .refine((entry) => (entry.model === undefined) !== (entry.match === undefined), { message: 'an entry names one model ("model": "provider/model") or a family ("match": a regular expression), not both' });

const priceFileSchema = z.looseObject({
  checked: z.string().optional(),
  currency: z.literal("USD").optional(),
  unit: z.literal("per million tokens").optional(),
  sources: z.array(z.string()).optional(),
  models: z.array(priceEntrySchema),
});

/** A model's prices, per million tokens, with where they come from. */
export interface ModelPrice {
  /** The regular expression that matched (on `provider/model` or the model id); absent for an exact entry. */
  match?: string;
  /** The `provider/model` an exact entry names; absent for a family's entry. */
  model?: string;
  input: number;
  /** The provider's own prompt-cache price (kept for reference, not applied). */
  cachedInput?: number;
  output: number;
  /** `eqakit prices of <date>`, or the EQA_PRICES file. */
  source: string;
}

interface CompiledPrice extends ModelPrice {
  /** Absent for an exact entry. */
  pattern?: RegExp;
}

function compile(file: z.infer<typeof priceFileSchema>, source: string, path?: string): CompiledPrice[] {
  return file.models.map((entry, index) => {
    if (entry.match === undefined) return { ...entry, source };
    let pattern: RegExp;
    try {
      pattern = new RegExp(entry.match);
    } catch (error) {
      throw new UserError(`"${entry.match}" is not a regular expression: ${describeError(error)}`, { ...(path ? { file: path } : {}), index, field: "match" }, "fix the entry in the file EQA_PRICES names");
    }
    return { ...entry, source, pattern };
  });
}

const builtIn = priceFileSchema.parse(pricesJson);
/** When eqakit's own price table was last checked against the providers' pages. */
export const PRICES_CHECKED: string = builtIn.checked ?? "unknown";
const builtInPrices = compile(builtIn, `eqakit prices of ${PRICES_CHECKED}`);
const overridePrices = memoByFile((path): CompiledPrice[] => readPriceFile(resolve(path)));

function readPriceFile(absolute: string): CompiledPrice[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(absolute, "utf8"));
  } catch (error) {
    throw new UserError(`cannot read the prices file: ${describeError(error)}`, { file: absolute, field: "EQA_PRICES" }, 'EQA_PRICES names a JSON file: { "models": [{ "match": "^my-model$", "input": 1, "output": 2 }] }, prices per million tokens');
  }
  const parsed = priceFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`not a prices file: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim(), { file: absolute, field: "EQA_PRICES" }, 'expected { "models": [{ "match": REGEX, "input": N, "output": N }] }, prices in USD per million tokens');
  }
  return compile(parsed.data, absolute, absolute);
}

/** The price tables in force, first wins: the EQA_PRICES file's, then eqakit's. */
function priceTables(env: NodeJS.ProcessEnv): CompiledPrice[][] {
  const path = env.EQA_PRICES;
  return path ? [overridePrices(path), builtInPrices] : [builtInPrices];
}

/** Reads the EQA_PRICES file now, so that a broken one stops a run before its first call (a UserError naming it). */
export function checkPriceFile(env: NodeJS.ProcessEnv = process.env): void {
  priceTables(env);
}

/** Where the prices come from, as summaries record it. */
export function priceSources(env: NodeJS.ProcessEnv = process.env): string[] {
  return [...(env.EQA_PRICES ? [resolve(env.EQA_PRICES)] : []), `eqakit prices of ${PRICES_CHECKED}`];
}

/**
 * A model's prices (`provider/model`), or undefined when neither table knows it. In each table
 * (EQA_PRICES's first) an entry naming the model exactly wins over the family patterns, so a
 * snapshot listed at its own price (`openai/gpt-4o-2024-05-13`, $5/$15) is not billed at its
 * family's (`gpt-4o`, $2.50/$10); then the first pattern that fits the whole name or the id.
 */
export function priceOf(modelName: string, env: NodeJS.ProcessEnv = process.env): ModelPrice | undefined {
  const slash = modelName.indexOf("/");
  const id = slash === -1 ? modelName : modelName.slice(slash + 1);
  let found: CompiledPrice | undefined;
  for (const table of priceTables(env)) {
    found = table.find((p) => p.model === modelName) ?? table.find((p) => p.pattern !== undefined && (p.pattern.test(modelName) || p.pattern.test(id)));
    if (found) break;
  }
  if (!found) return undefined;
  const { pattern: _pattern, ...price } = found;
  return price;
}

/** The token counts a cost is computed from; totals written by older versions may lack the cached ones. */
export type BilledTokens = Pick<UsageTotals, "promptTokens" | "completionTokens"> & Partial<Pick<UsageTotals, "cachedPromptTokens" | "cachedCompletionTokens">>;

/** Dollars to the nano-dollar, so that sums do not show floating-point dust. */
function roundDollars(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

/**
 * What `usage` cost on `modelName` (`provider/model`), in dollars: prompt tokens at the input
 * price, completion tokens (thinking included) at the output price, replies from the
 * model-call cache free. Null when the model has no price.
 */
export function costOf(modelName: string, usage: BilledTokens, env: NodeJS.ProcessEnv = process.env): number | null {
  return billedDollars(modelName, { promptTokens: usage.promptTokens - (usage.cachedPromptTokens ?? 0), completionTokens: usage.completionTokens - (usage.cachedCompletionTokens ?? 0) }, "live", env);
}

/** One role's calls on one model, live or batch, in a run, and what they cost. */
export interface RoleCost {
  /** The role, with " (batch)" for its calls sent through a batch API. */
  role: string;
  model: string;
  /** Calls a model answered (a reply that is not an answer included): the calls billed. */
  calls: number;
  /** Replies read from the model-call cache: no call made, nothing billed. */
  cacheHits: number;
  /**
   * Requests that got no reply after their retries (unreachable endpoint, timeout, 5xx): not in
   * `calls`, nothing billed; absent in summaries written before the ledger (whose `calls` hold them).
   */
  failed?: number;
  /** Tokens of the calls sent (cache hits' not included). */
  promptTokens: number;
  completionTokens: number;
  thinkingTokens: number;
  /** Images sent; absent in summaries written before the ledger. */
  images?: number;
  /** Null when the model has no price. */
  dollars: number | null;
}

/** The `cost` section of a summary: per role, and the total. */
export interface RunCost {
  roles: RoleCost[];
  total: Omit<RoleCost, "role" | "model">;
  /** Models without a price: the total's dollars are null when there is any. */
  unpriced: string[];
  /** The price tables used, first wins. */
  prices: string[];
}

/** OpenAI's Batch API and Anthropic's Message Batches bill half the listed price. */
export const BATCH_PRICE_FACTOR = 0.5;

/** How a call was sent: one at a time, or in a batch (billed at `BATCH_PRICE_FACTOR`). */
export type CallMode = "live" | "batch";

/**
 * The dollars of tokens sent to `modelName` (none of them from the model-call cache): prompt
 * tokens at the input price, completion tokens at the output price, times the batch factor for
 * batch calls. Null when the model has no price. Every cost figure, estimates included, is
 * priced by this function.
 */
export function billedDollars(modelName: string, tokens: { promptTokens: number; completionTokens: number }, mode: CallMode = "live", env: NodeJS.ProcessEnv = process.env): number | null {
  const price = priceOf(modelName, env);
  if (!price) return null;
  const factor = mode === "batch" ? BATCH_PRICE_FACTOR : 1;
  return roundDollars(((tokens.promptTokens * price.input + tokens.completionTokens * price.output) / 1e6) * factor);
}

/** The calls a cost is computed from: a ledger's entries (ledger.ts). */
export interface CostedCall {
  role: string;
  model: string;
  mode: CallMode;
  cached: boolean;
  status: string;
  promptTokens: number;
  completionTokens: number;
  thinkingTokens: number;
  images: number;
}

/**
 * The cost section of a run from its ledger of model calls: per role, model and mode (in the
 * order first seen), the calls a model answered (billed) and their tokens, images and dollars,
 * the failed requests and the cache hits apart (they cost nothing), and the total. Every call of
 * the ledger is counted once.
 */
export function ledgerCost(calls: readonly CostedCall[], env: NodeJS.ProcessEnv = process.env): RunCost {
  const rows = new Map<string, Required<RoleCost> & { mode: CallMode }>();
  for (const call of calls) {
    const key = `${call.role}\u0000${call.model}\u0000${call.mode}`;
    let row = rows.get(key);
    if (!row) {
      row = { role: call.mode === "batch" ? `${call.role} (batch)` : call.role, model: call.model, mode: call.mode, calls: 0, cacheHits: 0, failed: 0, promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images: 0, dollars: 0 };
      rows.set(key, row);
    }
    if (call.cached) {
      row.cacheHits++;
      continue;
    }
    // a request without a reply is not billed: counted apart
    if (call.status === "failed") {
      row.failed++;
      continue;
    }
    row.calls++;
    row.promptTokens += call.promptTokens;
    row.completionTokens += call.completionTokens;
    row.thinkingTokens += call.thinkingTokens;
    row.images += call.images;
  }
  const roles = [...rows.values()].map(({ mode, ...row }): RoleCost => ({ ...row, dollars: billedDollars(row.model, row, mode, env) }));
  return costSection(roles, priceSources(env));
}

/** The cost section of `roles`: their total, and the models without a price (the total's dollars are then null). */
function costSection(roles: RoleCost[], prices: string[]): RunCost {
  const unpriced = [...new Set(roles.filter((r) => r.dollars === null).map((r) => r.model))];
  const sum = (field: "calls" | "cacheHits" | "failed" | "promptTokens" | "completionTokens" | "thinkingTokens" | "images"): number => roles.reduce((total, r) => total + (r[field] ?? 0), 0);
  return {
    roles,
    total: {
      calls: sum("calls"),
      cacheHits: sum("cacheHits"),
      failed: sum("failed"),
      promptTokens: sum("promptTokens"),
      completionTokens: sum("completionTokens"),
      thinkingTokens: sum("thinkingTokens"),
      images: sum("images"),
      dollars: unpriced.length > 0 ? null : roundDollars(roles.reduce((total, r) => total + (r.dollars ?? 0), 0)),
    },
    unpriced,
    prices,
  };
}

/** Dollars for people: `$0.000468`, `$0.0123`, `$123.46`, or `n/a` without a price. */
export function formatDollars(dollars: number | null): string {
  if (dollars === null) return "n/a";
  if (dollars === 0) return "$0";
  if (dollars < 0.000001) return "< $0.000001";
  if (dollars < 0.01) return `$${dollars.toFixed(6).replace(/0+$/, "")}`;
  return `$${dollars.toFixed(dollars < 100 ? 4 : 2)}`;
}
