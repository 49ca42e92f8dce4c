import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { UserError } from "../../src/core/index.js";
import { ModelCallError, ModelRuntime, resolveModel, type ChatModel, type ChatRequest } from "../../src/models/index.js";
import {
  anthropicReply,
  geminiReply,
  openAiReply,
  startModelServer,
  withModelServer,
  type ModelServer,
  type ReceivedRequest,
  type Script,
  type ScriptedReply,
} from "../helpers/model-server.js";

/** Bytes that are not text: base64 of them must survive exactly. */
const PNG_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x80, 0x07, 0x3e, 0x3f]);
const JPEG_BYTES = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0xfb]);
const PNG_BASE64 = Buffer.from(PNG_BYTES).toString("base64");
const JPEG_BASE64 = Buffer.from(JPEG_BYTES).toString("base64");

/** Prompt text with the characters that break careless encoders: quotes, newlines, unicode, trailing space. */
const TRICKY_TEXT = "Is the 'mug' on the \"table\"?\n\tAnswer: 3.5 m — café ☕ \\n literal ";

interface OpenAiBody {
  model: string;
  messages: { role: string; content: unknown }[];
  [key: string]: unknown;
}

interface AnthropicBody {
  model: string;
  max_tokens: number;
  system?: unknown;
  messages: { role: string; content: unknown }[];
  [key: string]: unknown;
}

interface GeminiBody {
  contents: { role: string; parts: unknown[] }[];
  systemInstruction?: unknown;
  generationConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A model built the way the CLI builds one, from a name, a base URL and an environment of our own. */
function modelFor(name: string, baseURL: string | undefined, env: NodeJS.ProcessEnv, runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 5000 })): ChatModel {
  return runtime.model(resolveModel(name, { ...(baseURL !== undefined ? { baseURL } : {}), env }), { role: "agent" });
}

function only(server: ModelServer): ReceivedRequest {
  assert.equal(server.requests.length, 1, "exactly one request reaches the server");
  const request = server.requests[0];
  assert.ok(request);
  return request;
}

/** The body as it was on the wire, re-parsed from the raw bytes. */
function wireBody<T>(request: ReceivedRequest): T {
  return JSON.parse(request.rawBody) as T;
}

const TEXT_ONLY: ChatRequest = {
  messages: [
    { role: "system", content: "You are an AI assistant who will help me to evaluate the response." },
    { role: "user", content: TRICKY_TEXT },
  ],
};

