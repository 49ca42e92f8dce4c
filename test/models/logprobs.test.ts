import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ModelRuntime, resolveModel, yesProbability, type ChatRequest } from "../../src/models/index.js";
import { ModelCallCache } from "../../src/store/index.js";
import { withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { emulate } from "../helpers/provider-emulators.js";
import { temporaryDir } from "../helpers/paths.js";

const ASK: ChatRequest = { messages: [{ role: "user", content: "Can you answer from this view? Yes or No." }], logprobs: 3 };
const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", GEMINI_API_KEY: "gm-test" };

function runtime(cache?: ModelCallCache): ModelRuntime {
  return new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 5000, ...(cache ? { cache } : {}) });
}

function body(request: ReceivedRequest): Record<string, unknown> {
  return JSON.parse(request.rawBody) as Record<string, unknown>;
}

/** An OpenAI reply "No" whose first token had "Yes" at ln 0.2 and "No" at ln 0.8 beside it. */
const OPENAI_NO = {
  id: "chatcmpl-lp",
  object: "chat.completion",
  created: 0,
  model: "gpt-4o-mini",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "No." },
      logprobs: {
        content: [
          { token: "No", logprob: Math.log(0.8), bytes: [78, 111], top_logprobs: [{ token: "No", logprob: Math.log(0.8), bytes: [78, 111] }, { token: "Yes", logprob: Math.log(0.2), bytes: [89, 101, 115] }, { token: "The", logprob: Math.log(0.001), bytes: [] }] },
          { token: ".", logprob: -0.01, bytes: [46], top_logprobs: [{ token: ".", logprob: -0.01, bytes: [46] }] },
        ],
      },
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
};

describe("log-probabilities", () => {
  test("OpenAI chat models are sent logprobs and top_logprobs; the reply's tokens come back, and from the cache as they were", async () => {
    const cache = await ModelCallCache.open(join(temporaryDir(), "cache.sqlite"));
    try {
      // as OpenAI does, log-probabilities only when asked
      const script = (request: ReceivedRequest) => ({ body: body(request).logprobs ? OPENAI_NO : { ...OPENAI_NO, choices: [{ ...OPENAI_NO.choices[0], logprobs: null }] } });
      await withModelServer(script, async (server) => {
        const r = runtime(cache);
        const model = r.model(resolveModel("openai/gpt-4o-mini", { baseURL: `${server.url}/v1`, env: ENV }), { role: "agent" });
        const first = await model.complete(ASK);
        const sent = body(server.requests[0] as ReceivedRequest);
        assert.equal(sent.logprobs, true);
        assert.equal(sent.top_logprobs, 3);
        assert.equal(first.text, "No.");
        assert.equal(first.tokenLogprobs?.length, 2);
        assert.deepEqual(first.tokenLogprobs?.[0]?.top.map((t) => t.token), ["No", "Yes", "The"]);
        const p = yesProbability(first.tokenLogprobs ?? []);
        assert.ok(p !== undefined && Math.abs(p - 0.2) < 1e-9, String(p));
        const again = await model.complete(ASK);
        assert.equal(again.usage.cached, true);
        assert.deepEqual(again.tokenLogprobs, first.tokenLogprobs);
        // a request without logprobs is another request (another cache key), and sends none
        const plain = await model.complete({ messages: ASK.messages });
        assert.equal(plain.tokenLogprobs, undefined);
        assert.equal(server.requests.length, 2);
        assert.equal("logprobs" in body(server.requests[1] as ReceivedRequest), false);
        assert.equal(r.usage.snapshot().deviations, undefined);
      });
    } finally {
      cache.close();
    }
  });

  test("OpenAI reasoning models and Claude, which refuse them, are not sent logprobs: a recorded deviation, and no log-probabilities", async () => {
    for (const [name, family] of [["openai/o3-mini", "openai-reasoning"], ["anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"], ["anthropic/claude-opus-4-7", "claude-opus-4-7"]] as const) {
      await withModelServer(emulate(family, () => "Yes"), async (server) => {
        const r = runtime();
        const model = r.model(resolveModel(name, { baseURL: name.startsWith("openai") ? `${server.url}/v1` : server.url, env: ENV }), { role: "agent" });
        const reply = await model.complete(ASK);
        assert.equal(reply.text, "Yes", name);
        assert.equal(reply.tokenLogprobs, undefined);
        const sent = body(server.requests[0] as ReceivedRequest);
        assert.equal("logprobs" in sent || "top_logprobs" in sent, false, name);
        const deviations = Object.values(r.usage.snapshot().deviations ?? {}).flat();
        assert.ok(deviations.some((d) => /^logprobs not sent: .* models return none$/.test(d)), `${name}: ${JSON.stringify(deviations)}`);
      });
    }
  });

  test("Gemini is sent responseLogprobs and logprobs in generationConfig; logprobsResult comes back as tokens with their top candidates", async () => {
    await withModelServer(
      () => ({
        body: {
          candidates: [
            {
              content: { role: "model", parts: [{ text: "Yes" }] },
              finishReason: "STOP",
              index: 0,
              logprobsResult: {
                topCandidates: [{ candidates: [{ token: "Yes", logProbability: Math.log(0.7) }, { token: "No", logProbability: Math.log(0.3) }] }],
                chosenCandidates: [{ token: "Yes", logProbability: Math.log(0.7) }],
              },
            },
          ],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11 },
        },
      }),
      async (server) => {
        const model = runtime().model(resolveModel("google/gemini-2.0-flash", { baseURL: server.url, env: ENV }), { role: "agent" });
        const reply = await model.complete(ASK);
        const config = body(server.requests[0] as ReceivedRequest).generationConfig as Record<string, unknown>;
        assert.equal(config.responseLogprobs, true);
        assert.equal(config.logprobs, 3);
        assert.deepEqual(reply.tokenLogprobs, [{ token: "Yes", logprob: Math.log(0.7), top: [{ token: "Yes", logprob: Math.log(0.7) }, { token: "No", logprob: Math.log(0.3) }] }]);
        const p = yesProbability(reply.tokenLogprobs ?? []);
        assert.ok(p !== undefined && Math.abs(p - 0.7) < 1e-9);
      },
    );
  });

  test("P(yes) reads the first yes or no token, whatever its case and spacing; none is undefined", () => {
    const t = (token: string, logprob: number, top: [string, number][] = []) => ({ token, logprob, top: top.map(([token, logprob]) => ({ token, logprob })) });
    assert.equal(yesProbability([t("I", -0.1), t(" think", -0.1), t(" YES", Math.log(0.9))]), 1);
    const p = yesProbability([t(" yes", Math.log(0.6), [[" no", Math.log(0.3)], ["Yes", Math.log(0.1)]])]);
    assert.ok(p !== undefined && Math.abs(p - 0.7) < 1e-9, String(p));
    assert.equal(yesProbability([t("Maybe", -0.1)]), undefined);
    assert.equal(yesProbability([]), undefined);
  });
});
