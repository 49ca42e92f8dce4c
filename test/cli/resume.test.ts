import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StructuredAnswer } from "../../src/data/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { assertSameRun, jsonLines, killAndResume } from "../helpers/kill.js";
import { lastUserText, openAiReply, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { tagDataset, tagQuestion } from "../eval/structured-fixtures.js";
import { kitchenRaw } from "../generate/fixtures.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { copyDemoHome, copyRecording } from "../helpers/recordings.js";
import { loadTrajectoryLog } from "../../src/data/index.js";
import { buildTagDataset, maskSightings } from "../../src/generate/index.js";

function writeJson(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** A number from 1 to 5 that a text decides. */
const markOf = (text: string): number => 1 + ([...text].reduce((a, c) => a + c.charCodeAt(0), 0) % 5);

/** A deterministic loopback model, each reply a little late so that a run can be killed midway. */
async function loopback(script: Script): Promise<ModelServer> {
  return startModelServer(async (request, index) => ({ ...(await script(request, index)), delayMs: 30 }));
}

/**
 * Runs the command once to its end in `whole`, and once killed with SIGKILL when `half()` holds
 * and run again in `resumed`; both against the same deterministic loopback servers.
 */
async function wholeAndResumed(args: (out: string) => string[], env: NodeJS.ProcessEnv, home: string, requests: () => number): Promise<{ whole: string; resumed: string }> {
  const whole = join(home, "whole");
  const resumed = join(home, "resumed");
  const first = await runCli(args(whole), env);
  assert.equal(first.code, 0, first.stderr);
  // killed when the server has received half the requests the uninterrupted run made
  const total = requests();
  assert.ok(total >= 4, `the run made ${total} requests`);
  await killAndResume(args(resumed), env, () => requests() - total >= total / 2);
  return { whole, resumed };
}

describe("a command killed with SIGKILL midway and run again ends with the records and figures of an uninterrupted run", () => {
  test("eqa score-tag (free-text answers read by the judge, scored with the embedded encoder)", async () => {
    const home = temporaryDir();
    // four answers a question: right, split over two groups with text values (pooled when matched
    // element-wise), the values as one list, the objects renamed
    const questions = tagDataset().flatMap((q) => [0, 1, 2, 3].map((k) => ({ ...q, question_id: `${q.question_id}-${k}` })));
    const predicted = (truth: StructuredAnswer, k: number): StructuredAnswer => {
      if (k === 0) return truth;
      if (k === 1) return truth.flatMap((g, i) => [{ ...g, predicate: `in the morning ${i}`, value: "kitchen" }, { ...g, predicate: `in the evening ${i}`, value: "hall" }]);
      if (k === 2) return [{ predicate: "", objects: truth.flatMap((g) => g.objects), value: ["pantry", "attic"] }];
      return truth.map((g) => ({ ...g, objects: g.objects.map((o) => ({ ...o, type: `small ${o.type}` })) }));
    };
    const answers = questions.map((q) => ({ question_id: q.question_id, answer: predicted(q.structured_answer, Number(q.question_id.at(-1))) }));
    // the first answer's value is the text the last answer's values make when pooled ("kitchen, hall"):
    // judged after the kill, the last must be scored as if the first had not been judged in its process
    const mug = { type: "mug", caption: null, position: null };
    const inKitchen: StructuredAnswer = [{ predicate: "", objects: [mug], value: "kitchen" }];
    questions.unshift(tagQuestion("a-first", "Where was the mug?", inKitchen, { query_type: "getLocation" }));
    questions.push(tagQuestion("z-last", "Where was the mug?", inKitchen, { query_type: "getLocation" }));
    answers.unshift({ question_id: "a-first", answer: [{ predicate: "", objects: [mug], value: "kitchen, hall" }] });
    answers.push({ question_id: "z-last", answer: [{ predicate: "in the morning", objects: [mug], value: "kitchen" }, { predicate: "in the evening", objects: [], value: "hall" }] });
    const predictions = answers.map((a) => ({ question_id: a.question_id, answer: `I found: ${JSON.stringify(a.answer)}` }));
    const server = await loopback((request) => openAiReply(/I found: (.*)/.exec(lastUserText(request))?.[1] ?? "[]"));
    try {
      const questionsFile = writeJson(home, "questions.json", questions);
      const predictionsFile = writeJson(home, "predictions.json", predictions);
      const args = (out: string) => ["score-tag", "--questions", questionsFile, "--predictions", predictionsFile, "--judge", "openai/judge", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home), home, () => server.requests.length);
      assert.ok(jsonLines(join(resumed, "judgements.jsonl")).length >= questions.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "judgements.jsonl" }],
        figures: ["metrics.json", { file: "summary.json", pick: (s) => [s.counts, s.scores, s.validAnswerRate, s.errors, s.categories, s.failures, s.judgeUnreadable] }],
      });
    } finally {
      await server.close();
    }
  });

  test("eqa score (LLM-Match)", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 20);
    const predictionsFile = writeJson(home, "predictions.json", questions.map((q, i) => ({ question_id: q.question_id, answer: i % 3 === 0 ? q.answer : `maybe ${q.answer}` })));
    const subset = writeJson(home, "subset.json", questions.map((q) => q.question_id));
    const server = await loopback((request) => openAiReply(`Your mark: ${markOf(lastUserText(request))}`));
    try {
      const args = (out: string) => ["score", "--predictions", predictionsFile, "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home), home, () => server.requests.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "judgements.jsonl" }],
        figures: ["metrics.json", { file: "summary.json", pick: (s) => [s.counts, s.llmMatch, s.failures, s.judgeUnreadable, s.replyStatuses] }],
      });
    } finally {
      await server.close();
    }
  });

  test("eqa answer (the blind agent)", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 20);
    const subset = writeJson(home, "subset.json", questions.map((q) => q.question_id));
    const server = await loopback((request) => openAiReply(`A: ${["a chair", "the kitchen", "two", "red"][markOf(lastUserText(request)) % 4]}`));
    try {
      const args = (out: string) => ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home), home, () => server.requests.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "traces.jsonl" }],
        figures: ["predictions.json", { file: "summary.json", pick: (s) => [s.counts, s.abstentionRate, s.failures, s.judgeUnreadable] }],
      });
    } finally {
      await server.close();
    }
  });

  test("eqa run (the blind agent, then LLM-Match)", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 12);
    const subset = writeJson(home, "subset.json", questions.map((q) => q.question_id));
    const server = await loopback((request) => {
      const text = lastUserText(request);
      if (text.includes("Your mark")) return openAiReply(`Your mark: ${markOf(text)}`);
      return openAiReply(`A: ${["a chair", "the kitchen", "two", "red"][markOf(text) % 4]}`);
    });
    try {
      const args = (out: string) => ["run", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }), home, () => server.requests.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "traces.jsonl" }, { file: "judgements.jsonl" }],
        figures: ["predictions.json", "metrics.json", { file: "summary.json", pick: (s) => [s.counts, s.llmMatch, s.failures, s.judgeUnreadable] }],
      });
    } finally {
      await server.close();
    }
  });

  test("eqa rm bench (a generative reward model at K = 1 and 2)", async () => {
    const home = temporaryDir();
    const frames = join(home, "frames");
    await writeRgbEpisode(join(frames, "hm3d-v0", "000-hm3d-a"), 6, 64, 48);
    const instances = join(home, "instances.jsonl");
    const instance = { predicted_answer: "Blue.", reasoning_trace: ["I look at the sofa.", "It is blue."], episode_history: "hm3d-v0/000-hm3d-a", category: "attribute recognition" };
    writeFileSync(instances, Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `i${i}`, question: `What colour is sofa ${i}?`, ground_truth_score: i + 3, ...instance })).join("\n") + "\n");
    const server = await loopback((request) => openAiReply(`<critique>\nThe trace matches the frames.\n</critique>\n<score>${2 * markOf(JSON.stringify(request.body))}</score>`));
    try {
      const args = (out: string) => ["rm", "bench", "--instances", instances, "--frames", frames, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--max-k", "2", "--resamples", "100", "--out", out, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }), home, () => server.requests.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "evaluations.jsonl", id: (r) => String(r.id) }],
        figures: [{ file: "bench.json", pick: (s) => [s.counts, s.scaling] }],
      });
    } finally {
      await server.close();
    }
  });

  test("eqa answer-tag (an agent of the user's own on a set made from a simulator recording)", async () => {
    const home = temporaryDir();
    const recording = join(home, "rec");
    await copyRecording({ seed: 2, tasks: ["cool"], width: 160, height: 120 }, recording);
    const log = await loadTrajectoryLog(join(recording, "trajectory.json"));
    const sightings = await maskSightings(log, join(recording, "frames"));
    const { questions } = buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory: 10, seed: 0 });
    assert.ok(questions.length >= 4, `the set has ${questions.length} questions`);
    const questionsFile = writeJson(home, "questions.json", questions);
    const asked = join(home, "asked.txt");
    const agentFile = join(home, "agent.mjs");
    // answers that the question and the action history decide, each a little late so that the run can be killed midway
    writeFileSync(
      agentFile,
      `import { appendFileSync } from "node:fs";
export function initialize(params) { return { name: "counter", version: "1", supports: [params.task] }; }
export async function answer(params) {
  await new Promise((r) => setTimeout(r, 40));
  appendFileSync(${JSON.stringify(asked)}, params.question.id + "\\n");
  return { answer: JSON.stringify([{ predicate: "", objects: [], value: params.tag.actions.length + params.question.id.length }]), confidence: 0.5 };
}
`,
    );
    const lines = (): number => (existsSync(asked) ? readFileSync(asked, "utf8").split("\n").filter(Boolean).length : 0);
    const args = (out: string) => ["answer-tag", "--questions", questionsFile, "--agent", agentFile, "--out", out, "--concurrency", "1"];
    const env = cliEnv(home);
    const whole = join(home, "whole");
    const resumed = join(home, "resumed");
    const first = await runCli(args(whole), env);
    assert.equal(first.code, 0, first.stderr);
    const total = lines();
    await killAndResume(args(resumed), env, () => lines() - total >= total / 2);
    assertSameRun(whole, resumed, {
      records: [{ file: "answers.jsonl", id: (r) => String(r.question_id) }],
      figures: ["predictions.json"],
    });
  });

  test("eqa demo (recordings, questions, memories, the program agent's answers and their scores)", async () => {
    const home = temporaryDir();
    const args = (out: string) => ["demo", "--out", out, "--seeds", "1,2", "--per-trajectory", "6"];
    const env = cliEnv(home);
    const whole = join(home, "whole");
    const resumed = join(home, "resumed");
    // the uninterrupted run from the homes recorded as the demo records them; the killed one records its own
    for (const seed of [1, 2]) await copyDemoHome(seed, whole);
    const first = await runCli(args(whole), env);
    assert.equal(first.code, 0, first.stderr);
    // killed once the first home is recorded, with the second home, the questions, the memories and the answers still to come
    await killAndResume(args(resumed), env, () => existsSync(join(resumed, "recordings", "home-1", "trajectory.json")));
    assertSameRun(whole, resumed, {
      records: [{ file: join("runs", "program", "judgements.jsonl") }],
      figures: [
        join("dataset", "questions.json"),
        join("runs", "program", "predictions.json"),
        join("runs", "program", "metrics.json"),
        { file: join("runs", "program", "summary.json"), pick: (s) => [s.counts, s.scores, s.validAnswerRate, s.errors, s.categories, s.failures, s.judgeUnreadable] },
      ],
    });
  });

  test("eqa generate tag --renderer (few-shot rewrites)", async () => {
    const home = temporaryDir();
    const source = join(home, "recordings");
    for (const [id, environment, extra] of [["rec-a", "house-0", {}], ["rec-b", "house-1", { yaw: 1.1, offset: [2, 0, 1] as [number, number, number] }], ["rec-c", "house-2", { yaw: -0.5 }]] as const) {
      mkdirSync(join(source, id), { recursive: true });
      writeFileSync(join(source, id, "trajectory.json"), JSON.stringify(kitchenRaw({ id, environment, ...extra })));
    }
    const server = await loopback((request) => {
      const last = lastUserText(request).split("Structured question: ").at(-1)!;
      return openAiReply(JSON.stringify({ question: `So, ${/^Question: (.*)$/m.exec(last)![1]!}`, answer: /^Answer: (.*)$/m.exec(last)![1]! }));
    });
    try {
      const args = (out: string) => ["generate", "tag", "--source", `sim:${source}`, "--out", out, "--per-trajectory", "6", "--renderer", "openai/gemma-2-27b-it", "--renderer-base-url", `${server.url}/v1`, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }), home, () => server.requests.length);
      assertSameRun(whole, resumed, { records: [{ file: "rewrites.jsonl" }], figures: ["questions.json", "stats.json", "skipped.json"] });
    } finally {
      await server.close();
    }
  });

  test("eqa memory build --benchmark (a captioner names every object)", async () => {
    const home = temporaryDir();
    const frames = join(home, "frames");
    await writeSceneEpisode(join(frames, "hm3d-v0", "scene"), { layout: "hm3d", views: 8 });
    await writeSceneEpisode(join(frames, "hm3d-v0", "other"), { layout: "hm3d", views: 8, startDegrees: 45 });
    const benchmark = writeJson(home, "questions.json", [
      { question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" },
      { question_id: "q2", question: "What is next to the table?", answer: "a chair", category: "object recognition", episode_history: "hm3d-v0/other" },
    ]);
    const server = await loopback((request) => openAiReply(`a ${["red", "green", "tall", "small"][markOf(JSON.stringify(request.body)) % 4]} object`));
    try {
      const args = (out: string) => ["memory", "build", "--benchmark", benchmark, "--frames", frames, "--out", out, "--no-detector", "--sampling", "every:4", "--captioner", "openai/gpt-4o", "--captioner-base-url", `${server.url}/v1`, "--no-cache"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }), home, () => server.requests.length);
      const graphs = jsonLines(join(whole, "memories.jsonl")).map((r) => (r as { graph: string }).graph);
      assert.equal(graphs.length, 2);
      assertSameRun(whole, resumed, {
        records: [{ file: "memories.jsonl", id: (r) => String(r.episode) }],
        figures: graphs.flatMap((graph) => readdirSync(join(whole, graph)).filter((f) => f.endsWith(".json")).map((f) => join(graph, f))),
      });
    } finally {
      await server.close();
    }
  });

  test("eqa rm score (a generative reward model, two samples an instance)", async () => {
    const home = temporaryDir();
    const frames = join(home, "frames");
    await writeRgbEpisode(join(frames, "hm3d-v0", "000-hm3d-a"), 6, 64, 48);
    const instances = join(home, "instances.jsonl");
    const instance = { predicted_answer: "Blue.", reasoning_trace: ["I look at the sofa.", "It is blue."], episode_history: "hm3d-v0/000-hm3d-a", ground_truth_score: 8, category: "attribute recognition" };
    writeFileSync(instances, Array.from({ length: 8 }, (_, i) => JSON.stringify({ id: `i${i}`, question: `What colour is sofa ${i}?`, ...instance })).join("\n") + "\n");
    const server = await loopback((request) => openAiReply(`<critique>\nThe trace matches the frames.\n</critique>\n<score>${2 * markOf(lastUserText(request))}</score>`));
    try {
      const args = (out: string) => ["rm", "score", "--instances", instances, "--frames", frames, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--samples", "2", "--out", out, "--no-cache", "--concurrency", "2"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }), home, () => server.requests.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "evaluations.jsonl", id: (r) => String(r.id) }],
        figures: ["scores.json", { file: "summary.json", pick: (s) => [s.counts, s.metrics, s.failures] }],
      });
    } finally {
      await server.close();
    }
  });

  test("eqa explore --judge (the frontier explorer, the blind agent, LLM-Match and EAC)", async () => {
    const home = temporaryDir();
    const episodes = writeJson(home, "episodes.json", Array.from({ length: 4 }, (_, i) => ({ question_id: `e${i}`, question: ["Is there a sofa?", "Is there a bed?", "Where is the lamp?"][i % 3], answer: "Yes", scene: `home-${i % 3}` })));
    const server = await loopback((request) => {
      const text = JSON.stringify(request.body);
      if (text.includes("image_url") && text.includes("Your mark")) return openAiReply(`1, ${markOf(text)}`);
      if (text.includes("Your mark")) return openAiReply(`Your mark: ${markOf(text)}`);
      return openAiReply("A: Yes.");
    });
    try {
      const args = (out: string) => ["explore", "--episodes", episodes, "--agent", "frontier", "--em-agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--width", "64", "--height", "48", "--max-steps", "30", "--no-cache"];
      const { whole, resumed } = await wholeAndResumed(args, cliEnv(home, { OPENAI_API_KEY: "sk-test" }), home, () => server.requests.length);
      assertSameRun(whole, resumed, {
        records: [{ file: "episodes.jsonl" }, { file: "judgements.jsonl" }],
        figures: ["predictions.json", { file: "summary.json", pick: (s) => [s.counts, s.failures, s.judged, s.reliability] }],
      });
    } finally {
      await server.close();
    }
  });
});
