import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { answerQuestions, buildEpisodeMemory, buildMemory, createAgent } from "../../src/agents/index.js";
import type { Question } from "../../src/core/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { ModelRuntime, resolveModel } from "../../src/models/index.js";
import { lastUserText, openAiReply, withModelServer } from "../helpers/model-server.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { temporaryDir } from "../helpers/paths.js";
import { runCli, cliEnv } from "../helpers/cli.js";
import { IMAGE, writeSceneEpisode } from "./scene-fixture.js";

let root: string;
before(async () => {
  root = temporaryDir("eqakit-memory-sources-");
  await writeSceneEpisode(join(root, "hm3d-v0", "scene"), { layout: "hm3d", views: 8 });
  await writeRgbEpisode(join(root, "hm3d-v0", "rgb-only"), 2, 96, 64);
});

/** Writes a frame's HM3D depth (16-bit, 10 m full scale) as one value everywhere. */
async function flatDepth(dir: string, frame: number, metres: number): Promise<void> {
  const { width, height } = IMAGE;
  const depth = new Uint16Array(width * height).fill(Math.min(65535, Math.trunc((metres / 10) * 65535)));
  await sharp(depth, { raw: { width, height, channels: 1 } }).toColourspace("grey16").png().toFile(join(dir, `${String(frame).padStart(5, "0")}-depth.png`));
}

describe("views without valid depth", () => {
  test("beyond the 4 m cut-off or with no depth at all, they create and join no instance", async () => {
    const dir = join(root, "far");
    cpSync(join(root, "hm3d-v0", "scene"), dir, { recursive: true });
    await flatDepth(dir, 0, 0);
    await flatDepth(dir, 1, 5);
    const episode = await openEpisode(dir, "hm3d-v0/far");
    const { graph } = await buildMemory(episode, { detector: null, sampling: { kind: "every", step: 1 } });
    assert.deepEqual(graph.instances.map((i) => i.label).sort(), ["cabinet", "chair", "cup", "lamp", "table"]);
    assert.ok(graph.instances.every((i) => i.box !== undefined), "every instance has a 3-D box");
    assert.ok(graph.notes.some((n) => /^\d+ object views left out: no valid depth within 4 m/.test(n)), graph.notes.join("\n"));
  });
});

describe("intrinsics", () => {
  test("the notes say which intrinsics were used and where they came from", async () => {
    const scene = join(root, "hm3d-v0", "scene");
    const sampling = { kind: "every" as const, step: 4 };
    const own = (await buildMemory(await openEpisode(scene, "hm3d-v0/scene"), { detector: null, sampling })).graph;
    assert.ok(own.notes.includes("depth back-projected with the intrinsics of the depth camera's, from intrinsic_depth.txt (fx 110.0, fy 110.0, cx 80.0, cy 60.0 at 160×120)"), own.notes.join("\n"));

    const colourOnly = join(root, "colour-only");
    cpSync(scene, colourOnly, { recursive: true });
    rmSync(join(colourOnly, "intrinsic_depth.txt"));
    const scaled = (await buildMemory(await openEpisode(colourOnly, "hm3d-v0/colour-only"), { detector: null, sampling })).graph;
    assert.ok(scaled.notes.some((n) => n.startsWith("depth back-projected with the intrinsics of the colour camera's, from intrinsic_color.txt scaled to the depth image (fx 110.0")), scaled.notes.join("\n"));

    const none = join(root, "no-intrinsics");
    cpSync(colourOnly, none, { recursive: true });
    rmSync(join(none, "intrinsic_color.txt"));
    const missing = (await buildMemory(await openEpisode(none, "hm3d-v0/no-intrinsics"), { detector: null, sampling })).graph;
    assert.equal(missing.hasPositions, false);
    assert.ok(missing.notes.some((n) => /^positions are missing: the frames have depth but no camera intrinsics/.test(n)), missing.notes.join("\n"));
    assert.ok(!missing.notes.some((n) => /no depth or no valid poses/.test(n)));
  });
});

