import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import {
  EndpointScheduler,
  ModelCallError,
  ModelRuntime,
  kindForStatus,
  resolveModel,
  retryAfterFromHeaders,
  type ChatModel,
  type ChatRequest,
  type ModelErrorKind,
  type ModelRuntimeOptions,
} from "../../src/models/index.js";
import {
  anthropicReply,
  closedPortUrl,
  geminiReply,
  openAiReply,
  startModelServer,
  withModelServer,
  type ModelServer,
  type Script,
  type ScriptedReply,
} from "../helpers/model-server.js";

const REQUEST: ChatRequest = { messages: [{ role: "user", content: "Where is the mug?" }], temperature: 0.2, maxTokens: 32, seed: 1234 };
const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", GEMINI_API_KEY: "gm-test" };
const FAST: ModelRuntimeOptions = { retryBaseMs: 5, timeoutMs: 2000 };

type Protocol = "openai" | "anthropic" | "google";

interface ProviderCase {
  protocol: Protocol;
  name: string;
  baseURL: (server: string) => string;
  ok: (text: string) => ScriptedReply;
}

const PROVIDERS: ProviderCase[] = [
  { protocol: "openai", name: "openai/gpt-4o", baseURL: (url) => `${url}/v1`, ok: (text) => openAiReply(text) },
  { protocol: "anthropic", name: "anthropic/claude-test-model", baseURL: (url) => url, ok: (text) => anthropicReply(text) },
  { protocol: "google", name: "google/gemini-2.5-flash", baseURL: (url) => url, ok: (text) => geminiReply(text) },
];

const OPENAI = PROVIDERS[0]!;

function modelOn(runtime: ModelRuntime, provider: ProviderCase, url: string, name = provider.name): ChatModel {
  return runtime.model(resolveModel(name, { baseURL: provider.baseURL(url), env: ENV }), { role: "agent" });
}

/** Runs `promise`, expects a ModelCallError and returns it. */
async function callError(promise: Promise<unknown>): Promise<ModelCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ModelCallError) return error;
    throw error;
  }
  assert.fail("the call was expected to fail");
}

/** A script that answers each request after `delayMs`, counting how many are in flight at once. */
function countingScript(reply: ScriptedReply, delayMs: number): { script: Script; maxInFlight: () => number } {
  let inFlight = 0;
  let max = 0;
  return {
    script: async () => {
      inFlight++;
      max = Math.max(max, inFlight);
      await sleep(delayMs);
      inFlight--;
      return reply;
    },
    maxInFlight: () => max,
  };
}

/** What each provider's server says for a rate limit, with the wait it asks for. */
function rateLimitReply(protocol: Protocol, headers: Record<string, string>): ScriptedReply {
  switch (protocol) {
    case "openai":
      return { status: 429, headers, body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } } };
    case "anthropic":
      return { status: 429, headers, body: { type: "error", error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" } } };
    case "google":
      return { status: 429, headers, body: { error: { code: 429, message: "Resource has been exhausted", status: "RESOURCE_EXHAUSTED" } } };
  }
}

