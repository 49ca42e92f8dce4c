import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startModelServer, type ModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { cliEnv, collect, runCli, startCli } from "../helpers/cli.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { anthropicBatchEmulator, openAiBatchEmulator, type BatchEmulator, type BatchFate } from "../helpers/provider-emulators.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const POLL = ["--batch-poll-seconds", "0.05"];

interface BatchFile {
  batches: { id: string; requests: number; round?: number; part?: { index: number; of: number }; loadedAt?: string; results?: { cached: number; notCached: number }; failures?: { customId: string; reason: string }[] }[];
}

/** Distinct questions of the benchmark (one request each), with predictions. */
function questionSet(home: string, n: number): { subset: string; predictions: string; questions: string[] } {
  const seen = new Set<string>();
  const picked = readRawBenchmark().filter((r) => !seen.has(r.question) && seen.add(r.question) && r.extra_answers === undefined).slice(0, n);
  const subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
  const predictions = join(home, "predictions.json");
  writeFileSync(predictions, JSON.stringify(picked.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
  return { subset, predictions, questions: picked.map((r) => r.question) };
}

/** Whether a judge request is about `question` (as LLM-Match's prompt writes it). */
const asks = (body: unknown, question: string): boolean => JSON.stringify(body).includes(JSON.stringify(`Question: ${question}\n`).slice(1, -1));

/** The emulated judge's mark of a question: fixed by its text, so a batch and a live call agree. */
function markOf(body: unknown, questions: readonly string[]): string {
  const i = questions.findIndex((q) => asks(body, q));
  return `Your mark: ${1 + (Math.max(i, 0) % 5)}`;
}

async function serve(emulator: BatchEmulator): Promise<ModelServer> {
  return startModelServer(emulator.script);
}

function scoreArgs(judge: string, url: string, files: { subset: string; predictions: string }, out: string, extra: string[] = []): string[] {
  return ["score", "--predictions", files.predictions, "--benchmark", openEqaBenchmarkFile, "--subset", files.subset, "--judge", judge, "--judge-base-url", url, "--out", out, ...extra];
}

describe("eqa score --batch beyond one batch's limits, with requests that fail and expire", () => {
  test("OpenAI: 12 requests over --batch-max-requests 5 go in three parts; an HTTP 500 and an expired request are read from the error file, their reasons recorded, asked live; the scores equal a live run's", async () => {
    const home = temporaryDir();
    const files = questionSet(home, 12);
    const fate = (body: unknown): BatchFate => (asks(body, files.questions[1]!) ? { status: 500, type: "server_error", message: "The server had an error while processing your request." } : asks(body, files.questions[7]!) ? "expired" : "ok");
    const emulator = openAiBatchEmulator({ answer: (body) => markOf(body, files.questions), fate, limits: { maxRequests: 5, maxBytes: 200_000_000 } });
    const server = await serve(emulator);
    try {
      const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
      const batched = join(home, "batched");
      const result = await runCli(scoreArgs("openai/gpt-4o", `${server.url}/v1`, files, batched, ["--batch", "--batch-max-requests", "5", ...POLL]), env);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [5, 5, 2]);
      assert.equal(emulator.live, 2, "the failed and the expired request were asked live, nothing else");
      assert.match(result.stderr, /submitted batch batch_1 \(part 1 of 3\): 5 request\(s\)/);
      const file = readJson(join(batched, "batch.json")) as BatchFile;
      assert.deepEqual(file.batches.map((b) => [b.id, b.round, b.part?.index, b.part?.of]), [["batch_1", 0, 1, 3], ["batch_2", 0, 2, 3], ["batch_3", 0, 3, 3]]);
      const reasons = file.batches.flatMap((b) => b.failures ?? []).map((f) => f.reason).sort();
      assert.deepEqual(reasons, ["HTTP 500: server_error: The server had an error while processing your request.", "batch_expired: This request could not be executed before the completion window expired."]);
      const failedIds = file.batches.flatMap((b) => b.failures ?? []).map((f) => f.customId);
      assert.ok(failedIds.every((id) => /^[a-f0-9]{64}$/.test(id)));

      const live = join(home, "live");
      const liveRun = await runCli(scoreArgs("openai/gpt-4o", `${server.url}/v1`, files, live, ["--no-cache"]), env);
      assert.equal(liveRun.code, 0, liveRun.stderr);
      assert.deepEqual(readJson(join(batched, "metrics.json")), readJson(join(live, "metrics.json")));
    } finally {
      await server.close();
    }
  });

  test("a submission refused before any part was sent says nothing was submitted; one refused after a part names that part, which the next run polls", async () => {
    const home = temporaryDir();
    const files = questionSet(home, 4);
    const emulator = openAiBatchEmulator({ answer: (body) => markOf(body, files.questions) });
    let uploads = 0;
    let refuse = (_n: number): boolean => true;
    const server = await startModelServer((request, index): ScriptedReply | Promise<ScriptedReply> => {
      if (request.method === "POST" && request.path === "/v1/files" && refuse(uploads++)) return { status: 503, body: { error: { message: "The service is temporarily unavailable", type: "server_error", param: null, code: null } } };
      return emulator.script(request, index);
    });
    try {
      const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
      const out = join(home, "run");
      const none = await runCli(scoreArgs("openai/gpt-4o", `${server.url}/v1`, files, out, ["--batch", ...POLL]), env);
      assert.equal(none.code, 2, none.stderr);
      assert.doesNotMatch(none.stderr, /names the batch submitted/);
      assert.match(none.stderr, /no batch of this run is waiting at the provider/);
      assert.equal(existsSync(join(out, "batch.json")), false);

      // the second part's upload fails: the first is named, and the next run polls it
      refuse = (n) => n === 2;
      emulator.release.value = false;
      const partly = await runCli(scoreArgs("openai/gpt-4o", `${server.url}/v1`, files, out, ["--batch", "--batch-max-requests", "2", ...POLL]), env);
      assert.equal(partly.code, 2, partly.stderr);
      assert.match(partly.stderr, /submitting part 2 of 2 of the batch/);
      assert.match(partly.stderr, /names the batch submitted and not yet read \(batch_1\)/);
      refuse = () => false;
      emulator.release.value = true;
      const resumed = await runCli(scoreArgs("openai/gpt-4o", `${server.url}/v1`, files, out, ["--batch", "--batch-max-requests", "2", ...POLL]), env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /resuming batch batch_1 \(part 1 of 2\)/);
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [2, 2]);
      assert.equal(emulator.live, 0);
    } finally {
      await server.close();
    }
  });
});