describe("instance masks are the default source", () => {
  test("an episode with masks: no detector by default; one without: the detector", async () => {
    const sampling = { kind: "every" as const, step: 4 };
    const masked = (await buildEpisodeMemory(await openEpisode(join(root, "hm3d-v0", "scene"), "hm3d-v0/scene"), { sampling })).graph;
    assert.equal(masked.detector, null);
    assert.equal(masked.instances.length, 5);
    assert.ok(masked.notes.some((n) => /instance masks; the detector did not run/.test(n)));
    const asked = (await buildEpisodeMemory(await openEpisode(join(root, "hm3d-v0", "scene"), "hm3d-v0/scene"), { sampling, detector: true })).graph;
    assert.equal(asked.detector, "centernet-coco");
    const rgb = (await buildEpisodeMemory(await openEpisode(join(root, "hm3d-v0", "rgb-only"), "hm3d-v0/rgb-only"), {})).graph;
    assert.equal(rgb.detector, "centernet-coco");
  });

  test("the agents' default, through createAgent: the trace says no detector ran on a masked episode", async () => {
    const q: Question = { questionId: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episodeHistory: "hm3d-v0/scene" };
    await withModelServer(() => openAiReply("A: a cup"), async (server) => {
      const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 });
      const spec = resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
      const { agent, models } = createAgent({ agent: "conceptgraph", model: spec, sampling: { kind: "every", step: 4 }, forceGuess: false }, runtime);
      const result = await answerQuestions({ questions: [q], agent, framesRoot: root, outDir: temporaryDir(), concurrency: 1, models });
      const record = result.records[0]!;
      assert.equal(record.error, null, String(record.error));
      assert.ok(record.trace!.notes.some((n) => /5 instances.*\(detector none,/.test(n)), record.trace!.notes.join("\n"));
    });
  });
});

describe("eqa answer --ignore-labels", () => {
  test("has the meaning eqa memory build gives it: those mask labels are not objects", async () => {
    const home = temporaryDir("eqakit-ignore-labels-");
    const benchmark = join(home, "questions.json");
    writeFileSync(benchmark, JSON.stringify([{ question_id: "q-ignore", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
    await withModelServer(() => openAiReply("A: a cup"), async (server) => {
      const answered = await runCli(["answer", "--benchmark", benchmark, "--frames", root, "--agent", "conceptgraph", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--ignore-labels", "lamp,cabinet", "--sampling", "every:4", "--no-force-guess", "--out", join(home, "run"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(answered.code, 0, answered.stderr);
      const objects = lastUserText(server.requests[0]!).split("Objects:\n")[1]!.split("\n\nRelations:")[0]!;
      assert.equal(objects.split("\n").length, 3, objects);
      assert.doesNotMatch(objects, /lamp|cabinet/);
    });
    const built = await runCli(["memory", "build", "--frames", join(root, "hm3d-v0", "scene"), "--out", join(home, "memory"), "--ignore-labels", "lamp,cabinet", "--sampling", "every:4"], cliEnv(home));
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stdout, /3 instances/);
  });
});

describe("eqa memory build --no-masks", () => {
  test("leaves an episode's instance masks out: the detector finds the objects on every frame, as in a video without masks", async () => {
    const home = temporaryDir("eqakit-no-masks-");
    const frames = join(root, "hm3d-v0", "scene");
    const built = await runCli(["memory", "build", "--frames", frames, "--out", join(home, "memory"), "--no-masks", "--sampling", "every:4"], cliEnv(home));
    assert.equal(built.code, 0, built.stderr);
    const graph = JSON.parse(readFileSync(join(home, "memory", "scene-graph.json"), "utf8")) as { detector: string | null; notes: string[]; instances: { label: string }[] };
    assert.ok(graph.detector, "the detector ran");
    assert.ok(graph.notes.some((n) => /^the instance masks of \d+ frames were left out/.test(n)), graph.notes.join("\n"));
    assert.ok(graph.instances.every((i) => i.label !== "cabinet" && i.label !== "lamp"), "no instance from the masks' labels");

    const withMasks = await runCli(["memory", "build", "--frames", frames, "--out", join(home, "masks"), "--sampling", "every:4"], cliEnv(home));
    assert.equal(withMasks.code, 0, withMasks.stderr);
    const fromMasks = JSON.parse(readFileSync(join(home, "masks", "scene-graph.json"), "utf8")) as { instances: { label: string }[] };
    assert.ok(fromMasks.instances.some((i) => i.label === "cabinet"), "by default the masks are the objects");

    const neither = await runCli(["memory", "build", "--frames", frames, "--out", join(home, "none"), "--no-masks", "--no-detector"], cliEnv(home));
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /--no-masks and --no-detector leave nothing to find the objects with/);
  });
});
