import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
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

  test("an episode_history reaching a folder outside --frames through a symbolic link is a usage error", async () => {
    const result = await answer("answer", (dir) => {
      mkdirSync(join(dir, "frames"), { recursive: true });
      symlinkSync(join(dir, "outside"), join(dir, "frames", "linked"));
      return "linked/ep";
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /id q-bad, field "episode_history": path "linked\/ep" leads through a symbolic link to .*outside\/ep, outside .*frames/);
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
