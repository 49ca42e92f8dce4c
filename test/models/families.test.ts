import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { UserError, type Question } from "../../src/core/index.js";
import { judgeLlmMatch, prepareLlmMatchTask } from "../../src/eval/index.js";
import { ModelCallError, ModelRuntime, adaptRequest, askAgain, familyFor, imageSize, modelProfile, resolveModel, type ChatRequest } from "../../src/models/index.js";
import { withModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const ASK: ChatRequest = { messages: [{ role: "user", content: "q" }], temperature: 0.2, topP: 0.9, maxTokens: 32, seed: 1, stop: ["END"] };

describe("model families", () => {
  test("each model id finds its family; unknown ids fall to their protocol's catch-all", () => {
    const cases: [Parameters<typeof familyFor>[0], string, string][] = [
      ["openai", "o3-mini", "openai-reasoning"],
      ["openai", "o1", "openai-reasoning"],
      ["openai", "gpt-5-mini", "openai-reasoning"],
      ["openai", "gpt-5-chat-latest", "openai-chat"],
      ["openai", "gpt-4o", "openai-chat"],
      ["openai", "Qwen/Qwen2.5-VL-7B-Instruct", "openai-compatible"],
      ["anthropic", "claude-opus-4-7", "claude-default-sampling"],
      ["anthropic", "claude-opus-4-6", "claude-one-sampler"],
      ["anthropic", "claude-sonnet-4-5-20250929", "claude-one-sampler"],
      ["anthropic", "claude-haiku-4-5", "claude-one-sampler"],
      ["anthropic", "claude-3-5-sonnet-20241022", "claude"],
      ["google", "gemini-2.5-pro", "gemini-2.5-pro"],
      ["google", "gemini-2.5-flash-lite", "gemini-2.5"],
      ["google", "gemini-3-pro-preview", "gemini-3"],
      ["google", "gemini-2.0-flash", "gemini"],
    ];
    for (const [protocol, model, family] of cases) assert.equal(familyFor(protocol, model).id, family, model);
  });

  test("a reasoning model gets max_completion_tokens with room to think, no sampling parameters, no stop, and the deviations say so", () => {
    const adapted = adaptRequest(modelProfile("openai", "o3-mini"), ASK);
    assert.equal(adapted.tokenLimit, "max_completion_tokens");
    assert.equal(adapted.request.maxTokens, 32 + 4096);
    assert.equal(adapted.request.temperature, undefined);
    assert.equal(adapted.request.topP, undefined);
    assert.equal(adapted.request.stop, undefined);
    assert.equal(adapted.request.seed, 1);
    assert.deepEqual(adapted.thinking, { kind: "reasoning_effort", effort: "low" });
    assert.deepEqual(adapted.deviations, [
      "temperature 0.2 not sent: openai-reasoning models take only their default",
      "top_p 0.9 not sent: openai-reasoning models refuse it",
      'stop sequences ["END"] not sent: openai-reasoning models refuse them',
      "max_completion_tokens 32 raised by 4096 for thinking",
      "thinking: reasoning_effort low",
    ]);
  });

  test("Claude: one sampler for Sonnet 4.5, none for Opus 4.7, both for older models; thinking drops temperature", () => {
    const sonnet = adaptRequest(modelProfile("anthropic", "claude-sonnet-4-5"), ASK).request;
    assert.deepEqual([sonnet.temperature, sonnet.topP], [0.2, undefined]);
    const opus = adaptRequest(modelProfile("anthropic", "claude-opus-4-7"), ASK).request;
    assert.deepEqual([opus.temperature, opus.topP], [undefined, undefined]);
    const old = adaptRequest(modelProfile("anthropic", "claude-3-5-sonnet-latest"), ASK);
    assert.deepEqual([old.request.temperature, old.request.topP, old.deviations], [0.2, 0.9, []]);
    const thinking = adaptRequest(modelProfile("anthropic", "claude-sonnet-4-5", { thinking_budget: "2048" }), ASK);
    assert.deepEqual(thinking.thinking, { kind: "anthropic-budget", budgetTokens: 2048 });
    assert.equal(thinking.request.temperature, undefined);
    assert.equal(thinking.request.maxTokens, 32 + 2048);
    const adaptive = adaptRequest(modelProfile("anthropic", "claude-opus-4-7", { reasoning_effort: "low" }), ASK);
    assert.deepEqual(adaptive.thinking, { kind: "anthropic-adaptive", effort: "low" });
  });

  test("Gemini: 2.5 Flash is asked not to think, 2.5 Pro thinks at its least with the limit raised, Gemini 3 at a low level", () => {
    const flash = adaptRequest(modelProfile("google", "gemini-2.5-flash"), ASK);
    assert.deepEqual([flash.thinking, flash.request.maxTokens], [{ kind: "gemini-budget", budgetTokens: 0 }, 32]);
    const pro = adaptRequest(modelProfile("google", "gemini-2.5-pro"), ASK);
    assert.deepEqual([pro.thinking, pro.request.maxTokens], [{ kind: "gemini-budget", budgetTokens: 128 }, 32 + 128]);
    const three = adaptRequest(modelProfile("google", "gemini-3-pro-preview"), ASK);
    assert.deepEqual([three.thinking, three.request.maxTokens], [{ kind: "gemini-level", level: "low" }, 32 + 4096]);
    assert.throws(() => modelProfile("google", "gemini-2.5-pro", { thinking_budget: "0" }), (e: unknown) => e instanceof UserError && /below gemini-2\.5-pro's least, 128/.test(e.message));
  });

  test("a cut reply asked again doubles the budget", () => {
    const profile = modelProfile("openai", "o3-mini", { truncation_retries: "1" });
    assert.equal(profile.truncationRetries, 1);
    assert.equal(adaptRequest(profile, ASK, 2).request.maxTokens, 64 + 8192);
  });

  test("options override the family; a wrong option names the flag and the key", () => {
    const custom = modelProfile("openai", "my-reasoner", { family: "openai-reasoning", reasoning_effort: "high" });
    assert.equal(custom.id, "openai-reasoning");
    assert.deepEqual(adaptRequest(custom, ASK).thinking, { kind: "reasoning_effort", effort: "high" });
    assert.equal(modelProfile("openai", "gpt-4o", { token_limit: "max_completion_tokens" }).tokenLimit, "max_completion_tokens");
    assert.throws(() => modelProfile("openai", "gpt-4o", { family: "claude" }, "--judge-option"), (e: unknown) => e instanceof UserError && /--judge-option family.*speaks anthropic/.test(e.message));
    assert.throws(() => modelProfile("openai", "gpt-4o", { temperature_support: "sometimes" }), (e: unknown) => e instanceof UserError && /temperature_support.*not one of any, default-only/.test(e.message));
    assert.throws(() => modelProfile("openai", "gpt-4o", { truncation_retries: "-1" }), (e: unknown) => e instanceof UserError && /not a whole number/.test(e.message));
  });

  test("the models file gives a custom model its options; flags win; a wrong file names itself and the field", () => {
    const dir = temporaryDir();
    const file = join(dir, "models.json");
    writeFileSync(file, JSON.stringify({ models: { "vllm/my-reasoner": { family: "openai-reasoning", reasoning_effort: "medium" } } }));
    const spec = resolveModel("vllm/my-reasoner", { env: { EQA_MODELS_FILE: file } });
    assert.equal(spec.profile.id, "openai-reasoning");
    assert.equal(spec.profile.reasoningEffort, "medium");
    assert.equal(resolveModel("vllm/my-reasoner", { env: { EQA_MODELS_FILE: file }, options: { reasoning_effort: "high" } }).profile.reasoningEffort, "high");
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ models: { "vllm/x": { reasoning: "high" } } }));
    assert.throws(() => resolveModel("vllm/x", { env: { EQA_MODELS_FILE: bad } }), (e: unknown) => e instanceof UserError && e.message.includes(bad) && /models\.vllm\/x/.test(e.message));
  });
});