describe("OpenAI chat completions", () => {
  const env = { OPENAI_API_KEY: "sk-test-key" };

  test("sends model and plain string messages, and nothing the caller did not set", async () => {
    await withModelServer(() => openAiReply("Your mark: 4", { prompt_tokens: 57, completion_tokens: 4 }), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, env);
      const response = await model.complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.method, "POST");
      assert.equal(request.path, "/v1/chat/completions");
      assert.equal(request.headers.authorization, "Bearer sk-test-key");
      assert.match(String(request.headers["content-type"]), /^application\/json/);
      assert.deepEqual(wireBody<OpenAiBody>(request), {
        model: "gpt-4o",
        messages: [
          { role: "system", content: "You are an AI assistant who will help me to evaluate the response." },
          { role: "user", content: TRICKY_TEXT },
        ],
      });
      // the exact prompt string arrives unchanged
      assert.equal(wireBody<OpenAiBody>(request).messages[1]?.content, TRICKY_TEXT);

      assert.equal(model.name, "openai/gpt-4o");
      assert.equal(response.text, "Your mark: 4");
      assert.deepEqual(response.texts, ["Your mark: 4"]);
      assert.equal(response.finishReason, "stop");
      assert.equal(response.usage.promptTokens, 57);
      assert.equal(response.usage.completionTokens, 4);
      assert.equal(response.usage.images, 0);
      assert.equal(response.usage.retries, 0);
      assert.equal(response.usage.cached, false);
      assert.ok(response.usage.latencyMs > 0);
    });
  });

  test("sends temperature, max_tokens, seed and the other parameters when set, under OpenAI's names", async () => {
    await withModelServer(() => openAiReply("4"), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, env);
      await model.complete({ ...TEXT_ONLY, temperature: 0.2, maxTokens: 32, seed: 1234, topP: 0.9, stop: ["\n", "END"], responseFormat: "json" });
      const body = wireBody<OpenAiBody>(only(server));
      assert.equal(body.temperature, 0.2);
      assert.equal(body.max_tokens, 32);
      assert.equal(body.seed, 1234);
      assert.equal(body.top_p, 0.9);
      assert.deepEqual(body.stop, ["\n", "END"]);
      assert.deepEqual(body.response_format, { type: "json_object" });
      assert.deepEqual(Object.keys(body).sort(), ["max_tokens", "messages", "model", "response_format", "seed", "stop", "temperature", "top_p"]);
    });
  });

  test("sends zero values (temperature 0, seed 0) rather than dropping them, and never the sample index", async () => {
    await withModelServer(() => openAiReply("ok"), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, env);
      await model.complete({ ...TEXT_ONLY, temperature: 0, seed: 0, sampleIndex: 3, responseFormat: "text" });
      const body = wireBody<OpenAiBody>(only(server));
      assert.equal(body.temperature, 0);
      assert.equal(body.seed, 0);
      assert.equal("sampleIndex" in body, false);
      assert.equal("sample_index" in body, false);
      assert.equal("response_format" in body, false, "responseFormat text is the default and is not sent");
    });
  });

  test("sends images as base64 data URLs in content parts, and counts them in usage", async () => {
    await withModelServer(() => openAiReply("a red mug"), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, env);
      const response = await model.complete({
        messages: [
          { role: "system", content: [{ type: "text", text: "Describe " }, { type: "text", text: "frames." }] },
          {
            role: "user",
            content: [
              { type: "text", text: "Frame 1:" },
              { type: "image", data: PNG_BYTES, mediaType: "image/png" },
              { type: "text", text: "Frame 2:" },
              { type: "image", data: JPEG_BYTES, mediaType: "image/jpeg" },
            ],
          },
        ],
      });
      const body = wireBody<OpenAiBody>(only(server));
      assert.deepEqual(body.messages, [
        // a system message made of parts is flattened to its text
        { role: "system", content: "Describe frames." },
        {
          role: "user",
          content: [
            { type: "text", text: "Frame 1:" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
            { type: "text", text: "Frame 2:" },
            { type: "image_url", image_url: { url: `data:image/jpeg;base64,${JPEG_BASE64}` } },
          ],
        },
      ]);
      assert.equal(response.usage.images, 2);
      assert.equal(response.text, "a red mug");
    });
  });

  test("keeps a multi-turn conversation in order with its roles", async () => {
    await withModelServer(() => openAiReply("third"), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, env);
      await model.complete({
        messages: [
          { role: "user", content: "first" },
          { role: "assistant", content: "second" },
          { role: "user", content: "again" },
        ],
      });
      assert.deepEqual(wireBody<OpenAiBody>(only(server)).messages, [
        { role: "user", content: "first" },
        { role: "assistant", content: "second" },
        { role: "user", content: "again" },
      ]);
    });
  });

  test("parses several choices, a null content and a reply without usage", async () => {
    const replies: ScriptedReply[] = [
      {
        body: {
          id: "c1",
          object: "chat.completion",
          created: 0,
          model: "gpt-4o",
          choices: [
            { index: 0, message: { role: "assistant", content: "yes" }, finish_reason: "stop" },
            { index: 1, message: { role: "assistant", content: "no" }, finish_reason: "stop" },
          ],
          usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
        },
      },
      openAiReply(null),
      { body: { id: "c3", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "bare" }, finish_reason: null }] } },
    ];
    await withModelServer((_request, index) => replies[index] ?? openAiReply("unexpected"), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, env);
      const two = await model.complete({ ...TEXT_ONLY, n: 2 });
      assert.equal(wireBody<OpenAiBody>(server.requests[0]!).n, 2);
      assert.deepEqual(two.texts, ["yes", "no"]);
      assert.equal(two.text, "yes");
      assert.equal(two.finishReason, "stop");
      assert.equal(two.usage.promptTokens, 20);
      assert.equal(two.usage.completionTokens, 2);

      const empty = await model.complete(TEXT_ONLY);
      assert.equal(empty.text, null);
      assert.deepEqual(empty.texts, [null]);

      const bare = await model.complete(TEXT_ONLY);
      assert.equal(bare.text, "bare");
      assert.equal(bare.finishReason, null);
      assert.equal(bare.usage.promptTokens, 0);
      assert.equal(bare.usage.completionTokens, 0);
    });
  });

  test("OPENAI_BASE_URL and OPENAI_API_KEY come from the given environment (trailing slash ignored)", async () => {
    await withModelServer(() => openAiReply("ok"), async (server) => {
      const model = modelFor("openai/gpt-4o-mini", undefined, { OPENAI_BASE_URL: `${server.url}/v1/`, OPENAI_API_KEY: "sk-from-env" });
      await model.complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.path, "/v1/chat/completions");
      assert.equal(request.headers.authorization, "Bearer sk-from-env");
      assert.equal(wireBody<OpenAiBody>(request).model, "gpt-4o-mini");
    });
  });

  test("the base URL option overrides OPENAI_BASE_URL", async () => {
    await withModelServer(() => openAiReply("ok"), async (server) => {
      const model = modelFor("openai/gpt-4o", `${server.url}/v1`, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "sk" });
      await model.complete(TEXT_ONLY);
      assert.equal(only(server).path, "/v1/chat/completions");
    });
  });

  test("a self-hosted OpenAI-compatible server needs no key", async () => {
    await withModelServer(() => openAiReply("ok"), async (server) => {
      const model = modelFor("openai/local-model", `${server.url}/v1`, {});
      await model.complete(TEXT_ONLY);
      assert.equal(only(server).headers.authorization, "Bearer EMPTY");
    });
  });

  test("vllm/ names keep the slashes of the model id and read VLLM_BASE_URL", async () => {
    await withModelServer(() => openAiReply("ok"), async (server) => {
      const model = modelFor("vllm/Qwen/Qwen2.5-VL-7B-Instruct", undefined, { VLLM_BASE_URL: `${server.url}/v1` });
      await model.complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.path, "/v1/chat/completions");
      assert.equal(request.headers.authorization, "Bearer EMPTY");
      assert.equal(wireBody<OpenAiBody>(request).model, "Qwen/Qwen2.5-VL-7B-Instruct");
      assert.equal(model.name, "vllm/Qwen/Qwen2.5-VL-7B-Instruct");
    });
  });

  test("ollama/ names read OLLAMA_HOST with or without a scheme and speak OpenAI at /v1", async () => {
    await withModelServer(() => openAiReply("ok"), async (server) => {
      const host = server.url.replace(/^http:\/\//, "");
      await modelFor("ollama/qwen2.5vl", undefined, { OLLAMA_HOST: host }).complete(TEXT_ONLY);
      await modelFor("ollama/qwen2.5vl", undefined, { OLLAMA_HOST: `${server.url}/` }).complete(TEXT_ONLY);
      assert.equal(server.requests.length, 2);
      for (const request of server.requests) {
        assert.equal(request.path, "/v1/chat/completions");
        assert.equal(request.headers.authorization, "Bearer ollama");
        assert.equal(wireBody<OpenAiBody>(request).model, "qwen2.5vl");
      }
    });
  });
});

