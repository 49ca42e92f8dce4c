import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { answerQuestions, createAgent, parseAnswerLine, parseForceGuessAction, type AgentSetup } from "../../src/agents/index.js";
import type { Question } from "../../src/core/index.js";
import { ModelRuntime, resolveModel, type ModelSpec } from "../../src/models/index.js";
import { anthropicReply, geminiReply, openAiReply, withModelServer, type ReceivedRequest, type Script } from "../helpers/model-server.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openEqaPromptsDir, temporaryDir } from "../helpers/paths.js";

const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", GEMINI_API_KEY: "gm-test" };
const prompt = (name: string): string => readFileSync(join(openEqaPromptsDir, `${name}.txt`), "utf8").trim();

function question(id: string, text: string, episode = "hm3d-v0/000-hm3d-test"): Question {
  return { questionId: id, question: text, answer: "x", category: "object recognition", episodeHistory: episode };
}

let framesRoot: string;
before(async () => {
  framesRoot = temporaryDir("eqakit-agents-");
  await writeRgbEpisode(join(framesRoot, "hm3d-v0", "000-hm3d-test"), 60, 1280, 720);
});

async function answerWith(setup: Omit<AgentSetup, "model" | "captioner"> & { model: string; captioner?: string }, url: string, questions: Question[], out = temporaryDir()) {
  const spec = (name: string): ModelSpec => resolveModel(name, { baseURL: name.startsWith("openai/") ? `${url}/v1` : url, env: ENV });
  const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 });
  const { captioner, model, ...rest } = setup;
  const { agent, models } = createAgent({ ...rest, model: spec(model), ...(captioner ? { captioner: spec(captioner) } : {}) }, runtime);
  return answerQuestions({ questions, agent, framesRoot, outDir: out, concurrency: 4, models });
}

/** Decodes the images of an OpenAI-style request and returns their sizes. */
async function openAiImageSizes(request: ReceivedRequest): Promise<{ width: number; height: number; format: string }[]> {
  const parts = (request.body as { messages: { content: { type: string; image_url?: { url: string } }[] }[] }).messages[0]!.content;
  return Promise.all(
    parts.filter((p) => p.type === "image_url").map(async (p) => {
      const meta = await sharp(Buffer.from(p.image_url!.url.split(",")[1]!, "base64")).metadata();
      return { width: meta.width!, height: meta.height!, format: meta.format! };
    }),
  );
}

describe("blind agent", () => {
  test("sends OpenEQA's blind-LLM prompt with the reference's parameters and reads the A: line", async () => {
    await withModelServer(() => openAiReply("A: The kitchen\nExplanation: fridges are in kitchens."), async (server) => {
      const result = await answerWith({ agent: "blind", model: "openai/gpt-4-0613" }, server.url, [question("q1", "Where is the fridge?")]);
      assert.equal(result.records[0]!.answer, "The kitchen");
      const body = server.requests[0]!.body as Record<string, unknown>;
      assert.deepEqual(body.messages, [{ role: "user", content: prompt("blind-llm").replace("{question}", "Where is the fridge?") }]);
      assert.deepEqual([body.temperature, body.max_tokens, body.seed], [0.2, 128, 1234]);
      assert.equal(result.summary.abstentionRate, null, "the blind agent never forces a guess");
    });
  });
});

