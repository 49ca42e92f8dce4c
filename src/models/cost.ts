/**
 * What model calls cost, in US dollars. Prices per million tokens come from `prices.json`
 * (dated, with its sources) and, before them, from a file named by the `EQA_PRICES`
 * environment variable (the same shape; its entries win). Prompt tokens are billed at the
 * input price, completion tokens (thinking included, as every provider bills them) at the
 * output price; a reply taken from eqakit's model-call cache costs nothing, since no call was
 * made. A model without a price costs `null`, never a guess. Self-hosted servers (`vllm/`,
 * `ollama/`) cost 0.
 *
 * Left out: providers' own prompt caching (replies do not say which input tokens it served,
 * so its discount is not applied), batch discounts, and the higher rates some models charge
 * for prompts over 200k tokens.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { UserError, describeError } from "../core/index.js";
import pricesJson from "./prices.json" with { type: "json" };
import { emptyUsage, type UsageTotals } from "./usage.js";

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
const overrides = new Map<string, CompiledPrice[]>();

function overridePrices(path: string): CompiledPrice[] {
  const absolute = resolve(path);
  const known = overrides.get(absolute);
  if (known) return known;
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
  const compiled = compile(parsed.data, absolute, absolute);
  overrides.set(absolute, compiled);
  return compiled;
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

function scaled(dollars: number | null, factor: number): number | null {
  return dollars === null ? null : roundDollars(dollars * factor);
}

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
  const price = priceOf(modelName, env);
  if (!price) return null;
  const prompt = usage.promptTokens - (usage.cachedPromptTokens ?? 0);
  const completion = usage.completionTokens - (usage.cachedCompletionTokens ?? 0);
  return roundDollars((prompt * price.input + completion * price.output) / 1e6);
}

/** One role's calls in a run (agent, captioner, judge, reward model…) and what they cost. */
export interface RoleCost {
  role: string;
  model: string;
  calls: number;
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  thinkingTokens: number;
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

/** A role's usage, as a run recorded it (all its records, reused ones included). */
export interface RoleUsage {
  role: string;
  model: string;
  usage: UsageTotals;
  /** What share of the listed price is billed (batch APIs bill half); 1 when absent. */
  priceFactor?: number;
}

/** OpenAI's Batch API and Anthropic's Message Batches bill half the listed price. */
export const BATCH_PRICE_FACTOR = 0.5;

/**
 * The usage of a `--batch` run's batches, as its configuration records them (`config.batch`,
 * written by the batch client), as a role billed at the batch price: the run's own records
 * read those replies from the cache, so they cost nothing there.
 */
export function batchRoleUsage(role: string, model: string, config: Record<string, unknown>): RoleUsage[] {
  const usage = (config.batch as { usage?: Partial<UsageTotals> } | undefined)?.usage;
  if (!usage || typeof usage.promptTokens !== "number") return [];
  return [{ role: `${role} (batch)`, model, usage: { ...emptyUsage(), ...usage }, priceFactor: BATCH_PRICE_FACTOR }];
}

/** The cost section of a run from what each role used; parts of the same role and model are added. */
export function runCost(parts: readonly RoleUsage[], env: NodeJS.ProcessEnv = process.env): RunCost {
  const merged = new Map<string, RoleUsage>();
  for (const part of parts) {
    const key = `${part.role}\u0000${part.model}\u0000${part.priceFactor ?? 1}`;
    const known = merged.get(key);
    if (!known) merged.set(key, { ...part, usage: { ...part.usage } });
    else for (const field of Object.keys(known.usage) as (keyof UsageTotals)[]) known.usage[field] += part.usage[field] ?? 0;
  }
  const roles = [...merged.values()].map(({ role, model, usage, priceFactor }): RoleCost => ({
    role,
    model,
    calls: usage.calls,
    cacheHits: usage.cacheHits,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    thinkingTokens: usage.thinkingTokens ?? 0,
    dollars: scaled(costOf(model, usage, env), priceFactor ?? 1),
  }));
  return costSection(roles, priceSources(env));
}

/** The cost section of `roles`: their total, and the models without a price (the total's dollars are then null). */
function costSection(roles: RoleCost[], prices: string[]): RunCost {
  const unpriced = [...new Set(roles.filter((r) => r.dollars === null).map((r) => r.model))];
  const sum = (field: "calls" | "cacheHits" | "promptTokens" | "completionTokens" | "thinkingTokens"): number => roles.reduce((total, r) => total + r[field], 0);
  return {
    roles,
    total: {
      calls: sum("calls"),
      cacheHits: sum("cacheHits"),
      promptTokens: sum("promptTokens"),
      completionTokens: sum("completionTokens"),
      thinkingTokens: sum("thinkingTokens"),
      dollars: unpriced.length > 0 ? null : roundDollars(roles.reduce((total, r) => total + (r.dollars ?? 0), 0)),
    },
    unpriced,
    prices,
  };
}

/** Two cost sections as one (a run's stages written apart, e.g. an exploration and its judging). */
export function joinRunCosts(a: RunCost, b: RunCost): RunCost {
  return costSection([...a.roles, ...b.roles], [...new Set([...a.prices, ...b.prices])]);
}

/** Dollars for people: `$0.000468`, `$0.0123`, `$123.46`, or `n/a` without a price. */
export function formatDollars(dollars: number | null): string {
  if (dollars === null) return "n/a";
  if (dollars === 0) return "$0";
  if (dollars < 0.000001) return "< $0.000001";
  if (dollars < 0.01) return `$${dollars.toFixed(6).replace(/0+$/, "")}`;
  return `$${dollars.toFixed(dollars < 100 ? 4 : 2)}`;
}
