import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, withModelServer, type ReceivedRequest, type ScriptedReply } from "../helpers/model-server.js";
import { fixturesDir, temporaryDir } from "../helpers/paths.js";

/**
 * `eqa rm bench --dry-run`: the reward model's calls, tokens and dollars, counted from the
 * requests the run would send (keyframes included), against a loopback server that must
 * receive nothing, then compared with what the real run sends.
 */

interface PaperRecord {
  id: string;
  question: string;
  predicted_answer: string;
  reasoning_trace?: string[];
  ground_truth_score: number;
}

const paper = (JSON.parse(readFileSync(join(fixturesDir, "eqa-rm", "paper-case-studies.reconstructed.json"), "utf8")) as { records: PaperRecord[] }).records.filter((r) => r.reasoning_trace !== undefined);

/** The paper's two worked examples (ScanNet) and one HM3D instance of eqakit's own, 5 keyframes each. */
async function setup(): Promise<{ home: string; frames: string; instances: string; questions: string[] }> {
  const home = temporaryDir("eqakit-rm-dry-run-");
  const frames = join(home, "frames");
  const lines = paper.map((r) => ({ id: r.id, question: r.question, predicted_answer: r.predicted_answer, reasoning_trace: r.reasoning_trace, episode_history: `scannet-v0/${r.id}`, ground_truth_score: r.ground_truth_score, category: "object localization" }));
  lines.push({ id: "hm3d-sofa", question: "What colour is the sofa?", predicted_answer: "Blue.", reasoning_trace: ["I look at the sofa.", "It is blue."], episode_history: "hm3d-v0/000-hm3d-a", ground_truth_score: 8, category: "attribute recognition" });
  for (const line of lines) await writeRgbEpisode(join(frames, ...line.episode_history.split("/")), 8, 64, 48);
  const instances = join(home, "instances.jsonl");
  writeFileSync(instances, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return { home, frames, instances, questions: lines.map((l) => l.question) };
}

const reply = (): ScriptedReply => openAiReply("<critique>\nThe trace matches the frames.\n</critique>\n<score>7</score>");

interface PlanRow {
  calls: number;
  cached: number;
  promptTokens: number;
  completionTokens: number;
  dollars: number;
}

function planRow(stdout: string): PlanRow | undefined {
  const match = /reward model\s+openai\/gpt-4o\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\$([\d.]+)/.exec(stdout);
  if (!match) return undefined;
  const [calls, cached, promptTokens, completionTokens, dollars] = match.slice(1).map(Number) as [number, number, number, number, number];
  return { calls, cached, promptTokens, completionTokens, dollars };
}

/** The prompt tokens of received OpenAI requests as the dry run estimates them: text characters / 4, and 255 per 64×48 image (85 + 170 × one tile). */
function wireTokens(requests: readonly ReceivedRequest[]): { prompt: number; images: number } {
  let prompt = 0;
  let images = 0;
  for (const request of requests) {
    const body = request.body as { messages: { content: string | { type: string; text?: string }[] }[] };
    let characters = 0;
    for (const message of body.messages) {
      if (typeof message.content === "string") characters += message.content.length;
      else
        for (const part of message.content) {
          if (part.type === "text") characters += part.text!.length;
          else if (part.type === "image_url") images++;
        }
    }
    prompt += Math.ceil(characters / 4);
  }
  return { prompt: prompt + 255 * images, images };
}

const listing = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();

describe("eqa rm bench --dry-run", () => {
  test("names the reward model's calls (K per instance), tokens with the keyframes and dollars; calls no model and writes nothing; the real run sends exactly those calls", async () => {
    const s = await setup();
    await withModelServer(reply, async (server) => {
      const out = join(s.home, "bench");
      const args = ["rm", "bench", "--instances", s.instances, "--frames", s.frames, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--max-k", "4", "--resamples", "50", "--out", out];
      const env = cliEnv(s.home, { OPENAI_API_KEY: "sk-test" });
      const before = listing(s.home);
      const dry = await runCli([...args, "--dry-run"], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0);
      assert.deepEqual(listing(s.home), before);
      assert.equal(existsSync(out), false);
      assert.match(dry.stdout, /dry run: no model was called and nothing was written/);
      assert.match(dry.stdout, /3 instance\(s\): 0 already sampled in .*bench, 3 to sample, 4 sample\(s\) each \(12 call\(s\)\)/);
      assert.match(dry.stdout, /K = 1 … 4 are scored from the same 4 samples per instance/);
      const planned = planRow(dry.stdout);
      assert.ok(planned, dry.stdout);

      const real = await runCli([...args, "--no-cache"], env);
      assert.equal(real.code, 0, real.stderr);
      // the calls, the prompt tokens (images included) and the completion limits the dry run counted are the ones sent
      assert.equal(server.requests.length, 12);
      const sent = wireTokens(server.requests);
      assert.equal(sent.images, 12 * 5);
      assert.deepEqual(planned, { calls: 12, cached: 0, promptTokens: sent.prompt, completionTokens: 12 * 768, dollars: Math.round(((sent.prompt * 2.5 + 12 * 768 * 10) / 1e6) * 1e4) / 1e4 });
      for (const question of s.questions) assert.equal(server.requests.filter((r) => JSON.stringify(r.body).includes(JSON.stringify(question).slice(1, -1))).length, 4, question);
    });
  });

  test("leaves out what the run folder already holds: after a run where one instance's calls failed, it counts that instance's K calls, which the resumed run then sends", async () => {
    const s = await setup();
    const failing = s.questions[2]!;
    let refuse = true;
    await withModelServer(
      (request) => (refuse && JSON.stringify(request.body).includes(failing) ? { status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } } : reply()),
      async (server) => {
        const out = join(s.home, "bench");
        const args = ["rm", "bench", "--instances", s.instances, "--frames", s.frames, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--max-k", "2", "--resamples", "50", "--out", out, "--no-cache"];
        const env = cliEnv(s.home, { OPENAI_API_KEY: "sk-test" });
        const first = await runCli(args, env);
        assert.notEqual(first.code, 2, first.stderr);
        assert.equal(server.requests.length, 6);
        const records = readFileSync(join(out, "evaluations.jsonl"), "utf8");

        const dry = await runCli([...args, "--dry-run"], env);
        assert.equal(dry.code, 0, dry.stderr);
        assert.equal(server.requests.length, 6);
        assert.equal(readFileSync(join(out, "evaluations.jsonl"), "utf8"), records);
        assert.match(dry.stdout, /3 instance\(s\): 2 already sampled in .*bench, 1 to sample, 2 sample\(s\) each \(2 call\(s\)\)/);
        assert.equal(planRow(dry.stdout)?.calls, 2);

        refuse = false;
        const resumed = await runCli(args, env);
        assert.equal(resumed.code, 0, resumed.stderr);
        const again = server.requests.slice(6);
        assert.equal(again.length, 2);
        assert.ok(again.every((r) => JSON.stringify(r.body).includes(failing)));
        assert.equal(planRow(dry.stdout)?.promptTokens, wireTokens(again).prompt);
      },
    );
  });

  test("the requests counted are the run's to the byte: after a cached run, a dry run in a new folder finds every one of them in the model-call cache, at no cost", async () => {
    const s = await setup();
    await withModelServer(reply, async (server) => {
      const env = cliEnv(s.home, { OPENAI_API_KEY: "sk-test" });
      const args = (out: string): string[] => ["rm", "bench", "--instances", s.instances, "--frames", s.frames, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--max-k", "2", "--resamples", "50", "--out", join(s.home, out)];
      const real = await runCli(args("first"), env);
      assert.equal(real.code, 0, real.stderr);
      assert.equal(server.requests.length, 6);
      const dry = await runCli([...args("second"), "--dry-run"], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 6);
      assert.match(dry.stdout, /3 instance\(s\): 0 already sampled in .*second, 3 to sample/);
      assert.deepEqual(
        { calls: planRow(dry.stdout)?.calls, cached: planRow(dry.stdout)?.cached, dollars: planRow(dry.stdout)?.dollars },
        { calls: 6, cached: 6, dollars: 0 },
      );
    });
  });
});
