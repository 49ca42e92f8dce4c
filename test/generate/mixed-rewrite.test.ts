import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { MixedEpisode } from "../../src/data/index.js";
import { parseRewrite, rewriteMixedEpisodes, mixedRewriteJob } from "../../src/generate/index.js";
import { ModelRuntime, resolveModel } from "../../src/models/index.js";
import { RunDirectory } from "../../src/store/index.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const ENV = { OPENAI_API_KEY: "sk-test" };

function episode(n: number, category: MixedEpisode["category"], split: MixedEpisode["split"]): MixedEpisode {
  const where = n % 2 === 0;
  return {
    question_id: `home-${n % 3}-${category}-q${n}`,
    scene: `home-${n % 3}`,
    question: where ? "Where was the mug when you finished your tasks yesterday evening?" : "How many things are on the table now?",
    answer: where ? "On the counter." : "Three.",
    alternatives: where ? ["on the counter", "counter"] : ["3", "three"],
    answer_value: where ? "counter" : "3",
    category,
    history_answers: category === "past",
    evidence: { frames: [], objects: [] },
    start: { position: [1, 0, 1], yaw: 0 },
    gt_path_length: 0,
    split,
    program: where ? { query: "where", object: "mug", at: { day: 2, at: "end" } } : { query: "count_on", receptacle: "table", at: { now: true } },
    template: where ? "past_where_end" : "present_count",
  };
}

function episodes(): MixedEpisode[] {
  return Array.from({ length: 8 }, (_, n) => episode(n, n % 2 === 0 ? "past" : "present", n < 6 ? "train" : "test"));
}

const promptOf = (request: ReceivedRequest): string => (request.body as { messages: { content: string }[] }).messages[0]!.content;

describe("--rewrite of a Mixed EQA set", () => {
  test("rewrites through an OpenAI-compatible server with the TAG renderer's prompts, keeps the answer value and program, adds the new answer to the alternatives, and resumes", async () => {
    const set = episodes();
    const runDir = temporaryDir();
    await withModelServer(
      (request) => {
        const prompt = promptOf(request);
        const asked = prompt.split("Structured question: ").at(-1)!;
        const question = /^Question: (.*)$/m.exec(asked)![1]!;
        const answer = /^Answer: (.*)$/m.exec(asked)![1]!;
        // a count lost in the rewrite is refused: the template stays
        const rewritten = answer === "Three." ? "Several." : `Well, ${answer.toLowerCase()}`;
        return openAiReply(JSON.stringify({ question: `Tell me: ${question}`, answer: rewritten }));
      },
      async (server) => {
        const spec = resolveModel("openai/test-rewriter", { baseURL: `${server.url}/v1`, env: ENV });
        const model = new ModelRuntime({ maxRetries: 0 }).model(spec, { role: "rewriter" });
        const summary = await rewriteMixedEpisodes(set, { model, spec, run: new RunDirectory(runDir), concurrency: 2 });
        assert.equal(server.requests.length, set.length);
        assert.equal(summary.rewritten, 4);
        assert.equal(summary.keptTemplate, 4, "the count questions whose rewrite lost the count");
        const original = episodes();
        set.forEach((e, i) => {
          const before = original[i]!;
          assert.equal(e.answer_value, before.answer_value);
          assert.deepEqual(e.program, before.program);
          if (before.answer_value === "3") {
            assert.equal(e.question, before.question);
            assert.deepEqual(e.alternatives, before.alternatives);
          } else {
            assert.equal(e.question, `Tell me: ${before.question}`);
            assert.equal(e.answer, "Well, on the counter.");
            assert.deepEqual(e.alternatives, [...before.alternatives, "Well, on the counter."]);
          }
        });
        assert.ok(server.requests.map(promptOf).some((p) => p.includes("Structured question: {\"query\":\"where\"") && p.includes("Example:")), "programs as structured questions, training questions as examples");
        const again = episodes();
        const resumed = await rewriteMixedEpisodes(again, { model, spec, run: new RunDirectory(runDir), concurrency: 2 });
        assert.equal(server.requests.length, set.length, "nothing asked again");
        assert.equal(resumed.reused, set.length);
        assert.deepEqual(again, set);
      },
    );
  });

  test("a rewritten count must keep its number", () => {
    const job = mixedRewriteJob(episode(1, "present", "train"));
    assert.equal(typeof parseRewrite(JSON.stringify({ question: "How many things sit on the table now?", answer: "Several." }), job), "string");
    assert.deepEqual(parseRewrite(JSON.stringify({ question: "How many things sit on the table now?", answer: "There are three." }), job), { question: "How many things sit on the table now?", answer: "There are three." });
  });
});