describe("vlm agent", () => {
  test("OpenAI: the gpt4v prompt split at User Query:, 50 frames between, 512-px PNGs", async () => {
    await withModelServer(() => openAiReply("There are two chairs."), async (server) => {
      const result = await answerWith({ agent: "vlm", model: "openai/gpt-4o", forceGuess: false }, server.url, [question("q1", "How many chairs?")]);
      assert.equal(result.records[0]!.answer, "There are two chairs.", "gpt4v.py keeps the reply as it is");
      const request = server.requests[0]!;
      const content = (request.body as { messages: { content: { type: string; text?: string }[] }[] }).messages[0]!.content;
      const [before, after] = prompt("gpt4v").split("User Query:");
      assert.deepEqual(content[0], { type: "text", text: before });
      assert.deepEqual(content.at(-1), { type: "text", text: `User Query:${after!.replace("{question}", "How many chairs?")}` });
      const sizes = await openAiImageSizes(request);
      assert.equal(sizes.length, 50);
      assert.ok(sizes.every((s) => s.width === 512 && s.height === 288 && s.format === "png"));
      const body = request.body as Record<string, unknown>;
      assert.deepEqual([body.temperature, body.max_tokens, body.seed], [0.2, 128, 1234]);
      // the frames are OpenEQA's round(linspace(0, 59, 50))
      assert.equal(result.records[0]!.trace!.frames.length, 50);
      assert.deepEqual(result.records[0]!.trace!.frames.slice(0, 6), [0, 1, 2, 4, 5, 6]);
    });
  });

  test("Anthropic: native image blocks, 20 frames, the stop sequence and the A: parse of claude-vision.py", async () => {
    await withModelServer(() => anthropicReply("Let me look.\nA: two chairs\nmore"), async (server) => {
      const result = await answerWith({ agent: "vlm", model: "anthropic/claude-sonnet-4-5", forceGuess: false }, server.url, [question("q1", "How many chairs?")]);
      assert.equal(result.records[0]!.answer, "two chairs");
      const body = server.requests[0]!.body as { max_tokens: number; stop_sequences: string[]; messages: { content: { type: string; source?: { media_type: string } }[] }[] };
      assert.equal(body.max_tokens, 128);
      assert.deepEqual(body.stop_sequences, ["User Query:"]);
      const images = body.messages[0]!.content.filter((c) => c.type === "image");
      assert.equal(images.length, 20);
      assert.ok(images.every((i) => i.source?.media_type === "image/png"));
    });
  });

  test("Gemini: inline data parts, 15 frames; --num-frames and --image-format override", async () => {
    await withModelServer(() => geminiReply("A: a sofa"), async (server) => {
      await answerWith({ agent: "vlm", model: "google/gemini-2.5-flash", forceGuess: false }, server.url, [question("q1", "What is by the window?")]);
      const parts = (server.requests[0]!.body as { contents: { parts: { inline_data?: { mime_type: string } }[] }[] }).contents[0]!.parts;
      assert.equal(parts.filter((p) => p.inline_data).length, 15);
      await answerWith({ agent: "vlm", model: "google/gemini-2.5-flash", forceGuess: false, numFrames: 4, image: { maxSide: 256, format: "jpeg" } }, server.url, [question("q2", "What is by the door?")]);
      const second = (server.requests[1]!.body as { contents: { parts: { inline_data?: { mime_type: string; data: string } }[] }[] }).contents[0]!.parts.filter((p) => p.inline_data);
      assert.equal(second.length, 4);
      assert.ok(second.every((p) => p.inline_data!.mime_type === "image/jpeg"));
      const meta = await sharp(Buffer.from(second[0]!.inline_data!.data, "base64")).metadata();
      assert.equal(meta.width, 256);
    });
  });

  test("force-a-guess: an abstaining answer is replaced by the blind LLM's guess, and both are kept", async () => {
    const script: Script = (request) => {
      const text = JSON.stringify(request.body);
      if (text.includes("Proposed Answer:")) return openAiReply(text.includes("cannot tell") ? "Action: guess" : "Action: keep");
      if (text.includes("image_url")) return openAiReply(text.includes("fridge") ? "I cannot tell from these images." : "Two chairs.");
      return openAiReply("A: in the kitchen\nExplanation: fridges are in kitchens.");
    };
    await withModelServer(script, async (server) => {
      const result = await answerWith({ agent: "vlm", model: "openai/gpt-4o", numFrames: 3 }, server.url, [question("q1", "Where is the fridge?"), question("q2", "How many chairs?")]);
      const [fridge, chairs] = result.records;
      assert.equal(fridge!.answer, "in the kitchen");
      assert.equal(fridge!.trace!.agentAnswer, "I cannot tell from these images.");
      assert.deepEqual(fridge!.trace!.forceGuess, { action: "guess", blindAnswer: "in the kitchen" });
      assert.deepEqual(fridge!.trace!.calls.map((c) => c.role), ["answer", "force-guess", "blind-guess"]);
      assert.equal(chairs!.answer, "Two chairs.");
      assert.deepEqual(chairs!.trace!.forceGuess, { action: "keep" });
      assert.equal(result.summary.counts.abstained, 1);
      assert.equal(result.summary.abstentionRate, 0.5);
      const predictions = JSON.parse(readFileSync(join(result.runDir, "predictions.json"), "utf8")) as Record<string, unknown>[];
      assert.deepEqual(predictions[0], { question_id: "q1", answer: "in the kitchen", agent: "vlm", forced_guess: true, agent_answer: "I cannot tell from these images." });
    });
  });

  test("force-a-guess: verdicts that name neither guess nor keep are counted apart (not as answers kept), named with their replies, and over a tenth flagged", async () => {
    const script: Script = (request) => openAiReply(JSON.stringify(request.body).includes("Proposed Answer:") ? "The answer seems fine to me." : "Two chairs.");
    await withModelServer(script, async (server) => {
      const result = await answerWith({ agent: "vlm", model: "openai/gpt-4o", numFrames: 3 }, server.url, [question("q1", "How many chairs?"), question("q2", "How many tables?"), question("q3", "How many lamps?")]);
      assert.ok(result.records.every((r) => r.answer === "Two chairs." && r.trace!.forceGuess!.action === "unreadable"), "the answers are kept");
      assert.deepEqual(result.records[0]!.trace!.forceGuess, { action: "unreadable", reply: "The answer seems fine to me." });
      const { counts, abstentionRate, judgeUnreadable } = result.summary;
      assert.deepEqual([counts.forceGuessChecked, counts.abstained, counts.forceGuessUnreadable], [0, 0, 3], "not \"0 of 3 answers abstained\"");
      assert.equal(abstentionRate, null, "no verdict was read");
      assert.deepEqual({ ...judgeUnreadable, items: judgeUnreadable.items.map((i) => [i.questionId, i.judge, i.replies]) }, {
        count: 3,
        of: 3,
        overLimit: true,
        items: ["q1", "q2", "q3"].map((id) => [id, "force-guess", ["The answer seems fine to me."]]),
      });
    });
  });
});

