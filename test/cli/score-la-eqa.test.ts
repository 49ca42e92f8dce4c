import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cliEnv, runCli } from "../helpers/cli.js";
import { assertSameRun, jsonLines, killMidway } from "../helpers/kill.js";
import { LA_EQA_RECORDS, expectedSpl, writeLaEqaFiles } from "../helpers/la-eqa.js";
import { lastUserText, openAiReply, startModelServer, type ReceivedRequest, type ScriptedReply } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { openAiBatchEmulator } from "../helpers/provider-emulators.js";
import { loadRun } from "../../src/report/index.js";

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const byQuestion = new Map(LA_EQA_RECORDS.map((r, i) => [r.question, { id: r.question_id, mark: (i % 5) + 1 }]));

/** The judge: each question's mark (its position mod 5, plus 1), in the reply forms the reference reads. */
function judgeReply(request: ReceivedRequest): ScriptedReply {
  const prompt = lastUserText(request);
  const question = /question: (.*)\n/.exec(prompt)?.[1] ?? "";
  const { id, mark } = byQuestion.get(question) ?? { id: "?", mark: 1 };
  return openAiReply(id === "syn_2" ? "```json\n" + `{"score": ${mark}, "reasoning": "fenced"}` + "\n```" : `{"score": ${mark}, "reasoning": "scripted"}`);
}

interface Estimate { n: number; mean: number; stderr: number }
interface Summary {
  counts: { questions: number; scored: number; failed: number; reused: number };
  score: { overall: Estimate; byCategory: Record<string, Estimate> };
  llmMatch: { overall: Estimate };
  spl: { overall: Estimate; byCategory: Record<string, Estimate> };
  cost: { total: { calls: number } };
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

describe("eqa score on LA-EQA questions", () => {
  test("judges every answer with LA-EQA's parameters and computes SPL from the distances and places, per category and overall; costs are the requests received", async () => {
    const home = temporaryDir();
    const files = writeLaEqaFiles(home);
    const server = await startModelServer(judgeReply);
    try {
      const out = join(home, "run");
      const result = await runCli(["score", "--benchmark", files.questions, "--predictions", files.predictions, "--places", files.places, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "test" }));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, LA_EQA_RECORDS.length);
      for (const request of server.requests) {
        const body = request.body as { model: string; temperature: number; max_tokens: number; seed: number; messages: { role: string; content: string }[] };
        assert.deepEqual([body.model, body.temperature, body.max_tokens, body.seed, body.messages.length, body.messages[0]!.role], ["gpt-4o", 0.2, 512, 100, 1, "user"]);
        assert.match(body.messages[0]!.content, /correct answer: .+\n\nresponse: answer to syn_\d+\n/);
      }
      const results = readJson<Record<string, { answer_accuracy: number; SPL: number; distance_traveled: number; question_type: string }>>(join(out, "results.json"));
      for (const record of LA_EQA_RECORDS) {
        const row = results[record.question_id]!;
        assert.equal(row.answer_accuracy, byQuestion.get(record.question)!.mark, record.question_id);
        assert.equal(row.SPL, expectedSpl(record.question_id), record.question_id);
        assert.equal(row.question_type, record.category);
      }
      const summary = readJson<Summary>(join(out, "summary.json"));
      const marks = LA_EQA_RECORDS.map((r) => byQuestion.get(r.question)!.mark);
      assert.equal(summary.score.overall.mean, mean(marks));
      assert.equal(summary.llmMatch.overall.mean, mean(marks.map((m) => (100 * (m - 1)) / 4)));
      assert.equal(summary.spl.overall.mean, mean(LA_EQA_RECORDS.map((r) => expectedSpl(r.question_id))));
      const present = LA_EQA_RECORDS.filter((r) => r.category === "present");
      assert.equal(summary.spl.byCategory.present!.mean, mean(present.map((r) => expectedSpl(r.question_id))));
      assert.equal(summary.score.byCategory.past_present_future!.n, 1);
      assert.ok(summary.score.overall.stderr > 0, "an interval");
      assert.equal(summary.cost.total.calls, server.requests.length);
      assert.equal(jsonLines(join(out, "calls.jsonl")).length, server.requests.length);
      assert.match(result.stdout, /past_present_future\s+1\s/);
      assert.match(result.stdout, /overall\s+10\s/);

      // the report and the viewer read it as a run of its kind: its figures and its questions
      const run = await loadRun(out);
      assert.equal(run.kind, "la-eqa");
      assert.deepEqual(run.metrics.map((m) => [m.name, m.value]), [["answer score", mean(marks)], ["LLM-Match", summary.llmMatch.overall.mean], ["SPL", summary.spl.overall.mean]]);
      assert.deepEqual(run.questions.map((q) => [q.questionId, q.category, q.score]), LA_EQA_RECORDS.map((r) => [r.question_id, r.category, byQuestion.get(r.question)!.mark]));
      assert.equal(run.questions[0]!.judgeReplies.length, 1);
      const report = await runCli(["report", out, "--out", join(home, "report.html")], cliEnv(home));
      assert.equal(report.code, 0, report.stderr);
      const html = readFileSync(join(home, "report.html"), "utf8");
      assert.match(html, /answer score/);
      assert.match(html, /<code>syn_10<\/code>/);
    } finally {
      await server.close();
    }
  });

