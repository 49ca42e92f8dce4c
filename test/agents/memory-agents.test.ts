import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { answerQuestions, createAgent, parseTextToolCalls, type AgentSetup } from "../../src/agents/index.js";
import type { Question } from "../../src/core/index.js";
import { ModelRuntime, resolveModel, type ModelSpec } from "../../src/models/index.js";
import { anthropicReply, geminiReply, lastUserText, openAiReply, withModelServer, type ReceivedRequest, type Script, type ScriptedReply } from "../helpers/model-server.js";
import { emulate, type EmulatedAnswer } from "../helpers/provider-emulators.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { temporaryDir } from "../helpers/paths.js";
import { runCli, cliEnv } from "../helpers/cli.js";
import { writeSceneEpisode } from "./scene-fixture.js";

const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", GEMINI_API_KEY: "gm-test" };

function question(id: string, text: string, episode = "hm3d-v0/scene"): Question {
  return { questionId: id, question: text, answer: "x", category: "object localization", episodeHistory: episode };
}

let framesRoot: string;
before(async () => {
  framesRoot = temporaryDir("eqakit-memory-agents-");
  await writeSceneEpisode(join(framesRoot, "hm3d-v0", "scene"), { layout: "hm3d", views: 12 });
  await writeRgbEpisode(join(framesRoot, "hm3d-v0", "rgb-only"), 2, 96, 64);
});

type Setup = Omit<AgentSetup, "model"> & { model: string };

async function answerWith(setup: Setup, url: string, q: Question) {
  const spec = (name: string): ModelSpec => resolveModel(name, { baseURL: name.startsWith("openai/") ? `${url}/v1` : url, env: ENV });
  const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 });
  const { model, ...rest } = setup;
  const { agent, models } = createAgent({ ...rest, model: spec(model), memory: { detector: false, ...rest.memory } }, runtime);
  const result = await answerQuestions({ questions: [q], agent, framesRoot, outDir: temporaryDir(), concurrency: 1, models });
  const record = result.records[0]!;
  assert.equal(record.error, null, String(record.error));
  return record;
}

/** The text of every user message of a request, whatever the provider. */
function allText(request: ReceivedRequest): string {
  return JSON.stringify(request.body);
}

describe("svm agent", () => {
  test("the top-N instances by similarity to the question, with box centres, then the LLM", async () => {
    await withModelServer(() => openAiReply("A: on the table\nExplanation: the cup is on it."), async (server) => {
      const record = await answerWith({ agent: "svm", model: "openai/gpt-4o", forceGuess: false, memory: { topN: 2 } }, server.url, question("q1", "Where is the cup?"));
      assert.equal(record.answer, "on the table");
      const prompt = lastUserText(server.requests[0]!);
      const objects = prompt.split("Objects:\n")[1]!.split("\n\nQ:")[0]!.split("\n");
      assert.equal(objects.length, 2);
      assert.match(objects[0]!, /^- \[\d\] cup, centre \(-?0\.00, 0\.83, -?0\.00\) m, size 0\.16 x 0\.15 x 0\.16 m$/);
      assert.match(prompt, /Q: Where is the cup\?$/);
      assert.ok(record.trace!.notes.some((n) => /svm: 2 of 5 instances kept/.test(n)));
      assert.equal(record.trace!.frames.length, 12);
    });
  });

  test("--no-boxes is the crop-only ablation; --force-guess replaces an abstaining answer", async () => {
    const replies = ["A: I cannot tell from the objects.", "Action: guess", "A: in the kitchen\nExplanation: guess"];
    await withModelServer((_r, i) => openAiReply(replies[i] ?? "A: ?"), async (server) => {
      const record = await answerWith({ agent: "svm", model: "openai/gpt-4o", forceGuess: true, memory: { boxes: false } }, server.url, question("q2", "Where is the lamp?"));
      assert.doesNotMatch(lastUserText(server.requests[0]!), /centre/);
      assert.equal(record.trace!.agentAnswer, "I cannot tell from the objects.");
      assert.equal(record.answer, "in the kitchen");
      assert.equal(record.trace!.forceGuess?.action, "guess");
    });
  });
});

