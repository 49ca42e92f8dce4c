import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { UserError } from "../../src/core/index.js";
import { BATCH_PRICE_FACTOR, PRICES_CHECKED, billedDollars, costOf, emptyUsage, estimateImageTokens, estimateRequestTokens, ledgerCost, priceOf, type CostedCall, type UsageTotals } from "../../src/models/index.js";
import { temporaryDir } from "../helpers/paths.js";

function usage(fields: Partial<UsageTotals>): UsageTotals {
  return { ...emptyUsage(), ...fields };
}

const NO_OVERRIDE = {};

describe("costOf", () => {
  test("prices prompt tokens at the input price and completion tokens (thinking included) at the output price", () => {
    // gpt-4o: $2.50 in, $10 out per million tokens
    assert.equal(costOf("openai/gpt-4o", usage({ promptTokens: 1_000_000, completionTokens: 100_000, thinkingTokens: 0 }), NO_OVERRIDE), 3.5);
    // claude-opus-4-5: $5 in, $25 out; thinking is already inside completionTokens
    assert.equal(costOf("anthropic/claude-opus-4-5", usage({ promptTokens: 2000, completionTokens: 1000, thinkingTokens: 800 }), NO_OVERRIDE), 0.035);
    assert.equal(costOf("anthropic/claude-opus-4-1-20250805", usage({ promptTokens: 1_000_000, completionTokens: 0 }), NO_OVERRIDE), 15);
    assert.equal(costOf("google/gemini-2.5-flash-lite", usage({ promptTokens: 1_000_000, completionTokens: 1_000_000 }), NO_OVERRIDE), 0.5);
  });

  test("tells apart the models of one family by their full id (mini before the base model, dated snapshots)", () => {
    assert.equal(priceOf("openai/gpt-4o-mini", NO_OVERRIDE)?.input, 0.15);
    assert.equal(priceOf("openai/gpt-4o-2024-08-06", NO_OVERRIDE)?.input, 2.5);
    assert.equal(priceOf("openai/gpt-4.1-nano", NO_OVERRIDE)?.output, 0.4);
    assert.equal(priceOf("openai/gpt-5-mini", NO_OVERRIDE)?.output, 2);
    assert.equal(priceOf("anthropic/claude-sonnet-4-5-20250929", NO_OVERRIDE)?.output, 15);
    assert.equal(priceOf("anthropic/claude-haiku-4-5", NO_OVERRIDE)?.input, 1);
    assert.equal(priceOf("google/gemini-2.5-flash", NO_OVERRIDE)?.input, 0.3);
    assert.equal(priceOf("google/gemini-3-pro-preview", NO_OVERRIDE)?.output, 12);
    assert.match(priceOf("openai/gpt-4o", NO_OVERRIDE)?.source ?? "", new RegExp(`eqakit prices of ${PRICES_CHECKED}`));
  });

  test("replies taken from the model-call cache cost nothing", () => {
    const cost = costOf("openai/gpt-4o", usage({ calls: 2, cacheHits: 1, promptTokens: 2000, completionTokens: 200, cachedPromptTokens: 1000, cachedCompletionTokens: 100 }), NO_OVERRIDE);
    assert.equal(cost, (1000 * 2.5 + 100 * 10) / 1e6);
  });

  test("self-hosted servers cost 0 and a model without a price is null, never a guess", () => {
    assert.equal(costOf("vllm/Qwen/Qwen2.5-VL-7B-Instruct", usage({ promptTokens: 5000, completionTokens: 500 }), NO_OVERRIDE), 0);
    assert.equal(costOf("ollama/gpt-4o", usage({ promptTokens: 5000, completionTokens: 500 }), NO_OVERRIDE), 0);
    assert.equal(costOf("openai/my-finetune", usage({ promptTokens: 5000, completionTokens: 500 }), NO_OVERRIDE), null);
    assert.equal(costOf("anthropic/claude-instant-1", usage({ promptTokens: 1, completionTokens: 1 }), NO_OVERRIDE), null);
  });

  test("a prices file named by EQA_PRICES adds models and wins over eqakit's table", () => {
    const dir = temporaryDir();
    const file = join(dir, "prices.json");
    writeFileSync(file, JSON.stringify({ checked: "2026-01-01", currency: "USD", unit: "per million tokens", models: [{ match: "^gpt-4o$", input: 1, output: 2 }, { match: "^openai/my-finetune$", input: 3, output: 6 }] }));
    const env = { EQA_PRICES: file };
    assert.equal(costOf("openai/gpt-4o", usage({ promptTokens: 1_000_000, completionTokens: 1_000_000 }), env), 3);
    assert.equal(costOf("openai/my-finetune", usage({ promptTokens: 1_000_000, completionTokens: 0 }), env), 3);
    assert.equal(priceOf("openai/my-finetune", env)?.source, file);
    // the rest still comes from eqakit's table
    assert.equal(costOf("openai/gpt-4o-mini", usage({ promptTokens: 1_000_000, completionTokens: 0 }), env), 0.15);
  });

  test("an unreadable or malformed EQA_PRICES file is a user error naming the file", () => {
    const dir = temporaryDir();
    const missing = join(dir, "missing.json");
    assert.throws(() => costOf("openai/gpt-4o", usage({}), { EQA_PRICES: missing }), (e: unknown) => e instanceof UserError && e.message.includes("cannot read the prices file") && e.location.file === missing);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ models: [{ match: "^x$", input: "cheap", output: 1 }] }));
    assert.throws(() => costOf("openai/gpt-4o", usage({}), { EQA_PRICES: bad }), (e: unknown) => e instanceof UserError && e.message.includes("not a prices file"));
    const badPattern = join(dir, "pattern.json");
    writeFileSync(badPattern, JSON.stringify({ models: [{ match: "(", input: 1, output: 1 }] }));
    assert.throws(() => costOf("openai/gpt-4o", usage({}), { EQA_PRICES: badPattern }), (e: unknown) => e instanceof UserError && e.message.includes("is not a regular expression") && e.location.field === "match");
  });
});