describe("error classification, per provider (no retries)", () => {
  interface Failure {
    label: string;
    reply: ScriptedReply;
    kind: ModelErrorKind;
    status?: number;
    retryable: boolean;
    fatal: boolean;
  }
  const failures: Failure[] = [
    { label: "HTTP 500", reply: { status: 500, body: { error: { message: "internal" } } }, kind: "server", status: 500, retryable: true, fatal: false },
    { label: "HTTP 503", reply: { status: 503, body: { error: { message: "overloaded" } } }, kind: "server", status: 503, retryable: true, fatal: false },
    { label: "HTTP 401", reply: { status: 401, body: { error: { message: "invalid key" } } }, kind: "auth", status: 401, retryable: false, fatal: true },
    { label: "HTTP 403", reply: { status: 403, body: { error: { message: "forbidden" } } }, kind: "auth", status: 403, retryable: false, fatal: true },
    { label: "HTTP 404", reply: { status: 404, body: { error: { message: "no such model" } } }, kind: "not_found", status: 404, retryable: false, fatal: true },
    { label: "HTTP 400", reply: { status: 400, body: { error: { message: "context too long" } } }, kind: "bad_request", status: 400, retryable: false, fatal: false },
    { label: "HTTP 200 with a body that is not JSON", reply: { body: "<html><body>502 Bad Gateway</body></html>" }, kind: "bad_response", retryable: true, fatal: false },
    { label: "a dropped connection", reply: { reset: true }, kind: "network", retryable: true, fatal: false },
  ];

  for (const provider of PROVIDERS) {
    for (const failure of failures) {
      test(`${provider.protocol}: ${failure.label} → ${failure.kind}`, async () => {
        await withModelServer(() => failure.reply, async (server) => {
          const runtime = new ModelRuntime({ ...FAST, maxRetries: 0 });
          const error = await callError(modelOn(runtime, provider, server.url).complete(REQUEST));
          assert.equal(error.kind, failure.kind, error.message);
          assert.equal(error.status, failure.status);
          assert.equal(error.retryable, failure.retryable);
          assert.equal(error.fatalForRun, failure.fatal);
          assert.equal(error.endpoint, provider.baseURL(server.url));
          assert.equal(server.requests.length, 1, "the provider client does not retry on its own: one retry layer only");
          const usage = runtime.usage.snapshot();
          assert.equal(usage.total.failures, 1);
          assert.equal(usage.total.calls, 0);
        });
      });
    }

    test(`${provider.protocol}: 429 → rate_limit with the wait from retry-after`, async () => {
      await withModelServer(() => rateLimitReply(provider.protocol, { "retry-after": "7" }), async (server) => {
        const runtime = new ModelRuntime({ ...FAST, maxRetries: 0 });
        const error = await callError(modelOn(runtime, provider, server.url).complete(REQUEST));
        assert.equal(error.kind, "rate_limit");
        assert.equal(error.status, 429);
        assert.equal(error.retryAfterMs, 7000);
        assert.equal(error.retryable, true);
        assert.equal(error.fatalForRun, false);
      });
    });

    test(`${provider.protocol}: a reply slower than the timeout → timeout`, async () => {
      await withModelServer(() => ({ ...provider.ok("late"), delayMs: 400 }), async (server) => {
        const runtime = new ModelRuntime({ ...FAST, maxRetries: 0, timeoutMs: 100 });
        const started = performance.now();
        const error = await callError(modelOn(runtime, provider, server.url).complete(REQUEST));
        const elapsed = performance.now() - started;
        assert.equal(error.kind, "timeout", error.message);
        assert.equal(error.retryable, true);
        // the reply would have come at 400 ms and been a success: the kind shows the call gave up first
        assert.ok(elapsed >= 95, `waited for the timeout (${elapsed.toFixed(0)} ms)`);
      });
    });

    test(`${provider.protocol}: a closed port → unreachable, fatal for the run`, async () => {
      const url = await closedPortUrl();
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 0 });
      const error = await callError(modelOn(runtime, provider, url).complete(REQUEST));
      assert.equal(error.kind, "unreachable", error.message);
      assert.equal(error.fatalForRun, true);
      assert.match(error.message, /ECONNREFUSED/);
    });
  }

  test("google: the retryDelay of a 429 body is the wait when no header gives one", async () => {
    const reply: ScriptedReply = {
      status: 429,
      body: {
        error: {
          code: 429,
          message: "Quota exceeded",
          status: "RESOURCE_EXHAUSTED",
          details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "2.5s" }],
        },
      },
    };
    await withModelServer(() => reply, async (server) => {
      const error = await callError(modelOn(new ModelRuntime({ ...FAST, maxRetries: 0 }), PROVIDERS[2]!, server.url).complete(REQUEST));
      assert.equal(error.kind, "rate_limit");
      assert.equal(error.retryAfterMs, 2500);
      assert.match(error.message, /Quota exceeded/);
    });
  });
});

