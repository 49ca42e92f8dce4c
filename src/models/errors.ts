import { z } from "zod";
import type { CallUsage } from "./types.js";

/**
 * How a model call failed, which decides what the scheduler does:
 * rate_limit, server, timeout, network and bad_response are retried;
 * unreachable, auth, not_found and quota (the account is out of credits) stop a run;
 * bad_request fails only the item that made it, as do the reply statuses truncated,
 * filtered and refused (the model answered, but not with an answer).
 */
export type ModelErrorKind =
  | "rate_limit"
  | "server"
  | "timeout"
  | "network"
  | "bad_response"
  | "unreachable"
  | "auth"
  | "not_found"
  | "quota"
  | "bad_request"
  | "truncated"
  | "filtered"
  | "refused";

const RETRYABLE: ReadonlySet<ModelErrorKind> = new Set(["rate_limit", "server", "timeout", "network", "bad_response", "unreachable"]);
const FATAL_FOR_RUN: ReadonlySet<ModelErrorKind> = new Set(["unreachable", "auth", "not_found", "quota"]);

export class ModelCallError extends Error {
  /** Retries made before this error was final (set by the scheduler). */
  retries = 0;

  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly endpoint: string,
    readonly status?: number,
    /** From `retry-after` / `retry-after-ms` headers or the provider's body. */
    readonly retryAfterMs?: number,
    /** A reply that is not an answer: its text so far, the provider's finish reason, and what it cost. */
    readonly reply?: { text: string | null; finishReason: string | null; usage?: CallUsage },
  ) {
    super(message);
    this.name = "ModelCallError";
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }

  /** The configuration is wrong: every further call would fail the same way. */
  get fatalForRun(): boolean {
    return FATAL_FOR_RUN.has(this.kind);
  }
}

/** A reply that was not an answer, as records keep it. */
export type FailedReplyStatus = "truncated" | "filtered" | "refused";

/** A FailedReplyStatus as a stored record holds it. */
export const failedReplyStatusSchema = z.enum(["truncated", "filtered", "refused"]) satisfies z.ZodType<FailedReplyStatus>;

/** `{ status }` when the error is a reply that was not an answer, else nothing: spread into a failure record. */
export function replyStatusOf(error: unknown): { status?: FailedReplyStatus } {
  return error instanceof ModelCallError && isReplyStatus(error.kind) ? { status: error.kind } : {};
}

/** How many records failed with each reply status (truncated, filtered, refused), for a summary. */
export function countReplyStatuses(records: Iterable<{ status?: FailedReplyStatus | undefined }>): Partial<Record<FailedReplyStatus, number>> {
  const counts: Partial<Record<FailedReplyStatus, number>> = {};
  for (const record of records) if (record.status) counts[record.status] = (counts[record.status] ?? 0) + 1;
  return counts;
}

/** Whether a failure is a reply status (truncated, filtered, refused) rather than a failed call. */
export function isReplyStatus(kind: ModelErrorKind): kind is FailedReplyStatus {
  return kind === "truncated" || kind === "filtered" || kind === "refused";
}

/**
 * Classifies an HTTP status from a provider. A 429 that says the account has no credits
 * left (OpenAI's `insufficient_quota`, a billing message) is not a rate limit: waiting
 * does not help, so it stops the run. Google words its per-minute and per-day limits as
 * "You exceeded your current quota, please check your plan and billing details" too, so its
 * details decide (`googleQuotaKind`).
 */
export function kindForStatus(status: number, body = ""): ModelErrorKind {
  if (status === 429) return googleQuotaKind(body) ?? (OUT_OF_CREDITS.test(body) ? "quota" : "rate_limit");
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 408 || status === 409 || status >= 500) return "server";
  return "bad_request";
}

/** Parses `retry-after-ms` or `retry-after` (seconds or an HTTP date) into milliseconds. */
export function retryAfterFromHeaders(get: (name: string) => string | null | undefined, now = Date.now()): number | undefined {
  const ms = get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

const OUT_OF_CREDITS = /insufficient_quota|exceeded your current quota|credit balance is too low|billing/i;

/** A quota Google counts per unit of time (`GenerateRequestsPerMinutePerProjectPerModel-FreeTier`, `…PerDay…`). */
const PER_PERIOD_QUOTA = /Per(Second|Minute|Hour|Day)/i;

const googleDetailsSchema = z.object({
  error: z.object({
    details: z.array(
      z.object({
        "@type": z.string().optional(),
        retryDelay: z.string().optional(),
        violations: z.array(z.object({ quotaId: z.string().optional(), quotaValue: z.string().optional() }).loose()).optional(),
      }).loose(),
    ),
  }).loose(),
}).loose();

/**
 * What Google's 429 (`RESOURCE_EXHAUSTED`) means, read from its `details` (google.rpc
 * `QuotaFailure` and `RetryInfo`): a quota counted per minute, hour or day, or a reply with a
 * `retryDelay`, is a rate limit (the scheduler waits the delay and retries); a quota whose
 * allowance is 0 (the plan has none of this model) is out of credits, as waiting cannot help.
 * Undefined when the body has no such details (other providers, a bare message).
 */
function googleQuotaKind(body: string): "rate_limit" | "quota" | undefined {
  if (!body.includes("google.rpc.")) return undefined;
  let parsed;
  try {
    parsed = googleDetailsSchema.safeParse(JSON.parse(body));
  } catch {
    // a body cut short: its retryDelay or a per-period quotaId still names a rate limit
    return /"retryDelay"|"quotaId"\s*:\s*"[^"]*Per(Second|Minute|Hour|Day)/i.test(body) ? "rate_limit" : undefined;
  }
  if (!parsed.success) return undefined;
  const details = parsed.data.error.details;
  const violations = details.filter((d) => d["@type"]?.endsWith("google.rpc.QuotaFailure")).flatMap((d) => d.violations ?? []);
  if (violations.some((v) => v.quotaValue !== undefined && Number(v.quotaValue) === 0)) return "quota";
  const retry = details.some((d) => d["@type"]?.endsWith("google.rpc.RetryInfo") && d.retryDelay !== undefined);
  if (retry || violations.some((v) => PER_PERIOD_QUOTA.test(v.quotaId ?? ""))) return "rate_limit";
  return undefined;
}

const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Walks an error's `cause` chain for a system error code (fetch wraps them). */
export function systemErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current; depth++) {
    if (typeof current === "object" && current !== null) {
      const code = (current as { code?: unknown }).code;
      if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
      current = (current as { cause?: unknown }).cause;
    } else break;
  }
  return undefined;
}

/** A connection-level failure: unreachable (refused, no such host) or a plain network error. */
export function networkError(error: unknown, endpoint: string): ModelCallError {
  const code = systemErrorCode(error);
  const detail = code ?? (error instanceof Error ? error.message : String(error));
  if (code && UNREACHABLE_CODES.has(code)) {
    return new ModelCallError("unreachable", `cannot reach ${endpoint} (${detail})`, endpoint);
  }
  return new ModelCallError("network", `connection to ${endpoint} failed (${detail})`, endpoint);
}
