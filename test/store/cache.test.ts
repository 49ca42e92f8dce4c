import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UserError } from "../../src/core/index.js";
import { ModelCallError, ModelRuntime, requestCacheKey, resolveModel, type ChatModel, type ChatRequest, type ModelRuntimeOptions } from "../../src/models/index.js";
import { ModelCallCache, defaultCachePath } from "../../src/store/index.js";
import { anthropicReply, geminiReply, lastUserText, openAiReply, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", GEMINI_API_KEY: "gm-test" };
const FAST: ModelRuntimeOptions = { retryBaseMs: 5, timeoutMs: 2000, maxRetries: 0 };

const JUDGE_REQUEST: ChatRequest = {
  messages: [
    { role: "system", content: "You are an AI assistant who will help me to evaluate the response." },
    { role: "user", content: "Question: What is on the sofa?\nAnswer: a pillow\nResponse: two pillows\nYour mark:" },
  ],
  temperature: 0.2,
  maxTokens: 32,
  seed: 1234,
};

const FRAME = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8]);

function imageRequest(bytes: Uint8Array, mediaType = "image/png"): ChatRequest {
  return {
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What color is the mug?" },
          { type: "image", data: bytes, mediaType },
        ],
      },
    ],
    temperature: 0,
  };
}

/** Each call gets a distinct reply, so a cached answer can be told from a fresh one. */
const numberedReplies: Script = (_request, index) => openAiReply(`reply ${index}`, { prompt_tokens: 100 + index, completion_tokens: 5 });

interface Fixture {
  server: ModelServer;
  cache: ModelCallCache;
  cachePath: string;
  modelOf(runtime: ModelRuntime, name?: string, baseURL?: string): ChatModel;
}

async function withCache(script: Script, body: (fixture: Fixture) => Promise<void>): Promise<void> {
  const dir = temporaryDir();
  const cachePath = join(dir, "nested", "cache", "model-calls.sqlite");
  const server = await startModelServer(script);
  const cache = await ModelCallCache.open(cachePath);
  try {
    await body({
      server,
      cache,
      cachePath,
      modelOf: (runtime, name = "openai/gpt-4o", baseURL = `${server.url}/v1`) => runtime.model(resolveModel(name, { baseURL, env: ENV }), { role: "agent" }),
    });
  } finally {
    cache.close();
    await server.close();
  }
}

