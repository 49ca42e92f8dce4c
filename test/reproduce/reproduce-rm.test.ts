import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
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
      const result = await runCli(["reproduce", "eqa-rm-table-1", "--instances", s.instances, "--frames", s.frames, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--max-k", "2", "--out", out, "--no-cache"], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      // two samples of each of the four instances
      assert.equal(server.requests.length, 8);
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
});
