/**
 * What each model family accepts (families.json, kept as data): the token-limit field,
 * which sampling parameters it takes, how its thinking is controlled, and its image limits.
 * A request is adapted to its model's profile before it is sent; every parameter changed or
 * left out is a deviation the run records, so that a reader sees what was really asked.
 */
import { z } from "zod";
import { UserError } from "../core/index.js";
import familiesJson from "./families.json" with { type: "json" };
import type { ChatRequest } from "./types.js";

const thinkingSchema = z.object({
  /** How thinking is controlled: OpenAI's reasoning_effort, Anthropic's budget or adaptive thinking, Gemini's budget or level. */
  control: z.enum(["none", "reasoning_effort", "anthropic-budget", "anthropic-adaptive", "gemini-budget", "gemini-level"]),
  /** Whether the model thinks whatever is sent (its thinking then shares the output budget). */
  alwaysOn: z.boolean().default(false),
  /** The effort, level or budget eqakit asks for when the user sets none: the least the model allows. */
  default: z.union([z.string(), z.number()]).optional(),
  minBudgetTokens: z.number().int().nonnegative().optional(),
  /** Output tokens added to the caller's limit so that thinking does not eat the reply. */
  headroomTokens: z.number().int().nonnegative().optional(),
  /** Tool calls carry a signature that must be sent back with the model's turn (Gemini 3). */
  signatures: z.boolean().default(false),
});

const imageLimitsSchema = z.object({
  maxCount: z.number().int().positive().optional(),
  maxSidePx: z.number().int().positive().optional(),
  /** A tighter side limit once a request holds more than `manyOver` images (Anthropic). */
  maxSidePxWhenMany: z.number().int().positive().optional(),
  manyOver: z.number().int().nonnegative().optional(),
  maxImageBytes: z.number().int().positive().optional(),
  maxRequestBytes: z.number().int().positive().optional(),
});

const familySchema = z.object({
  id: z.string(),
  protocol: z.enum(["openai", "anthropic", "google"]),
  /** A regular expression on the model id; empty matches every model of the protocol. */
  pattern: z.string(),
  tokenLimit: z.enum(["max_tokens", "max_completion_tokens", "maxOutputTokens"]),
  /** any; default-only: only the default (1) is accepted, so another value is not sent. */
  temperature: z.enum(["any", "default-only"]),
  /** any; not-with-temperature: one of the two per request; rejected: never sent. */
  topP: z.enum(["any", "not-with-temperature", "rejected"]),
  stop: z.boolean(),
  /** Whether the model returns log-probabilities of its tokens (`logprobs` is sent only then). */
  logprobs: z.boolean(),
  thinking: thinkingSchema,
  images: imageLimitsSchema,
});

export type ModelFamily = z.infer<typeof familySchema>;
export type ImageLimits = z.infer<typeof imageLimitsSchema>;

const tableSchema = z.object({ checked: z.string(), sources: z.array(z.string()), families: z.array(familySchema) });
const table = tableSchema.parse(familiesJson);

/** The date the family table was last checked against the providers' references. */
export const MODEL_FAMILIES_CHECKED = table.checked;
export const MODEL_FAMILIES: readonly ModelFamily[] = table.families;

/** The options a user may set per model (`--model-option key=value`, the models file). */
export const MODEL_OPTION_KEYS = [
  "family",
  "token_limit",
  "temperature_support",
  "top_p_support",
  "stop_support",
  "logprobs_support",
  "reasoning_effort",
  "thinking_budget",
  "thinking_headroom",
  "truncation_retries",
  "max_images",
  "max_image_side",
  "max_image_bytes",
] as const;
export type ModelOptionKey = (typeof MODEL_OPTION_KEYS)[number];
export type ModelOptions = Partial<Record<ModelOptionKey, string>>;

/** A model's family with the user's options applied: what eqakit sends it. */
export interface ModelProfile extends ModelFamily {
  reasoningEffort?: string;
  thinkingBudget?: number;
  /** Times a reply cut by its token limit is asked again with twice the budget (default 0). */
  truncationRetries: number;
}

/** The first family of the protocol whose pattern matches the model id (the last of each protocol matches all). */
export function familyFor(protocol: ModelFamily["protocol"], model: string): ModelFamily {
  const id = model.split("/").at(-1) ?? model;
  const family = MODEL_FAMILIES.find((f) => f.protocol === protocol && new RegExp(f.pattern, "i").test(id));
  if (!family) throw new Error(`families.json has no catch-all family for ${protocol}`);
  return family;
}