describe("conceptgraph agent", () => {
  test("every instance with the relations between them", async () => {
    await withModelServer(() => openAiReply("A: a cup"), async (server) => {
      const record = await answerWith({ agent: "conceptgraph", model: "openai/gpt-4o", forceGuess: false }, server.url, question("q3", "What is on the table?"));
      assert.equal(record.answer, "a cup");
      const prompt = lastUserText(server.requests[0]!);
      assert.match(prompt, /- \[\d\] cup is on \[\d\] table/);
      assert.match(prompt, /- \[\d\] lamp is above \[\d\] cabinet/);
      assert.equal((prompt.split("Objects:\n")[1]!.split("\n\nRelations:")[0]!).split("\n").length, 5);
    });
  });
});

const cupQuery = { observations: "all", query: "cup", type: "object_type", threshold: 0.9 };

describe("retrieval agent", () => {
  test("OpenAI: native tool calls, their results sent back, then the answer from what was retrieved", async () => {
    const script: Script = (request, index) => {
      const body = request.body as { messages: { role: string }[] };
      if (index === 0) {
        return { body: { choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "filter_by_semantic_similarity", arguments: JSON.stringify(cupQuery) } }] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: 5, completion_tokens: 5 } } };
      }
      if (index === 1) {
        const cupId = JSON.parse((body.messages.at(-1) as unknown as { content: string }).content)[0].id as number;
        return { body: { choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_b", type: "function", function: { name: "filter_by_position", arguments: JSON.stringify({ observations: [cupId], object_type: "cup", position: { x: 0, y: 0.8, z: 0 }, type: "object_position" }) } }, { id: "call_c", type: "function", function: { name: "are_semantically_similar", arguments: JSON.stringify({ text1: "cup", text2: "mug" }) } }] }, finish_reason: "tool_calls" }] } };
      }
      if (index === 2) return openAiReply("The cup is at the table's centre.");
      return openAiReply("A: on the table");
    };
    await withModelServer(script, async (server) => {
      const record = await answerWith({ agent: "retrieval", model: "openai/gpt-4o", forceGuess: false }, server.url, question("q4", "Where is the cup?"));
      assert.equal(record.answer, "on the table");
      const first = server.requests[0]!.body as { tools: { type: string; function: { name: string } }[]; tool_choice: string };
      assert.deepEqual(first.tools.map((t) => t.function.name), ["filter_by_semantic_similarity", "filter_by_position", "are_semantically_similar"]);
      assert.equal(first.tool_choice, "auto");
      const second = (server.requests[1]!.body as { messages: Record<string, unknown>[] }).messages;
      assert.equal((second[1]!["tool_calls"] as { id: string }[])[0]!.id, "call_a");
      assert.equal(second[2]!["role"], "tool");
      assert.equal(second[2]!["tool_call_id"], "call_a");
      const third = (server.requests[2]!.body as { messages: Record<string, unknown>[] }).messages;
      assert.deepEqual(third.slice(-2).map((m) => m["tool_call_id"]), ["call_b", "call_c"]);
      const toolCalls = record.trace!.toolCalls!;
      assert.deepEqual(toolCalls.map((c) => c.name), ["filter_by_semantic_similarity", "filter_by_position", "are_semantically_similar"]);
      const near = JSON.parse(toolCalls[1]!.result) as { object_type: string; distance: number }[];
      assert.equal(near.length, 1);
      assert.equal(near[0]!.object_type, "cup");
      assert.ok(near[0]!.distance <= 0.25);
      const similar = JSON.parse(toolCalls[2]!.result) as { similarity: number };
      assert.ok(similar.similarity > 0 && similar.similarity <= 1);
      const answerPrompt = lastUserText(server.requests[3]!);
      assert.match(answerPrompt, /Retrieved observations:\n- \[\d\] cup; object at \(/);
      assert.equal(answerPrompt.split("Retrieved observations:\n")[1]!.split("\n\nQ:")[0]!.split("\n").length, 1);
      assert.equal(record.trace!.retrieved!.length, 1);
    });
  });

  test("Anthropic: tool_use blocks and tool_result blocks", async () => {
    const script: Script = (_r, index): ScriptedReply => {
      if (index === 0) return { body: { id: "m", type: "message", role: "assistant", model: "t", content: [{ type: "text", text: "Searching." }, { type: "tool_use", id: "toolu_1", name: "filter_by_semantic_similarity", input: cupQuery }], stop_reason: "tool_use", usage: { input_tokens: 1, output_tokens: 1 } } };
      if (index === 1) return anthropicReply("Done.");
      return anthropicReply("A: on the table");
    };
    await withModelServer(script, async (server) => {
      const record = await answerWith({ agent: "retrieval", model: "anthropic/claude-sonnet-4-5", forceGuess: false }, server.url, question("q5", "Where is the cup?"));
      assert.equal(record.answer, "on the table");
      const first = server.requests[0]!.body as { tools: { name: string; input_schema: unknown }[]; tool_choice: { type: string } };
      assert.equal(first.tools[0]!.name, "filter_by_semantic_similarity");
      assert.ok(first.tools[0]!.input_schema);
      assert.deepEqual(first.tool_choice, { type: "auto" });
      const messages = (server.requests[1]!.body as { messages: { role: string; content: { type: string; id?: string; tool_use_id?: string }[] }[] }).messages;
      assert.deepEqual(messages[1]!.content.map((b) => b.type), ["text", "tool_use"]);
      assert.equal(messages[2]!.role, "user");
      assert.equal(messages[2]!.content[0]!.type, "tool_result");
      assert.equal(messages[2]!.content[0]!.tool_use_id, "toolu_1");
      assert.equal(record.trace!.retrieved!.length, 1);
    });
  });

  test("Gemini: functionCall parts and functionResponse parts", async () => {
    const script: Script = (_r, index): ScriptedReply => {
      if (index === 0) return { body: { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "filter_by_semantic_similarity", args: cupQuery } }] }, finishReason: "STOP" }] } };
      if (index === 1) return geminiReply("Done.");
      return geminiReply("A: on the table");
    };
    await withModelServer(script, async (server) => {
      const record = await answerWith({ agent: "retrieval", model: "google/gemini-2.5-flash", forceGuess: false }, server.url, question("q6", "Where is the cup?"));
      assert.equal(record.answer, "on the table");
      const first = server.requests[0]!.body as { tools: { functionDeclarations: { name: string }[] }[]; toolConfig: unknown };
      assert.equal(first.tools[0]!.functionDeclarations.length, 3);
      assert.deepEqual(first.toolConfig, { functionCallingConfig: { mode: "AUTO" } });
      const contents = (server.requests[1]!.body as { contents: { role: string; parts: Record<string, { name: string; response?: unknown }>[] }[] }).contents;
      assert.equal(contents[1]!.role, "model");
      assert.equal(contents[1]!.parts[0]!["functionCall"]!.name, "filter_by_semantic_similarity");
      assert.equal(contents[2]!.parts[0]!["functionResponse"]!.name, "filter_by_semantic_similarity");
      assert.ok(Array.isArray((contents[2]!.parts[0]!["functionResponse"]!.response as { result: unknown }).result));
    });
  });

  test("Gemini 3: each function call goes back with its thought signature, which Gemini 3 requires on the next round", async () => {
    const answers: EmulatedAnswer[] = [{ tool: "filter_by_semantic_similarity", args: cupQuery }, "Done.", "A: on the table"];
    await withModelServer(emulate("gemini-3", () => answers.shift() ?? "A: ?"), async (server) => {
      const record = await answerWith({ agent: "retrieval", model: "google/gemini-3-pro-preview", forceGuess: false }, server.url, question("q6b", "Where is the cup?"));
      assert.equal(record.answer, "on the table");
      const contents = (server.requests[1]!.body as { contents: { role: string; parts: Record<string, unknown>[] }[] }).contents;
      assert.equal(contents[1]!.parts[0]!["thoughtSignature"], "c2lnbmF0dXJl");
      assert.ok(server.requests.every((r) => (r.body as { generationConfig?: { thinkingConfig?: unknown } }).generationConfig?.thinkingConfig !== undefined));
    });
  });

  test("the text protocol: CALL lines in, RESULT lines back, no native tools sent", async () => {
    const replies = [`I will search.\nCALL filter_by_semantic_similarity ${JSON.stringify(cupQuery)}`, "Found it.\nDONE", "A: on the table"];
    await withModelServer((_r, i) => openAiReply(replies[i] ?? "A: ?"), async (server) => {
      const record = await answerWith({ agent: "retrieval", model: "openai/llama3", forceGuess: false, memory: { tools: "text" } }, server.url, question("q7", "Where is the cup?"));
      assert.equal(record.answer, "on the table");
      assert.equal((server.requests[0]!.body as Record<string, unknown>)["tools"], undefined);
      assert.match(lastUserText(server.requests[0]!), /CALL <tool name> <arguments as one JSON object on the same line>/);
      assert.match(lastUserText(server.requests[1]!), /^RESULT filter_by_semantic_similarity: \[\{"id":\d,"object_type":"cup"/);
      assert.equal(server.requests.length, 3);
    });
    assert.deepEqual(parseTextToolCalls('CALL are_semantically_similar {"text1": "a", "text2": "b"}\nnot a call'), [{ id: "text_0", name: "are_semantically_similar", arguments: { text1: "a", text2: "b" } }]);
  });

  test("an RGB-only episode: the memory has no positions, the trace says so, the agent still answers", async () => {
    const replies = [{ tool_calls: [{ id: "c1", type: "function", function: { name: "filter_by_position", arguments: JSON.stringify({ observations: "all", position: { x: 0, y: 0, z: 0 }, type: "object_position" }) } }] }, { content: "nothing" }, { content: "A: no idea" }];
    await withModelServer((_r, i) => ({ body: { choices: [{ index: 0, message: { role: "assistant", content: null, ...replies[i] }, finish_reason: "stop" }] } }), async (server) => {
      const record = await answerWith({ agent: "retrieval", model: "openai/gpt-4o", forceGuess: false, memory: { detector: true } }, server.url, question("q8", "Where is the cup?", "hm3d-v0/rgb-only"));
      assert.equal(record.answer, "no idea");
      assert.ok(record.trace!.notes.some((n) => /positions are missing/.test(n)));
      assert.match(allText(server.requests[0]!), /positions are missing/);
      assert.match(lastUserText(server.requests[2]!), /positions are not known/);
    });
  });
});