describe("retries", () => {
  test("429 with retry-after: the retry waits at least that long, and the pause holds every caller of the endpoint", async () => {
    let rateLimitedAt = 0;
    const arrivals: { index: number; at: number }[] = [];
    await withModelServer(
      (_request, index) => {
        const at = performance.now();
        arrivals.push({ index, at });
        if (index === 0) {
          rateLimitedAt = at;
          return rateLimitReply("openai", { "retry-after": "1" });
        }
        return openAiReply(`answer ${index}`);
      },
      async (server) => {
        const runtime = new ModelRuntime({ ...FAST, concurrency: 8, maxRetries: 3 });
        const model = modelOn(runtime, OPENAI, server.url);
        const first = model.complete(REQUEST);
        while (server.requests.length === 0) await sleep(2);
        await sleep(50); // the 429 has been answered: the endpoint is paused
        const second = model.complete({ ...REQUEST, messages: [{ role: "user", content: "another question" }] });
        const [a, b] = await Promise.all([first, second]);

        assert.equal(a.usage.retries, 1);
        assert.equal(b.usage.retries, 0);
        assert.equal(server.requests.length, 3);
        for (const arrival of arrivals.slice(1)) {
          const waited = arrival.at - rateLimitedAt;
          assert.ok(waited >= 990, `request ${arrival.index} came ${waited.toFixed(0)} ms after the 429, before retry-after (1 s) ran out`);
        }
        const usage = runtime.usage.snapshot().total;
        assert.equal(usage.calls, 2);
        assert.equal(usage.retries, 1);
        assert.equal(usage.failures, 0);
      },
    );
  });

  test("429 halves the endpoint's concurrency limit, which grows back by one per window of successes", async () => {
    const { script: okScript, maxInFlight } = countingScript(openAiReply("ok"), 40);
    await withModelServer(
      (request, index) => (index === 0 ? { status: 429, headers: { "retry-after-ms": "100" }, body: { error: { message: "slow down" } } } : okScript(request, index)),
      async (server) => {
        const scheduler = new EndpointScheduler({ concurrency: 4, maxRetries: 2, timeoutMs: 2000, retryBaseMs: 5 });
        // a real HTTP attempt, classified with the same helpers the providers use
        const attempt = async (signal: AbortSignal): Promise<string> => {
          const response = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", body: "{}", signal });
          const text = await response.text();
          if (!response.ok) {
            throw new ModelCallError(kindForStatus(response.status), text, server.url, response.status, retryAfterFromHeaders((h) => response.headers.get(h)));
          }
          return text;
        };
        assert.equal(scheduler.currentLimit, 4);
        const started = performance.now();
        const first = await scheduler.run(attempt);
        assert.ok(performance.now() - started >= 95, "waited for retry-after-ms");
        assert.equal(first.retries, 1);
        assert.equal(scheduler.currentLimit, 2, "halved by the 429");

        // six calls at once: the cut limit lets only 2 start; it grows to 3, then 4
        const results = await Promise.all(Array.from({ length: 6 }, () => scheduler.run(attempt)));
        assert.equal(results.length, 6);
        assert.ok(maxInFlight() >= 2, `calls did run side by side (max ${maxInFlight()})`);
        assert.ok(maxInFlight() <= 3, `at most 3 in flight after the cut, not the configured 4 (saw ${maxInFlight()})`);
        assert.equal(scheduler.currentLimit, 4, "back to the configured limit after enough successes");
      },
    );
  });

  test("the limit never drops below one and never grows past the configured one", async () => {
    const scheduler = new EndpointScheduler({ concurrency: 3, maxRetries: 5, timeoutMs: 1000, retryBaseMs: 1 });
    const limitsSeen: number[] = [];
    const result = await scheduler.run(async () => {
      limitsSeen.push(scheduler.currentLimit);
      if (limitsSeen.length <= 4) throw new ModelCallError("rate_limit", "429", "test", 429, 0);
      return "ok";
    });
    assert.equal(result.retries, 4);
    assert.deepEqual(limitsSeen, [3, 2, 1, 1, 1], "halved on each 429, rounded up, floored at 1");
    // one success at limit 1 grows it to 2; two more at 2 grow it to 3; then it stays
    assert.equal(scheduler.currentLimit, 2);
    for (let i = 0; i < 10; i++) await scheduler.run(async () => "ok");
    assert.equal(scheduler.currentLimit, 3);
  });

  test("5xx then success: retried, and the retries are counted in the call's usage and the run's", async () => {
    await withModelServer(
      (_request, index) => (index < 2 ? { status: index === 0 ? 500 : 502, body: { error: { message: "upstream" } } } : openAiReply("Your mark: 3", { prompt_tokens: 21, completion_tokens: 4 })),
      async (server) => {
        const runtime = new ModelRuntime({ ...FAST, maxRetries: 3 });
        const response = await modelOn(runtime, OPENAI, server.url).complete(REQUEST);
        assert.equal(response.text, "Your mark: 3");
        assert.equal(response.usage.retries, 2);
        assert.equal(response.usage.promptTokens, 21);
        assert.equal(server.requests.length, 3);
        // every attempt sends the same body
        assert.equal(new Set(server.requests.map((r) => r.rawBody)).size, 1);
        const { total, byModel } = runtime.usage.snapshot();
        assert.equal(total.retries, 2);
        assert.equal(total.calls, 1);
        assert.equal(total.failures, 0);
        assert.equal(byModel["openai/gpt-4o"]?.retries, 2);
      },
    );
  });

  test("5xx every time: maxRetries retries, then the server error", async () => {
    await withModelServer(() => ({ status: 503, body: { error: { message: "overloaded" } } }), async (server) => {
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 2 });
      const error = await callError(modelOn(runtime, OPENAI, server.url).complete(REQUEST));
      assert.equal(error.kind, "server");
      assert.equal(error.status, 503);
      assert.equal(server.requests.length, 3);
      assert.equal(runtime.usage.snapshot().total.failures, 1);
      assert.equal(runtime.usage.snapshot().total.retries, 2, "the retries of a failed call count too");
      assert.equal(error.retries, 2);
    });
  });

  test("429s that arrive together cut the limit once, not once each", async () => {
    const scheduler = new EndpointScheduler({ concurrency: 8, maxRetries: 2, timeoutMs: 1000, retryBaseMs: 1 });
    const limitsOnRetry: number[] = [];
    const tries = new Map<number, number>();
    await Promise.all(
      [0, 1, 2, 3].map((caller) =>
        scheduler.run(async () => {
          const attempt = (tries.get(caller) ?? 0) + 1;
          tries.set(caller, attempt);
          if (attempt === 1) {
            await sleep(10); // all four are in flight when the first 429 arrives
            throw new ModelCallError("rate_limit", "429", "test", 429, 50);
          }
          limitsOnRetry.push(scheduler.currentLimit);
          return "ok";
        }),
      ),
    );
    assert.equal(Math.min(...limitsOnRetry), 4, `one cut from 8 to 4 (saw ${limitsOnRetry.join(", ")})`);
  });

  test("a retry-after longer than maxRetryAfterMs is capped", async () => {
    const scheduler = new EndpointScheduler({ concurrency: 2, maxRetries: 1, timeoutMs: 1000, retryBaseMs: 1, maxRetryAfterMs: 30 });
    let calls = 0;
    const started = performance.now();
    const result = await scheduler.run(async () => {
      if (++calls === 1) throw new ModelCallError("rate_limit", "429", "test", 429, 3_600_000);
      return "ok";
    });
    assert.equal(result.value, "ok");
    assert.ok(performance.now() - started < 1000, "did not wait an hour");
  });

  for (const provider of PROVIDERS) {
    test(`${provider.protocol}: 429, 500 and a reset, then success`, async () => {
      const faults: ScriptedReply[] = [rateLimitReply(provider.protocol, { "retry-after": "0" }), { status: 500, body: { error: { message: "x" } } }, { reset: true }];
      await withModelServer((_request, index) => faults[index] ?? provider.ok("finally"), async (server) => {
        const runtime = new ModelRuntime({ ...FAST, maxRetries: 3 });
        const response = await modelOn(runtime, provider, server.url).complete(REQUEST);
        assert.equal(response.text, "finally");
        assert.equal(response.usage.retries, 3);
        assert.equal(server.requests.length, 4);
      });
    });
  }

  test("a timeout is retried, and the retry that answers in time succeeds", async () => {
    await withModelServer((_request, index) => ({ ...openAiReply("in time"), delayMs: index === 0 ? 600 : 0 }), async (server) => {
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 2, timeoutMs: 150 });
      const started = performance.now();
      const response = await modelOn(runtime, OPENAI, server.url).complete(REQUEST);
      assert.equal(response.text, "in time");
      assert.equal(response.usage.retries, 1);
      assert.ok(performance.now() - started >= 145);
      assert.ok(response.usage.latencyMs < 150, "latency is that of the successful attempt alone");
      assert.equal(server.requests.length, 2);
    });
  });

  test("timeouts every time: retried, then kind timeout", async () => {
    await withModelServer(() => ({ ...openAiReply("too late"), delayMs: 1000 }), async (server) => {
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 2, timeoutMs: 100 });
      const started = performance.now();
      const error = await callError(modelOn(runtime, OPENAI, server.url).complete(REQUEST));
      const elapsed = performance.now() - started;
      assert.equal(error.kind, "timeout", error.message);
      assert.equal(server.requests.length, 3);
      assert.ok(elapsed >= 295, `three attempts of 100 ms each (${elapsed.toFixed(0)} ms)`);
    });
  });

  test("a connection reset is retried", async () => {
    await withModelServer((_request, index) => (index === 0 ? { reset: true } : openAiReply("after reset")), async (server) => {
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 2 });
      const response = await modelOn(runtime, OPENAI, server.url).complete(REQUEST);
      assert.equal(response.text, "after reset");
      assert.equal(response.usage.retries, 1);
      assert.equal(server.requests.length, 2);
    });
  });

  test("resets every time: retried, then kind network", async () => {
    await withModelServer(() => ({ reset: true }), async (server) => {
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 2 });
      const error = await callError(modelOn(runtime, OPENAI, server.url).complete(REQUEST));
      assert.equal(error.kind, "network", error.message);
      assert.equal(server.requests.length, 3);
    });
  });

  test("garbage (not JSON) then a good reply: retried", async () => {
    await withModelServer((_request, index) => (index < 2 ? { body: "Internal proxy error" } : openAiReply("good")), async (server) => {
      const response = await modelOn(new ModelRuntime({ ...FAST, maxRetries: 3 }), OPENAI, server.url).complete(REQUEST);
      assert.equal(response.text, "good");
      assert.equal(response.usage.retries, 2);
    });
  });

  const garbage: { label: string; reply: ScriptedReply }[] = [
    { label: "HTTP 200 with a non-JSON body", reply: { body: "{\"choices\": [" } },
    { label: "HTTP 200 with a text/plain body", reply: { headers: { "content-type": "text/plain" }, body: "hello" } },
    { label: "JSON without choices", reply: { body: { id: "x", object: "chat.completion", created: 0, model: "m" } } },
    { label: "JSON with an empty choices list", reply: { body: { id: "x", object: "chat.completion", created: 0, model: "m", choices: [] } } },
    { label: "JSON with choices of the wrong shape", reply: { body: { choices: [{ text: "completion-style" }] } } },
  ];
  for (const { label, reply } of garbage) {
    test(`${label}: retried, then kind bad_response`, async () => {
      await withModelServer(() => reply, async (server) => {
        const runtime = new ModelRuntime({ ...FAST, maxRetries: 2 });
        const error = await callError(modelOn(runtime, OPENAI, server.url).complete(REQUEST));
        assert.equal(error.kind, "bad_response", error.message);
        assert.equal(error.fatalForRun, false);
        assert.equal(server.requests.length, 3);
        assert.equal(runtime.usage.snapshot().total.failures, 1);
      });
    });
  }

  test("google: JSON of the wrong shape is retried, then bad_response", async () => {
    await withModelServer(() => ({ body: { candidates: "none" } }), async (server) => {
      const error = await callError(modelOn(new ModelRuntime({ ...FAST, maxRetries: 1 }), PROVIDERS[2]!, server.url).complete(REQUEST));
      assert.equal(error.kind, "bad_response");
      assert.equal(server.requests.length, 2);
    });
  });

  test("google: an empty reply is a wrong server (bad_response); a blocked prompt is a refusal, sent once", async () => {
    await withModelServer(() => ({ body: {} }), async (server) => {
      const error = await callError(modelOn(new ModelRuntime({ ...FAST, maxRetries: 0 }), PROVIDERS[2]!, server.url).complete(REQUEST));
      assert.equal(error.kind, "bad_response");
    });
    await withModelServer(() => ({ body: { promptFeedback: { blockReason: "SAFETY" } } }), async (server) => {
      const error = await callError(modelOn(new ModelRuntime({ ...FAST, maxRetries: 5 }), PROVIDERS[2]!, server.url).complete(REQUEST));
      assert.equal(error.kind, "refused");
      assert.equal(error.retryable, false);
      assert.equal(server.requests.length, 1);
    });
  });

  for (const status of [401, 403, 404, 400]) {
    test(`HTTP ${status} is never retried`, async () => {
      await withModelServer(() => ({ status, body: { error: { message: "no" } } }), async (server) => {
        const runtime = new ModelRuntime({ ...FAST, maxRetries: 5 });
        const error = await callError(modelOn(runtime, OPENAI, server.url).complete(REQUEST));
        assert.equal(error.status, status);
        assert.equal(error.retryable, false);
        assert.equal(server.requests.length, 1);
      });
    });
  }

  test("401: kind auth, fatal for the run, no retries", async () => {
    await withModelServer(() => ({ status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } }), async (server) => {
      const runtime = new ModelRuntime({ ...FAST, maxRetries: 5 });
      const error = await callError(modelOn(runtime, OPENAI, server.url).complete(REQUEST));
      assert.equal(error.kind, "auth");
      assert.equal(error.fatalForRun, true);
      assert.equal(error.status, 401);
      assert.match(error.message, /401/);
      assert.equal(server.requests.length, 1);
      assert.equal(runtime.usage.snapshot().total.retries, 0);
    });
  });

  test("ECONNREFUSED: retried as configured, then kind unreachable", async () => {
    const url = await closedPortUrl();
    const runtime = new ModelRuntime({ ...FAST, maxRetries: 2 });
    const error = await callError(modelOn(runtime, OPENAI, url).complete(REQUEST));
    assert.equal(error.kind, "unreachable", error.message);
    assert.equal(error.fatalForRun, true);
    assert.equal(error.endpoint, `${url}/v1`);
    assert.ok(error.message.includes(url), "the message names the endpoint");
  });
});

