import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { cliEnv, collect, startCli } from "../helpers/cli.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

const clientDir = join(projectRoot, "clients", "python");
const script = join(projectRoot, "test", "reward", "python", "trainer_calls.py");

/** Runs the trainer's call shape in python3 against the server; its printed JSON. */
async function trainerCall(shape: string, url: string): Promise<unknown> {
  const result = await collect(spawn("python3", [script, clientDir, shape], { env: { ...process.env, EQA_RM_URL: `${url}/get_reward`, EQA_RM_TIMEOUT: "30" }, stdio: ["ignore", "pipe", "pipe"] }));
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as unknown;
}

// the originals' samples: R_a 1 + R_f 1 for a score of 8 against 8; 0.64 + 1 for a score of 2
const GOOD = 2;
const POOR = 1.6400000000000001;

/** Starts `eqa rm serve ARGS` on a free port; its URL once it listens. */
async function serve(args: string[]): Promise<{ server: ChildProcess; url: string }> {
  const server = startCli(["rm", "serve", "--port", "0", ...args], cliEnv(temporaryDir()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/[^/\s]+)\/get_reward/.exec(out);
      if (match) resolve(match[1]!);
    });
    server.on("exit", (code) => reject(new Error(`eqa rm serve exited with ${code}`)));
  });
  return { server, url };
}

/** The rewards of one direct POST /get_reward. */
async function directRewards(url: string, body: Record<string, unknown>): Promise<number[]> {
  const response = await fetch(`${url}/get_reward`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(response.status, 200);
  return ((await response.json()) as { rewards: number[] }).rewards;
}

const label = (variant: string): string => JSON.stringify({ score: 8, variant });
const GOOD_TEXT = "<critique>The agent found the backpack by the chair.</critique><score>8</score>";
const POOR_TEXT = "<critique>Frames out of order.</critique><score>2</score>";

describe("the Python trainer adapters (clients/python/eqa_rm.py) against eqa rm serve --group-size 8", () => {
  let server: ChildProcess;
  let url: string;
  before(async () => {
    ({ server, url } = await serve(["--group-size", "8", "--group-timeout", "20"]));
  });
  after(() => {
    server.kill("SIGTERM");
  });

  test("verl's reward loop (use_reward_loop=True): compute_score_async awaited per sample, a prompt's 8 rollouts answered as one full group, the rewards of one direct request", async () => {
    const results = (await trainerCall("verl", url)) as { reward_score: number; reward_extra_info: Record<string, number>; awaited: boolean }[];
    assert.equal(results.length, 8);
    assert.ok(results.every((r) => r.awaited), "the loop sees a coroutine function and awaits it");
    const texts = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => (k % 2 === 0 ? GOOD_TEXT : POOR_TEXT));
    const direct = await directRewards(url, { query: texts, labels: Array(8).fill(label("original")), groups: Array(8).fill("17") });
    assert.deepEqual(results.map((r) => r.reward_score), direct);
    assert.deepEqual(direct, [GOOD, POOR, GOOD, POOR, GOOD, POOR, GOOD, POOR]);
    assert.deepEqual(results.map((r) => r.reward_extra_info.full_group), Array(8).fill(1));
    assert.ok(results.every((r) => r.reward_extra_info.score_01! >= 0 && r.reward_extra_info.score_01! <= 1));
  });

  test("verl's batch reward manager: compute_score_batch over originals and their temporal twins, the contrast fires", async () => {
    const results = (await trainerCall("verl-batch", url)) as Record<string, number>[];
    assert.deepEqual(results.map((r) => r.full_group), Array(8).fill(1));
    // originals 2 + 0.3/3 (the temporal contrast alone); temporal samples 0.64 + 1
    assert.ok(results.slice(0, 4).every((r) => Math.abs(r.contrastive_reward! - 0.3 / 3) < 1e-12), JSON.stringify(results));
    assert.deepEqual(results.slice(4).map((r) => r.score), Array(4).fill(POOR));
  });

  test("TRL's GRPOTrainer: reward_func(prompts=, completions=, completion_ids=, label=, …) from two processes' slices of one group", async () => {
    const result = (await trainerCall("trl", url)) as { rewards: number[]; metrics: [string, number][]; name: string };
    assert.deepEqual(result.rewards, [GOOD, POOR, GOOD, POOR, GOOD, POOR, GOOD, POOR]);
    assert.equal(result.name, "trl_reward");
    const fullGroup = result.metrics.filter(([name]) => name === "eqa_rm/full_group").map(([, v]) => v);
    assert.deepEqual(fullGroup, [1, 1], "both slices were answered with the whole group");
  });

  test("OpenRLHF's remote reward client: one request per sample, the image expanded in the query; rewards, scores in [0, 1]", async () => {
    const replies = (await trainerCall("openrlhf", url)) as { reward: number[]; scores: number[]; extra_logs: Record<string, number[]> }[];
    assert.deepEqual(replies.map((r) => r.reward[0]), [GOOD, POOR, GOOD, POOR, GOOD, POOR, GOOD, POOR]);
    assert.deepEqual(replies.map((r) => r.extra_logs.format_reward![0]), Array(8).fill(1));
    assert.deepEqual(replies.map((r) => r.extra_logs.full_group![0]), Array(8).fill(1));
    assert.ok(replies.every((r) => r.scores[0]! > 0 && r.scores[0]! < 1));
  });
});

describe("verl's classic naive reward manager against eqa rm serve without --group-size", () => {
  let server: ChildProcess;
  let url: string;
  before(async () => {
    ({ server, url } = await serve([]));
  });
  after(() => {
    server.kill("SIGTERM");
  });

  test("compute_score is a plain function called one sample after another: each result a dict whose score is a number, the rewards of direct requests", async () => {
    const results = (await trainerCall("verl-naive", url)) as { reward: number; type: string; coroutine_function: boolean; extra: Record<string, number> }[];
    assert.ok(results.every((r) => !r.coroutine_function && r.type === "float"), JSON.stringify(results));
    const samples: [string, string][] = [["original", GOOD_TEXT], ["temporal", POOR_TEXT], ["original", POOR_TEXT], ["spatial", GOOD_TEXT]];
    const direct: number[] = [];
    for (const [variant, text] of samples) direct.push(...(await directRewards(url, { query: [text], labels: [label(variant)], groups: ["5"] })));
    assert.deepEqual(results.map((r) => r.reward), direct);
    assert.deepEqual(direct, [GOOD, POOR, POOR, GOOD]);
    assert.deepEqual(results.map((r) => r.extra.full_group), [1, 1, 1, 1]);
  });
});
