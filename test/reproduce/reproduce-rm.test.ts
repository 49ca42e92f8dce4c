import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, startModelServer, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { openAiBatchEmulator } from "../helpers/provider-emulators.js";
import { temporaryDir } from "../helpers/paths.js";

/**
 * `eqa reproduce eqa-rm-table-1` and `eqa-rm-table-2` against a loopback VLM that scores every
 * instance the same at each sample, on four EQARewardBench-style instances (two HM3D, two ScanNet).
 */

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

const INSTANCES: [string, string, string, number, number, string][] = [
  // id, episode, question, ground truth, the judge's score, category
  ["i-hm3d-1", "hm3d-v0/000-hm3d-a", "What colour is the sofa?", 8, 8, "attribute recognition"],
  ["i-hm3d-2", "hm3d-v0/000-hm3d-a", "Is the door open?", 3, 9, "object state recognition"],
  ["i-scan-1", "scannet-v0/002-scannet-b", "Where is the black backpack?", 7, 6, "spatial understanding"],
  ["i-scan-2", "scannet-v0/002-scannet-b", "What is on the desk?", 10, 10, "object recognition"],
];

function judge(request: ReceivedRequest): string {
  const text = JSON.stringify(request.body);
  const instance = INSTANCES.find((i) => text.includes(i[2]))!;
  return `<critique>\nThe trace matches the frames.\n</critique>\n<score>${instance[4]}</score>`;
}

async function setup(): Promise<{ home: string; frames: string; instances: string }> {
  const home = temporaryDir("eqakit-reproduce-rm-");
  const frames = join(home, "frames");
  await writeRgbEpisode(join(frames, "hm3d-v0", "000-hm3d-a"), 9, 64, 48);
  await writeRgbEpisode(join(frames, "scannet-v0", "002-scannet-b"), 12, 64, 48);
  const instances = join(home, "instances.jsonl");
  writeFileSync(instances, INSTANCES.map(([id, episode, question, gt, , category]) => JSON.stringify({ id, question, predicted_answer: "An answer.", reasoning_trace: ["I look around.", "I see it."], episode_history: episode, ground_truth_score: gt, category })).join("\n") + "\n");
  return { home, frames, instances };
}

interface TableJson {
  rows: { id: string; label: string; comparable: boolean; differences: string[]; cells: Record<string, { value: number; n: number }> }[];
}

const values = (row: TableJson["rows"][number]): Record<string, number> => Object.fromEntries(Object.entries(row.cells).map(([k, c]) => [k, Math.round(c.value * 1000) / 1000]));

