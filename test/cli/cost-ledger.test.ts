import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BATCH_PRICE_FACTOR, CALLS_FILE, readCallLedger, type CallEntry } from "../../src/models/index.js";
import { buildTagDataset, maskSightings } from "../../src/generate/index.js";
import { loadTrajectoryLog } from "../../src/data/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { lastUserText, openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";
import { openAiBatchEmulator, type BatchFate } from "../helpers/provider-emulators.js";
import { openEqaBenchmarkFile, projectRoot, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { copyDemo, copyRecording } from "../helpers/recordings.js";

/** The cost section of a summary, as written. */
interface Cost {
  roles: { role: string; model: string; calls: number; cacheHits: number; failed: number; promptTokens: number; completionTokens: number; images: number; dollars: number | null }[];
  total: { calls: number; cacheHits: number; failed: number; promptTokens: number; completionTokens: number; images: number; dollars: number | null };
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const chatRequests = (server: ModelServer): ReceivedRequest[] => server.requests.filter((r) => r.path.endsWith("/chat/completions"));
const imagesIn = (request: ReceivedRequest): number => (JSON.stringify(request.body).match(/"type":"image_url"/g) ?? []).length;
const promptTokensOf = (requests: readonly ReceivedRequest[]): number => requests.length * 10;
const SMALL = ["--width", "64", "--height", "48", "--max-steps", "30", "--no-cache"];

/** The ledger's calls of `role` that reached an endpoint (not cache hits), live ones unless said. */
function sent(entries: readonly CallEntry[], role: string, mode: "live" | "batch" = "live"): CallEntry[] {
  return entries.filter((e) => e.role === role && e.mode === mode && !e.cached);
}

/** The row of `role` in a printed cost table: calls, failed, cache hits, prompt, completion, thinking tokens, images, dollars. */
function tableRow(stdout: string, role: string): string[] | undefined {
  // the total's row has no model
  if (role === "total") return stdout.split("\n").find((l) => /^\s+total\s+\d/.test(l))?.trim().split(/\s{2,}/).slice(1);
  const line = stdout.split("\n").find((l) => new RegExp(`^\\s+${role.replace(/[()]/g, "\\$&")}\\s+\\S+/`).test(l));
  return line?.trim().split(/\s{2,}/).slice(2);
}

describe("one ledger of model calls: every request a server received, once, in the ledger and the cost", () => {
  test("eqa explore --judge: the EAC judge's calls (each with the last frame) are in the ledger and the cost table beside LLM-Match's", async () => {
    const home = temporaryDir();
    const episodes = join(home, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "e1", question: "Is there a bed?", answer: "Yes", scene: "home-0" }]));
    const agent = await startModelServer(() => openAiReply("Yes."));
    // EAC is the judge's request with the last frame; LLM-Match's has none
    const judge = await startModelServer((request) => openAiReply(imagesIn(request) > 0 ? "1, 4" : "Your mark: 4"));
    try {
      const out = join(home, "run");
      const result = await runCli(
        ["explore", "--episodes", episodes, "--agent", "frontier", "--em-agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${agent.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${judge.url}/v1`, "--out", out, ...SMALL],
        cliEnv(home, { OPENAI_API_KEY: "sk-test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      const judged = chatRequests(judge);
      assert.equal(judged.length, 2, "an LLM-Match and an EAC call");
      assert.equal(judged.map(imagesIn).reduce((a, b) => a + b, 0), 1);
      const ledger = readCallLedger(out);
      assert.equal(sent(ledger, "judge").length, judged.length);
      assert.equal(sent(ledger, "judge").reduce((n, e) => n + e.images, 0), 1);
      assert.ok(sent(ledger, "judge").every((e) => e.item === "e1" && e.endpoint === `${judge.url}/v1` && e.status === "ok"));
      assert.equal(sent(ledger, "agent").length, chatRequests(agent).length);
      const { cost, judged: judgedSummary } = readJson<{ cost: Cost; judged: { usage: { calls: number; images: number } } }>(join(out, "summary.json"));
      assert.deepEqual([judgedSummary.usage.calls, judgedSummary.usage.images], [2, 1], "the judge's usage counts its EAC call too");
      const row = cost.roles.find((r) => r.role === "judge")!;
      assert.deepEqual([row.calls, row.images, row.promptTokens], [2, 1, promptTokensOf(judged)]);
      assert.equal(cost.total.calls, judged.length + chatRequests(agent).length);
      assert.deepEqual(tableRow(result.stdout, "judge")?.slice(0, 1).concat(tableRow(result.stdout, "judge")!.slice(6, 7)), ["2", "1"]);
    } finally {
      await agent.close();
      await judge.close();
    }
  });

  test("eqa explore with an agent of the user's own: its model/complete calls are costed under the agent's role", async () => {
    const home = temporaryDir();
    const episodes = join(home, "episodes.json");
    writeFileSync(episodes, JSON.stringify(["a1", "a2"].map((id) => ({ question_id: id, question: "What is by the window?", answer: "an armchair", scene: "home-0" }))));
    const model = await startModelServer(() => openAiReply("a green armchair"));
    try {
      const out = join(home, "run");
      const result = await runCli(["explore", "--episodes", episodes, "--agent", join(projectRoot, "examples", "agents", "active-module.ts"), "--model", "openai/gpt-4o", "--model-base-url", `${model.url}/v1`, "--out", out, ...SMALL], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 0, result.stderr);
      const requests = chatRequests(model);
      assert.equal(requests.length, 2, "one model/complete call per episode");
      const ledger = readCallLedger(out);
      assert.equal(sent(ledger, "agent").length, requests.length);
      assert.deepEqual(sent(ledger, "agent").map((e) => e.item).sort(), ["a1", "a2"]);
      assert.equal(sent(ledger, "agent").reduce((n, e) => n + e.images, 0), requests.map(imagesIn).reduce((a, b) => a + b, 0));
      const cost = readJson<{ cost: Cost }>(join(out, "summary.json")).cost;
      assert.deepEqual(cost.roles.map((r) => [r.role, r.model, r.calls, r.promptTokens]), [["agent", "openai/gpt-4o", 2, promptTokensOf(requests)]]);
      assert.ok(cost.total.dollars !== null && cost.total.dollars > 0);
      assert.deepEqual(tableRow(result.stdout, "agent")?.[0], "2");
    } finally {
      await model.close();
    }
  });

  test("eqa answer-tag: the agent's model/complete calls are in its ledger, its summary's cost and the table it prints", async () => {
    const home = temporaryDir();
    const recording = join(home, "rec");
    await copyRecording({ seed: 2, tasks: ["cool"], width: 96, height: 72 }, recording);
    const log = await loadTrajectoryLog(join(recording, "trajectory.json"));
    const { questions } = buildTagDataset([{ log, sightings: await maskSightings(log, join(recording, "frames")), episodeHistory: "rec/frames" }], { perTrajectory: 3, seed: 0 });
    assert.ok(questions.length >= 2);
    const questionsFile = join(home, "questions.json");
    await writeFile(questionsFile, JSON.stringify(questions));
    const agentFile = join(home, "agent.mjs");
    await writeFile(
      agentFile,
      `export function initialize(params) { return { name: "asker", version: "1", supports: [params.task] }; }
export async function answer(params, context) {
  const reply = await context.complete({ messages: [{ role: "user", content: [{ type: "frame", index: 0 }, { type: "text", text: params.question.text }] }], maxTokens: 16 });
  return { answer: reply.text };
}
`,
    );
    const model = await startModelServer(() => openAiReply("two"));
    try {
      const out = join(home, "answers");
      const result = await runCli(["answer-tag", "--questions", questionsFile, "--agent", agentFile, "--model", "openai/gpt-4o-mini", "--model-base-url", `${model.url}/v1`, "--out", out, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 0, result.stderr);
      const requests = chatRequests(model);
      assert.equal(requests.length, questions.length);
      const ledger = readCallLedger(out);
      assert.equal(sent(ledger, "agent").length, requests.length);
      assert.deepEqual(sent(ledger, "agent").map((e) => e.item).sort(), questions.map((q) => q.question_id).sort());
      assert.equal(sent(ledger, "agent").reduce((n, e) => n + e.images, 0), requests.length);
      const cost = readJson<{ cost: Cost }>(join(out, "summary.json")).cost;
      assert.deepEqual(cost.roles.map((r) => [r.role, r.calls, r.images, r.promptTokens]), [["agent", requests.length, requests.length, promptTokensOf(requests)]]);
      assert.equal(tableRow(result.stdout, "agent")?.[0], String(requests.length));
    } finally {
      await model.close();
    }
  });

  test("eqa score --batch: each request answered is billed once (batch replies at the batch price), the run's reads of them are cache hits", async () => {
    const home = temporaryDir();
    const seen = new Set<string>();
    const picked = readRawBenchmark().filter((r) => !seen.has(r.question) && seen.add(r.question) && r.extra_answers === undefined).slice(0, 8);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
    const predictions = join(home, "predictions.json");
    writeFileSync(predictions, JSON.stringify(picked.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
    const failing = JSON.stringify(`Question: ${picked[2]!.question}\n`).slice(1, -1);
    const fate = (body: unknown): BatchFate => (JSON.stringify(body).includes(failing) ? { status: 500, type: "server_error", message: "The server had an error while processing your request." } : "ok");
    const emulator = openAiBatchEmulator({ answer: () => "Your mark: 4", fate });
    const server = await startModelServer(emulator.script);
    try {
      const out = join(home, "run");
      const result = await runCli(
        ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--batch", "--batch-poll-seconds", "0.05"],
        cliEnv(home, { OPENAI_API_KEY: "sk-test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      const batched = [...emulator.batches.values()].flatMap((b) => b.customIds).length;
      assert.deepEqual([batched, emulator.live], [8, 1], "one request failed in the batch and was asked live");
      const ledger = readCallLedger(out);
      assert.equal(sent(ledger, "judge", "batch").length, batched - 1);
      assert.equal(sent(ledger, "judge").length, emulator.live);
      const cost = readJson<{ cost: Cost }>(join(out, "summary.json")).cost;
      const rows = Object.fromEntries(cost.roles.map((r) => [r.role, r]));
      assert.deepEqual([rows["judge (batch)"]?.calls, rows["judge (batch)"]?.cacheHits, rows.judge?.calls, rows.judge?.cacheHits], [7, 0, 1, 7]);
      assert.deepEqual([cost.total.calls, cost.total.promptTokens], [8, 8 * 10]);
      const live = (8 * 10 * 2.5 + 8 * 3 * 10) / 8 / 1e6;
      assert.equal(cost.total.dollars, Math.round((7 * live * BATCH_PRICE_FACTOR + live) * 1e9) / 1e9);
      assert.deepEqual(tableRow(result.stdout, "total")?.slice(0, 4), ["8", "0", "7", "80"]);
    } finally {
      await server.close();
    }
  });

  test("eqa run: one cost table with the total of both stages, and the summary's cost, from the ledger", async () => {
    const home = temporaryDir();
    const benchmark = join(home, "benchmark.json");
    writeFileSync(benchmark, JSON.stringify(readRawBenchmark().slice(0, 3)));
    const agent = await startModelServer(() => openAiReply("A: two chairs"));
    const judge = await startModelServer(() => openAiReply("Your mark: 4"));
    try {
      const out = join(home, "run");
      const result = await runCli(
        ["run", "--benchmark", benchmark, "--agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${agent.url}/v1`, "--no-force-guess", "--judge", "openai/gpt-4o", "--judge-base-url", `${judge.url}/v1`, "--out", out, "--no-cache"],
        cliEnv(home, { OPENAI_API_KEY: "sk-test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.match(/^cost \(/gm)?.length, 1, "one cost table");
      const ledger = readCallLedger(out);
      assert.equal(sent(ledger, "agent").length, chatRequests(agent).length);
      assert.equal(sent(ledger, "judge").length, chatRequests(judge).length);
      const summary = readJson<{ cost: Cost; answer: { cost: Cost }; score: { cost: Cost } }>(join(out, "summary.json"));
      const requests = chatRequests(agent).length + chatRequests(judge).length;
      assert.equal(summary.cost.total.calls, requests);
      assert.equal(summary.answer.cost.total.calls + summary.score.cost.total.calls, requests, "the stages' costs add up to the run's");
      assert.equal(Math.round(((summary.answer.cost.total.dollars ?? 0) + (summary.score.cost.total.dollars ?? 0)) * 1e9) / 1e9, summary.cost.total.dollars);
      assert.equal(tableRow(result.stdout, "total")?.[0], String(requests));
    } finally {
      await agent.close();
      await judge.close();
    }
  });

  test("eqa score --dry-run --batch prices the judge's calls at the batch price", async () => {
    const home = temporaryDir();
    const picked = readRawBenchmark().slice(0, 4);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
    const predictions = join(home, "predictions.json");
    writeFileSync(predictions, JSON.stringify(picked.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
    const args = ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", "http://127.0.0.1:9/v1", "--out", join(home, "run"), "--dry-run"];
    const live = await runCli(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
    const batch = await runCli([...args, "--batch"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
    assert.equal(live.code, 0, live.stderr);
    assert.equal(batch.code, 0, batch.stderr);
    const dollars = (stdout: string, role: string): number => Number(/\$([\d.]+)\s*$/.exec(stdout.split("\n").find((l) => l.trim().startsWith(`${role} `) || l.trim().startsWith(`${role}  `)) ?? "")?.[1]);
    const full = dollars(live.stdout, "judge");
    assert.ok(full > 0, live.stdout);
    assert.match(batch.stdout, /judge \(batch\)\s+openai\/gpt-4o\s+4/);
    // the table shows dollars to the millionth
    assert.ok(Math.abs(dollars(batch.stdout, "judge (batch)") - full * BATCH_PRICE_FACTOR) <= 1e-6, batch.stdout);
  });
});

/**
 * Every request each server received is one entry of the run's ledger that reached that server
 * (not a cache hit), and the summary's cost (when the command writes one) and the printed table
 * count them once in their total.
 */
function assertBilledOnce(out: string, stdout: string, servers: readonly ModelServer[], summaryFile: string | null = "summary.json"): void {
  const ledger = readCallLedger(out).filter((e) => !e.cached);
  let requests = 0;
  for (const server of servers) {
    const received = chatRequests(server);
    requests += received.length;
    const billed = ledger.filter((e) => e.endpoint === `${server.url}/v1`);
    assert.equal(billed.length, received.length, `${server.url}: ${received.length} request(s) received, ${billed.length} in the ledger`);
    assert.equal(billed.reduce((n, e) => n + e.images, 0), received.map(imagesIn).reduce((a, b) => a + b, 0), `${server.url}: the images sent`);
  }
  assert.ok(requests > 0, "the command called its model");
  assert.equal(ledger.length, requests, "no ledger entry without a request");
  if (summaryFile !== null) {
    const cost = readJson<{ cost: Cost }>(join(out, summaryFile)).cost;
    assert.equal(cost.total.calls, requests, `${summaryFile}'s cost`);
    assert.equal(cost.roles.reduce((n, r) => n + r.calls, 0), requests, `the rows of ${summaryFile}'s cost`);
  }
  const roles = [...new Set(ledger.map((e) => e.role))];
  assert.equal(tableRow(stdout, "total")?.[0] ?? (roles.length === 1 ? tableRow(stdout, roles[0]!)?.[0] : undefined), String(requests), `the printed cost table:\n${stdout}`);
}

/** A few OpenEQA questions, each with a prediction, as files in `home`. */
function openEqaInputs(home: string, n: number): { subset: string; predictions: string } {
  const picked = readRawBenchmark().slice(0, n);
  const subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
  const predictions = join(home, "predictions.json");
  writeFileSync(predictions, JSON.stringify(picked.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
  return { subset, predictions };
}

/** A TAG-EQA question set of a recording made in `home`. */
async function tagQuestions(home: string): Promise<{ file: string; ids: string[] }> {
  const recording = join(home, "rec");
  await copyRecording({ seed: 2, tasks: ["cool"], width: 96, height: 72 }, recording);
  const log = await loadTrajectoryLog(join(recording, "trajectory.json"));
  const { questions } = buildTagDataset([{ log, sightings: await maskSightings(log, join(recording, "frames")), episodeHistory: "rec/frames" }], { perTrajectory: 3, seed: 0 });
  const file = join(home, "questions.json");
  await writeFile(file, JSON.stringify(questions));
  return { file, ids: questions.map((q) => q.question_id) };
}

describe("every other run-writing command: each request its servers received is in its ledger once, and in its cost once", () => {
  const env = (home: string) => cliEnv(home, { OPENAI_API_KEY: "sk-test" });

  test("eqa score", async () => {
    const home = temporaryDir();
    const { subset, predictions } = openEqaInputs(home, 3);
    const judge = await startModelServer(() => openAiReply("Your mark: 4"));
    try {
      const out = join(home, "run");
      const result = await runCli(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", `${judge.url}/v1`, "--out", out, "--no-cache"], env(home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(chatRequests(judge).length, 3);
      assertBilledOnce(out, result.stdout, [judge]);
    } finally {
      await judge.close();
    }
  });

  test("eqa answer (with force-a-guess's verdicts)", async () => {
    const home = temporaryDir();
    const { subset } = openEqaInputs(home, 3);
    const model = await startModelServer(() => openAiReply("A: two chairs"));
    try {
      const out = join(home, "run");
      const result = await runCli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${model.url}/v1`, "--out", out, "--no-cache"], env(home));
      assert.equal(result.code, 0, result.stderr);
      assertBilledOnce(out, result.stdout, [model]);
    } finally {
      await model.close();
    }
  });

  test("eqa score-tag", async () => {
    const home = temporaryDir();
    const { file, ids } = await tagQuestions(home);
    const predictions = join(home, "predictions.json");
    writeFileSync(predictions, JSON.stringify(ids.map((id) => ({ question_id: id, answer: "There are two red mugs." }))));
    const judge = await startModelServer(() => openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "mug", caption: "red", position: null }], value: 2 }])));
    try {
      const out = join(home, "run");
      const result = await runCli(["score-tag", "--questions", file, "--predictions", predictions, "--judge", "openai/gpt-4o", "--judge-base-url", `${judge.url}/v1`, "--out", out, "--no-cache"], env(home));
      assert.ok(result.code === 0 || result.code === 1, result.stderr);
      assertBilledOnce(out, result.stdout, [judge]);
    } finally {
      await judge.close();
    }
  });

  test("eqa rm score and eqa rm bench", async () => {
    const home = temporaryDir();
    const frames = join(home, "frames");
    await writeRgbEpisode(join(frames, "hm3d-v0", "000-a"), 4, 64, 48);
    const instances = join(home, "instances.jsonl");
    writeFileSync(instances, ["i-1", "i-2"].map((id, i) => JSON.stringify({ id, question: `Question ${i}?`, predicted_answer: "An answer.", reasoning_trace: ["I look around."], episode_history: "hm3d-v0/000-a", ground_truth_score: 6 + 3 * i, category: "object recognition" })).join("\n") + "\n");
    for (const [command, summary] of [[["rm", "score"], "summary.json"], [["rm", "bench", "--max-k", "2", "--resamples", "50"], "bench.json"]] as const) {
      const model = await startModelServer(() => openAiReply("<critique>\nThe trace matches the frames.\n</critique>\n<score>7</score>"));
      try {
        const out = join(home, command[1]!);
        const result = await runCli([...command, "--instances", instances, "--frames", frames, "--model", "openai/gpt-4o", "--model-base-url", `${model.url}/v1`, "--out", out, "--no-cache"], env(home));
        assert.equal(result.code, 0, result.stderr);
        assertBilledOnce(out, result.stdout, [model], summary);
      } finally {
        await model.close();
      }
    }
  });

  test("eqa memory build with a captioner", async () => {
    const home = temporaryDir();
    const scenes = join(home, "scenes");
    await writeSceneEpisode(join(scenes, "hm3d-v0", "scene"), { layout: "hm3d", views: 6 });
    const benchmark = join(home, "benchmark.json");
    writeFileSync(benchmark, JSON.stringify([{ question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
    const model = await startModelServer(() => openAiReply("a red cup"));
    try {
      const out = join(home, "memory");
      const result = await runCli(["memory", "build", "--benchmark", benchmark, "--frames", scenes, "--out", out, "--no-detector", "--sampling", "every:3", "--captioner", "openai/gpt-4o", "--captioner-base-url", `${model.url}/v1`, "--no-cache"], env(home));
      assert.equal(result.code, 0, result.stderr);
      // a memory folder has no summary: its cost is the table printed from its ledger
      assertBilledOnce(out, result.stdout, [model], null);
    } finally {
      await model.close();
    }
  });

  test("eqa generate tag with a model rewriting the texts", async () => {
    const home = temporaryDir();
    await copyRecording({ seed: 3, tasks: ["pick_and_place"], width: 64, height: 48 }, join(home, "recordings", "home-3"));
    // half the rewrites are kept, half are not JSON (kept as the template wrote them)
    let n = 0;
    const model = await startModelServer((request) => {
      const question = /"question":\s*"([^"]+\?)"/.exec(lastUserText(request))?.[1];
      return openAiReply(n++ % 2 === 0 && question ? JSON.stringify({ question, answer: "two" }) : "I cannot rewrite this.");
    });
    try {
      const out = join(home, "dataset");
      const result = await runCli(["generate", "tag", "--source", `sim:${join(home, "recordings")}`, "--out", out, "--per-trajectory", "3", "--renderer", "openai/gpt-4o-mini", "--renderer-base-url", `${model.url}/v1`, "--no-cache"], env(home));
      assert.ok(result.code === 0 || result.code === 1, result.stderr);
      // a dataset has no summary (stats.json counts its questions): its cost is the table printed from its ledger
      assertBilledOnce(out, result.stdout, [model], null);
    } finally {
      await model.close();
    }
  });

  test("eqa demo --model: the agents' calls and the judge's, each run of the demo's folder billed once", async () => {
    const home = temporaryDir();
    const model = await startModelServer((request) =>
      lastUserText(request).startsWith("You read an answer to a question about a home")
        ? openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "mug", caption: "red", position: null }], value: 1 }]))
        : openAiReply("A: There is one red mug."),
    );
    try {
      const out = join(home, "demo");
      // the demo as it is before any model (recording, questions, program agent): the calls are all its agents' and its judge's
      await copyDemo({ seeds: [1], perTrajectory: 4 }, out);
      const result = await runCli(["demo", "--out", out, "--seeds", "1", "--per-trajectory", "4", "--model", "openai/gpt-4o-mini", "--model-base-url", `${model.url}/v1`, "--agents", "vlm", "--no-cache"], env(home));
      assert.ok(result.code === 0 || result.code === 1, result.stderr);
      const received = chatRequests(model).length;
      assert.ok(received > 0);
      // the language-model agent's run: the judge's calls in its folder, the agent's in its answers stage
      const vlm = join(out, "runs", "vlm");
      const folders = [vlm, join(vlm, "answers"), join(out, "runs", "program")];
      const ledger = folders.flatMap((folder) => readCallLedger(folder).filter((e) => !e.cached));
      assert.equal(ledger.length, received, "every request in one ledger, once");
      assert.equal(ledger.filter((e) => e.role === "judge").length, readJson<{ cost: Cost }>(join(vlm, "summary.json")).cost.total.calls, "the run's summary costs its judge");
      // force-a-guess's checks are the agent model's calls on a row of their own, within the answers' cost
      const answers = readJson<{ cost: Cost }>(join(vlm, "answers", "summary.json")).cost;
      const forceGuesses = ledger.filter((e) => e.role === "force-guess").length;
      assert.ok(forceGuesses > 0, "the vlm agent forces a guess by default");
      assert.deepEqual(answers.roles.map((r) => [r.role, r.calls]), [["agent", ledger.filter((e) => e.role === "agent").length], ["force-guess", forceGuesses]]);
      assert.equal(ledger.filter((e) => e.role !== "judge").length, answers.total.calls, "the answers' summary costs its agent and force-a-guess");
      assert.equal(tableRow(result.stdout, "force-guess")?.[0], String(forceGuesses), `the printed cost table:\n${result.stdout}`);
      assert.equal(tableRow(result.stdout, "total")?.[0], String(received), `the printed cost table:\n${result.stdout}`);
    } finally {
      await model.close();
    }
  });
});

describe("the ledger is the run's bill across processes", () => {
  test("a failed call is in the ledger, counted apart from the billed calls; the resumed run asks it again and keeps the earlier process's calls: every request once", async () => {
    const home = temporaryDir();
    const picked = readRawBenchmark().slice(0, 2);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(picked.map((r) => r.question_id)));
    const predictions = join(home, "predictions.json");
    writeFileSync(predictions, JSON.stringify(picked.map((r) => ({ question_id: r.question_id, answer: `${r.answer}.` }))));
    const second = JSON.stringify(`Question: ${picked[1]!.question}\n`).slice(1, -1);
    let failedOnce = false;
    const judge = await startModelServer((request) => {
      if (!failedOnce && JSON.stringify(request.body).includes(second)) {
        failedOnce = true;
        return { status: 500, body: { error: { message: "overloaded" } } };
      }
      return openAiReply("Your mark: 4");
    });
    try {
      const out = join(home, "run");
      const args = ["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", `${judge.url}/v1`, "--out", out, "--no-cache", "--max-retries", "0"];
      const first = await runCli(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(first.code, 1, first.stderr);
      assert.deepEqual(readCallLedger(out).map((e) => e.status).sort(), ["failed", "ok"]);
      const again = await runCli(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(again.code, 0, again.stderr);
      const ledger = readCallLedger(out);
      assert.equal(ledger.length, chatRequests(judge).length, "every request the judge received, once");
      assert.deepEqual(ledger.map((e) => [e.item, e.status]).sort(), [[picked[0]!.question_id, "ok"], [picked[1]!.question_id, "failed"], [picked[1]!.question_id, "ok"]].sort());
      const cost = readJson<{ cost: Cost }>(join(out, "summary.json")).cost;
      assert.deepEqual([cost.total.calls, cost.roles[0]?.failed, cost.total.failed, cost.total.promptTokens], [2, 1, 1, 2 * 10]);
      // the printed table counts as the summary: 2 calls billed, the failed request apart, no cache hit
      assert.deepEqual(tableRow(again.stdout, "judge")?.slice(0, 3), ["2", "1", "0"], `the printed cost table:\n${again.stdout}`);
      assert.match(again.stdout, /2 judge call\(s\) billed, 1 failed, 0 from the cache/);
    } finally {
      await judge.close();
    }
  });
});
