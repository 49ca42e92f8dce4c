import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { startViewer } from "../../src/report/index.js";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

/**
 * A frames folder with one good episode, frames outside it (what a hostile benchmark would
 * have read and sent to the model), and a benchmark whose second record names `history`.
 */
async function setup(history: (dir: string) => string): Promise<{ dir: string; frames: string; benchmark: string }> {
  const dir = temporaryDir();
  const frames = join(dir, "frames");
  await writeRgbEpisode(join(frames, "scene-a"), 2, 64, 48);
  await writeRgbEpisode(join(dir, "outside", "ep"), 2, 64, 48);
  const benchmark = join(dir, "questions.json");
  const record = (id: string, episode: string): object => ({ question_id: id, question: "What colour is the wall?", answer: "white", category: "attribute recognition", episode_history: episode });
  writeFileSync(benchmark, JSON.stringify([record("q-good", "scene-a"), record("q-bad", history(dir))]));
  return { dir, frames, benchmark };
}

async function answer(command: "answer" | "run", history: (dir: string) => string): Promise<{ code: number | null; stderr: string; calls: number; outCreated: boolean }> {
  const { dir, frames, benchmark } = await setup(history);
  const out = join(dir, "out");
  let result = { code: null as number | null, stderr: "" };
  let calls = 0;
  await withModelServer(() => openAiReply("white"), async (server) => {
    const judge = command === "run" ? ["--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`] : [];
    result = await runCli([command, "--benchmark", benchmark, "--frames", frames, "--agent", "vlm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--num-frames", "1", "--no-cache", "--out", out, ...judge], cliEnv(dir));
    calls = server.requests.length;
  });
  return { ...result, calls, outCreated: existsSync(out) };
}

describe("eqa answer and eqa run with episode paths that leave --frames", () => {
  test("an episode_history that climbs out with `..` is a usage error naming the file, record and field, before any model call", async () => {
    const result = await answer("answer", () => "../outside/ep");
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /questions\.json, id q-bad, field "episode_history": path "\.\.\/outside\/ep" climbs out of .*frames with "\.\."/);
    assert.match(result.stderr, /inside --frames/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    assert.equal(result.calls, 0);
    assert.equal(result.outCreated, false, "no run directory is made");
  });

  test("an absolute episode_history is a usage error naming the record", async () => {
    const result = await answer("answer", (dir) => join(dir, "outside", "ep"));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /id q-bad, field "episode_history": path ".*outside\/ep" is an absolute path/);
    assert.equal(result.calls, 0);
  });

  test("a symbolic link the user made inside --frames is followed (frames kept on another disk, linked into place); the viewer serves nothing through it", async () => {
    const { dir, frames, benchmark } = await setup((d) => {
      mkdirSync(join(d, "frames"), { recursive: true });
      symlinkSync(join(d, "outside", "ep"), join(d, "frames", "linked"));
      return "linked";
    });
    const out = join(dir, "out");
    await withModelServer(() => openAiReply("white"), async (server) => {
      const result = await runCli(["answer", "--benchmark", benchmark, "--frames", frames, "--agent", "vlm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--num-frames", "1", "--no-cache", "--out", out], cliEnv(dir));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.filter((r) => JSON.stringify(r.body).includes("image_url")).length, 2, "both episodes' frames went to the model, the linked one's too");
    });
    const traces = readFileSync(join(out, "traces.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { questionId: string; answer: string; trace: { frames: number[] } });
    assert.deepEqual(traces.map((t) => [t.questionId, t.answer, t.trace.frames.length]).sort(), [["q-bad", "white", 1], ["q-good", "white", 1]]);

    // the viewer serves the frames under the folder it was given, not those a link leads to
    const viewer = await startViewer({ runDirs: [out], port: 0 });
    try {
      const inside = await fetch(`${viewer.url}/api/runs/0/frames/q-good/0`);
      assert.equal(inside.status, 200);
      const linked = await fetch(`${viewer.url}/api/runs/0/frames/q-bad/0`);
      assert.equal(linked.status, 403);
    } finally {
      await viewer.close();
    }
  });

  test("a `..` in an episode_history that climbs out is refused, even written through a link inside --frames", async () => {
    const result = await answer("answer", (dir) => {
      mkdirSync(join(dir, "frames"), { recursive: true });
      symlinkSync(join(dir, "outside"), join(dir, "frames", "linked"));
      return "linked/../../outside/ep";
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /id q-bad, field "episode_history": path "linked\/\.\.\/\.\.\/outside\/ep" climbs out of .*frames with "\.\."/);
    assert.equal(result.calls, 0);
  });

  test("eqa run refuses the same selection before answering or judging anything", async () => {
    const result = await answer("run", () => "scene-a/../../outside/ep");
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /id q-bad, field "episode_history": path "scene-a\/\.\.\/\.\.\/outside\/ep" climbs out of/);
    assert.equal(result.calls, 0);
    assert.equal(result.outCreated, false);
  });
});