  test("killed with SIGKILL and run again, it judges only what is missing and ends as an uninterrupted run; the ledger bills every answered request once", async () => {
    const home = temporaryDir();
    const files = writeLaEqaFiles(home);
    let hangFrom = 4;
    let answered = 0;
    const server = await startModelServer((request, index) => {
      if (index >= hangFrom) return new Promise<ScriptedReply>(() => undefined);
      answered++;
      return judgeReply(request);
    });
    try {
      const args = (out: string) => ["score", "--benchmark", files.questions, "--predictions", files.predictions, "--places", files.places, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(home, out), "--no-cache", "--concurrency", "1"];
      const env = cliEnv(home, { OPENAI_API_KEY: "test" });
      const judgements = join(home, "killed", "judgements.jsonl");
      await killMidway(args("killed"), env, () => jsonLines(judgements).length >= 4 && server.requests.length > 4);
      assert.equal(existsSync(join(home, "killed", "summary.json")), false);
      hangFrom = Number.POSITIVE_INFINITY;
      const receivedBefore = server.requests.length;
      const resumed = await runCli(args("killed"), env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(server.requests.length - receivedBefore, LA_EQA_RECORDS.length - 4, "only the missing questions were judged");
      const summary = readJson<Summary>(join(home, "killed", "summary.json"));
      assert.equal(summary.counts.reused, 4);
      assert.equal(summary.cost.total.calls, answered, "every answered request billed once; the one cut by the kill was never answered");
      assert.equal(answered, LA_EQA_RECORDS.length);

      const whole = await runCli(args("whole"), env);
      assert.equal(whole.code, 0, whole.stderr);
      assertSameRun(join(home, "whole"), join(home, "killed"), {
        records: [{ file: "judgements.jsonl" }],
        figures: ["results.json", { file: "summary.json", pick: (s) => [s.counts, s.score, s.llmMatch, s.spl] }],
      });
    } finally {
      await server.close();
    }
  });

  test("--batch sends the judge's requests through the batch API and scores from its replies, as a live run would", async () => {
    const home = temporaryDir();
    const files = writeLaEqaFiles(home);
    const emulator = openAiBatchEmulator({ answer: () => '{"score": 3, "reasoning": "batched"}' });
    const server = await startModelServer(emulator.script);
    try {
      const out = join(home, "batched");
      const result = await runCli(["score", "--benchmark", files.questions, "--predictions", files.predictions, "--places", files.places, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--batch", "--batch-poll-seconds", "0.05"], cliEnv(home, { OPENAI_API_KEY: "test" }));
      assert.equal(result.code, 0, result.stderr);
      assert.equal([...emulator.batches.values()].reduce((n, b) => n + b.customIds.length, 0), LA_EQA_RECORDS.length);
      assert.equal(emulator.live, 0, "no live request");
      const summary = readJson<Summary>(join(out, "summary.json"));
      assert.deepEqual([summary.counts.scored, summary.score.overall.mean], [LA_EQA_RECORDS.length, 3]);
    } finally {
      await server.close();
    }
  });

  test("a question with a best path needs --places; predictions for unknown questions and OpenEQA-only flags are refused with exit 2", async () => {
    const home = temporaryDir();
    const files = writeLaEqaFiles(home);
    const env = cliEnv(home, { OPENAI_API_KEY: "test" });
    const base = ["score", "--benchmark", files.questions, "--predictions", files.predictions, "--judge", "openai/gpt-4o", "--judge-base-url", "http://127.0.0.1:9/v1", "--out", join(home, "refused")];
    const noPlaces = await runCli(base, env);
    assert.equal(noPlaces.code, 2);
    assert.match(noPlaces.stderr, /id syn_3, field "best_path": SPL needs the positions of scene 001-synthetic-home's places.*--places FILE/s);
    const variant = await runCli([...base, "--places", files.places, "--prompt-variant", "role=professional"], env);
    assert.equal(variant.code, 2);
    assert.match(variant.stderr, /option --prompt-variant: does not apply to LA-EQA questions/);
    const unknown = join(home, "unknown.json");
    writeFileSync(unknown, JSON.stringify([{ question_id: "hbt_1", answer: "x", distance_traveled: 1 }]));
    const refused = await runCli(["score", "--benchmark", files.questions, "--predictions", unknown, "--places", files.places, "--judge", "openai/gpt-4o", "--out", join(home, "refused")], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /predictions for questions the LA-EQA file does not have: hbt_1/);
    assert.equal(existsSync(join(home, "refused")), false, "nothing written");
  });
});

describe("eqa data fetch la-eqa", () => {
  test("reads a local copy by path or file:// URL, checked by SHA-256; eqa score --prompts original then sends the prompt of the evaluation code fetched", async () => {
    const home = temporaryDir();
    const files = writeLaEqaFiles(home);
    // an evaluation file of the reference's layout, with text of its own (the real one has no licence)
    const evaluation = join(home, "eqa_evaluation.py");
    writeFileSync(evaluation, [
      "class EQAEvaluation(object):",
      "    def __init__(self, GT_A_additional_answers=None):",
      "        if GT_A_additional_answers is None:",
      '            self.GT_A_additional_answers = "none."',
      "    def evaluate_answer_accuracy(self, answer: str):",
      "        prompt = (",
      '            "Mark it.\\n"',
      '            "question: " + self.question + "\\n"',
      '            "truth: " + self.GT_A_answer + "\\n"',
      '            "extra: " + self.GT_A_additional_answers + "\\n"',
      '            "said: " + answer + "\\n"',
      '            "{\\"score\\": n}"',
      "        )",
      "",
    ].join("\n"));
    const sha256 = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");
    const sums = JSON.stringify({ "eqa-questions.json": sha256(files.questions), "eqa_evaluation.py": sha256(evaluation) });
    const data = join(home, "data", "eqakit", "la-eqa");

    const fetched = await runCli(["data", "fetch", "la-eqa", "--url", files.questions, "--evaluation-url", pathToFileURL(evaluation).href], cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: sums }));
    assert.equal(fetched.code, 0, fetched.stderr);
    assert.equal(readFileSync(join(data, "eqa-questions.json"), "utf8"), readFileSync(files.questions, "utf8"));
    assert.match(fetched.stdout, /eqa-questions\.json .*sha256 [0-9a-f]{64} ok/);

    // without the seam the synthetic file is checked against LA-EQA's own sum, refused and not written
    const real = await runCli(["data", "fetch", "la-eqa", "--url", pathToFileURL(files.questions).href, "--out", join(home, "real")], cliEnv(home));
    assert.equal(real.code, 2);
    assert.match(real.stderr, /eqa-questions\.json has sha256 [0-9a-f]{64}, expected db37c6bff8ae87a097b693970c7e42bdf441ffb6e052060bb124cbdeb63706e6/);
    assert.equal(existsSync(join(home, "real", "eqa-questions.json")), false);

    const server = await startModelServer(() => openAiReply('{"score": 5}'));
    try {
      const scored = await runCli(["score", "--benchmark", "la-eqa", "--predictions", files.predictions, "--places", files.places, "--prompts", "original", "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(home, "original"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "test", EQAKIT_TEST_FETCH_SHA256: sums }));
      assert.equal(scored.code, 0, scored.stderr);
      const first = LA_EQA_RECORDS[0]!;
      const sent = server.requests.map(lastUserText).find((p) => p.includes(first.question));
      assert.equal(sent, `Mark it.\nquestion: ${first.question}\ntruth: ${first.answer}\nextra: none.\nsaid: answer to ${first.question_id}\n{"score": n}`);
    } finally {
      await server.close();
    }
  });
});
