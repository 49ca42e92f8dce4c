import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, withModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

/** A stop-check reply "No" whose log-probabilities give P(yes) = p. */
function stopReply(p: number): ScriptedReply {
  const reply = openAiReply("No");
  const choice = (reply.body as { choices: Record<string, unknown>[] }).choices[0]!;
  choice.logprobs = { content: [{ token: "No", logprob: Math.log(1 - p), top_logprobs: [{ token: "No", logprob: Math.log(1 - p) }, { token: "Yes", logprob: Math.log(p) }] }] };
  return reply;
}

interface Record_ {
  questionId: string;
  confidence: number | null;
  pathLengthM: number;
  gtPathLengthM: number | null;
}

describe("eqa explore: EXPRESS-Bench's reliability figures", () => {
  test("ACE, NPL and WCE from each episode's answering confidence, path and ground-truth length, in the summary and printed; episodes without lᵢ named", async () => {
    const home = temporaryDir();
    const episodes = join(home, "episodes.json");
    writeFileSync(episodes, JSON.stringify([
      { question_id: "with-gt", question: "What colour is the sofa?", scene: "home-0", gt_path_length: 4 },
      { question_id: "without-gt", question: "What colour is the sofa?", scene: "home-0" },
    ]));
    const confidences = [0.1, 0.25, 0.4];
    const asked = new Map<string, number>();
    await withModelServer((request) => {
      const body = request.body as { logprobs?: boolean; messages: unknown[] };
      if (!body.logprobs) return openAiReply("no");
      // the stop checks of each episode get 0.1, 0.25, 0.4 in turn
      const key = JSON.stringify(body.messages).includes("with-gt") ? "a" : "b";
      const n = asked.get(key) ?? 0;
      asked.set(key, n + 1);
      return stopReply(confidences[n % 3]!);
    }, async (server) => {
      const out = join(home, "run");
      const result = await runCli(["explore", "--episodes", episodes, "--agent", "fine-eqa", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--max-steps", "3", "--concurrency", "1", "--width", "64", "--height", "48", "--image-size", "64", "--out", out, "--no-cache"], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      const records = readFileSync(join(out, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record_);
      const withGt = records.find((r) => r.questionId === "with-gt")!;
      assert.equal(withGt.gtPathLengthM, 4);
      assert.ok(typeof withGt.confidence === "number" && confidences.includes(Math.round(withGt.confidence * 100) / 100), String(withGt.confidence));
      const summary = readJson(join(out, "summary.json")) as { reliability: { ace: number; npl: number; wce: number; n: number; leftOut: { reason: string; episodes: number }[] } };
      const ratio = 4 / Math.max(withGt.pathLengthM, 4);
      assert.equal(summary.reliability.n, 1);
      assert.ok(Math.abs(summary.reliability.ace - withGt.confidence!) < 1e-12);
      assert.ok(Math.abs(summary.reliability.npl - ratio) < 1e-12);
      assert.ok(Math.abs(summary.reliability.wce - withGt.confidence! * ratio) < 1e-12);
      assert.deepEqual(summary.reliability.leftOut.map((l) => l.episodes), [1]);
      assert.match(summary.reliability.leftOut[0]!.reason, /no ground-truth length/);
      assert.match(result.stdout, /reliability \(EXPRESS-Bench\): ACE \d\.\d{3}, NPL \d\.\d{3}, WCE \d\.\d{3} \(n=1\)/);
      assert.match(result.stdout, /ACE\/NPL\/WCE leave out 1 episode\(s\): no ground-truth length/);
    });
  });
});