describe("image limits", () => {
  test("PNG, JPEG and WebP sizes come from their headers", async () => {
    const pixels = { create: { width: 37, height: 21, channels: 3 as const, background: "#808080" } };
    for (const format of ["png", "jpeg", "webp"] as const) {
      assert.deepEqual(imageSize(await sharp(pixels).toFormat(format).toBuffer()), { width: 37, height: 21 }, format);
    }
    assert.equal(imageSize(new Uint8Array([1, 2, 3])), undefined);
  });

  test("more than 20 images of more than 2000 px a side are refused for Claude before sending, naming the limit", async () => {
    const big = await sharp({ create: { width: 2100, height: 50, channels: 3, background: "#000" } }).png().toBuffer();
    const request: ChatRequest = { messages: [{ role: "user", content: Array.from({ length: 21 }, () => ({ type: "image" as const, data: big, mediaType: "image/png" })) }] };
    await withModelServer(() => ({ body: {} }), async (server) => {
      const model = new ModelRuntime({ maxRetries: 0 }).model(resolveModel("anthropic/claude-sonnet-4-5", { baseURL: server.url, env: { ANTHROPIC_API_KEY: "k" } }), { role: "agent" });
      await assert.rejects(model.complete(request), (e: unknown) => e instanceof ModelCallError && e.kind === "bad_request" && /image 1 is 2100x50 px, more than 2000 px a side when a request holds more than 20 images/.test(e.message));
      const many = { messages: [{ role: "user" as const, content: Array.from({ length: 101 }, () => ({ type: "image" as const, data: new Uint8Array(10), mediaType: "image/png" })) }] };
      await assert.rejects(model.complete(many), (e: unknown) => e instanceof ModelCallError && /101 images, more than 100/.test(e.message));
      assert.equal(server.requests.length, 0);
    });
  });
});