describe("concurrency", () => {
  test("never more calls in flight at the endpoint than the limit", async () => {
    const { script, maxInFlight } = countingScript(openAiReply("ok"), 100);
    await withModelServer(script, async (server) => {
      const model = modelOn(new ModelRuntime({ ...FAST, concurrency: 3 }), OPENAI, server.url);
      const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => model.complete({ messages: [{ role: "user", content: `q${i}` }] })));
      assert.equal(responses.length, 12);
      assert.equal(server.requests.length, 12);
      assert.equal(maxInFlight(), 3);
    });
  });

  test("the default limit is 8", async () => {
    const { script, maxInFlight } = countingScript(openAiReply("ok"), 100);
    await withModelServer(script, async (server) => {
      const model = modelOn(new ModelRuntime(FAST), OPENAI, server.url);
      await Promise.all(Array.from({ length: 20 }, (_, i) => model.complete({ messages: [{ role: "user", content: `q${i}` }] })));
      assert.equal(maxInFlight(), 8);
    });
  });

  test("models on the same endpoint share its limit", async () => {
    const { script, maxInFlight } = countingScript(openAiReply("ok"), 100);
    await withModelServer(script, async (server) => {
      const runtime = new ModelRuntime({ ...FAST, concurrency: 2 });
      const judge = modelOn(runtime, OPENAI, server.url, "openai/judge-model");
      const agent = modelOn(runtime, OPENAI, server.url, "openai/agent-model");
      await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? judge : agent).complete({ messages: [{ role: "user", content: `q${i}` }] })));
      assert.equal(server.requests.length, 8);
      assert.equal(maxInFlight(), 2);
    });
  });

  test("separate endpoints have separate limits", async () => {
    const a = countingScript(openAiReply("a"), 100);
    const b = countingScript(openAiReply("b"), 100);
    await withModelServer(a.script, async (serverA) => {
      await withModelServer(b.script, async (serverB) => {
        const runtime = new ModelRuntime({ ...FAST, concurrency: 2 });
        const modelA = modelOn(runtime, OPENAI, serverA.url);
        const modelB = modelOn(runtime, OPENAI, serverB.url);
        await Promise.all(Array.from({ length: 6 }, (_, i) => [modelA, modelB].map((m) => m.complete({ messages: [{ role: "user", content: `q${i}` }] }))).flat());
        assert.equal(a.maxInFlight(), 2);
        assert.equal(b.maxInFlight(), 2);
      });
    });
  });

  test("failures release their slot: a limit of 1 with retries still finishes every call", async () => {
    const { script, maxInFlight } = countingScript(openAiReply("ok"), 5);
    await withModelServer((request, index) => (index % 3 === 0 ? { status: 500, body: {} } : script(request, index)), async (server) => {
      const model = modelOn(new ModelRuntime({ ...FAST, concurrency: 1, maxRetries: 5 }), OPENAI, server.url);
      const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => model.complete({ messages: [{ role: "user", content: `q${i}` }] })));
      assert.equal(responses.length, 6);
      assert.equal(maxInFlight(), 1);
      assert.ok(responses.reduce((sum, r) => sum + r.usage.retries, 0) >= 2);
    });
  });
});
