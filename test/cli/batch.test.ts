import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anthropicReply, openAiReply, startModelServer, type ModelServer, type ReceivedRequest, type ScriptedReply } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { costOf, readCallLedger } from "../../src/models/index.js";

const benchmark = readRawBenchmark();
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const readLines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);
const POLL = ["--batch-poll-seconds", "0.05"];
/** Questions asked twice with the same answers make the same request: a batch holds each once. */
const DISTINCT_REQUESTS = new Set(benchmark.map((r) => JSON.stringify([r.question, r.answer, r.extra_answers ?? null]))).size;

/** A predictions file with an answer for every question of the benchmark. */
function writePredictions(home: string): string {
  const path = join(home, "predictions.json");
  writeFileSync(path, JSON.stringify(benchmark.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
  return path;
}

interface OpenAiBatchServer {
  server: ModelServer;
  /** Batches created, by id: their requests' custom_ids. */
  batches: Map<string, string[]>;
  /** While false, every batch stays in progress. */
  release: { value: boolean };
}

interface BatchLine {
  custom_id: string;
  body: { messages: { role: string; content: string }[] };
}

/** OpenAI's files and batches endpoints: a batch completes at its second poll, each request answered by `reply` (marked 4 by default). */
async function startOpenAiBatchServer(release = true, reply: (line: BatchLine) => string = () => "Your mark: 4"): Promise<OpenAiBatchServer> {
  const files = new Map<string, string[]>();
  const batches = new Map<string, string[]>();
  const lineOf = new Map<string, BatchLine>();
  const polls = new Map<string, number>();
  const state = { value: release };
  const server = await startModelServer((request: ReceivedRequest): ScriptedReply => {
    const { method, path } = request;
    if (method === "POST" && path === "/v1/files") {
      assert.match(String(request.headers["content-type"]), /^multipart\/form-data; boundary=/);
      assert.match(request.rawBody, /name="purpose"\r\n\r\nbatch\r\n/);
      const lines = request.rawBody.split(/\r?\n/).filter((l) => l.startsWith('{"custom_id"'));
      const id = `file-${files.size + 1}`;
      files.set(id, lines);
      return { body: { id, object: "file", purpose: "batch", bytes: request.rawBody.length } };
    }
    if (method === "POST" && path === "/v1/batches") {
      const body = request.body as { input_file_id: string; endpoint: string; completion_window: string };
      assert.equal(body.endpoint, "/v1/chat/completions");
      assert.equal(body.completion_window, "24h");
      const id = `batch_${batches.size + 1}`;
      const lines = (files.get(body.input_file_id) ?? []).map((l) => JSON.parse(l) as BatchLine);
      for (const line of lines) lineOf.set(line.custom_id, line);
      batches.set(id, lines.map((l) => l.custom_id));
      return { body: { id, object: "batch", status: "validating", input_file_id: body.input_file_id } };
    }
    const batch = /^\/v1\/batches\/([^/]+)$/.exec(path);
    if (method === "GET" && batch) {
      const id = batch[1]!;
      const total = batches.get(id)?.length ?? 0;
      const n = (polls.get(id) ?? 0) + 1;
      polls.set(id, n);
      const done = state.value && n >= 2;
      return {
        body: {
          id,
          object: "batch",
          status: done ? "completed" : "in_progress",
          output_file_id: done ? `out-${id}` : null,
          request_counts: { total, completed: done ? total : 0, failed: 0 },
        },
      };
    }
    const content = /^\/v1\/files\/out-([^/]+)\/content$/.exec(path);
    if (method === "GET" && content) {
      const ids = batches.get(content[1]!) ?? [];
      const lines = ids.map((customId) => JSON.stringify({ id: `req-${customId.slice(0, 8)}`, custom_id: customId, response: { status_code: 200, body: openAiReply(reply(lineOf.get(customId)!)).body }, error: null }));
      return { body: `${lines.join("\n")}\n` };
    }
    if (method === "POST" && path === "/v1/chat/completions") return openAiReply("Your mark: 4");
    return { status: 404, body: { error: { message: `no route ${method} ${path}` } } };
  });
  return { server, batches, release: state };
}

function scoreArgs(predictions: string, out: string, server: ModelServer, extra: string[] = []): string[] {
  return ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--batch", ...POLL, ...extra];
}

describe("eqa score --batch", () => {
  test("the whole OpenEQA benchmark (1,636 questions) is judged through one OpenAI batch and recorded as a live run is", async () => {
    const home = temporaryDir();
    const predictions = writePredictions(home);
    const { server, batches } = await startOpenAiBatchServer();
    try {
      const out = join(home, "run");
      const result = await runCli(scoreArgs(predictions, out, server), cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(batches.size, 1);
      assert.equal(DISTINCT_REQUESTS, 1623);
      assert.equal([...batches.values()][0]!.length, DISTINCT_REQUESTS);
      assert.equal(server.requests.filter((r) => r.path.endsWith("/chat/completions")).length, 0);
      const summary = readJson(join(out, "summary.json")) as { counts: { scored: number; failed: number }; llmMatch: { overall: { mean: number } }; config: { batch: { provider: string; ids: string[]; requests: number } }; usage: { judgements: { calls: number; cacheHits: number } } };
      assert.equal(summary.counts.scored, 1636);
      assert.equal(summary.counts.failed, 0);
      assert.equal(summary.llmMatch.overall.mean, 75);
      const usage = { calls: DISTINCT_REQUESTS, promptTokens: 10 * DISTINCT_REQUESTS, completionTokens: 3 * DISTINCT_REQUESTS, thinkingTokens: 0 };
      assert.deepEqual(summary.config.batch, { provider: "openai", ids: ["batch_1"], requests: DISTINCT_REQUESTS, usage });
      // the batch's replies are billed at half the listed price, each once; the run's own reads of them are cache hits, not calls
      const full = costOf("openai/gpt-4o", { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens })!;
      const roles = (summary as unknown as { cost: { roles: { role: string; calls: number; cacheHits: number; dollars: number }[]; total: { calls: number; promptTokens: number; dollars: number } } }).cost;
      assert.deepEqual(roles.roles.map((r) => [r.role, r.calls, r.cacheHits, r.dollars]), [["judge (batch)", DISTINCT_REQUESTS, 0, Math.round(full * 0.5 * 1e9) / 1e9], ["judge", 0, 1636, 0]]);
      assert.equal(roles.total.calls, DISTINCT_REQUESTS);
      assert.equal(roles.total.promptTokens, usage.promptTokens);
      assert.equal(roles.total.dollars, Math.round(full * 0.5 * 1e9) / 1e9);
      assert.equal(readLines(join(out, "judgements.jsonl")).length, 1636);
      assert.equal(Object.keys(readJson(join(out, "metrics.json")) as object).length, 1636);
      const file = readJson(join(out, "batch.json")) as { batches: { id: string; provider: string; requests: number; loadedAt?: string; results: { cached: number } }[] };
      assert.equal(file.batches[0]!.id, "batch_1");
      assert.equal(file.batches[0]!.results.cached, DISTINCT_REQUESTS);
      assert.match(result.stderr, new RegExp(`submitted batch batch_1: ${DISTINCT_REQUESTS} request\\(s\\)`));
      assert.match(result.stderr, new RegExp(`batch batch_1: completed, ${DISTINCT_REQUESTS} of ${DISTINCT_REQUESTS} done`));

      // run again: everything is judged, nothing is submitted
      const again = await runCli(scoreArgs(predictions, out, server), cliEnv(home));
      assert.equal(again.code, 0, again.stderr);
      assert.equal(batches.size, 1);
    } finally {
      await server.close();
    }
  });

  test("a process killed (SIGKILL) while it waits is resumed by the same command: it polls the same batch and submits no other", async () => {
    const home = temporaryDir();
    const predictions = writePredictions(home);
    const { server, batches, release } = await startOpenAiBatchServer(false);
    try {
      const out = join(home, "run");
      const args = scoreArgs(predictions, out, server, ["--no-cache"]);
      const batchFile = join(out, "batch.json");
      // killed once batch.json is written, while it waits
      await killMidway(args, cliEnv(home), () => existsSync(batchFile));
      assert.equal(batches.size, 1);
      const pendingFile = readJson(batchFile) as { batches: { id: string; loadedAt?: string }[] };
      assert.equal(pendingFile.batches[0]!.id, "batch_1");
      assert.equal(pendingFile.batches[0]!.loadedAt, undefined);

      release.value = true;
      const result = await runCli(args, cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, new RegExp(`resuming batch batch_1 \\(${DISTINCT_REQUESTS} request\\(s\\)`));
      assert.equal(batches.size, 1, "no second batch was created");
      assert.equal(server.requests.filter((r) => r.method === "POST" && r.path === "/v1/batches").length, 1);
      assert.equal(server.requests.filter((r) => r.path.endsWith("/chat/completions")).length, 0);
      const summary = readJson(join(out, "summary.json")) as { counts: { scored: number }; config: { cache: string } };
      assert.equal(summary.counts.scored, 1636);
      assert.equal(summary.config.cache, join(out, "batch-cache.sqlite"));
    } finally {
      await server.close();
    }
  });

  test("Anthropic message batches: the requests go in one POST, results are read from results_url, an errored request is asked live", async () => {
    const home = temporaryDir();
    const predictions = writePredictions(home);
    const ids = benchmark.slice(0, 4).map((r) => r.question_id);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(ids));
    let submitted: { custom_id: string; params: Record<string, unknown> }[] = [];
    let polls = 0;
    const server = await startModelServer((request) => {
      const { method, path } = request;
      if (method === "POST" && path === "/v1/messages/batches") {
        submitted = (request.body as { requests: typeof submitted }).requests;
        return { body: { id: "msgbatch_1", type: "message_batch", processing_status: "in_progress" } };
      }
      if (method === "GET" && path === "/v1/messages/batches/msgbatch_1") {
        polls++;
        const ended = polls >= 2;
        return {
          body: {
            id: "msgbatch_1",
            type: "message_batch",
            processing_status: ended ? "ended" : "in_progress",
            request_counts: { processing: ended ? 0 : submitted.length, succeeded: ended ? submitted.length - 1 : 0, errored: ended ? 1 : 0, canceled: 0, expired: 0 },
            results_url: ended ? `http://${request.headers.host}/v1/messages/batches/msgbatch_1/results` : null,
          },
        };
      }
      if (method === "GET" && path === "/v1/messages/batches/msgbatch_1/results") {
        const lines = submitted.map((r, i) =>
          JSON.stringify(i === 0 ? { custom_id: r.custom_id, result: { type: "errored", error: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } } } : { custom_id: r.custom_id, result: { type: "succeeded", message: anthropicReply("Your mark: 5").body } }),
        );
        return { body: lines.join("\n") };
      }
      if (method === "POST" && path === "/v1/messages") return anthropicReply("Your mark: 3");
      return { status: 404, body: { error: { message: `no route ${method} ${path}` } } };
    });
    try {
      const out = join(home, "run");
      const result = await runCli(
        ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "anthropic/claude-sonnet-4-5", "--judge-base-url", server.url, "--out", out, "--batch", ...POLL],
        cliEnv(home, { ANTHROPIC_API_KEY: "sk-test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(submitted.length, 4);
      for (const r of submitted) {
        assert.match(r.custom_id, /^[a-f0-9]{64}$/);
        assert.equal(r.params.model, "claude-sonnet-4-5");
        assert.equal(r.params.max_tokens, 32);
      }
      const creations = server.requests.filter((r) => r.method === "POST" && r.path === "/v1/messages/batches");
      assert.equal(creations.length, 1);
      assert.equal(creations[0]!.headers["x-api-key"], "sk-test");
      // the errored request is not sent in a second batch: the final run asks it live
      assert.equal(server.requests.filter((r) => r.path === "/v1/messages").length, 1);
      assert.match(result.stderr, /batch msgbatch_1: 3 of 4 replies cached, 1 to be asked live/);
      const metrics = readJson(join(out, "metrics.json")) as Record<string, number>;
      assert.deepEqual(Object.values(metrics).sort(), [3, 5, 5, 5]);
    } finally {
      await server.close();
    }
  });

  test("robust mode: the re-ask of a reply without a mark goes in a second batch, and the run makes no live call", async () => {
    const home = temporaryDir();
    const predictions = writePredictions(home);
    const picked = benchmark.slice(0, 3);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
    const unsure = picked[1]!;
    // the first ask of one question gets no mark; its re-ask (the conversation continued) gets 2
    const { server, batches } = await startOpenAiBatchServer(true, (line) => {
      const first = line.body.messages[0]!.content;
      if (!first.includes(`Question: ${unsure.question}\n`)) return "Your mark: 4";
      return line.body.messages.length === 1 ? "The answer seems fine" : "Your mark: 2";
    });
    try {
      const out = join(home, "run");
      const result = await runCli(scoreArgs(predictions, out, server, ["--subset", subset]), cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual([...batches.values()].map((ids) => ids.length), [3, 1]);
      assert.equal(server.requests.filter((r) => r.path.endsWith("/chat/completions")).length, 0);
      const metrics = readJson(join(out, "metrics.json")) as Record<string, number>;
      assert.equal(metrics[unsure.question_id], 2);
      assert.equal(metrics[picked[0]!.question_id], 4);
      const summary = readJson(join(out, "summary.json")) as { config: { batch: { ids: string[]; requests: number } } };
      assert.deepEqual(summary.config.batch, { provider: "openai", ids: ["batch_1", "batch_2"], requests: 4, usage: { calls: 4, promptTokens: 40, completionTokens: 12, thinkingTokens: 0 } });
      // each batch reply is in the ledger under the question it was asked for, as a live call is (the re-ask too)
      const batched = readCallLedger(out).filter((e) => e.mode === "batch");
      assert.deepEqual(batched.map((e) => e.item).sort(), [...picked.map((r) => r.question_id), unsure.question_id].sort());
    } finally {
      await server.close();
    }
  });

  test("a Google judge is refused with exit 2, naming the providers that have a batch API", async () => {
    const home = temporaryDir();
    const predictions = writePredictions(home);
    const result = await runCli(
      ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--judge", "google/gemini-2.5-flash", "--judge-base-url", "http://127.0.0.1:9", "--out", join(home, "run"), "--batch"],
      cliEnv(home),
    );
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--batch is not supported for google\/gemini-2\.5-flash/);
    assert.match(result.stderr, /openai\/… .* and anthropic\/… models/);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  });
});

/** Reward-model instances (ground truth 7) asking these questions of one HM3D episode of six frames. */
async function rewardInstances(questions: string[], extra: Record<string, string> = {}): Promise<{ home: string; framesRoot: string; instances: string }> {
  const home = temporaryDir();
  const framesRoot = join(home, "frames");
  await writeRgbEpisode(join(framesRoot, "hm3d-v0", "000-hm3d-a"), 6, 32, 24);
  const instances = join(home, "instances.jsonl");
  writeFileSync(
    instances,
    questions.map((question, i) => JSON.stringify({ id: `i-${i}`, question, predicted_answer: "An answer.", reasoning_trace: ["I look around."], episode_history: "hm3d-v0/000-hm3d-a", ground_truth_score: 7, ...extra })).join("\n") + "\n",
  );
  return { home, framesRoot, instances };
}

describe("eqa rm score --batch", () => {
  test("every sample of every instance goes in one batch; scores are recorded as a live run records them", async () => {
    const { home, framesRoot, instances } = await rewardInstances(["What colour is the sofa?", "Is the door open?"]);
    const { server, batches } = await startOpenAiBatchServer(true, () => "<critique>\nThe trace matches the frames.\n</critique>\n<score>7</score>");
    try {
      const out = join(home, "run");
      const args = ["rm", "score", "--instances", instances, "--frames", framesRoot, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--samples", "2", "--out", out, "--no-cache", "--batch", ...POLL];
      const result = await runCli(args, cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual([...batches.values()].map((ids) => ids.length), [4]);
      assert.equal(server.requests.filter((r) => r.path.endsWith("/chat/completions")).length, 0);
      assert.deepEqual(readJson(join(out, "scores.json")), { "i-0": 7, "i-1": 7 });
      assert.equal(readLines(join(out, "evaluations.jsonl")).length, 2);
      const summary = readJson(join(out, "summary.json")) as { config: { batch: { ids: string[]; requests: number } } };
      assert.deepEqual(summary.config.batch, { provider: "openai", ids: ["batch_1"], requests: 4, usage: { calls: 4, promptTokens: 40, completionTokens: 12, thinkingTokens: 0 } });
      // the ledger: each batch reply once, with the keyframes it was sent, then the run's reads of them as cache hits
      const ledger = readCallLedger(out);
      const batched = ledger.filter((e) => e.mode === "batch");
      assert.deepEqual([batched.length, ledger.filter((e) => e.cached).length, ledger.length], [4, 4, 8]);
      assert.ok(batched.every((e) => e.role === "reward model" && e.images > 0 && !e.cached));
      assert.deepEqual(batched.map((e) => e.item).sort(), ["i-0", "i-0", "i-1", "i-1"]);
      const cost = (summary as unknown as { cost: { roles: { role: string; calls: number; cacheHits: number; images: number }[] } }).cost;
      assert.deepEqual(cost.roles.map((r) => [r.role, r.calls, r.cacheHits, r.images]), [["reward model (batch)", 4, 0, batched.reduce((n, e) => n + e.images, 0)], ["reward model", 0, 4, 0]]);
    } finally {
      await server.close();
    }
  });
});

describe("eqa rm bench --batch", () => {
  test("the K samples of every instance go in one batch; the benchmark reads them as a live run's, and a rerun sends nothing", async () => {
    const { home, framesRoot, instances } = await rewardInstances(["What colour is the sofa?", "Is the door open?", "How many chairs are there?"], { environment: "HM3D" });
    const { server, batches } = await startOpenAiBatchServer(true, () => "<critique>\nThe trace matches the frames.\n</critique>\n<score>6</score>");
    try {
      const out = join(home, "run");
      const args = ["rm", "bench", "--instances", instances, "--frames", framesRoot, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--max-k", "2", "--resamples", "50", "--out", out, "--no-cache", "--batch", ...POLL];
      const result = await runCli(args, cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual([...batches.values()].map((ids) => ids.length), [6]);
      assert.equal(server.requests.filter((r) => r.path.endsWith("/chat/completions")).length, 0, "no sample is asked live");
      const bench = readJson(join(out, "bench.json")) as { counts: { samples: number; failedSamples: number } };
      assert.deepEqual([bench.counts.samples, bench.counts.failedSamples], [6, 0]);
      const ledger = readCallLedger(out);
      assert.deepEqual([ledger.filter((e) => e.mode === "batch").length, ledger.filter((e) => e.cached).length], [6, 6]);
      const requests = server.requests.length;
      const again = await runCli(args, cliEnv(home));
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, requests, "a finished benchmark submits no batch");
    } finally {
      await server.close();
    }
  });
});