describe("eqa score --batch with Anthropic, stopped while its parts wait", () => {
  test("a resumed run polls every part batch.json names, submits no other, and asks the errored and expired requests live as an uninterrupted run does; the scores equal a live run's", async () => {
    const home = temporaryDir();
    const files = questionSet(home, 6);
    const fate = (body: unknown): BatchFate => (asks(body, files.questions[0]!) ? { status: 529, type: "overloaded_error", message: "Overloaded" } : asks(body, files.questions[4]!) ? "expired" : "ok");
    const emulator = anthropicBatchEmulator({ answer: (body) => markOf(body, files.questions), fate, release: false });
    const server = await serve(emulator);
    try {
      const env = cliEnv(home, { ANTHROPIC_API_KEY: "sk-test" });
      const out = join(home, "batched");
      const args = scoreArgs("anthropic/claude-sonnet-4-5", server.url, files, out, ["--batch", "--batch-max-requests", "3", "--no-cache", ...POLL]);
      const child = startCli(args, env);
      const ended = collect(child);
      const batchFile = join(out, "batch.json");
      const bothNamed = (): boolean => existsSync(batchFile) && (readJson(batchFile) as BatchFile).batches.length === 2;
      for (let i = 0; i < 600 && !bothNamed(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(bothNamed(), "both parts were named in batch.json before the wait");
      child.kill("SIGKILL");
      assert.equal((await ended).signal, "SIGKILL");

      emulator.release.value = true;
      const result = await runCli(args, env);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /resuming batch msgbatch_1 \(part 1 of 2\) \(3 request\(s\)/);
      assert.match(result.stderr, /resuming batch msgbatch_2 \(part 2 of 2\) \(3 request\(s\)/);
      assert.equal(emulator.batches.size, 2, "no further batch: the errored and expired requests are not batched again");
      assert.equal(emulator.live, 2);
      const file = readJson(batchFile) as BatchFile;
      assert.deepEqual(file.batches.flatMap((b) => b.failures ?? []).map((f) => f.reason).sort(), ["errored: overloaded_error: Overloaded", "expired: the batch ended (24 hours) before this request was processed"]);
      assert.match(result.stderr, /2 of 3 replies cached, 1 to be asked live \(1 errored; each reason in batch\.json\)/);

      const live = join(home, "live");
      const liveRun = await runCli(scoreArgs("anthropic/claude-sonnet-4-5", server.url, files, live, ["--no-cache"]), env);
      assert.equal(liveRun.code, 0, liveRun.stderr);
      assert.deepEqual(readJson(join(out, "metrics.json")), readJson(join(live, "metrics.json")));
    } finally {
      await server.close();
    }
  });
});

describe("eqa rm score --batch beyond one batch's size", () => {
  test("requests with frames are split by --batch-max-mb: every part's file is within the limit, and the scores equal a live run's", async () => {
    const home = temporaryDir();
    const framesRoot = join(home, "frames");
    await writeRgbEpisode(join(framesRoot, "hm3d-v0", "000-hm3d-a"), 6, 32, 24);
    const instances = join(home, "instances.jsonl");
    const questions = ["What colour is the sofa?", "Is the door open?", "Where is the lamp?", "How many chairs are there?", "Is the window closed?"];
    writeFileSync(
      instances,
      questions.map((question, i) => JSON.stringify({ id: `i-${i}`, question, predicted_answer: "An answer.", reasoning_trace: ["I look around."], episode_history: "hm3d-v0/000-hm3d-a", ground_truth_score: 7 })).join("\n") + "\n",
    );
    const maxBytes = 12_000;
    const score = (body: unknown): string => {
      const i = questions.findIndex((q) => JSON.stringify(body).includes(q));
      return `<critique>\nThe trace matches the frames.\n</critique>\n<score>${3 + (Math.max(i, 0) % 5)}</score>`;
    };
    const emulator = openAiBatchEmulator({ answer: score, limits: { maxRequests: 50_000, maxBytes } });
    const server = await serve(emulator);
    try {
      const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
      const args = (out: string, extra: string[]): string[] => ["rm", "score", "--instances", instances, "--frames", framesRoot, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--samples", "2", "--out", out, "--no-cache", ...extra];
      const batched = join(home, "batched");
      const result = await runCli(args(batched, ["--batch", "--batch-max-mb", String(maxBytes / 1e6), ...POLL]), env);
      assert.equal(result.code, 0, result.stderr);
      const parts = [...emulator.batches.values()];
      assert.ok(parts.length >= 2, `split into ${parts.length} part(s)`);
      assert.equal(parts.reduce((n, p) => n + p.customIds.length, 0), 10);
      assert.ok(parts.every((p) => p.bytes <= maxBytes), parts.map((p) => p.bytes).join(", "));
      assert.equal(emulator.live, 0);
      const live = join(home, "live");
      assert.equal((await runCli(args(live, []), env)).code, 0);
      assert.deepEqual(readJson(join(batched, "scores.json")), readJson(join(live, "scores.json")));
    } finally {
      await server.close();
    }
  });
});