describe("socratic agent", () => {
  test("captions each sampled frame once, however many questions use it, then answers from the captions", async () => {
    const script: Script = (request) => {
      const text = JSON.stringify(request.body);
      if (text.includes("image_url")) return openAiReply(`A room, caption ${request.path.length}-${text.length % 97}.`);
      return openAiReply("A: a blue sofa");
    };
    await withModelServer(script, async (server) => {
      const questions = [question("q1", "What is in the living room?"), question("q2", "What colour is the sofa?"), question("q3", "Is there a lamp?")];
      const result = await answerWith({ agent: "socratic", model: "openai/gpt-4o", captioner: "openai/gpt-4o-mini", numFrames: 4, forceGuess: false }, server.url, questions);
      const captionCalls = server.requests.filter((r) => JSON.stringify(r.body).includes("image_url"));
      assert.equal(captionCalls.length, 4, "4 frames captioned once for 3 questions");
      assert.ok(captionCalls.every((r) => (r.body as { model: string }).model === "gpt-4o-mini"));
      assert.equal(server.requests.length, 4 + 3);
      assert.ok(result.records.every((r) => r.answer === "a blue sofa"));
      const answerCall = server.requests.find((r) => !JSON.stringify(r.body).includes("image_url"))!;
      const sent = (answerCall.body as { messages: { content: string }[] }).messages[0]!.content;
      assert.match(sent, /Frame 0: A room, caption/);
      assert.match(sent, /Frame 59: A room, caption/);
      assert.equal(Object.keys(result.records[0]!.trace!.captions!).length, 4);
    });
  });
});

describe("bad episodes fail their questions alone", () => {
  test("a missing episode folder and a truncated frame are named; other questions are answered", async () => {
    const broken = join(framesRoot, "hm3d-v0", "001-hm3d-broken");
    await writeRgbEpisode(broken, 5, 320, 240);
    const frame = join(broken, "00002-rgb.png");
    const bytes = readFileSync(frame);
    (await import("node:fs")).writeFileSync(frame, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await withModelServer(() => openAiReply("Two chairs."), async (server) => {
      const result = await answerWith({ agent: "vlm", model: "openai/gpt-4o", numFrames: 5, forceGuess: false }, server.url, [
        question("ok", "How many chairs?"),
        question("missing", "How many chairs?", "hm3d-v0/404-hm3d-nowhere"),
        question("truncated", "How many chairs?", "hm3d-v0/001-hm3d-broken"),
      ]);
      const byId = new Map(result.records.map((r) => [r.questionId, r]));
      assert.equal(byId.get("ok")!.answer, "Two chairs.");
      assert.match(byId.get("missing")!.error!, /404-hm3d-nowhere/);
      assert.match(byId.get("truncated")!.error!, /00002-rgb\.png/);
      assert.equal(result.summary.counts.failed, 2);
      const predictions = JSON.parse(readFileSync(join(result.runDir, "predictions.json"), "utf8")) as unknown[];
      assert.equal(predictions.length, 1);
    });
  });
});

describe("parsers", () => {
  test("the A: line, as the reference baselines read it", () => {
    assert.equal(parseAnswerLine("A: the bed\nExplanation: x"), "the bed");
    assert.equal(parseAnswerLine("Q: where\nA:  on the table  "), "on the table");
    assert.equal(parseAnswerLine("  no marker here "), "no marker here");
    assert.equal(parseAnswerLine(null), null);
  });

  test("force-a-guess actions", () => {
    assert.equal(parseForceGuessAction("Action: guess"), "guess");
    assert.equal(parseForceGuessAction("Action: ``keep``"), "keep");
    assert.equal(parseForceGuessAction("guess"), "guess");
    assert.equal(parseForceGuessAction("I would keep it, not guess"), undefined);
    assert.equal(parseForceGuessAction(null), undefined);
  });
});
