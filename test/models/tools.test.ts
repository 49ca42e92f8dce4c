import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { canonicalJson, sha256Hex } from "../../src/core/index.js";
import { ModelRuntime, parseToolArguments, requestCacheKey, resolveModel, type ChatRequest } from "../../src/models/index.js";
import { ModelCallCache } from "../../src/store/index.js";
import { withModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const ENV = { OPENAI_API_KEY: "sk-test" };

describe("tool calling", () => {
  test("a request without tools keeps the cache key it always had", () => {
    const spec = resolveModel("openai/gpt-4o", { baseURL: "http://127.0.0.1:1/v1", env: ENV });
    const request: ChatRequest = { messages: [{ role: "user", content: "hi" }], temperature: 0.2, maxTokens: 32, seed: 1234 };
    const before = sha256Hex(canonicalJson({ protocol: "openai", baseURL: spec.baseURL, model: "gpt-4o", messages: [{ role: "user", content: "hi" }], params: { temperature: 0.2, maxTokens: 32, seed: 1234 }, sampleIndex: 0 }));
    assert.equal(requestCacheKey(spec, request), before);
    const withTools = requestCacheKey(spec, { ...request, tools: [{ name: "f", description: "d", parameters: { type: "object" } }] });
    assert.notEqual(withTools, before);
  });

  test("OpenAI tool calls come back parsed, and from the cache as they were", async () => {
    const reply = { choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: '{"a": 1}' } }, { id: "call_2", type: "function", function: { name: "g", arguments: "not json" } }] }, finish_reason: "tool_calls" }] };
    const cache = await ModelCallCache.open(join(temporaryDir(), "cache.sqlite"));
    try {
      await withModelServer(() => ({ body: reply }), async (server) => {
        const runtime = new ModelRuntime({ maxRetries: 0, cache });
        const model = runtime.model(resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: ENV }), { role: "agent" });
        const request: ChatRequest = { messages: [{ role: "user", content: "go" }], tools: [{ name: "f", description: "d", parameters: { type: "object" } }] };
        const first = await model.complete(request);
        assert.equal(first.text, null);
        assert.deepEqual(first.toolCalls, [{ id: "call_1", name: "f", arguments: { a: 1 } }, { id: "call_2", name: "g", arguments: { _raw: "not json" } }]);
        const again = await model.complete(request);
        assert.equal(again.usage.cached, true);
        assert.deepEqual(again.toolCalls, first.toolCalls);
        assert.equal(server.requests.length, 1);
      });
    } finally {
      cache.close();
    }
    assert.deepEqual(parseToolArguments(""), {});
    assert.deepEqual(parseToolArguments({ x: 1 }), { x: 1 });
  });
});