/** The profile of `model`: its family (or the one the `family` option names) with the user's options applied. */
export function modelProfile(protocol: ModelFamily["protocol"], model: string, options: ModelOptions = {}, where = "--model-option"): ModelProfile {
  const at = (key: ModelOptionKey): { field: string } => ({ field: `${where} ${key}` });
  let family = familyFor(protocol, model);
  if (options.family !== undefined) {
    const named = MODEL_FAMILIES.find((f) => f.id === options.family);
    if (!named) throw new UserError(`unknown model family "${options.family}"`, at("family"), `families: ${MODEL_FAMILIES.map((f) => f.id).join(", ")}`);
    if (named.protocol !== protocol) throw new UserError(`family ${named.id} speaks ${named.protocol}, not ${protocol}`, at("family"));
    family = named;
  }
  const profile: ModelProfile = { ...family, thinking: { ...family.thinking }, images: { ...family.images }, truncationRetries: 0 };
  if (options.token_limit !== undefined) profile.tokenLimit = oneOf(options.token_limit, ["max_tokens", "max_completion_tokens", "maxOutputTokens"], at("token_limit"));
  if (options.temperature_support !== undefined) profile.temperature = oneOf(options.temperature_support, ["any", "default-only"], at("temperature_support"));
  if (options.top_p_support !== undefined) profile.topP = oneOf(options.top_p_support, ["any", "not-with-temperature", "rejected"], at("top_p_support"));
  if (options.stop_support !== undefined) profile.stop = oneOf(options.stop_support, ["true", "false"], at("stop_support")) === "true";
  if (options.logprobs_support !== undefined) profile.logprobs = oneOf(options.logprobs_support, ["true", "false"], at("logprobs_support")) === "true";
  if (options.reasoning_effort !== undefined) profile.reasoningEffort = options.reasoning_effort;
  if (options.thinking_budget !== undefined) profile.thinkingBudget = count(options.thinking_budget, at("thinking_budget"));
  if (options.thinking_headroom !== undefined) profile.thinking.headroomTokens = count(options.thinking_headroom, at("thinking_headroom"));
  if (options.truncation_retries !== undefined) profile.truncationRetries = count(options.truncation_retries, at("truncation_retries"));
  if (options.max_images !== undefined) profile.images.maxCount = count(options.max_images, at("max_images"));
  if (options.max_image_side !== undefined) profile.images = { ...profile.images, maxSidePx: count(options.max_image_side, at("max_image_side")), maxSidePxWhenMany: undefined };
  if (options.max_image_bytes !== undefined) profile.images.maxImageBytes = count(options.max_image_bytes, at("max_image_bytes"));
  const floor = profile.thinking.minBudgetTokens;
  if (profile.thinkingBudget !== undefined && floor !== undefined && profile.thinkingBudget < floor && !(profile.thinkingBudget === 0 && !profile.thinking.alwaysOn)) {
    throw new UserError(`a thinking budget of ${profile.thinkingBudget} tokens is below ${model}'s least, ${floor}`, at("thinking_budget"));
  }
  return profile;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], at: { field: string }): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UserError(`"${value}" is not one of ${allowed.join(", ")}`, at);
}

function count(value: string, at: { field: string }): number {
  if (!/^\d+$/.test(value)) throw new UserError(`"${value}" is not a whole number`, at);
  return Number(value);
}

/** How the model is asked to think in one request (the provider writes it in its own terms). */
export type ThinkingSetting =
  | { kind: "reasoning_effort"; effort: string }
  | { kind: "anthropic-budget"; budgetTokens: number }
  | { kind: "anthropic-adaptive"; effort: string }
  | { kind: "gemini-budget"; budgetTokens: number }
  | { kind: "gemini-level"; level: string };

/** A request as its model accepts it, with what was changed to get there. */
export interface AdaptedRequest {
  request: ChatRequest;
  thinking?: ThinkingSetting;
  /** The field the token limit goes in. */
  tokenLimit: ModelFamily["tokenLimit"];
  /** Each parameter left out or changed, in words (recorded in the run's configuration). */
  deviations: string[];
}

/**
 * Adapts `request` to `profile`: sampling parameters the model refuses are left out, the
 * token limit grows by the thinking the model does, and its thinking is set to the user's
 * option or the family's least. `budgetScale` multiplies the limits when a cut reply is
 * asked again.
 */