describe("model-call cache", () => {
  test("opens a real SQLite file, creating its directory", async () => {
    await withCache(numberedReplies, async ({ cache, cachePath }) => {
      assert.ok(existsSync(cachePath));
      assert.equal(cache.path, cachePath);
      const stats = await cache.stats();
      assert.equal(stats.entries, 0);
      assert.deepEqual(stats.byModel, []);
      assert.ok(stats.bytes > 0);
    });
  });

  test("a second identical call is answered from the cache without reaching the server", async () => {
    await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
      const runtime = new ModelRuntime({ ...FAST, cache });
      const model = modelOf(runtime);
      const first = await model.complete(JUDGE_REQUEST);
      assert.equal(first.text, "reply 0");
      assert.equal(first.usage.cached, false);
      assert.equal(server.requests.length, 1);

      const second = await model.complete({ ...JUDGE_REQUEST, messages: JUDGE_REQUEST.messages.map((m) => ({ ...m })) });
      assert.equal(server.requests.length, 1, "the server was not reached again");
      assert.equal(second.text, "reply 0");
      assert.deepEqual(second.texts, ["reply 0"]);
      assert.equal(second.finishReason, "stop");
      assert.equal(second.usage.cached, true);
      assert.equal(second.usage.retries, 0);
      assert.equal(second.usage.latencyMs, 0);
      assert.equal(second.usage.promptTokens, 100, "the tokens of the original call are reported");
      assert.equal(second.usage.completionTokens, 5);

      const { total } = runtime.usage.snapshot();
      assert.equal(total.calls, 2);
      assert.equal(total.cacheHits, 1);
      assert.equal(total.promptTokens, 200);
      assert.equal(total.latencyMs, first.usage.latencyMs, "cache hits add no latency");
    });
  });

  test("a cache that cannot be read or written costs hits, never the answer", async () => {
    const dir = temporaryDir();
    const server = await startModelServer(numberedReplies);
    const cache = await ModelCallCache.open(join(dir, "calls.sqlite"));
    cache.close(); // every read and write now fails
    try {
      const runtime = new ModelRuntime({ ...FAST, cache });
      const model = runtime.model(resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: ENV }), { role: "agent" });
      assert.equal((await model.complete(JUDGE_REQUEST)).text, "reply 0");
      assert.equal((await model.complete(JUDGE_REQUEST)).text, "reply 1");
      assert.equal(server.requests.length, 2);
    } finally {
      await server.close();
    }
  });

  test("parameters left unset and parameters set to undefined are the same request", async () => {
    await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
      const model = modelOf(new ModelRuntime({ ...FAST, cache }));
      await model.complete({ messages: [{ role: "user", content: "hi" }] });
      const again = await model.complete({ messages: [{ role: "user", content: "hi" }], temperature: undefined, seed: undefined });
      assert.equal(again.usage.cached, true);
      assert.equal(server.requests.length, 1);
    });
  });

  test("anything that changes the request misses: text, role, parameters, model, endpoint", async () => {
    const server2 = await startModelServer(numberedReplies);
    try {
      await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
        const runtime = new ModelRuntime({ ...FAST, cache });
        const model = modelOf(runtime);
        await model.complete(JUDGE_REQUEST);
        const variants: [string, ChatModel, ChatRequest][] = [
          ["temperature", model, { ...JUDGE_REQUEST, temperature: 0.3 }],
          ["max tokens", model, { ...JUDGE_REQUEST, maxTokens: 33 }],
          ["seed", model, { ...JUDGE_REQUEST, seed: 1 }],
          ["n", model, { ...JUDGE_REQUEST, n: 1 }],
          ["response format", model, { ...JUDGE_REQUEST, responseFormat: "json" }],
          ["text", model, { ...JUDGE_REQUEST, messages: [JUDGE_REQUEST.messages[0]!, { role: "user", content: "Question: What is on the sofa? " }] }],
          ["role", model, { ...JUDGE_REQUEST, messages: JUDGE_REQUEST.messages.map((m) => ({ ...m, role: "user" as const })) }],
          ["model", modelOf(runtime, "openai/gpt-4o-mini"), JUDGE_REQUEST],
        ];
        for (const [what, m, request] of variants) {
          const before = server.requests.length;
          const response = await m.complete(request);
          assert.equal(response.usage.cached, false, `a different ${what} is a different request`);
          assert.equal(server.requests.length, before + 1, what);
        }
        const elsewhere = await modelOf(runtime, "openai/gpt-4o", `${server2.url}/v1`).complete(JUDGE_REQUEST);
        assert.equal(elsewhere.usage.cached, false, "another endpoint is another cache entry");
        assert.equal(server2.requests.length, 1);
      });
    } finally {
      await server2.close();
    }
  });

  test("errors are never cached: a failing call, then the same call succeeding, both reach the server", async () => {
    await withCache(
      (_request, index) => (index === 0 ? { status: 500, body: { error: { message: "boom" } } } : index === 1 ? { body: "not json" } : openAiReply("Your mark: 4")),
      async ({ server, cache, modelOf }) => {
        const runtime = new ModelRuntime({ ...FAST, cache, maxRetries: 0 });
        const model = modelOf(runtime);
        await assert.rejects(model.complete(JUDGE_REQUEST), (error: unknown) => error instanceof ModelCallError && error.kind === "server");
        assert.equal((await cache.stats()).entries, 0);
        await assert.rejects(model.complete(JUDGE_REQUEST), (error: unknown) => error instanceof ModelCallError && error.kind === "bad_response");
        assert.equal((await cache.stats()).entries, 0);

        const success = await model.complete(JUDGE_REQUEST);
        assert.equal(success.text, "Your mark: 4");
        assert.equal(success.usage.cached, false);
        assert.equal(server.requests.length, 3);
        assert.equal((await cache.stats()).entries, 1);

        const hit = await model.complete(JUDGE_REQUEST);
        assert.equal(hit.usage.cached, true);
        assert.equal(hit.text, "Your mark: 4");
        assert.equal(server.requests.length, 3);
        const { total } = runtime.usage.snapshot();
        assert.equal(total.failures, 2);
        assert.equal(total.cacheHits, 1);
      },
    );
  });

  test("a call that succeeds after retries is cached once, as its final reply", async () => {
    await withCache((_request, index) => (index < 2 ? { status: 503, body: {} } : openAiReply("after retries")), async ({ server, cache, modelOf }) => {
      const model = modelOf(new ModelRuntime({ ...FAST, cache, maxRetries: 3 }));
      const first = await model.complete(JUDGE_REQUEST);
      assert.equal(first.usage.retries, 2);
      const second = await model.complete(JUDGE_REQUEST);
      assert.equal(second.usage.cached, true);
      assert.equal(second.text, "after retries");
      assert.equal(second.usage.retries, 0);
      assert.equal(server.requests.length, 3);
    });
  });

  test("the sample index is part of the key: repeated samples stay independent", async () => {
    await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
      const model = modelOf(new ModelRuntime({ ...FAST, cache }));
      const samples = [];
      for (let sampleIndex = 0; sampleIndex < 3; sampleIndex++) samples.push(await model.complete({ ...JUDGE_REQUEST, temperature: 1, sampleIndex }));
      assert.deepEqual(samples.map((s) => s.text), ["reply 0", "reply 1", "reply 2"]);
      assert.equal(server.requests.length, 3);
      // the index is ours: the wire bodies of the three samples are identical
      assert.equal(new Set(server.requests.map((r) => r.rawBody)).size, 1);

      const again = [];
      for (let sampleIndex = 0; sampleIndex < 3; sampleIndex++) again.push(await model.complete({ ...JUDGE_REQUEST, temperature: 1, sampleIndex }));
      assert.deepEqual(again.map((s) => s.text), ["reply 0", "reply 1", "reply 2"]);
      assert.ok(again.every((s) => s.usage.cached));
      assert.equal(server.requests.length, 3);

      const implicit = await model.complete({ ...JUDGE_REQUEST, temperature: 1 });
      assert.equal(implicit.usage.cached, true, "no sample index is sample 0");
      assert.equal(implicit.text, "reply 0");

      const stats = await cache.stats();
      assert.equal(stats.entries, 3);
    });
  });

  test("images are keyed by their content: same bytes hit, other bytes or media type miss", async () => {
    await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
      const model = modelOf(new ModelRuntime({ ...FAST, cache }));
      const first = await model.complete(imageRequest(FRAME));
      assert.equal(first.usage.images, 1);

      // a fresh buffer with the same bytes (as when a frame is read from disk again)
      const sameBytes = await model.complete(imageRequest(Uint8Array.from(FRAME)));
      assert.equal(sameBytes.usage.cached, true);
      assert.equal(sameBytes.text, first.text);
      assert.equal(sameBytes.usage.images, 1, "a cache hit still counts the images it was asked about");
      const fromBuffer = await model.complete(imageRequest(Buffer.from(FRAME)));
      assert.equal(fromBuffer.usage.cached, true, "a Buffer with the same bytes is the same image");
      assert.equal(server.requests.length, 1);

      const changed = Uint8Array.from(FRAME);
      changed[changed.length - 1] = 9;
      const otherBytes = await model.complete(imageRequest(changed));
      assert.equal(otherBytes.usage.cached, false);
      assert.equal(server.requests.length, 2);

      const otherType = await model.complete(imageRequest(FRAME, "image/jpeg"));
      assert.equal(otherType.usage.cached, false);
      assert.equal(server.requests.length, 3);
    });
  });

  test("the key holds a hash of the image, not its bytes", () => {
    const spec = resolveModel("openai/gpt-4o", { baseURL: "http://127.0.0.1:1/v1", env: ENV });
    const big = new Uint8Array(256 * 1024).fill(7);
    const key = requestCacheKey(spec, imageRequest(big));
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(requestCacheKey(spec, imageRequest(Uint8Array.from(big))), key);
    const other = Uint8Array.from(big);
    other[0] = 8;
    assert.notEqual(requestCacheKey(spec, imageRequest(other)), key);
  });

  test("several choices (n > 1) come back from the cache whole", async () => {
    const reply = {
      body: {
        id: "c",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [
          { index: 0, message: { role: "assistant", content: "4" }, finish_reason: "stop" },
          { index: 1, message: { role: "assistant", content: null }, finish_reason: "length" },
        ],
        usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
      },
    };
    await withCache(() => reply, async ({ server, cache, modelOf }) => {
      const model = modelOf(new ModelRuntime({ ...FAST, cache }));
      const fresh = await model.complete({ ...JUDGE_REQUEST, n: 2 });
      const cached = await model.complete({ ...JUDGE_REQUEST, n: 2 });
      assert.equal(server.requests.length, 1);
      assert.equal(cached.usage.cached, true);
      assert.deepEqual(cached.texts, ["4", null]);
      assert.deepEqual(cached.texts, fresh.texts);
      assert.equal(cached.finishReason, "stop");
      assert.equal(cached.usage.promptTokens, 9);
    });
  });

  test("a cache entry that does not hold a reply is ignored and replaced", async () => {
    await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
      const spec = resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: ENV });
      await cache.put(requestCacheKey(spec, JUDGE_REQUEST), "openai", "gpt-4o", { something: "else" });
      const model = modelOf(new ModelRuntime({ ...FAST, cache }));
      const response = await model.complete(JUDGE_REQUEST);
      assert.equal(response.usage.cached, false);
      assert.equal(response.text, "reply 0");
      const again = await model.complete(JUDGE_REQUEST);
      assert.equal(again.usage.cached, true);
      assert.equal(again.text, "reply 0");
      assert.equal((await cache.stats()).entries, 1);
    });
  });

  test("a cache hit does not wait for a slot at a busy endpoint", async () => {
    await withCache(
      async (request) => {
        if (lastUserText(request) === "slow") await new Promise((resolve) => setTimeout(resolve, 800));
        return openAiReply(`answer to ${lastUserText(request)}`);
      },
      async ({ server, cache, modelOf }) => {
        const model = modelOf(new ModelRuntime({ ...FAST, cache, concurrency: 1 }));
        await model.complete({ messages: [{ role: "user", content: "fast" }] });
        const slow = model.complete({ messages: [{ role: "user", content: "slow" }] });
        while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 2));
        // the only slot is taken by the slow call
        const started = performance.now();
        const hit = await model.complete({ messages: [{ role: "user", content: "fast" }] });
        const waited = performance.now() - started;
        assert.equal(hit.usage.cached, true);
        assert.equal(hit.text, "answer to fast");
        assert.ok(waited < 400, `answered from the cache at once, not after the call in flight (${waited.toFixed(0)} ms)`);
        assert.equal((await slow).text, "answer to slow");
      },
    );
  });

  test("without a cache every call reaches the server", async () => {
    await withCache(numberedReplies, async ({ server, cache, modelOf }) => {
      const model = modelOf(new ModelRuntime(FAST));
      await model.complete(JUDGE_REQUEST);
      const second = await model.complete(JUDGE_REQUEST);
      assert.equal(second.usage.cached, false);
      assert.equal(server.requests.length, 2);
      assert.equal((await cache.stats()).entries, 0);
    });
  });

  test("stats() counts entries per model; clear() by model, then all", async () => {
    const script: Script = (request, index) => {
      if (request.path.includes("generateContent")) return geminiReply(`g${index}`);
      if (request.path.endsWith("/messages")) return anthropicReply(`a${index}`);
      return openAiReply(`o${index}`);
    };
    await withCache(script, async ({ server, cache, modelOf }) => {
      const runtime = new ModelRuntime({ ...FAST, cache });
      const openai = modelOf(runtime, "openai/gpt-4o");
      const vllm = modelOf(runtime, "vllm/Qwen/Qwen2.5-VL-7B-Instruct");
      const anthropic = modelOf(runtime, "anthropic/claude-test-model", server.url);
      const google = modelOf(runtime, "google/gemini-2.5-flash", server.url);
      const question = (i: number): ChatRequest => ({ messages: [{ role: "user", content: `question ${i}` }] });
      for (let i = 0; i < 3; i++) await openai.complete(question(i));
      for (let i = 0; i < 2; i++) await vllm.complete(question(i));
      for (let i = 0; i < 2; i++) await anthropic.complete(question(i));
      await google.complete(question(0));
      // hits add nothing
      await openai.complete(question(0));
      await google.complete(question(0));
      assert.equal(server.requests.length, 8);

      const stats = await cache.stats();
      assert.equal(stats.entries, 8);
      assert.equal(stats.path, cache.path);
      assert.ok(stats.bytes > 0);
      assert.deepEqual(stats.byModel[0], { provider: "openai", model: "gpt-4o", entries: 3 });
      assert.deepEqual(
        [...stats.byModel].sort((a, b) => `${a.provider}/${a.model}`.localeCompare(`${b.provider}/${b.model}`)),
        [
          { provider: "anthropic", model: "claude-test-model", entries: 2 },
          { provider: "google", model: "gemini-2.5-flash", entries: 1 },
          { provider: "openai", model: "gpt-4o", entries: 3 },
          { provider: "vllm", model: "Qwen/Qwen2.5-VL-7B-Instruct", entries: 2 },
        ],
      );

      assert.equal(await cache.clear({ model: "vllm/Qwen/Qwen2.5-VL-7B-Instruct" }), 2, "a model id with slashes");
      assert.equal(await cache.clear({ model: "openai/gpt-4o-mini" }), 0, "only the exact model");
      assert.equal(await cache.clear({ model: "openai/gpt-4o" }), 3);
      const after = await cache.stats();
      assert.equal(after.entries, 3);
      assert.deepEqual(after.byModel.map((m) => m.provider).sort(), ["anthropic", "google"]);

      // a cleared model's calls reach the server again; the others stay cached
      const fresh = await openai.complete(question(0));
      assert.equal(fresh.usage.cached, false);
      const kept = await anthropic.complete(question(0));
      assert.equal(kept.usage.cached, true);
      assert.equal(server.requests.length, 9);

      assert.equal(await cache.clear(), 4);
      const empty = await cache.stats();
      assert.equal(empty.entries, 0);
      assert.deepEqual(empty.byModel, []);
      const afterClear = await anthropic.complete(question(0));
      assert.equal(afterClear.usage.cached, false);
      assert.equal(server.requests.length, 10);
    });
  });

  test("the cache is shared by two runtimes on one file, as a re-run shares it", async () => {
    await withCache((request, index) => openAiReply(`mark for "${lastUserText(request)}" #${index}`), async ({ server, cache, cachePath, modelOf }) => {
      const questions = Array.from({ length: 5 }, (_, i): ChatRequest => ({ ...JUDGE_REQUEST, messages: [JUDGE_REQUEST.messages[0]!, { role: "user", content: `prediction ${i}` }] }));

      // first run: three of five judged, then "killed"
      const firstRun = new ModelRuntime({ ...FAST, cache, concurrency: 4 });
      const firstModel = modelOf(firstRun);
      const firstAnswers = await Promise.all(questions.slice(0, 3).map((q) => firstModel.complete(q)));
      assert.equal(server.requests.length, 3);

      // second run in the same process: a new runtime over the same cache
      const secondRun = new ModelRuntime({ ...FAST, cache, concurrency: 4 });
      const secondAnswers = await Promise.all(questions.map((q) => modelOf(secondRun).complete(q)));
      assert.equal(server.requests.length, 5, "only the two questions not asked before reach the server");
      assert.deepEqual(secondAnswers.slice(0, 3).map((a) => a.text), firstAnswers.map((a) => a.text));
      assert.deepEqual(secondAnswers.map((a) => a.usage.cached), [true, true, true, false, false]);
      assert.equal(secondRun.usage.snapshot().total.cacheHits, 3);
      assert.equal(firstRun.usage.snapshot().total.cacheHits, 0, "each runtime keeps its own usage");

      // third run in "another process": the file opened again through its own connection
      const reopened = await ModelCallCache.open(cachePath);
      try {
        const thirdRun = new ModelRuntime({ ...FAST, cache: reopened });
        const thirdAnswers = await Promise.all(questions.map((q) => modelOf(thirdRun).complete(q)));
        assert.ok(thirdAnswers.every((a) => a.usage.cached));
        assert.deepEqual(thirdAnswers.map((a) => a.text), secondAnswers.map((a) => a.text));
        assert.equal(server.requests.length, 5);
        assert.equal((await reopened.stats()).entries, 5);
      } finally {
        reopened.close();
      }
    });
  });

  test("entries survive closing and reopening the file", async () => {
    const dir = temporaryDir();
    const path = join(dir, "calls.sqlite");
    const first = await ModelCallCache.open(path);
    await first.put("k1", "openai", "gpt-4o", { texts: ["x"], finishReason: "stop", promptTokens: 1, completionTokens: 1 });
    first.close();
    const second = await ModelCallCache.open(path);
    try {
      assert.deepEqual(await second.get("k1"), { texts: ["x"], finishReason: "stop", promptTokens: 1, completionTokens: 1 });
      assert.equal(await second.get("missing"), undefined);
      await second.put("k1", "openai", "gpt-4o", { texts: ["y"], finishReason: "stop", promptTokens: 1, completionTokens: 1 });
      assert.deepEqual(await second.get("k1"), { texts: ["y"], finishReason: "stop", promptTokens: 1, completionTokens: 1 });
      assert.equal((await second.stats()).entries, 1, "put replaces an entry with the same key");
    } finally {
      second.close();
    }
  });

  test("a path that cannot hold the file is a user error naming it", async () => {
    const dir = temporaryDir();
    const blocker = join(dir, "not-a-directory");
    writeFileSync(blocker, "a file where a directory should be");
    const path = join(blocker, "cache.sqlite");
    await assert.rejects(ModelCallCache.open(path), (error: unknown) => {
      assert.ok(error instanceof UserError);
      assert.ok(error.message.includes(path), error.message);
      assert.match(error.message, /--no-cache/);
      return true;
    });
  });

  test("the default path follows XDG_CACHE_HOME", () => {
    assert.equal(defaultCachePath({ XDG_CACHE_HOME: "/somewhere/cache" }), join("/somewhere/cache", "eqakit", "model-calls.sqlite"));
    assert.equal(defaultCachePath({}), join(homedir(), ".cache", "eqakit", "model-calls.sqlite"));
    assert.equal(defaultCachePath({ XDG_CACHE_HOME: "" }), join(homedir(), ".cache", "eqakit", "model-calls.sqlite"), "an empty XDG_CACHE_HOME is unset");
  });
});
