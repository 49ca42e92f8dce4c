import { describe, test } from "node:test";
import assert from "node:assert/strict";
import sharp from "sharp";
import type { Question } from "../../src/core/index.js";
import { forceGuess, newTrace } from "../../src/agents/index.js";
import { extractStructuredAnswer, judgeEac, judgeLlmMatch, prepareLlmMatchTask, scoreRunContract, tagScoreRunContract } from "../../src/eval/index.js";
import { CallPlan, ModelRuntime, describeModel, inRole, resolveModel } from "../../src/models/index.js";
import { rmRunContract, sampleEvaluations } from "../../src/reward/index.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";

/** Each judge's reply, by what its prompt asks. */
function judgeReply(request: ReceivedRequest) {
  const body = JSON.stringify(request.body);
  if (body.includes("write down the answer's structure as JSON")) return openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "cup", caption: null, position: null }], value: 1 }]));
  if (body.includes("Give two marks.")) return openAiReply("5, 4");
  if (body.includes("Proposed Answer")) return openAiReply("Action: keep");
  if (body.includes("Role: You are an Expert EQA evaluator")) return openAiReply("<critique>\nFine.\n</critique>\n<score>7</score>");
  return openAiReply("Your mark: 4");
}

const question = { questionId: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episodeHistory: "hm3d-v0/000" } as Question;

describe("the judges take a model that carries its spec", () => {
  test("LLM-Match, EAC, the structured TAG judge, the reward model and force-a-guess each call the model they are given, named by its own spec", async () => {
    await withModelServer(judgeReply, async (server) => {
      const spec = resolveModel("openai/judge-4o", { baseURL: `${server.url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
      const judge = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 }).model(spec, { role: "judge" });
      assert.equal(judge.spec, spec);
      assert.equal(judge.name, spec.name);
      assert.equal(inRole(judge, "force-guess").spec, spec, "a model in another role keeps its spec");
      assert.equal(new CallPlan().model(spec, "judge").spec, spec, "so does a dry run's");

      const match = await judgeLlmMatch(prepareLlmMatchTask(question, "a cup", "robust", judge.spec.name), judge, "robust");
      assert.equal(match.score, 4);
      assert.equal(match.judge, "openai/judge-4o");
      const frame = await sharp({ create: { width: 32, height: 24, channels: 3, background: "#808080" } }).png().toBuffer();
      const eac = await judgeEac(judge, { question: question.question, answer: "a cup", response: "a cup", image: { data: new Uint8Array(frame), mediaType: "image/png" } });
      assert.equal(eac.status, "ok");
      const extraction = await extractStructuredAnswer(judge, question.question, "There is a cup.");
      assert.equal(extraction.answer?.[0]?.objects[0]?.type, "cup");
      const instance = { id: "i1", question: question.question, predictedAnswer: "a cup", reasoningTrace: ["I look."], episodeHistory: "hm3d-v0/000", numKeyframes: 0, groundTruthScore: 7, source: "hm3d" };
      const samples = await sampleEvaluations(judge, instance, [], { temperature: 0 }, [0]);
      assert.equal(samples[0]?.score, 7);
      const trace = newTrace("vlm");
      assert.equal(await forceGuess(question, "a cup", judge, trace), "a cup");
      assert.equal(trace.forceGuess?.action, "keep");

      assert.equal(server.requests.length, 5);
      for (const request of server.requests) assert.equal((request.body as { model: string }).model, "judge-4o");
    });
  });

  test("a run's contract reads the judge from the model alone: a live one, or one known by its spec", () => {
    const spec = resolveModel("openai/gpt-4o", { baseURL: "http://127.0.0.1:9/v1", env: {} });
    const live = new ModelRuntime({ maxRetries: 0 }).model(spec, { role: "judge" });
    const benchmark = { path: "benchmark.json", sha256: "0", questions: [question], byId: new Map([[question.questionId, question]]) };
    const setup = { benchmark, questions: [question], predictions: [], predictionsPath: "p.json", outDir: "out" };
    const known = scoreRunContract({ ...setup, judge: { spec } }).settings;
    assert.equal((known.judge as { name: string; family: string }).name, spec.name);
    assert.equal((known.judge as { name: string; family: string }).family, describeModel(spec).family);
    assert.deepEqual(scoreRunContract({ ...setup, judge: live }).settings, known);
    assert.deepEqual((tagScoreRunContract({ questions: [], predictions: [], outDir: "out", judge: { spec } }, "exact").settings as { judge: unknown }).judge, known.judge);
    const file = { path: "instances.jsonl", sha256: "0", instances: [] };
    assert.deepEqual((rmRunContract({ file, model: { spec }, outDir: "out" }).settings as { model: unknown }).model, known.judge);
  });
});