export function adaptRequest(profile: ModelProfile, request: ChatRequest, budgetScale = 1): AdaptedRequest {
  const deviations: string[] = [];
  const adapted: ChatRequest = { ...request };
  const thinking = thinkingSetting(profile, budgetScale);
  const dropTemperature = (why: string): void => {
    if (adapted.temperature === undefined) return;
    if (adapted.temperature !== 1) deviations.push(`temperature ${adapted.temperature} not sent: ${why}`);
    delete adapted.temperature;
  };
  const dropTopP = (why: string): void => {
    if (adapted.topP === undefined) return;
    deviations.push(`top_p ${adapted.topP} not sent: ${why}`);
    delete adapted.topP;
  };
  if (profile.temperature === "default-only") dropTemperature(`${profile.id} models take only their default`);
  if (profile.topP === "rejected") dropTopP(`${profile.id} models refuse it`);
  if (profile.topP === "not-with-temperature" && adapted.temperature !== undefined) dropTopP(`${profile.id} models take temperature or top_p, not both`);
  if (thinking?.kind === "anthropic-budget" || thinking?.kind === "anthropic-adaptive") {
    dropTemperature("Claude takes no temperature while thinking");
    if (adapted.topP !== undefined && adapted.topP < 0.95) dropTopP("Claude takes top_p of 0.95 or more while thinking");
  }
  if (!profile.logprobs && adapted.logprobs !== undefined) {
    deviations.push(`logprobs not sent: ${profile.id} models return none`);
    delete adapted.logprobs;
  }
  if (!profile.stop && adapted.stop !== undefined) {
    deviations.push(`stop sequences ${JSON.stringify(adapted.stop)} not sent: ${profile.id} models refuse them`);
    delete adapted.stop;
  }
  const headroom = thinkingHeadroom(profile, thinking, budgetScale);
  if (adapted.maxTokens !== undefined) {
    const limit = Math.round(adapted.maxTokens * budgetScale) + headroom;
    if (headroom > 0) deviations.push(`${profile.tokenLimit} ${adapted.maxTokens} raised by ${headroom} for thinking`);
    adapted.maxTokens = limit;
  }
  if (thinking) deviations.push(`thinking: ${describeThinking(thinking)}`);
  return { request: adapted, ...(thinking ? { thinking } : {}), tokenLimit: profile.tokenLimit, deviations };
}

function thinkingSetting(profile: ModelProfile, scale: number): ThinkingSetting | undefined {
  const { control, default: fallback } = profile.thinking;
  const effort = profile.reasoningEffort ?? (typeof fallback === "string" ? fallback : undefined);
  const budget = profile.thinkingBudget ?? (typeof fallback === "number" ? fallback : undefined);
  switch (control) {
    case "reasoning_effort":
      return effort === undefined ? undefined : { kind: "reasoning_effort", effort };
    case "gemini-level":
      return effort === undefined ? undefined : { kind: "gemini-level", level: effort };
    case "gemini-budget":
      return budget === undefined ? undefined : { kind: "gemini-budget", budgetTokens: Math.round(budget * (budget > 0 ? scale : 1)) };
    case "anthropic-budget":
      return profile.thinkingBudget ? { kind: "anthropic-budget", budgetTokens: Math.round(profile.thinkingBudget * scale) } : undefined;
    case "anthropic-adaptive":
      return profile.reasoningEffort === undefined ? undefined : { kind: "anthropic-adaptive", effort: profile.reasoningEffort };
    case "none":
      return undefined;
  }
}

/** Output tokens the thinking takes from the limit: the budget where one is set, else the family's headroom. */
function thinkingHeadroom(profile: ModelProfile, thinking: ThinkingSetting | undefined, scale: number): number {
  if (thinking?.kind === "anthropic-budget" || thinking?.kind === "gemini-budget") return thinking.budgetTokens;
  if (!thinking && !profile.thinking.alwaysOn) return 0;
  return Math.round((profile.thinking.headroomTokens ?? 0) * scale);
}

function describeThinking(thinking: ThinkingSetting): string {
  switch (thinking.kind) {
    case "reasoning_effort":
      return `reasoning_effort ${thinking.effort}`;
    case "anthropic-adaptive":
      return `adaptive, effort ${thinking.effort}`;
    case "gemini-level":
      return `thinkingLevel ${thinking.level}`;
    case "anthropic-budget":
    case "gemini-budget":
      return `budget ${thinking.budgetTokens} tokens`;
  }
}