describe("eqa reproduce eqa-rm-table-1 and eqa-rm-table-2", () => {
  test("Table 1: the model as a judge (K = 1) and with test-time scaling, accuracy within τ = 2 and RMSE per environment and overall, beside the paper's rows", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(judge(request)), async (server) => {
      const out = join(s.home, "t1");
      // a price for the loopback model, so that the run's dollars are a number
      const prices = join(s.home, "prices.json");
      writeFileSync(prices, JSON.stringify({ models: [{ match: "^judge-vl$", input: 1, output: 2 }] }));
      const result = await runCli(["reproduce", "eqa-rm-table-1", "--instances", s.instances, "--frames", s.frames, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--max-k", "2", "--out", out, "--no-cache"], cliEnv(s.home, { EQA_PRICES: prices }));
      assert.equal(result.code, 0, result.stderr);
      // two samples of each of the four instances
      assert.equal(server.requests.length, 8);
      // the calls and their cost, printed as every command prints them and written from the rows' ledgers
      const summary = readJson(join(out, "summary.json")) as { runs: { bench: { dollars: number | null } }; cost: { total: { calls: number; failed: number; cacheHits: number; dollars: number | null } } };
      assert.deepEqual([summary.cost.total.calls, summary.cost.total.failed, summary.cost.total.cacheHits], [8, 0, 0]);
      assert.ok(summary.cost.total.dollars !== null && summary.cost.total.dollars > 0, "dollars from the ledger");
      assert.equal(summary.runs.bench.dollars, summary.cost.total.dollars);
      const costRow = result.stdout.split("\n").find((l) => /^\s+reward model\s+openai\/judge-vl\s/.test(l))?.trim().split(/\s{2,}/);
      assert.deepEqual(costRow?.slice(2, 5), ["8", "0", "0"], result.stdout);
      assert.ok(costRow?.at(-1)?.startsWith("$"), result.stdout);
      const table = readJson(join(out, "table.json")) as TableJson;
      assert.deepEqual(table.rows.map((r) => r.id), ["judge", "k-2"]);
      // HM3D: 8 vs 8 (hit), 9 vs 3 (miss) → 50 %, RMSE √18; ScanNet: 6 vs 7, 10 vs 10 → 100 %, RMSE √0.5; Overall: their means
      const expected = { "hm3d-acc": 50, "hm3d-rmse": 4.243, "scannet-acc": 100, "scannet-rmse": 0.707, "overall-acc": 75, "overall-rmse": 2.475 };
      assert.deepEqual(values(table.rows[0]!), expected);
      assert.deepEqual(values(table.rows[1]!), expected);
      assert.equal(table.rows[0]!.comparable, false);
      assert.deepEqual(table.rows[0]!.differences, [`4 instance(s) of ${s.instances}, not EQARewardBench (not published)`, "test-time scaling K = 2, the paper's was 32"]);
      const markdown = readFileSync(join(out, "table.md"), "utf8");
      assert.match(markdown, /\| w\/ test scaling \(K=32\) \| 58\.65 \| 2\.918 \| 65\.06 \| 2\.537 \| 61\.86 \| 2\.727 \|  \|/);
      // the two rows tie in every column: both bold as the best of this run's rows
      assert.match(markdown, /\| openai\/judge-vl \| \*\*50\.00\*\* \| \*\*4\.243\*\* \| \*\*100\.00\*\* \| \*\*0\.707\*\* \| \*\*75\.00\*\* \| \*\*2\.475\*\* \| no \|/);
      assert.match(readFileSync(join(out, "table.tex"), "utf8"), /openai\/judge-vl w\/ test scaling \(K=2\)\$\^\\dagger\$ &/);
    });
  });

  test("Table 2: accuracy by question type on the ScanNet instances alone; without --instances the command says what it needs before any call (exit 2)", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(judge(request)), async (server) => {
      const missing = await runCli(["reproduce", "eqa-rm-table-2", "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--out", join(s.home, "none")], cliEnv(s.home));
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /needs EQARewardBench-style instances/);
      assert.match(missing.stderr, /eqa rm build/);
      assert.equal(server.requests.length, 0);

      const out = join(s.home, "t2");
      const result = await runCli(["reproduce", "eqa-rm-table-2", "--instances", s.instances, "--frames", s.frames, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--max-k", "1", "--out", out, "--no-cache"], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      // the two ScanNet instances, one sample each
      assert.equal(server.requests.length, 2);
      const table = readJson(join(out, "table.json")) as TableJson;
      assert.deepEqual(table.rows.map((r) => [r.id, values(r)]), [["judge", { "object-recognition": 100, "spatial-understanding": 100 }]]);
    });
  });

  test("--dry-run: the whole table's calls (K samples of each instance at --max-k, the K = 1 row read from them), tokens with the keyframes and dollars; no call, nothing written; the real run sends those calls", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(judge(request)), async (server) => {
      const env = cliEnv(s.home, { OPENAI_API_KEY: "sk-test" });
      const out = join(s.home, "t1");
      const args = (table: string): string[] => ["reproduce", table, "--instances", s.instances, "--frames", s.frames, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--max-k", "4", "--out", out];
      const before = readdirSync(s.home, { recursive: true }).length;
      const dry = await runCli([...args("eqa-rm-table-1"), "--dry-run"], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(out), false);
      assert.equal(readdirSync(s.home, { recursive: true }).length, before);
      assert.match(dry.stdout, /dry run: no model was called and nothing was written/);
      assert.match(dry.stdout, /eqa-rm-table-1: 2 row\(s\) from one set of samples: openai\/gpt-4o as a judge \(K = 1, each instance's first sample\) and with test-time scaling \(K = 4\)/);
      assert.match(dry.stdout, /4 instance\(s\): 0 already sampled in .*bench, 4 to sample, 4 sample\(s\) each \(16 call\(s\)\)/);
      const row = /reward model\s+openai\/gpt-4o\s+16\s+0\s+(\d+)\s+12288\s+\$([\d.]+)/.exec(dry.stdout);
      assert.ok(row, dry.stdout);
      // per row: the benchmark run both table rows are read from, as summary.json's runs name it
      assert.match(dry.stdout, new RegExp(`^\\s+bench\\s+16\\s+0\\s+\\$${row[2]!.replace(".", "\\.")}$`, "m"));

      // Table 2 counts the ScanNet instances alone
      const scanNet = await runCli([...args("eqa-rm-table-2"), "--dry-run"], env);
      assert.equal(scanNet.code, 0, scanNet.stderr);
      assert.match(scanNet.stdout, /2 instance\(s\) \(the ScanNet ones\): 0 already sampled in .*, 2 to sample, 4 sample\(s\) each \(8 call\(s\)\)/);
      assert.match(scanNet.stdout, /reward model\s+openai\/gpt-4o\s+8\s+0\s+\d+\s+6144\s+\$/);

      const real = await runCli([...args("eqa-rm-table-1"), "--no-cache"], env);
      assert.equal(real.code, 0, real.stderr);
      assert.equal(server.requests.length, 16);
      // the prompt tokens as the dry run estimates them, from what was sent: text characters / 4 a request, 255 tokens per 64×48 image
      let prompt = 0;
      for (const request of server.requests) {
        const parts = (request.body as { messages: { content: { type: string; text?: string }[] }[] }).messages.flatMap((m) => m.content);
        prompt += Math.ceil(parts.reduce((n, p) => n + (p.text?.length ?? 0), 0) / 4) + 255 * parts.filter((p) => p.type === "image_url").length;
      }
      assert.equal(Number(row[1]), prompt);
      assert.equal(Number(row[2]), Math.round(((prompt * 2.5 + 16 * 768 * 10) / 1e6) * 1e4) / 1e4);

      // the finished table has nothing left to sample
      const after = await runCli([...args("eqa-rm-table-1"), "--dry-run"], env);
      assert.equal(after.code, 0, after.stderr);
      assert.match(after.stdout, /4 instance\(s\): 4 already sampled in .*bench, 0 to sample/);
      assert.equal(server.requests.length, 16);
    });
  });

  test("--batch: every sample of the table goes in one batch through the provider's batch API, and the table equals a live run's", async () => {
    const s = await setup();
    const env = cliEnv(s.home, { OPENAI_API_KEY: "sk-test" });
    const args = (url: string, out: string): string[] => ["reproduce", "eqa-rm-table-1", "--instances", s.instances, "--frames", s.frames, "--model", "openai/judge-vl", "--model-base-url", `${url}/v1`, "--max-k", "2", "--out", out, "--no-cache"];
    await withModelServer((request) => openAiReply(judge(request)), async (server) => {
      const live = await runCli(args(server.url, join(s.home, "live")), env);
      assert.equal(live.code, 0, live.stderr);
    });
    const emulator = openAiBatchEmulator({ answer: (body) => judge({ method: "POST", path: "/v1/chat/completions", headers: {}, rawBody: JSON.stringify(body), body }) });
    const server = await startModelServer((request, index) => emulator.script(request, index));
    try {
      const out = join(s.home, "batched");
      const result = await runCli([...args(server.url, out), "--batch", "--batch-poll-seconds", "0.05"], env);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [8], "two samples of each of the four instances");
      assert.equal(server.requests.filter((r) => r.path === "/v1/chat/completions").length, 0, "no sample asked live");
      const cells = (dir: string): unknown => (readJson(join(dir, "table.json")) as TableJson).rows.map((r) => [r.id, values(r)]);
      assert.deepEqual(cells(out), cells(join(s.home, "live")));
    } finally {
      await server.close();
    }
  });
});
