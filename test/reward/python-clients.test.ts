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

describe("the Python trainer adapters (clients/python/eqa_rm.py) against eqa rm serve --group-size 8", () => {
  let server: ChildProcess;
  let url: string;
  before(async () => {
    server = startCli(["rm", "serve", "--port", "0", "--group-size", "8", "--group-timeout", "20"], cliEnv(temporaryDir()));
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      server.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const match = /listening on (http:\/\/[^/\s]+)\/get_reward.*groups of 8 samples per prompt/.exec(out);
        if (match) resolve(match[1]!);
      });
      server.on("exit", (code) => reject(new Error(`eqa rm serve exited with ${code}`)));
    });
  });
  after(() => {
    server.kill("SIGTERM");
  });

  test("verl's reward loop: compute_score awaited per sample, a prompt's 8 rollouts answered as one full group", async () => {
    const results = (await trainerCall("verl", url)) as Record<string, number>[];
    assert.equal(results.length, 8);
    assert.deepEqual(results.map((r) => r.score), [GOOD, POOR, GOOD, POOR, GOOD, POOR, GOOD, POOR]);
    assert.deepEqual(results.map((r) => r.full_group), Array(8).fill(1));
    assert.ok(results.every((r) => r.score_01! >= 0 && r.score_01! <= 1));
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