describe("Anthropic Messages", () => {
  const env = { ANTHROPIC_API_KEY: "sk-ant-test" };

  test("moves the system message to `system`, sends the default max_tokens and the key", async () => {
    await withModelServer(() => anthropicReply("Your mark: 5", { input_tokens: 40, output_tokens: 6 }), async (server) => {
      const model = modelFor("anthropic/claude-test-model", server.url, env);
      const response = await model.complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.method, "POST");
      assert.equal(request.path, "/v1/messages");
      assert.equal(request.headers["x-api-key"], "sk-ant-test");
      assert.equal(request.headers.authorization, undefined, "the key is not also sent as a bearer token");
      assert.equal(request.headers["anthropic-version"], "2023-06-01");
      assert.match(String(request.headers["content-type"]), /^application\/json/);
      assert.deepEqual(wireBody<AnthropicBody>(request), {
        model: "claude-test-model",
        max_tokens: 1024,
        system: "You are an AI assistant who will help me to evaluate the response.",
        messages: [{ role: "user", content: TRICKY_TEXT }],
      });

      assert.equal(response.text, "Your mark: 5");
      assert.deepEqual(response.texts, ["Your mark: 5"]);
      assert.equal(response.finishReason, "end_turn");
      assert.equal(response.usage.promptTokens, 40);
      assert.equal(response.usage.completionTokens, 6);
      assert.equal(response.usage.cached, false);
    });
  });

  test("no system message means no `system` field; parameters go under Anthropic's names; seed is not sent", async () => {
    await withModelServer(() => anthropicReply("ok"), async (server) => {
      const model = modelFor("anthropic/claude-test-model", server.url, env);
      await model.complete({ messages: [{ role: "user", content: "hello" }], temperature: 0.2, maxTokens: 32, seed: 1234, topP: 0.5, stop: ["\n\n"] });
      assert.deepEqual(wireBody<AnthropicBody>(only(server)), {
        model: "claude-test-model",
        max_tokens: 32,
        messages: [{ role: "user", content: "hello" }],
        temperature: 0.2,
        top_p: 0.5,
        stop_sequences: ["\n\n"],
      });
    });
  });

  test("several system messages are joined; assistant turns keep their role", async () => {
    await withModelServer(() => anthropicReply("ok"), async (server) => {
      const model = modelFor("anthropic/claude-test-model", server.url, env);
      await model.complete({
        messages: [
          { role: "system", content: "Rule one." },
          { role: "user", content: "q1" },
          { role: "assistant", content: "a1" },
          { role: "system", content: [{ type: "text", text: "Rule two." }] },
          { role: "user", content: "q2" },
        ],
      });
      const body = wireBody<AnthropicBody>(only(server));
      assert.equal(body.system, "Rule one.\n\nRule two.");
      assert.deepEqual(body.messages, [
        { role: "user", content: "q1" },
        { role: "assistant", content: "a1" },
        { role: "user", content: "q2" },
      ]);
    });
  });

  test("sends images as base64 source blocks", async () => {
    await withModelServer(() => anthropicReply("two frames"), async (server) => {
      const model = modelFor("anthropic/claude-test-model", server.url, env);
      const response = await model.complete({
        messages: [
          {
            role: "user",
            content: [
              { type: "image", data: PNG_BYTES, mediaType: "image/png" },
              { type: "image", data: JPEG_BYTES, mediaType: "image/jpeg" },
              { type: "text", text: "What is on the table?" },
            ],
          },
        ],
      });
      assert.deepEqual(wireBody<AnthropicBody>(only(server)).messages, [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
            { type: "image", source: { type: "base64", media_type: "image/jpeg", data: JPEG_BASE64 } },
            { type: "text", text: "What is on the table?" },
          ],
        },
      ]);
      assert.equal(response.usage.images, 2);
    });
  });

  test("joins the text blocks of a reply and skips other blocks", async () => {
    const reply: ScriptedReply = {
      body: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test-model",
        content: [
          { type: "thinking", thinking: "hmm", signature: "sig" },
          { type: "text", text: "Your mark: " },
          { type: "text", text: "3" },
        ],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 5 },
      },
    };
    await withModelServer(() => reply, async (server) => {
      const response = await modelFor("anthropic/claude-test-model", server.url, env).complete(TEXT_ONLY);
      assert.equal(response.text, "Your mark: 3");
      assert.equal(response.finishReason, "end_turn");
      assert.equal(response.usage.promptTokens, 12);
      assert.equal(response.usage.completionTokens, 5);
    });
  });

  test("an empty content list is a null text", async () => {
    const reply: ScriptedReply = {
      body: { id: "m", type: "message", role: "assistant", model: "m", content: [], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } },
    };
    await withModelServer(() => reply, async (server) => {
      const response = await modelFor("anthropic/claude-test-model", server.url, env).complete(TEXT_ONLY);
      assert.equal(response.text, null);
      assert.deepEqual(response.texts, [null]);
    });
  });

  test("n > 1 is refused as a bad request before anything is sent", async () => {
    await withModelServer(() => anthropicReply("never"), async (server) => {
      const model = modelFor("anthropic/claude-test-model", server.url, env);
      await assert.rejects(model.complete({ ...TEXT_ONLY, n: 2 }), (error: unknown) => {
        assert.ok(error instanceof ModelCallError);
        assert.equal(error.kind, "bad_request");
        assert.equal(error.retryable, false);
        assert.equal(error.fatalForRun, false);
        return true;
      });
      assert.equal(server.requests.length, 0);
    });
  });

  test("ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY come from the given environment", async () => {
    await withModelServer(() => anthropicReply("ok"), async (server) => {
      await modelFor("anthropic/claude-other-model", undefined, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-env" }).complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.path, "/v1/messages");
      assert.equal(request.headers["x-api-key"], "sk-ant-env");
      assert.equal(wireBody<AnthropicBody>(request).model, "claude-other-model");
    });
  });
});

