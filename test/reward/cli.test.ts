import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { openAiReply, startModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const readLines = (path: string): Record<string, unknown>[] => readFileSync(path, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>);

interface OpenAiPart {
  type: string;
  text?: string;
  image_url?: { url: string };
}

function userParts(request: ReceivedRequest): OpenAiPart[] {
  const body = request.body as { messages: { role: string; content: string | OpenAiPart[] }[] };
  const content = body.messages[body.messages.length - 1]!.content;
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

const textOf = (request: ReceivedRequest): string => userParts(request).filter((p) => p.type === "text").map((p) => p.text).join("");
const imagesOf = (request: ReceivedRequest): number => userParts(request).filter((p) => p.type === "image_url").length;

const home = temporaryDir("eqakit-rm-");
const framesRoot = join(home, "frames");
const instancesFile = join(home, "instances.jsonl");
const QUESTIONS: [string, string, string, number][] = [
  ["i-hm3d-1", "hm3d-v0/000-hm3d-a", "What colour is the sofa?", 8],
  ["i-hm3d-2", "hm3d-v0/000-hm3d-a", "Is the door open?", 3],
  ["i-scan-1", "scannet-v0/002-scannet-b", "Where is the black backpack?", 7],
  ["i-scan-2", "scannet-v0/002-scannet-b", "Where can I charge my computer?", 10],
];

/** A scripted VLM judge: for each question a fixed list of scores, one per sample, in the order calls arrive. */
function scriptedJudge(scores: Record<string, (number | string)[]>): { script: (r: ReceivedRequest) => ReturnType<typeof openAiReply>; seen: Map<string, number> } {
  const seen = new Map<string, number>();
  return {
    seen,
    script: (request) => {
      const text = textOf(request);
      const question = /User Query: (.*)\n/.exec(text)?.[1] ?? "";
      const n = seen.get(question) ?? 0;
      seen.set(question, n + 1);
      const list = scores[question] ?? [5];
      const s = list[n % list.length]!;
      return openAiReply(typeof s === "number" ? `<critique>\nThe agent's trace matches the frames for "${question}".\n</critique>\n<score>${s}</score>` : s);
    },
  };
}

before(async () => {
  await writeRgbEpisode(join(framesRoot, "hm3d-v0", "000-hm3d-a"), 9, 64, 48);
  await writeRgbEpisode(join(framesRoot, "scannet-v0", "002-scannet-b"), 12, 64, 48);
  writeFileSync(
    instancesFile,
    QUESTIONS.map(([id, episode, question, gt]) =>
      JSON.stringify({ id, question, predicted_answer: "An answer.", reasoning_trace: ["I look around the room.", "I see the object.", "So the answer follows."], episode_history: episode, ground_truth_score: gt, category: "object recognition" }),
    ).join("\n") + "\n",
  );
});

describe("eqa rm score against a loopback VLM", () => {
  test("K samples per instance, each its own call with 5 keyframes, aggregated by vote; failures recorded with the raw reply; resumable", async () => {
    const judge = scriptedJudge({
      "What colour is the sofa?": [8, 8, 2],
      "Is the door open?": [9, 4, 4],
      "Where is the black backpack?": [7, 3, 3],
      "Where can I charge my computer?": ["I think it deserves <score>11</score>", "no tags at all", "<score>eleven</score>"],
    });
    const server = await startModelServer(judge.script);
    try {
      const out = join(home, "score");
      const args = ["rm", "score", "--instances", instancesFile, "--frames", framesRoot, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--samples", "3", "--out", out, "--no-cache"];
      const result = await runCli(args, cliEnv(home));
      assert.equal(result.code, 1, result.stderr); // one instance failed
      assert.equal(server.requests.length, 12);
      for (const r of server.requests) {
        assert.equal(imagesOf(r), 5);
        const body = r.body as { temperature: number; top_p: number };
        assert.deepEqual([body.temperature, body.top_p], [0.8, 0.9]);
        assert.ok(textOf(r).includes("Video Frames (attached)\n"));
      }
      const scores = readJson(join(out, "scores.json")) as Record<string, number | null>;
      assert.deepEqual(scores, { "i-hm3d-1": 8, "i-hm3d-2": 4, "i-scan-1": 3, "i-scan-2": null });
      const records = readLines(join(out, "evaluations.jsonl"));
      const failed = records.find((r) => r.id === "i-scan-2")!;
      const samples = failed.samples as { reply: string; error: string }[];
      // the three calls of an instance run at once, so which reply each sample got depends on arrival order
      assert.deepEqual(samples.map((s) => s.error).sort(), ["no <score> tag in the reply", "no score number inside <score>", "score 11 is outside 0-10"]);
      assert.equal(samples.find((s) => s.error === "no <score> tag in the reply")!.reply, "no tags at all");
      const summary = readJson(join(out, "summary.json")) as { counts: Record<string, number>; metrics: { environments: Record<string, { accuracy: { value: number } }> } };
      assert.equal(summary.counts.failed, 1);
      // hm3d: |8-8| ok, |4-3| ok → 100; scannet: |3-7| = 4 → 0
      assert.equal(summary.metrics.environments.hm3d!.accuracy.value, 100);
      assert.equal(summary.metrics.environments.scannet!.accuracy.value, 0);
      assert.match(result.stdout, /3\/4 instances scored/);
      // resume: everything is reused, nothing is asked again
      const again = await runCli(args, cliEnv(home));
      assert.equal(again.code, 1);
      assert.equal(server.requests.length, 12);
    } finally {
      await server.close();
    }
  });

  test("a missing frames folder and a bad instance file are user errors (exit 2)", async () => {
    const nowhere = await runCli(["rm", "score", "--instances", instancesFile, "--frames", join(home, "nowhere"), "--model", "openai/x", "--model-base-url", "http://127.0.0.1:9/v1"], cliEnv(home));
    assert.equal(nowhere.code, 2);
    assert.match(nowhere.stderr, /--frames/);
    const empty = join(home, "empty-frames");
    mkdirSync(empty, { recursive: true });
    const missing = await runCli(["rm", "score", "--instances", instancesFile, "--frames", empty, "--model", "openai/x", "--model-base-url", "http://127.0.0.1:9/v1"], cliEnv(home));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no frames for episode hm3d-v0\/000-hm3d-a/);
    const bad = join(home, "bad.jsonl");
    writeFileSync(bad, '{"id": "x", "question": "q"}\n');
    const invalid = await runCli(["rm", "score", "--instances", bad, "--model", "openai/x", "--model-base-url", "http://127.0.0.1:9/v1"], cliEnv(home));
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /bad\.jsonl:1, id x, field "predicted_answer": is missing/);
  });
});

describe("eqa rm bench", () => {
  test("--max-k takes a power of two and --tolerance a number of at least 0 (exit 2 otherwise)", async () => {
    const base = ["rm", "bench", "--instances", instancesFile, "--model", "openai/x", "--model-base-url", "http://127.0.0.1:9/v1"];
    const twelve = await runCli([...base, "--max-k", "12"], cliEnv(home));
    assert.equal(twelve.code, 2);
    assert.match(twelve.stderr, /--max-k.*expected a power of two from 1 to 1024/);
    const negative = await runCli([...base, "--tolerance", "-0.5"], cliEnv(home));
    assert.equal(negative.code, 2);
    assert.match(negative.stderr, /--tolerance.*expected a number of at least 0/);
  });

  test("K = 1, 2, 4 from shared, separately cached samples; curves as PNG", async () => {
    // the first two samples of each question agree, so that the order concurrent calls arrive in does not matter
      const judge = scriptedJudge({ "What colour is the sofa?": [8, 8, 1, 1], "Is the door open?": [3], "Where is the black backpack?": [0, 0, 7, 7], "Where can I charge my computer?": [10, 10, 9, 2] });
    const server = await startModelServer(judge.script);
    try {
      const env = cliEnv(home, { XDG_CACHE_HOME: join(home, "bench-cache") });
      const base = ["--instances", instancesFile, "--frames", framesRoot, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`];
      // two samples first (rm score), then the bench's four: only samples 2 and 3 are new calls
      const first = await runCli(["rm", "score", ...base, "--samples", "2", "--out", join(home, "s2")], env);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(server.requests.length, 8);
      const out = join(home, "bench");
      const result = await runCli(["rm", "bench", ...base, "--max-k", "4", "--tolerance", "1.5", "--resamples", "200", "--out", out], env);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, 16, "samples 0 and 1 came from the cache");
      const bench = readJson(join(out, "bench.json")) as { scaling: Record<string, Record<string, { overall: { accuracy: { value: number } }; pooled: { accuracy: { value: number }; rmse: { value: number } } }>> };
      assert.deepEqual(Object.keys(bench.scaling.vote!), ["1", "2", "4"]);
      assert.equal((bench.scaling.vote!["1"] as unknown as { tolerance: number }).tolerance, 1.5, "a fractional τ is taken");
      // K = 1: scores 8, 3, 0, 10 against 8, 3, 7, 10 → 3 of 4 within 1.5
      assert.equal(bench.scaling.vote!["1"]!.pooled.accuracy.value, 75);
      // K = 4 by vote: sofa 8/1 tied, mean 4.5, equally close → the lower, 1 (wrong); door 3; backpack 0/7 tied, mean 3.5 → 0 (wrong); charge 10 → 50
      assert.equal(bench.scaling.vote!["4"]!.pooled.accuracy.value, 50);
      // K = 4 by mean: 4.5, 3, 3.5, 7.75 → only the door within 1.5 → 25
      assert.equal(bench.scaling.mean!["4"]!.pooled.accuracy.value, 25);
      const png = await sharp(join(out, "scaling-curves.png")).metadata();
      assert.equal(png.format, "png");
      assert.ok((png.width ?? 0) >= 900);
      assert.match(result.stdout, /^K\s+Overall Acc/m);
    } finally {
      await server.close();
    }
  });
});

describe("training exports", () => {
  test("rm export grpo: four variants per instance, seeded, images written, labels the server reads", async () => {
    const out = join(home, "grpo");
    const result = await runCli(["rm", "export", "grpo", "--instances", instancesFile, "--frames", framesRoot, "--seed", "7", "--out", out], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    const records = readLines(join(out, "grpo.jsonl"));
    assert.equal(records.length, 16);
    const original = records.find((r) => r.id === "i-scan-1#original")!;
    const temporal = records.find((r) => r.id === "i-scan-1#temporal")!;
    const spatial = records.find((r) => r.id === "i-scan-1#spatial")!;
    const reasoning = records.find((r) => r.id === "i-scan-1#reasoning")!;
    assert.deepEqual([...(temporal.images as string[])].sort(), [...(original.images as string[])].sort());
    assert.notDeepEqual(temporal.images, original.images);
    assert.ok((spatial.images as string[]).every((p) => !(original.images as string[]).includes(p) && existsSync(join(out, p))));
    assert.equal(JSON.parse(reasoning.label as string).variant, "reasoning");
    assert.equal((original.prompt_text as string).split("<image>").length, 6);
    const again = join(home, "grpo2");
    await runCli(["rm", "export", "grpo", "--instances", instancesFile, "--frames", framesRoot, "--seed", "7", "--out", again], cliEnv(home));
    assert.equal(readFileSync(join(again, "grpo.jsonl"), "utf8"), readFileSync(join(out, "grpo.jsonl"), "utf8"), "reproducible");
  });

  test("rm export rft: N candidates, kept per Eq. 1, chat JSONL for TRL and LLaMA-Factory", async () => {
    // gt 8: [8, 1] → 8 kept; gt 3: [3, 3] all correct → too easy; gt 7: [7, 7] too easy; gt 10: [0, 9] → 9 kept
    const judge = scriptedJudge({ "What colour is the sofa?": [8, 1], "Is the door open?": [3], "Where is the black backpack?": [7], "Where can I charge my computer?": [0, 9] });
    const server = await startModelServer(judge.script);
    try {
      const out = join(home, "rft");
      const result = await runCli(["rm", "export", "rft", "--instances", instancesFile, "--frames", framesRoot, "--model", "openai/aux", "--model-base-url", `${server.url}/v1`, "--candidates", "2", "--out", out, "--no-cache"], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      const trl = readLines(join(out, "rft.trl.jsonl"));
      assert.deepEqual(trl.map((r) => [r.instance_id, r.score]), [["i-hm3d-1", 8], ["i-scan-2", 9]]);
      const messages = trl[0]!.messages as { role: string; content: { type: string; text?: string }[] }[];
      assert.equal(messages[0]!.content.filter((p) => p.type === "image").length, 5);
      assert.match(messages[1]!.content[0]!.text!, /^<critique>\n.*\n<\/critique>\n<score>8<\/score>$/s);
      assert.ok((trl[0]!.images as string[]).every((p) => existsSync(join(out, p))));
      const factory = readLines(join(out, "rft.llamafactory.jsonl"));
      assert.equal(((factory[0]!.messages as { content: string }[])[0]!.content.match(/<image>/g) ?? []).length, 5);
      assert.ok(existsSync(join(out, "dataset_info.json")));
    } finally {
      await server.close();
    }
  });
});

describe("eqa rm build and review", () => {
  test("responses, ground-truth scores, review sheet, episode-disjoint splits", async () => {
    const raw = readRawBenchmark();
    const hm3d = raw.find((q) => q.episode_history.startsWith("hm3d"))!;
    const scannet = raw.filter((q) => q.episode_history.startsWith("scannet"));
    const chosen = [hm3d, scannet[0]!, scannet.find((q) => q.episode_history !== scannet[0]!.episode_history)!];
    const root = join(home, "build-frames");
    for (const q of chosen) await writeRgbEpisode(join(root, q.episode_history), 6, 48, 32);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(chosen.map((q) => q.question_id)));
    let responderCalls = 0;
    const server = await startModelServer((request) => {
      const text = textOf(request);
      if (text.startsWith("Role: You are an intelligent Embodied Question Answering")) {
        responderCalls++;
        assert.equal(imagesOf(request), 5);
        return openAiReply("<reasoning_trace>\n<think>\nI scan the room.\n</think>\n<think>\nI find it.\n</think>\n</reasoning_trace>\n<predicted_answer>\nOn the table.\n</predicted_answer>");
      }
      assert.match(text, /Answer Ground Truth: /);
      return openAiReply("<critique>\nPlausible.\n</critique>\n<score>\n6\n</score>");
    });
    try {
      const out = join(home, "build");
      const result = await runCli(
        ["rm", "build", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--frames", root, "--responder", "openai/resp", "--responder-base-url", `${server.url}/v1`, "--scorer", "openai/scorer", "--scorer-base-url", `${server.url}/v1`, "--responses", "2", "--finetune-fraction", "0.5", "--out", out, "--no-cache"],
        cliEnv(home),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(responderCalls, 6);
      const instances = readLines(join(out, "instances.jsonl"));
      assert.equal(instances.length, 6);
      assert.deepEqual(instances[0]!.reasoning_trace, ["I scan the room.", "I find it."]);
      assert.equal(instances[0]!.ground_truth_score, 6);
      const bench = readLines(join(out, "benchmark.jsonl"));
      const finetune = readLines(join(out, "finetune.jsonl"));
      assert.equal(bench.length + finetune.length, 6);
      assert.equal(finetune.length, 2, "one of the two ScanNet episodes");
      assert.ok(finetune.every((f) => !bench.some((b) => b.episode_history === f.episode_history)));
      // the human check: reject one, correct one
      const sheet = readFileSync(join(out, "review.csv"), "utf8").split("\r\n");
      assert.match(sheet[0]!, /^id,source,category,question/);
      const csv = [sheet[0], `${instances[0]!.id},,,,,,,,,reject,,`, `${instances[1]!.id},,,,,,,,,,9,looks better`].join("\r\n");
      writeFileSync(join(home, "reviewed.csv"), csv);
      const reviewed = await runCli(["rm", "review", "--instances", join(out, "instances.jsonl"), "--import", join(home, "reviewed.csv"), "--out", join(home, "reviewed")], cliEnv(home));
      assert.equal(reviewed.code, 0, reviewed.stderr);
      assert.match(reviewed.stdout, /0 accepted, 1 corrected, 1 rejected, 4 not in the sheet/);
      const kept = readLines(join(home, "reviewed", "reviewed.jsonl"));
      assert.equal(kept.length, 5);
      assert.equal(kept[0]!.ground_truth_score, 9);
      writeFileSync(join(home, "bad.csv"), `${sheet[0]}\r\n${instances[0]!.id},,,,,,,,,maybe,,`);
      const bad = await runCli(["rm", "review", "--instances", join(out, "instances.jsonl"), "--import", join(home, "bad.csv"), "--out", join(home, "r2")], cliEnv(home));
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /bad\.csv:2, .*field "decision": decision "maybe"/);
    } finally {
      await server.close();
    }
  });
});