describe("asking again", () => {
  test("an empty reply is never sent back as an empty turn", () => {
    const start = [{ role: "user" as const, content: "mark it" }];
    assert.deepEqual(askAgain(start, "hmm", "again"), [...start, { role: "assistant", content: "hmm" }, { role: "user", content: "again" }]);
    assert.deepEqual(askAgain(start, "", "again"), [{ role: "user", content: "mark it\n\nagain" }]);
    assert.deepEqual(askAgain(start, null, "again"), [{ role: "user", content: "mark it\n\nagain" }]);
  });

  test("the robust judge's re-ask after an empty reply is accepted by a server that refuses empty turns", async () => {
    const question: Question = { questionId: "q1", question: "What colour is the sofa?", answer: "blue", category: "attribute recognition", episodeHistory: "e" };
    let asked = 0;
    await withModelServer((request) => {
      const body = request.body as { messages: { role: string; content: unknown }[] };
      if (body.messages.some((m) => m.content === "" || (Array.isArray(m.content) && m.content.length === 0))) {
        return { status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "messages: all messages must have non-empty content except for the optional final assistant message" } } };
      }
      const text = asked++ === 0 ? "" : "Your mark: 5";
      return { body: { id: "m", type: "message", role: "assistant", model: "m", content: text ? [{ type: "text", text }] : [], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 1 } } };
    }, async (server) => {
      const judge = new ModelRuntime({ maxRetries: 0 }).model(resolveModel("anthropic/claude-sonnet-4-5", { baseURL: server.url, env: { ANTHROPIC_API_KEY: "k" } }), { role: "agent" });
      const judgement = await judgeLlmMatch(prepareLlmMatchTask(question, "blue", "robust", judge.name), judge, "robust");
      assert.equal(judgement.score, 5);
      assert.equal(server.requests.length, 2);
    });
  });
});