describe("Gemini generateContent", () => {
  const env = { GEMINI_API_KEY: "gm-test-key" };

  test("posts to /v1beta/models/MODEL:generateContent with x-goog-api-key, contents and systemInstruction", async () => {
    await withModelServer(() => geminiReply("Your mark: 2", { promptTokenCount: 33, candidatesTokenCount: 4 }), async (server) => {
      const model = modelFor("google/gemini-test-model", server.url, env);
      const response = await model.complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.method, "POST");
      assert.equal(request.path, "/v1beta/models/gemini-test-model:generateContent");
      assert.equal(request.headers["x-goog-api-key"], "gm-test-key");
      assert.equal(request.headers.authorization, undefined, "the key is not also sent as a bearer token");
      assert.match(String(request.headers["content-type"]), /^application\/json/);
      assert.deepEqual(wireBody<GeminiBody>(request), {
        contents: [{ role: "user", parts: [{ text: TRICKY_TEXT }] }],
        systemInstruction: { parts: [{ text: "You are an AI assistant who will help me to evaluate the response." }] },
      });

      assert.equal(response.text, "Your mark: 2");
      assert.deepEqual(response.texts, ["Your mark: 2"]);
      assert.equal(response.finishReason, "STOP");
      assert.equal(response.usage.promptTokens, 33);
      assert.equal(response.usage.completionTokens, 4);
    });
  });

  test("sends generationConfig with Gemini's names only for the parameters set", async () => {
    await withModelServer(() => geminiReply("{}"), async (server) => {
      const model = modelFor("google/gemini-test-model", server.url, env);
      await model.complete({ messages: [{ role: "user", content: "q" }], temperature: 0.2, topP: 0.8, maxTokens: 32, seed: 1234, n: 1, stop: ["END"], responseFormat: "json" });
      await model.complete({ messages: [{ role: "user", content: "q" }], temperature: 0 });
      assert.equal(server.requests.length, 2);
      const first = wireBody<GeminiBody>(server.requests[0]!);
      assert.deepEqual(first.generationConfig, {
        temperature: 0.2,
        topP: 0.8,
        maxOutputTokens: 32,
        seed: 1234,
        candidateCount: 1,
        stopSequences: ["END"],
        responseMimeType: "application/json",
      });
      assert.equal("systemInstruction" in first, false);
      assert.deepEqual(wireBody<GeminiBody>(server.requests[1]!).generationConfig, { temperature: 0 });
    });
  });

  test("assistant turns become role `model`; images are inline_data parts", async () => {
    await withModelServer(() => geminiReply("a mug"), async (server) => {
      const model = modelFor("google/gemini-2.5-flash", server.url, env);
      const response = await model.complete({
        messages: [
          { role: "user", content: "Look at this." },
          { role: "assistant", content: "Ready." },
          {
            role: "user",
            content: [
              { type: "text", text: "What is it?" },
              { type: "image", data: JPEG_BYTES, mediaType: "image/jpeg" },
              { type: "image", data: PNG_BYTES, mediaType: "image/png" },
            ],
          },
        ],
      });
      assert.deepEqual(wireBody<GeminiBody>(only(server)).contents, [
        { role: "user", parts: [{ text: "Look at this." }] },
        { role: "model", parts: [{ text: "Ready." }] },
        {
          role: "user",
          parts: [
            { text: "What is it?" },
            { inline_data: { mime_type: "image/jpeg", data: JPEG_BASE64 } },
            { inline_data: { mime_type: "image/png", data: PNG_BASE64 } },
          ],
        },
      ]);
      assert.equal(response.usage.images, 2);
    });
  });

  test("joins the parts of each candidate; a blocked prompt or a stopped candidate is a refusal with its reason", async () => {
    const replies: ScriptedReply[] = [
      {
        body: {
          candidates: [
            { content: { role: "model", parts: [{ text: "Your " }, { text: "mark: 1" }] }, finishReason: "STOP", index: 0 },
            { content: { role: "model", parts: [{ text: "other" }] }, finishReason: "STOP", index: 1 },
          ],
          usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 9, totalTokenCount: 17 },
        },
      },
      { body: { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } } },
      { body: { candidates: [{ finishReason: "SAFETY", index: 0 }] } },
    ];
    await withModelServer((_request, index) => replies[index] ?? geminiReply("unexpected"), async (server) => {
      const model = modelFor("google/gemini-2.5-flash", server.url, env);
      const joined = await model.complete(TEXT_ONLY);
      assert.deepEqual(joined.texts, ["Your mark: 1", "other"]);
      assert.equal(joined.text, "Your mark: 1");
      assert.equal(joined.finishReason, "STOP");
      assert.equal(joined.usage.completionTokens, 9);

      await assert.rejects(model.complete(TEXT_ONLY), (e: unknown) => e instanceof ModelCallError && e.kind === "refused" && /promptFeedback\.blockReason SAFETY/.test(e.message) && e.reply?.text === null);
      await assert.rejects(model.complete(TEXT_ONLY), (e: unknown) => e instanceof ModelCallError && e.kind === "refused" && /finishReason SAFETY/.test(e.message) && e.reply?.finishReason === "SAFETY");
    });
  });

  test("GEMINI_BASE_URL and GOOGLE_API_KEY come from the given environment", async () => {
    await withModelServer(() => geminiReply("ok"), async (server) => {
      await modelFor("google/gemini-2.5-pro", undefined, { GEMINI_BASE_URL: `${server.url}/`, GOOGLE_API_KEY: "google-key" }).complete(TEXT_ONLY);
      const request = only(server);
      assert.equal(request.path, "/v1beta/models/gemini-2.5-pro:generateContent");
      assert.equal(request.headers["x-goog-api-key"], "google-key");
    });
  });

  test("GEMINI_API_KEY wins over GOOGLE_API_KEY", async () => {
    await withModelServer(() => geminiReply("ok"), async (server) => {
      await modelFor("google/gemini-2.5-flash", server.url, { GEMINI_API_KEY: "gemini-key", GOOGLE_API_KEY: "google-key" }).complete(TEXT_ONLY);
      assert.equal(only(server).headers["x-goog-api-key"], "gemini-key");
    });
  });
});

