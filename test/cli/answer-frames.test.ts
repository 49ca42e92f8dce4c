import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { linspaceRoundIndices, prepareImage } from "../../src/episodes/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

type Body = { messages: { content: string | { type: string; text?: string; image_url?: { url: string } }[] }[] };

function imagesOf(body: unknown): Buffer[] {
  const content = (body as Body).messages[0]!.content;
  if (typeof content === "string") return [];
  return content.filter((p) => p.type === "image_url").map((p) => Buffer.from(p.image_url!.url.split(",")[1]!, "base64"));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => statSync(join(dir, name)).isFile());
}

describe("eqa answer --agent vlm prepares an episode's frames once", () => {
  test("six questions over two episodes at --concurrency 6: each request carries the frames prepared alone, and the frame folder holds each episode's frames once; a second run reads them from it", async () => {
    const home = temporaryDir();
    const frames = join(home, "frames");
    await writeRgbEpisode(join(frames, "ep-a"), 10, 640, 480);
    await writeRgbEpisode(join(frames, "ep-b"), 7, 640, 480);
    const questions = Array.from({ length: 6 }, (_, i) => ({ question_id: `q${i}`, question: `What is ${i}?`, answer: "x", category: "object recognition", episode_history: i % 2 === 0 ? "ep-a" : "ep-b" }));
    const benchmark = join(home, "questions.json");
    writeFileSync(benchmark, JSON.stringify(questions));
    const expected = new Map<string, Buffer[]>();
    for (const [episode, count] of [["ep-a", 10], ["ep-b", 7]] as const) {
      const indices = linspaceRoundIndices(count, 4);
      expected.set(episode, (await Promise.all(indices.map((i) => prepareImage(join(frames, episode, `${String(i).padStart(5, "0")}-rgb.png`))))).map((p) => p.data));
    }
    await withModelServer(() => ({ ...openAiReply("a chair"), delayMs: 50 }), async (server) => {
      for (const run of ["first", "second"]) {
        const before = server.requests.length;
        const out = join(home, `run-${run}`);
        const result = await runCli(["answer", "--benchmark", benchmark, "--frames", frames, "--agent", "vlm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--num-frames", "4", "--concurrency", "6", "--no-cache", "--out", out], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(result.code, 0, result.stderr);
        // the force-a-guess check that follows each answer carries no image
        const requests = server.requests.slice(before).filter((r) => imagesOf(r.body).length > 0);
        assert.equal(requests.length, 6);
        for (const request of requests) {
          const text = JSON.stringify(request.body);
          const id = /What is (\d)\?/.exec(text)![1]!;
          const images = imagesOf(request.body);
          const wanted = expected.get(Number(id) % 2 === 0 ? "ep-a" : "ep-b")!;
          assert.equal(images.length, 4);
          images.forEach((image, i) => assert.ok(image.equals(wanted[i]!), `${run} run, question q${id}, image ${i}: the bytes prepared alone`));
        }
        assert.equal(filesUnder(join(home, "cache", "eqakit", "frames")).length, 8, "4 frames of each of the 2 episodes, once");
        const traces = readFileSync(join(out, "traces.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { error: string | null });
        assert.ok(traces.every((t) => t.error === null));
      }
    });
  });
});