describe("ledgerCost", () => {
  const call = (fields: Partial<CostedCall> & Pick<CostedCall, "role" | "model">): CostedCall => ({ mode: "live", cached: false, status: "ok", promptTokens: 0, completionTokens: 0, thinkingTokens: 0, images: 0, ...fields });

  test("gives calls, tokens and dollars per role and model and their total; an unpriced model makes the total null and is named", () => {
    const cost = ledgerCost(
      [
        call({ role: "agent", model: "openai/gpt-4o", promptTokens: 1000, completionTokens: 100, images: 2 }),
        call({ role: "agent", model: "openai/gpt-4o", promptTokens: 1000, completionTokens: 100 }),
        call({ role: "judge", model: "openai/gpt-4o-mini", promptTokens: 3000, completionTokens: 30 }),
      ],
      NO_OVERRIDE,
    );
    assert.deepEqual(cost.roles.map((r) => [r.role, r.model, r.calls, r.promptTokens, r.completionTokens, r.images, r.dollars]), [
      ["agent", "openai/gpt-4o", 2, 2000, 200, 2, 0.007],
      ["judge", "openai/gpt-4o-mini", 1, 3000, 30, 0, 0.000468],
    ]);
    assert.equal(cost.total.dollars, 0.007468);
    assert.equal(cost.total.calls, 3);
    assert.deepEqual(cost.unpriced, []);
    const unknown = ledgerCost([call({ role: "judge", model: "openai/house-model", promptTokens: 10, completionTokens: 1 })], NO_OVERRIDE);
    assert.equal(unknown.total.dollars, null);
    assert.deepEqual(unknown.unpriced, ["openai/house-model"]);
  });

  test("a cache hit is counted as a hit, not as a call, and costs nothing; a failed request is counted apart, not as a billed call, and costs nothing", () => {
    const cost = ledgerCost(
      [
        call({ role: "judge", model: "openai/gpt-4o", promptTokens: 1000, completionTokens: 100 }),
        call({ role: "judge", model: "openai/gpt-4o", cached: true, promptTokens: 1000, completionTokens: 100 }),
        call({ role: "judge", model: "openai/gpt-4o", status: "failed" }),
      ],
      NO_OVERRIDE,
    );
    assert.deepEqual(cost.roles.map((r) => [r.role, r.calls, r.cacheHits, r.failed, r.promptTokens, r.completionTokens, r.dollars]), [["judge", 1, 1, 1, 1000, 100, (1000 * 2.5 + 100 * 10) / 1e6]]);
    assert.deepEqual([cost.total.calls, cost.total.failed, cost.total.cacheHits], [1, 1, 1]);
  });

  test("batch calls are a row of their own at the batch price", () => {
    const cost = ledgerCost(
      [
        call({ role: "judge", model: "openai/gpt-4o", mode: "batch", promptTokens: 1_000_000, completionTokens: 100_000 }),
        call({ role: "judge", model: "openai/gpt-4o", promptTokens: 1_000_000, completionTokens: 100_000 }),
      ],
      NO_OVERRIDE,
    );
    assert.deepEqual(cost.roles.map((r) => [r.role, r.calls, r.dollars]), [
      ["judge (batch)", 1, 3.5 * BATCH_PRICE_FACTOR],
      ["judge", 1, 3.5],
    ]);
    assert.equal(cost.total.dollars, 3.5 * (1 + BATCH_PRICE_FACTOR));
    assert.equal(billedDollars("openai/gpt-4o", { promptTokens: 1_000_000, completionTokens: 100_000 }, "batch", NO_OVERRIDE), 1.75);
  });
});

describe("estimateRequestTokens", () => {
  test("images cost what each provider documents", () => {
    // OpenAI, detail high: 1024x1024 → shortest side 768 → 2x2 tiles
    assert.equal(estimateImageTokens("openai", 1024, 1024), 85 + 170 * 4);
    assert.equal(estimateImageTokens("openai", 512, 384), 85 + 170);
    // Anthropic: width·height/750
    assert.equal(estimateImageTokens("anthropic", 750, 1000), 1000);
    // Gemini: 258 up to 384 px a side, else 258 per 768-px tile
    assert.equal(estimateImageTokens("google", 384, 300), 258);
    assert.equal(estimateImageTokens("google", 1000, 700), 258 * 2);
  });

  test("prompt tokens are characters / 4 plus images, completion tokens the request's limit", async () => {
    const png = new Uint8Array(await sharp({ create: { width: 512, height: 384, channels: 3, background: "#888" } }).png().toBuffer());
    const estimate = estimateRequestTokens("openai", { messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(400) }, { type: "image", data: png, mediaType: "image/png" }] }], maxTokens: 128 });
    assert.deepEqual(estimate, { promptTokens: 100 + 255, completionTokens: 128 });
    assert.deepEqual(estimateRequestTokens("google", { messages: [{ role: "user", content: "abc" }] }), { promptTokens: 1, completionTokens: null });
  });
});