describe("resolveModel", () => {
  test("names the protocol, model id, endpoint and key of each provider", () => {
    const identity = ({ profile: _profile, options: _options, ...rest }: ReturnType<typeof resolveModel>): Omit<ReturnType<typeof resolveModel>, "profile" | "options"> => rest;
    assert.deepEqual(identity(resolveModel("openai/gpt-4o", { env: { OPENAI_API_KEY: "sk" } })), {
      name: "openai/gpt-4o",
      provider: "openai",
      protocol: "openai",
      model: "gpt-4o",
      baseURL: "https://api.openai.com/v1",
      apiKey: "sk",
    });
    assert.deepEqual(identity(resolveModel("vllm/Qwen/Qwen2.5-VL-7B-Instruct", { env: {} })), {
      name: "vllm/Qwen/Qwen2.5-VL-7B-Instruct",
      provider: "vllm",
      protocol: "openai",
      model: "Qwen/Qwen2.5-VL-7B-Instruct",
      baseURL: "http://localhost:8000/v1",
      apiKey: "EMPTY",
    });
    const ollama = resolveModel("ollama/qwen2.5vl", { env: {} });
    assert.equal(ollama.baseURL, "http://localhost:11434/v1");
    assert.equal(ollama.protocol, "openai");
    const anthropic = resolveModel("anthropic/claude-test-model", { env: { ANTHROPIC_API_KEY: "a" } });
    assert.equal(anthropic.protocol, "anthropic");
    assert.equal(anthropic.baseURL, "https://api.anthropic.com");
    const google = resolveModel("google/gemini-2.5-flash", { env: { GEMINI_API_KEY: "g" } });
    assert.equal(google.protocol, "google");
    assert.equal(google.baseURL, "https://generativelanguage.googleapis.com");
  });

  test("a hosted API without its key is a user error naming the variable and the flag", () => {
    for (const [name, variable] of [
      ["openai/gpt-4o", "OPENAI_API_KEY"],
      ["anthropic/claude-test-model", "ANTHROPIC_API_KEY"],
      ["google/gemini-2.5-flash", "GEMINI_API_KEY"],
    ] as const) {
      assert.throws(
        () => resolveModel(name, { env: {}, flag: "--judge" }),
        (error: unknown) => error instanceof UserError && error.message.includes(variable) && error.message.includes("--judge"),
        name,
      );
    }
  });

  test("no name, or a name that is not PROVIDER/MODEL, is a user error with set-up help", () => {
    for (const name of [undefined, "", "gpt-4o", "openai/", "mistral/large"]) {
      assert.throws(
        () => resolveModel(name, { env: {}, flag: "--judge" }),
        (error: unknown) => error instanceof UserError && error.message.includes("--judge openai/gpt-4o"),
        String(name),
      );
    }
  });
});
