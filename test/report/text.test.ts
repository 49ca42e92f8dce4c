import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { AnswerSummary } from "../../src/agents/index.js";
import { emptyUsage, ledgerCost, type CostedCall } from "../../src/models/index.js";
import { formatAnswerSummary, formatRunCost } from "../../src/report/index.js";

/** A ledger of `n` calls of `role`: `cached` of them read from the model-call cache, `failed` of them without a reply. */
function calls(role: string, n: number, cached: number, failed: number): CostedCall[] {
  return Array.from({ length: n }, (_, k) => ({
    role,
    model: "openai/gpt-4o-mini",
    mode: "live" as const,
    cached: k < cached,
    status: k >= cached && k < cached + failed ? "failed" : "ok",
    promptTokens: k >= cached && k < cached + failed ? 0 : 10,
    completionTokens: k >= cached && k < cached + failed ? 0 : 2,
    thinkingTokens: 0,
    images: 0,
  }));
}

/** An answer run's summary whose records' usage counts `n` replies, `cached` of them from the cache, beside the ledger's cost. */
function answerSummary(n: number, cached: number, failed: number): AnswerSummary {
  const usage = { ...emptyUsage(), calls: n - failed, cacheHits: cached, failures: failed, promptTokens: 10 * (n - failed), completionTokens: 2 * (n - failed), cachedPromptTokens: 10 * cached, cachedCompletionTokens: 2 * cached };
  return {
    kind: "answer",
    eqakitVersion: "0.0.0",
    createdAt: "2026-01-01T00:00:00.000Z",
    wallTimeMs: 0,
    config: { agent: "blind", model: "openai/gpt-4o-mini" },
    counts: { questions: n, answered: n, failed: 0, reused: 0, nullAnswers: 0, forceGuessChecked: 0, abstained: 0, forceGuessUnreadable: 0 },
    abstentionRate: null,
    judgeUnreadable: { count: 0, of: 0, overLimit: false, items: [] },
    replyStatuses: {},
    failures: [],
    usage: { answers: usage, thisProcess: null },
    cost: ledgerCost(calls("agent", n, cached, failed), { EQA_PRICES: "" }),
  };
}

/** The agent's row of a printed cost table: calls, failed, cache hits, prompt, completion, thinking tokens, images, dollars. */
function agentRow(text: string): string[] | undefined {
  return text.split("\n").find((l) => /^\s+agent\s/.test(l))?.trim().split(/\s{2,}/).slice(2);
}

describe("formatAnswerSummary", () => {
  test("the line above the cost table counts as the table does: 298 calls billed and 2 cache hits, not 300 calls of which 2 from the cache", () => {
    const text = formatAnswerSummary(answerSummary(300, 2, 0));
    assert.match(text, /^ {2}298 model call\(s\) billed, 0 failed, 2 from the cache, 0 image\(s\), 3576 tokens billed, 0 retries$/m);
    assert.deepEqual(agentRow(text)?.slice(0, 3), ["298", "0", "2"]);
  });

  test("failed requests are counted apart in the line and the table, as in the summary's cost, and not billed", () => {
    const summary = answerSummary(300, 2, 8);
    assert.deepEqual([summary.cost.total.calls, summary.cost.total.failed, summary.cost.total.cacheHits], [290, 8, 2]);
    const text = formatAnswerSummary(summary);
    assert.match(text, /^ {2}290 model call\(s\) billed, 8 failed, 2 from the cache,/m);
    assert.deepEqual(agentRow(text)?.slice(0, 5), ["290", "8", "2", "2900", "580"]);
  });
});

describe("formatRunCost", () => {
  test("has a failed column beside the billed calls, and the total sums both", () => {
    const text = formatRunCost(ledgerCost([...calls("agent", 5, 1, 2), ...calls("judge", 3, 0, 1)], { EQA_PRICES: "" }));
    const header = text.split("\n")[1]!.trim().split(/\s{2,}/);
    assert.deepEqual(header.slice(0, 5), ["role", "model", "calls", "failed", "cache hits"]);
    const total = text.split("\n").find((l) => /^\s+total\s/.test(l))!.trim().split(/\s{2,}/);
    assert.deepEqual(total.slice(1, 4), ["4", "3", "1"]);
    assert.match(text, /failed: requests that got no reply after their retries, not billed/);
  });
});
