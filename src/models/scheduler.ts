import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom, type Random } from "../core/index.js";
import { ModelCallError } from "./errors.js";

export interface SchedulerOptions {
  /** Most calls in flight at once to this endpoint. */
  concurrency: number;
  /** Retries after the first attempt, for retryable failures. */
  maxRetries: number;
  /** Per-attempt timeout. */
  timeoutMs: number;
  /** First backoff step; doubles each retry, with full jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Longest pause a server's `retry-after` may impose (default 120 s). */
  maxRetryAfterMs?: number;
  random?: Random;
}

export interface ScheduledResult<T> {
  value: T;
  retries: number;
  /** Time of the successful attempt alone. */
  latencyMs: number;
}

/**
 * One endpoint's traffic: a concurrency limit that halves on 429 and grows back by one
 * per window of successes, a pause for the whole endpoint honouring `retry-after`, and
 * jittered exponential retries on 5xx, timeouts and resets. The only retry layer: the
 * provider clients never retry by themselves.
 */
export class EndpointScheduler {
  private limit: number;
  private active = 0;
  private pausedUntil = 0;
  private successesSinceCut = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly random: Random;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private wakeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SchedulerOptions) {
    this.limit = Math.max(1, options.concurrency);
    this.random = options.random ?? seededRandom(Date.now());
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
  }

  /** The current concurrency limit (lower than configured after rate limiting). */
  get currentLimit(): number {
    return this.limit;
  }

  async run<T>(attempt: (signal: AbortSignal) => Promise<T>): Promise<ScheduledResult<T>> {
    for (let retries = 0; ; retries++) {
      await this.acquire();
      const started = performance.now();
      let value: T;
      try {
        value = await attempt(AbortSignal.timeout(this.options.timeoutMs));
      } catch (error) {
        this.release();
        if (!(error instanceof ModelCallError)) throw error;
        error.retries = retries;
        if (!error.retryable || retries >= this.options.maxRetries) throw error;
        await sleep(this.onRetryableFailure(error, retries));
        continue;
      }
      const latencyMs = performance.now() - started;
      this.release();
      this.onSuccess();
      return { value, retries, latencyMs };
    }
  }

  private onSuccess(): void {
    if (this.limit < this.options.concurrency && ++this.successesSinceCut >= this.limit) {
      this.limit++;
      this.successesSinceCut = 0;
      this.wake();
    }
  }

  /** Returns how long this caller waits before its retry. */
  private onRetryableFailure(error: ModelCallError, retries: number): number {
    const backoff = this.random() * Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** retries);
    if (error.kind !== "rate_limit") return backoff;
    // 429s that arrive together (during one pause) are one signal: the limit is cut once
    if (Date.now() >= this.pausedUntil) {
      this.limit = Math.max(1, Math.ceil(this.limit / 2));
      this.successesSinceCut = 0;
    }
    const wait = Math.min(error.retryAfterMs ?? backoff, this.options.maxRetryAfterMs ?? 120_000);
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + wait);
    return wait;
  }

  private acquire(): Promise<void> {
    if (this.canStart()) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiting.push(() => {
        this.active++;
        resolve();
      });
      this.scheduleWake();
    });
  }

  private release(): void {
    this.active--;
    this.wake();
  }

  private canStart(): boolean {
    return this.active < this.limit && Date.now() >= this.pausedUntil;
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.canStart()) this.waiting.shift()!();
    this.scheduleWake();
  }

  /**
   * While paused by a 429, waiters are woken when the pause ends. With every slot taken, a
   * release wakes them; with a slot free, only the pause holds them, so a timer always does
   * (at once when the pause ended since `canStart` looked: the clock may have moved on
   * between the two readings, and a waiter left without a timer would wait forever).
   */
  private scheduleWake(): void {
    if (this.waiting.length === 0 || this.wakeTimer || this.active >= this.limit) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wake();
    }, Math.max(0, this.pausedUntil - Date.now()));
  }
}
