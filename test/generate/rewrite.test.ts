import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { resolveModel, ModelRuntime } from "../../src/models/index.js";
import { RunDirectory } from "../../src/store/index.js";
import { buildTagDataset, parseRewrite, rewriteQuestions } from "../../src/generate/index.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { kitchenLog } from "./fixtures.js";

const ENV = { OPENAI_API_KEY: "sk-test" };

function promptOf(request: ReceivedRequest): string {
  const body = request.body as { messages: { content: string }[] };
  return body.messages[0]!.content;
}

/** The item asked about: the last question block of the prompt. */
function asked(prompt: string): { structured: string; question: string; answer: string } {
  const last = prompt.split("Structured question: ").at(-1)!;
  const line = (name: string): string => new RegExp(`^${name}: (.*)$`, "m").exec(last)![1]!;
  return { structured: last.split("\n")[0]!, question: line("Question"), answer: line("Answer") };
}

function dataset() {
  const inputs = Array.from({ length: 4 }, (_, i) => ({ log: kitchenLog({ id: `kitchen-${i}`, environment: `house-${i % 2}`, yaw: i * 0.3 }) }));
  return buildTagDataset(inputs, { perTrajectory: 6, seed: 2 });
}

describe("LLM renderer", () => {
  test("rewrites through an OpenAI-compatible server, with training examples, keeps the template when the reply is unusable, and resumes", async () => {
    const templates = dataset().questions;
    const questions = dataset().questions;
    const runDir = temporaryDir();
    await withModelServer(
      (request) => {
        const item = asked(promptOf(request));
        if (item.structured.startsWith("listObjects")) return openAiReply("Sorry, I cannot help with that.");
        return openAiReply(`Here you go: {"question": ${JSON.stringify(`Tell me: ${item.question}`)}, "answer": ${JSON.stringify(`Indeed, ${item.answer}`)}}`);
      },
      async (server) => {
        const spec = resolveModel("openai/gemma-2-27b-it", { baseURL: `${server.url}/v1`, env: ENV });
        const model = new ModelRuntime({ maxRetries: 0 }).model(spec, { role: "rewriter" });
        const summary = await rewriteQuestions(questions, { model, spec, run: new RunDirectory(runDir), concurrency: 2 });
        const jobs = questions.length + questions.filter((q) => q.grounded).length;
        assert.equal(summary.jobs, jobs);
        assert.equal(server.requests.length, jobs);
        const listed = questions.filter((q) => q.tags.query_type === "listObjects");
        assert.ok(listed.length > 0);
        assert.equal(summary.keptTemplate, listed.length + listed.filter((q) => q.grounded).length);
        questions.forEach((q, i) => {
          const template = templates[i]!;
          if (q.tags.query_type === "listObjects") {
            assert.equal(q.question, template.question);
            assert.equal(q.answer, template.answer);
          } else {
            assert.equal(q.question, `Tell me: ${template.question}`);
            assert.equal(q.answer, `Indeed, ${template.answer}`);
            if (q.grounded) assert.equal(q.grounded.question, `Tell me: ${template.grounded!.question}`);
          }
          assert.deepEqual(q.structured_answer, template.structured_answer);
        });
        // later prompts carry rewritten training questions as examples
        const withExamples = server.requests.map(promptOf).filter((p) => p.includes("Example:"));
        assert.ok(withExamples.length > 0);
        const trainStructured = new Set(questions.filter((q) => q.split === "train").flatMap((q) => [q.structured_question, q.grounded?.structured_question]));
        for (const prompt of withExamples) {
          const example = /Example:\nStructured question: (.*)\n/.exec(prompt)![1]!;
          assert.ok(trainStructured.has(example), example);
          assert.match(prompt, /Rewritten: \{"question":"Tell me: /);
        }
        // a second run in the same directory asks nothing again
        const again = dataset().questions;
        const resumed = await rewriteQuestions(again, { model, spec, run: new RunDirectory(runDir), concurrency: 2 });
        assert.equal(server.requests.length, jobs);
        assert.equal(resumed.reused, jobs);
        assert.deepEqual(again, questions);
      },
    );
  });

  test("a rewrite that loses coordinates or counts is unusable", () => {
    const job = {
      question: "How many cups are there on the countertop (x=0.46, y=0.15, z=-0.83)?",
      answer: "There are 3: a cup (x=1, y=0, z=-1), …",
      structuredAnswer: [{ predicate: "", objects: [], value: 3 }],
      queryType: "countObjects" as const,
    };
    const ok = parseRewrite('{"question": "How many cups did you see on the countertop (x=0.46, y=0.15, z=-0.83)?", "answer": "Three: a cup (x=1, y=0, z=-1) and two more."}', job);
    assert.deepEqual(ok, { question: "How many cups did you see on the countertop (x=0.46, y=0.15, z=-0.83)?", answer: "Three: a cup (x=1, y=0, z=-1) and two more." });
    assert.match(String(parseRewrite('{"question": "How many cups are on the countertop?", "answer": "Three: a cup (x=1, y=0, z=-1)."}', job)), /coordinates/);
    assert.match(String(parseRewrite('{"question": "How many cups on the countertop (x=0.46, y=0.15, z=-0.83)?", "answer": "Some: a cup (x=1, y=0, z=-1)."}', job)), /count 3/);
    assert.match(String(parseRewrite("not JSON", job)), /JSON/);
    assert.match(String(parseRewrite('{"question": "Count the cups on the countertop (x=0.46, y=0.15, z=-0.83).", "answer": "3 (x=1, y=0, z=-1)"}', job)), /question mark/);
  });
});
