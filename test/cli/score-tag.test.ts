import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StructuredAnswer } from "../../src/data/index.js";
import { cliEnv, runCli, type CliResult } from "../helpers/cli.js";
import { lastUserText, openAiReply, startModelServer, type ModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { openAiBatchEmulator } from "../helpers/provider-emulators.js";
import { costOf } from "../../src/models/index.js";
import { tagDataset } from "../eval/structured-fixtures.js";

const questions = tagDataset();
const byId = new Map(questions.map((q) => [q.question_id, q]));
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const readLines = (path: string): string[] => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");

function writeJson(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** Free-text answers and what the judge extracts from each (the judge is scripted by answer text). */
const freeText: Record<string, { text: string; reply: string }> = {
  "q-count": {
    text: "On the countertop at (x=0.46, y=0.15, z=-0.83) there are two cups; the other countertop has one red mug.",
    reply: `Here you go:\n\`\`\`json\n${JSON.stringify(byId.get("q-count")!.structured_answer)}\n\`\`\``,
  },
  "q-state": { text: "Yes, it was open.", reply: JSON.stringify([{ predicate: "", objects: [{ type: "microwave", caption: "black microwave", position: null }], value: true }]) },
  "q-where": { text: "Somewhere in the kitchen, I think.", reply: "The answer is vague." },
};

interface SummaryShape {
  counts: { questions: number; scored: number; failed: number; judgeUnreadable: number; invalid: number; structured: number; extracted: number; reused: number };
  judgeUnreadable: { count: number; of: number; overLimit: boolean; items: { questionId: string; judge: string; error: string; replies: (string | null)[] }[] };
  scores: { grounded: { mean: number; n: number }; ungrounded: { mean: number } };
  validAnswerRate: number;
  errors: Record<string, { answers: number; perAnswer: number; rate: number }>;
  categories: { predicateType: Record<string, unknown>; queryType: Record<string, unknown>; conditions: Record<string, unknown>; ambiguous: Record<string, unknown>; combined: Record<string, { grounded: { n: number } }> };
  failures: { questionId: string; error: string }[];
  config: { similarity: string; grounded: boolean };
}

function predictions(): { question_id: string; answer: string | StructuredAnswer | null }[] {
  return [
    { question_id: "q-count", answer: freeText["q-count"]!.text },
    { question_id: "q-list", answer: byId.get("q-list")!.structured_answer },
    { question_id: "q-state", answer: freeText["q-state"]!.text },
    { question_id: "q-colour", answer: JSON.stringify(byId.get("q-colour")!.structured_answer) },
    { question_id: "q-where", answer: freeText["q-where"]!.text },
    { question_id: "q-times", answer: "" },
  ];
}

/** The judge's reply to a prompt: scripted by the answer it is asked to read. */
function judgeReply(prompt: string): string {
  const replies = new Map(Object.values(freeText).map((f) => [f.text, f.reply]));
  if (prompt.startsWith("That reply could not be read")) return "Still vague, sorry.";
  const answer = prompt.split("\nAnswer: ").at(-1)!.replace(/\nJSON:$/, "");
  return replies.get(answer) ?? "[]";
}

async function scriptedJudge(): Promise<ModelServer> {
  return startModelServer((request) => openAiReply(judgeReply(lastUserText(request))));
}

/** The six predictions scored live by the scripted judge: the run folder, what the command printed and the requests the judge received. */
interface LiveRun {
  out: string;
  result: CliResult;
  requests: number;
}

/** Made once for the file (the embedded encoder loads in every run): the end-to-end test checks it, the batch test compares with it. */
let live: Promise<LiveRun> | undefined;
function liveRun(): Promise<LiveRun> {
  live ??= (async () => {
    const home = temporaryDir();
    const server = await scriptedJudge();
    try {
      const out = join(home, "run");
      const args = ["score-tag", "--questions", writeJson(home, "questions.json", questions), "--predictions", writeJson(home, "predictions.json", predictions()), "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache"];
      return { out, result: await runCli(args, cliEnv(home)), requests: server.requests.length };
    } finally {
      await server.close();
    }
  })();
  return live;
}

describe("eqa score-tag", () => {
  test("scores free-text and structured answers end to end with a loopback judge and the embedded encoder", async () => {
    const { out, result, requests } = await liveRun();
    assert.equal(result.code, 1, "the judge could not be read for 1 of 6 questions, over a tenth");
    assert.match(result.stdout, /overall\s+5\s/);
    assert.match(result.stdout, /5 of 6 scored, 0 failed, 1 unreadable by the judge/);
    assert.match(result.stderr, /^scoring: 6\/6 \(1 unreadable by the judge\)$/m, "the progress line counts the judge's unreadable reply apart from failed calls");
    assert.match(result.stdout, /valid answers: 80\.0% of 5/);
    assert.match(result.stdout, /the judge's replies could not be read for 1 of 6 questions, more than 10%: exit 1 \(first: q-where, tag-structured: the judge's replies could not be read as a structured answer \(asked twice\)/);
    // three free-text answers, one of them unreadable and asked again
    assert.equal(requests, 4);

    const metrics = readJson(join(out, "metrics.json")) as Record<string, number>;
    assert.equal(metrics["q-count"], 5, "the judge read back the true structure");
    assert.equal(metrics["q-list"], 5, "a structured answer is scored as it is");
    assert.equal(metrics["q-colour"], 5, "a structured answer written as a JSON string too");
    assert.equal(metrics["q-times"], 1, "an empty answer scores 1");
    assert.equal(metrics["q-where"], undefined, "an answer the judge could not read is not scored: the judge failed, not the answer");
    assert.equal(metrics["q-state"], 3, "right state, position missing: the object is not grounded, the value is right");

    const summary = readJson(join(out, "summary.json")) as SummaryShape;
    assert.deepEqual(summary.counts, { questions: 6, scored: 5, failed: 0, judgeUnreadable: 1, invalid: 1, missingPredictions: 0, unknownPredictions: 0, structured: 2, extracted: 2, reused: 0 } as SummaryShape["counts"]);
    assert.equal(summary.validAnswerRate, 4 / 5);
    assert.deepEqual({ ...summary.judgeUnreadable, items: summary.judgeUnreadable.items.map((i) => [i.questionId, i.judge, i.replies.length]) }, { count: 1, of: 6, overLimit: true, items: [["q-where", "tag-structured", 2]] });
    assert.equal(summary.config.similarity, "use-lite-en");
    const ungrounded = [5, 5, 5, 5, 1];
    assert.ok(Math.abs(summary.scores.ungrounded.mean - ungrounded.reduce((a, b) => a + b) / 5) < 1e-9);
    assert.ok(summary.scores.grounded.mean < summary.scores.ungrounded.mean);
    // q-where (getLocation) is left out with its unreadable judgement
    assert.deepEqual(Object.keys(summary.categories.queryType), ["countObjects", "countTimes", "getProperty", "getState", "listObjects"]);
    assert.deepEqual(Object.keys(summary.categories.predicateType), ["location", "moment", "property", "state"]);
    assert.deepEqual(Object.keys(summary.categories.ambiguous), ["ambiguous", "unambiguous"]);
    assert.deepEqual(Object.keys(summary.categories.conditions), ["1", "2"]);
    assert.deepEqual(Object.keys(summary.categories.combined), ["spatiotemporal"]);
    assert.equal(summary.categories.combined.spatiotemporal!.grounded.n, 1);
    // the empty answer misses its objects (q-times 1); q-state names no position, so in the
    // grounded match its microwave is not the true one either
    assert.equal(summary.errors.objectFalseNegatives!.answers, 2 / 5);
    assert.equal(readLines(join(out, "judgements.jsonl")).length, 6);
  });

  test("without --judge, free text fails with a hint and structured answers are scored (exit 1)", async () => {
    const home = temporaryDir();
    const out = join(home, "run");
    const result = await runCli(["score-tag", "--questions", writeJson(home, "q.json", questions), "--predictions", writeJson(home, "p.json", predictions()), "--out", out, "--similarity", "exact"], cliEnv(home));
    assert.equal(result.code, 1, result.stderr);
    const summary = readJson(join(out, "summary.json")) as SummaryShape;
    assert.equal(summary.counts.failed, 3);
    assert.equal(summary.counts.scored, 3);
    assert.deepEqual(summary.failures.map((f) => f.questionId).sort(), ["q-count", "q-state", "q-where"]);
    assert.match(summary.failures[0]!.error, /give --judge PROVIDER\/MODEL/);
    assert.match(result.stdout, /3 failed \(first: q-count: this answer is free text/);
  });

  test("resumes a partial run: only the questions not yet in judgements.jsonl are judged", async () => {
    const home = temporaryDir();
    const server = await scriptedJudge();
    try {
      const out = join(home, "run");
      const args = ["score-tag", "--questions", writeJson(home, "q.json", questions), "--predictions", writeJson(home, "p.json", predictions()), "--judge", "openai/judge", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache", "--similarity", "exact", "--concurrency", "1"];
      // exit 1: the judge cannot read q-where's answer (1 of 6, over a tenth)
      assert.equal((await runCli(args, cliEnv(home))).code, 1);
      const first = readJson(join(out, "metrics.json"));
      assert.equal(server.requests.length, 4);
      // a killed run: the first two judgements and half of the third
      const lines = readLines(join(out, "judgements.jsonl"));
      const judgedFirst = lines.slice(0, 2).map((l) => (JSON.parse(l) as { questionId: string }).questionId);
      writeFileSync(join(out, "judgements.jsonl"), `${lines.slice(0, 2).join("\n")}\n${lines[2]!.slice(0, 30)}`);
      const again = await runCli(args, cliEnv(home));
      assert.equal(again.code, 1, again.stderr);
      assert.deepEqual(readJson(join(out, "metrics.json")), first);
      const summary = readJson(join(out, "summary.json")) as SummaryShape;
      assert.equal(summary.counts.reused, 2);
      const calledAgain = server.requests.slice(4).map((r) => lastUserText(r).split("\nAnswer: ").at(-1)!.replace(/\nJSON:$/, ""));
      for (const id of judgedFirst) assert.ok(!calledAgain.includes(freeText[id]?.text ?? "-"), `${id} was not judged again`);
      assert.equal(readLines(join(out, "judgements.jsonl")).length, 6);
    } finally {
      await server.close();
    }
  });

  test("bad input exits 2 naming the file, record and field", async () => {
    const home = temporaryDir();
    const q = writeJson(home, "q.json", questions);
    const badAnswer = writeJson(home, "bad.json", [{ question_id: "q-count", answer: "3" }, { question_id: "q-list", answer: 42 }]);
    const r1 = await runCli(["score-tag", "--questions", q, "--predictions", badAnswer, "--out", join(home, "o1")], cliEnv(home));
    assert.equal(r1.code, 2);
    assert.match(r1.stderr, /bad\.json, record 2 \(id q-list\), field "answer"/);
    const badQuestions = writeJson(home, "badq.json", [{ ...questions[0], tags: { ...questions[0]!.tags, query_type: "countSpoons" } }]);
    const r2 = await runCli(["score-tag", "--questions", badQuestions, "--predictions", badAnswer, "--out", join(home, "o2")], cliEnv(home));
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /badq\.json, record 1 \(id q-count\), field "tags\.query_type"/);
    const some = writeJson(home, "some.json", [{ question_id: "q-count", answer: "3" }]);
    const r3 = await runCli(["score-tag", "--questions", q, "--predictions", some, "--out", join(home, "o3"), "--similarity", "exact"], cliEnv(home));
    assert.equal(r3.code, 2);
    assert.match(r3.stderr, /5 question\(s\) have no prediction \(first: q-list\)[\s\S]*--allow-missing/);
    const r4 = await runCli(["score-tag", "--questions", q, "--validate", "--out", join(home, "o4")], cliEnv(home));
    assert.equal(r4.code, 2);
    assert.match(r4.stderr, /--validate needs a judge/);
  });

  test("an over-long answer is refused at once naming its record; --max-answer-chars raises the limit", async () => {
    const home = temporaryDir();
    const q = writeJson(home, "q.json", questions);
    const long = predictions().map((p) => (p.question_id === "q-where" ? { ...p, answer: "the knife is in the drawer ".repeat(4000).slice(0, 100_000) } : p));
    const path = writeJson(home, "long.json", long);
    const started = performance.now();
    const refused = await runCli(["score-tag", "--questions", q, "--predictions", path, "--out", join(home, "o1"), "--similarity", "exact"], cliEnv(home));
    const elapsed = performance.now() - started;
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /long\.json, record 5 \(id q-where\), field "answer"[\s\S]*100000 characters, over the limit of 20000[\s\S]*--max-answer-chars/);
    const { loadTagPredictions } = await import("../../src/eval/index.js");
    const t0 = performance.now();
    await assert.rejects(loadTagPredictions(path), /over the limit/);
    assert.ok(performance.now() - t0 < 1000, "refused in under a second");
    assert.ok(elapsed < 20_000, `the CLI took ${elapsed} ms`);
    const raised = await runCli(["score-tag", "--questions", q, "--predictions", path, "--out", join(home, "o2"), "--similarity", "exact", "--max-answer-chars", "200000"], cliEnv(home));
    assert.equal(raised.code, 1, raised.stderr); // free text without a judge fails; the length is accepted
    assert.doesNotMatch(raised.stderr, /over the limit/);
  });

  test("predictions for unknown question ids are refused (exit 2), or left out and reported with --allow-unknown", async () => {
    const home = temporaryDir();
    const q = writeJson(home, "q.json", questions);
    const structured = questions.map((x) => ({ question_id: x.question_id, answer: x.structured_answer }));
    const path = writeJson(home, "p.json", [...structured, { question_id: "q-nowhere", answer: "3" }, { question_id: "q-elsewhere", answer: "4" }]);
    const refused = await runCli(["score-tag", "--questions", q, "--predictions", path, "--out", join(home, "o1"), "--similarity", "exact"], cliEnv(home));
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /p\.json[\s\S]*2 prediction\(s\) answer no question in the questions file \(first: q-nowhere\)[\s\S]*--allow-unknown/);
    const out = join(home, "o2");
    const allowed = await runCli(["score-tag", "--questions", q, "--predictions", path, "--out", out, "--similarity", "exact", "--allow-unknown"], cliEnv(home));
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /2 prediction\(s\) answer no question and were left out \(first: q-nowhere\)/);
    const summary = readJson(join(out, "summary.json")) as { counts: { unknownPredictions: number; scored: number }; unknownPredictionIds: string[] };
    assert.equal(summary.counts.unknownPredictions, 2);
    assert.equal(summary.counts.scored, 6);
    assert.deepEqual(summary.unknownPredictionIds, ["q-nowhere", "q-elsewhere"]);
  });

  test("--validate correlates the direct and the judge's scores through a loopback judge", async () => {
    const home = temporaryDir();
    // the judge returns a fixed structure whatever it reads: a poor judge, but a complete run
    const server = await startModelServer(() => openAiReply(JSON.stringify(byId.get("q-count")!.structured_answer)));
    try {
      const out = join(home, "validate");
      const result = await runCli(["score-tag", "--validate", "--questions", writeJson(home, "q.json", questions), "--judge", "openai/judge", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache", "--similarity", "exact", "--samples", "4", "--seed", "1"], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, 4);
      assert.match(result.stdout, /items: 4 \(0 failed\)/);
      assert.match(result.stdout, /grounded: Pearson r /);
      const written = readJson(join(out, "validation.json")) as { samples: number; disruptions: number; renderer: string; correlation: { n: number } };
      assert.equal(written.samples, 4);
      assert.equal(written.renderer, "generator-template");
      // the judge read the generator's template answers
      assert.ok(server.requests.some((r) => /\nAnswer: (There (is|are)|[A-Z]).*\.\nJSON:$/.test(lastUserText(r))));
      assert.equal(written.disruptions, 3);
      assert.equal(written.correlation.n, 4);
      assert.equal(readLines(join(out, "validation.jsonl")).length, 4);
    } finally {
      await server.close();
    }
  });
});

describe("eqa score-tag --batch", () => {
  test("the judge's asks go through OpenAI batches (a re-ask of an unreadable reply in a second round), none live; the scores are a live run's and the ledger bills each batch reply once at the batch price", async () => {
    const home = temporaryDir();
    const questionsFile = writeJson(home, "questions.json", questions);
    const predictionsFile = writeJson(home, "predictions.json", predictions());
    const args = (out: string, url: string, extra: string[] = []): string[] => ["score-tag", "--questions", questionsFile, "--predictions", predictionsFile, "--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`, "--out", out, "--no-cache", ...extra];

    const { out: liveOut, result: liveResult } = await liveRun();
    assert.equal(liveResult.code, 1, liveResult.stderr);

    const emulator = openAiBatchEmulator({ answer: (body) => judgeReply(lastUserText({ method: "POST", path: "/v1/chat/completions", headers: {}, rawBody: JSON.stringify(body), body })) });
    const server = await startModelServer((request, index) => emulator.script(request, index));
    try {
      const out = join(home, "batched");
      const result = await runCli(args(out, server.url, ["--batch", "--batch-poll-seconds", "0.05"]), cliEnv(home));
      assert.equal(result.code, 1, "the same unreadable answer as the live run: " + result.stderr);
      // round 1: the three free-text answers' first asks (structured and empty answers need no judge);
      // round 2: q-where's re-ask, made once the batch's reply to it could not be read
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [3, 1], result.stderr);
      assert.equal(emulator.live, 0);
      assert.match(result.stderr, /submitted batch batch_1: 3 request\(s\)/);

      assert.deepEqual(readJson(join(out, "metrics.json")), readJson(join(liveOut, "metrics.json")));
      const summary = readJson(join(out, "summary.json")) as SummaryShape & { config: { batch: { provider: string; ids: string[]; requests: number } }; cost: { roles: { role: string; calls: number; cacheHits: number; dollars: number }[] } };
      const liveSummary = readJson(join(liveOut, "summary.json")) as SummaryShape;
      assert.deepEqual(summary.scores, liveSummary.scores);
      assert.deepEqual(summary.counts, liveSummary.counts);
      assert.deepEqual([summary.config.batch.provider, summary.config.batch.ids, summary.config.batch.requests], ["openai", ["batch_1", "batch_2"], 4]);
      // the batches' four replies billed once each at half price; the run's reads of them are cache hits, not calls
      const batchRole = summary.cost.roles.find((r) => r.role === "judge (batch)")!;
      const judgeRole = summary.cost.roles.find((r) => r.role === "judge")!;
      assert.deepEqual([batchRole.calls, batchRole.cacheHits], [4, 0]);
      assert.deepEqual([judgeRole.calls, judgeRole.cacheHits], [0, 4]);
      const full = costOf("openai/gpt-4o", { promptTokens: 40, completionTokens: 12 })!;
      assert.equal(batchRole.dollars, Math.round(full * 0.5 * 1e9) / 1e9);

      // run again: q-where is asked again, all from the run's cache; nothing is submitted or called
      const again = await runCli(args(out, server.url, ["--batch", "--batch-poll-seconds", "0.05"]), cliEnv(home));
      assert.equal(again.code, 1, again.stderr);
      assert.equal(emulator.batches.size, 2);
      assert.equal(emulator.live, 0);
      assert.deepEqual((readJson(join(out, "summary.json")) as SummaryShape).scores, liveSummary.scores);
    } finally {
      await server.close();
    }
  });

  test("--batch without --judge, or with --validate, is refused (exit 2)", async () => {
    const home = temporaryDir();
    const questionsFile = writeJson(home, "questions.json", questions);
    const noJudge = await runCli(["score-tag", "--questions", questionsFile, "--predictions", writeJson(home, "predictions.json", predictions()), "--out", join(home, "a"), "--batch"], cliEnv(home));
    assert.equal(noJudge.code, 2, noJudge.stderr);
    assert.match(noJudge.stderr, /--judge/);
    const validate = await runCli(["score-tag", "--questions", questionsFile, "--validate", "--judge", "openai/gpt-4o", "--out", join(home, "b"), "--batch"], cliEnv(home));
    assert.equal(validate.code, 2, validate.stderr);
    assert.match(validate.stderr, /--batch is for scoring predictions/);
  });
});
