import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { costOf, emptyUsage, priceOf, type UsageTotals } from "../../src/models/index.js";
import { temporaryDir } from "../helpers/paths.js";

function usage(fields: Partial<UsageTotals>): UsageTotals {
  return { ...emptyUsage(), ...fields };
}

const NO_OVERRIDE = {};

describe("priceOf", () => {
  test("every model of the providers' price pages is billed at its listed price; a snapshot listed apart from its family is matched exactly first", () => {
    // [model, input, output] in USD per million tokens, standard tier, as the providers' pricing
    // pages list them (platform.openai.com/docs/pricing, including its legacy models;
    // docs.claude.com pricing; ai.google.dev/gemini-api/docs/pricing, prompts up to 200k tokens)
    const listed: [string, number, number][] = [
      ["openai/gpt-4o", 2.5, 10],
      ["openai/gpt-4o-2024-11-20", 2.5, 10],
      ["openai/gpt-4o-2024-08-06", 2.5, 10],
      ["openai/gpt-4o-2024-05-13", 5, 15],
      ["openai/chatgpt-4o-latest", 5, 15],
      ["openai/gpt-4o-mini", 0.15, 0.6],
      ["openai/gpt-4o-mini-2024-07-18", 0.15, 0.6],
      ["openai/gpt-4.1", 2, 8],
      ["openai/gpt-4.1-2025-04-14", 2, 8],
      ["openai/gpt-4.1-mini", 0.4, 1.6],
      ["openai/gpt-4.1-nano", 0.1, 0.4],
      ["openai/o1", 15, 60],
      ["openai/o1-2024-12-17", 15, 60],
      ["openai/o1-preview", 15, 60],
      ["openai/o1-mini", 1.1, 4.4],
      ["openai/o3", 2, 8],
      ["openai/o3-mini", 1.1, 4.4],
      ["openai/o4-mini", 1.1, 4.4],
      ["openai/gpt-5", 1.25, 10],
      ["openai/gpt-5-mini", 0.25, 2],
      ["openai/gpt-5-nano", 0.05, 0.4],
      ["anthropic/claude-opus-4-1-20250805", 15, 75],
      ["anthropic/claude-opus-4-20250514", 15, 75],
      ["anthropic/claude-opus-4-5", 5, 25],
      ["anthropic/claude-sonnet-4-5-20250929", 3, 15],
      ["anthropic/claude-sonnet-4-20250514", 3, 15],
      ["anthropic/claude-3-7-sonnet-20250219", 3, 15],
      ["anthropic/claude-haiku-4-5-20251001", 1, 5],
      ["anthropic/claude-3-5-haiku-20241022", 0.8, 4],
      ["anthropic/claude-3-opus-20240229", 15, 75],
      ["anthropic/claude-3-haiku-20240307", 0.25, 1.25],
      ["google/gemini-2.5-pro", 1.25, 10],
      ["google/gemini-2.5-flash", 0.3, 2.5],
      ["google/gemini-2.5-flash-lite", 0.1, 0.4],
    ];
    const wrong = listed
      .map(([model, input, output]) => [model, input, output, priceOf(model, NO_OVERRIDE)] as const)
      .filter(([, input, output, price]) => price?.input !== input || price.output !== output)
      .map(([model, input, output, price]) => `${model}: listed $${input}/$${output}, billed ${price ? `$${price.input}/$${price.output}` : "nothing"}`);
    assert.deepEqual(wrong, []);
    assert.equal(priceOf("openai/gpt-4o-2024-05-13", NO_OVERRIDE)?.model, "openai/gpt-4o-2024-05-13");
    assert.equal(costOf("openai/chatgpt-4o-latest", usage({ promptTokens: 1_000_000, completionTokens: 1_000_000 }), NO_OVERRIDE), 20);
    // a self-hosted server serving a model of the same name still costs nothing
    assert.equal(costOf("ollama/gpt-4o-2024-05-13", usage({ promptTokens: 1000, completionTokens: 1000 }), NO_OVERRIDE), 0);
  });

  test("an EQA_PRICES file wins over eqakit's exact entries too, and an entry naming both a model and a pattern is refused", () => {
    const dir = temporaryDir();
    const file = join(dir, "prices.json");
    writeFileSync(file, JSON.stringify({ models: [{ model: "openai/gpt-4o-2024-05-13", input: 4, output: 12 }] }));
    assert.equal(priceOf("openai/gpt-4o-2024-05-13", { EQA_PRICES: file })?.input, 4);
    const both = join(dir, "both.json");
    writeFileSync(both, JSON.stringify({ models: [{ model: "openai/x", match: "^x$", input: 1, output: 1 }] }));
    assert.throws(() => priceOf("openai/x", { EQA_PRICES: both }), /an entry names one model/);
  });
});
