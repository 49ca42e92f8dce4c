import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/index.js";
import { prepareImage } from "../../src/episodes/index.js";
import { ModelRuntime, jsonBody, imageBase64, imageSha256, requestCacheKey, resolveModel, type ChatRequest, type ModelSpec } from "../../src/models/index.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { anthropicReply, geminiReply, openAiReply, withModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

/** Text with what a careless body builder gets wrong: quotes, backslashes, control characters, unicode, a NUL. */
const TRICKY_TEXT = 'Is the "mug" on the \\table\\?\n\t café ☕ \u0000 \u2028 end ';

/** What the providers sent before image encodings were kept: `JSON.stringify` of the body with each image's base64 inline. */
function oldWire(protocol: string, model: string, frames: Buffer[]): string {
  const b64 = frames.map((f) => Buffer.from(f).toString("base64"));
  if (protocol === "openai") {
    const content = [{ type: "text", text: TRICKY_TEXT }, ...frames.flatMap((_, i) => [{ type: "image_url", image_url: { url: `data:image/png;base64,${b64[i]}` } }, { type: "text", text: `Frame ${i} — "é"` }])];
    return JSON.stringify({ model, messages: [{ role: "system", content: "Answer." }, { role: "user", content }], temperature: 0.2 });
  }
  if (protocol === "anthropic") {
    const content = [{ type: "text", text: TRICKY_TEXT }, ...frames.flatMap((_, i) => [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64[i] } }, { type: "text", text: `Frame ${i} — "é"` }])];
    return JSON.stringify({ model, max_tokens: 1024, messages: [{ role: "user", content }], system: "Answer.", temperature: 0.2 });
  }
  const parts = [{ text: TRICKY_TEXT }, ...frames.flatMap((_, i) => [{ inline_data: { mime_type: "image/png", data: b64[i] } }, { text: `Frame ${i} — "é"` }])];
  return JSON.stringify({ contents: [{ role: "user", parts }], systemInstruction: { parts: [{ text: "Answer." }] }, generationConfig: { temperature: 0.2 } });
}

function requestWith(frames: Buffer[]): ChatRequest {
  return {
    messages: [
      { role: "system", content: "Answer." },
      { role: "user", content: [{ type: "text", text: TRICKY_TEXT }, ...frames.flatMap((data, i) => [{ type: "image" as const, data, mediaType: "image/png" }, { type: "text" as const, text: `Frame ${i} — "é"` }])] },
    ],
    temperature: 0.2,
  };
}

const PROVIDERS: { name: string; protocol: string; env: NodeJS.ProcessEnv; reply: ScriptedReply; base: (url: string) => string }[] = [
  { name: "openai/gpt-4o", protocol: "openai", env: { OPENAI_API_KEY: "sk-test" }, reply: openAiReply("a mug"), base: (url) => `${url}/v1` },
  { name: "anthropic/claude-sonnet-4-5", protocol: "anthropic", env: { ANTHROPIC_API_KEY: "sk-ant-test" }, reply: anthropicReply("a mug"), base: (url) => url },
  { name: "google/gemini-2.0-flash", protocol: "google", env: { GEMINI_API_KEY: "gm-test" }, reply: geminiReply("a mug"), base: (url) => url },
];

describe("requests carry each image's base64 kept beside its bytes", async () => {
  const dir = temporaryDir();
  await writeRgbEpisode(dir, 3, 640, 480);
  const frames = await Promise.all([0, 1, 2].map((i) => prepareImage(join(dir, `${String(i).padStart(5, "0")}-rgb.png`))));
  const data = frames.map((f) => f.data);

  for (const provider of PROVIDERS) {
    test(`${provider.protocol}: the bytes sent are those of the body with every image inline, byte for byte, on the first request and on the next with the same frames; content-length is their length`, async () => {
      await withModelServer(() => provider.reply, async (server) => {
        const spec = resolveModel(provider.name, { baseURL: provider.base(server.url), env: provider.env });
        const model = new ModelRuntime({ maxRetries: 0, timeoutMs: 10_000 }).model(spec, { role: "agent" });
        // three frames, the first sent twice in one request, then the same frames again in another order
        await model.complete(requestWith([data[0]!, data[1]!, data[0]!, data[2]!]));
        await model.complete(requestWith([data[2]!, data[0]!]));
        assert.equal(server.requests.length, 2);
        const expected = [oldWire(provider.protocol, spec.model, [data[0]!, data[1]!, data[0]!, data[2]!]), oldWire(provider.protocol, spec.model, [data[2]!, data[0]!])];
        server.requests.forEach((request, i) => {
          assert.ok(request.rawBody === expected[i], `request ${i + 1}: ${request.rawBody.length} characters sent, ${expected[i]!.length} expected, first difference at ${firstDifference(request.rawBody, expected[i]!)}`);
          assert.equal(Number(request.headers["content-length"]), Buffer.byteLength(expected[i]!));
        });
      });
    });
  }

  test("the model-call cache's key and an image's hash are those of its bytes, whether kept or computed afresh", () => {
    const spec: ModelSpec = resolveModel("openai/gpt-4o", { baseURL: "http://127.0.0.1:9/v1", env: { OPENAI_API_KEY: "sk-test" } });
    const kept = requestCacheKey(spec, requestWith(data));
    // copies of the bytes: nothing kept for them yet
    const fresh = requestCacheKey(spec, requestWith(data.map((d) => Buffer.from(d))));
    assert.equal(kept, fresh);
    data.forEach((d, i) => {
      assert.equal(imageSha256(d), sha256Hex(d));
      assert.equal(imageSha256(d), frames[i]!.sha256);
      assert.equal(imageBase64(d), imageBase64(d), "encoded once, then the same bytes");
      assert.equal(imageBase64(d).toString("latin1"), d.toString("base64"));
    });
  });

  test("a body without images is its JSON text whole; a text that looks like an image's mark stays text", () => {
    const body = { messages: [{ role: "user", content: `${TRICKY_TEXT}"\u0000eqakit-image-0\u0000"` }] };
    const { chunks, length } = jsonBody(body);
    const text = JSON.stringify(body);
    assert.equal(Buffer.concat(chunks).toString("utf8"), text);
    assert.equal(length, Buffer.byteLength(text));
  });
});

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