describe("eqa memory build and eqa answer --agent svm", () => {
  test("the CLI writes the scene graph and answers with the svm agent", async () => {
    const home = temporaryDir("eqakit-memory-cli-");
    const out = join(home, "memory");
    const built = await runCli(["memory", "build", "--frames", join(framesRoot, "hm3d-v0", "scene"), "--out", out, "--no-detector"], cliEnv(home));
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stdout, /5 instances, \d+ relations from 12 frames/);
    assert.ok(existsSync(join(out, "scene-graph.json")) && existsSync(join(out, "topdown.png")) && existsSync(join(out, "crops", "4.png")));
    const missing = await runCli(["memory", "build", "--frames", join(home, "nowhere"), "--out", out], cliEnv(home));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--frames.*nowhere: no such folder or video/);

    const benchmark = join(home, "questions.json");
    writeFileSync(benchmark, JSON.stringify([{ question_id: "q-cli", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
    await withModelServer(() => openAiReply("A: a cup"), async (server) => {
      const run = join(home, "run");
      const answered = await runCli(["answer", "--benchmark", benchmark, "--frames", framesRoot, "--agent", "svm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--no-detector", "--no-force-guess", "--out", run, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(answered.code, 0, answered.stderr);
      assert.deepEqual((JSON.parse(readFileSync(join(run, "predictions.json"), "utf8")) as { question_id: string; answer: string }[]).map((p) => [p.question_id, p.answer]), [["q-cli", "a cup"]]);
      assert.match(lastUserText(server.requests[0]!), /cup, centre/);
    });
  });
});
