import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastUserText, openAiReply, withModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { runCli, cliEnv } from "../helpers/cli.js";
import { writeSceneEpisode } from "./scene-fixture.js";
import { loadRun } from "../../src/report/index.js";
import { memoryBuildSettings, memorySettingsKey } from "../../src/agents/index.js";

let framesRoot: string;
let benchmark: string;
before(async () => {
  framesRoot = temporaryDir("eqakit-memory-folder-");
  await writeSceneEpisode(join(framesRoot, "hm3d-v0", "scene"), { layout: "hm3d", views: 8 });
  await writeSceneEpisode(join(framesRoot, "hm3d-v0", "other"), { layout: "hm3d", views: 8, startDegrees: 45 });
  benchmark = join(framesRoot, "questions.json");
  writeFileSync(
    benchmark,
    JSON.stringify([
      { question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" },
      { question_id: "q2", question: "What is next to the table?", answer: "a chair", category: "object recognition", episode_history: "hm3d-v0/other" },
      { question_id: "q3", question: "Where is the lamp?", answer: "above the cabinet", category: "object localization", episode_history: "hm3d-v0/scene" },
    ]),
  );
});

interface Record {
  episode: string;
  settingsKey: string;
  graph: string | null;
  error: string | null;
}

/** The lines of one of a memory folder's files: memories.jsonl (episodes built) or memory-failures.jsonl (failed attempts). */
function records(dir: string, file = "memories.jsonl"): Record[] {
  if (!existsSync(join(dir, file))) return [];
  return readFileSync(join(dir, file), "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record);
}

describe("eqa memory build --benchmark and eqa answer --memory", () => {
  test("every episode is built once, kept on a second build, and read by the agents without frames", async () => {
    const home = temporaryDir("eqakit-memory-folder-cli-");
    const memory = join(home, "memory");
    const build = ["memory", "build", "--benchmark", benchmark, "--frames", framesRoot, "--out", memory, "--no-detector", "--sampling", "every:2"];
    const first = await runCli(build, cliEnv(home));
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /2 episodes: 2 built, 0 kept from an earlier build, 0 failed/);
    const written = records(memory);
    assert.deepEqual(written.map((r) => [r.episode, r.error]), [["hm3d-v0/scene", null], ["hm3d-v0/other", null]]);
    assert.ok(existsSync(join(memory, written[0]!.graph!, "scene-graph.json")));
    assert.ok(existsSync(join(memory, written[0]!.graph!, "topdown.png")));

    const again = await runCli(build, cliEnv(home));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /2 episodes: 0 built, 2 kept from an earlier build, 0 failed/);
    assert.equal(records(memory).length, 2);

    // a shard builds its own episodes only, into the same folder
    const sharded = await runCli([...build, "--shard", "0/2"], cliEnv(home));
    assert.equal(sharded.code, 0, sharded.stderr);
    assert.match(sharded.stdout, /\d episodes \(shard 0\/2\): 0 built/);

    await withModelServer(() => openAiReply("A: a cup"), async (server) => {
      // no --frames: the memory agents read the folder and open no frame, so no detector or
      // geometry work can happen; only the model is called
      const run = join(home, "run");
      const answered = await runCli(["answer", "--benchmark", benchmark, "--memory", memory, "--agent", "conceptgraph", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--no-detector", "--sampling", "every:2", "--no-force-guess", "--out", run, "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(answered.code, 0, answered.stderr);
      assert.equal(server.requests.length, 3);
      assert.match(lastUserText(server.requests[0]!), /cup, centre/);
      const traces = readFileSync(join(run, "traces.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { trace: { notes: string[] } });
      assert.ok(traces.every((t) => t.trace.notes.some((n) => /^memory read from .*memory: 5 instances/.test(n))), JSON.stringify(traces[0]!.trace.notes));

      // other settings than the memories were built with: refused before any call, with the reason
      const other = await runCli(["answer", "--benchmark", benchmark, "--memory", memory, "--agent", "svm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--sampling", "every:2", "--out", join(home, "run2"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(other.code, 2, other.stderr);
      assert.match(other.stderr, /were built with other settings than this run asks for: detector "without-masks" here, "never" in the folder/);
      assert.equal(server.requests.length, 3);

      const empty = await runCli(["answer", "--benchmark", benchmark, "--memory", join(home, "nothing"), "--agent", "svm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--out", join(home, "run3"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(empty.code, 2, empty.stderr);
      assert.match(empty.stderr, /holds no memories/);
    });
  });

  test("model calls that fail (500, a body that is not JSON, no choices, a reset connection; --max-retries 0): each failure named by its call and frame, no stack trace, exit 1; a run again asks them again", async () => {
    const home = temporaryDir("eqakit-memory-folder-faults-");
    const faults: ScriptedReply[] = [{ status: 500, body: { error: { message: "overloaded" } } }, { body: "{ not json" }, { body: { id: "x", object: "chat.completion", created: 0, model: "m" } }, { reset: true }];
    const args = (url: string, out: string, single = false) => ["memory", "build", ...(single ? ["--frames", join(framesRoot, "hm3d-v0", "scene")] : ["--benchmark", benchmark, "--frames", framesRoot]), "--out", join(home, out), "--no-detector", "--sampling", "every:4", "--captioner", "openai/gpt-4o", "--captioner-base-url", `${url}/v1`, "--max-retries", "0", "--no-cache"];
    const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
    for (const [k, fault] of faults.entries()) {
      await withModelServer((_request, index) => (index % 3 === 1 ? fault : openAiReply("a red cup")), async (server) => {
        const single = await runCli(args(server.url, `single-${k}`, true), env);
        assert.equal(single.code, 1, single.stderr);
        assert.match(single.stderr, /eqa: the memory of \S+ was not built: the call for the caption of object \d+ \(a crop of frame \d+\) failed: .*\(http:\/\/127\.0\.0\.1:\d+\/v1, after 0 retries\)/);
        assert.doesNotMatch(single.stderr, /\n\s+at /, "no stack trace");
        const folder = await runCli(args(server.url, `folder-${k}`), env);
        assert.equal(folder.code, 1, folder.stderr);
        assert.doesNotMatch(folder.stderr + folder.stdout, /\n\s+at /);
        assert.match(folder.stdout, /failed: hm3d-v0\/\w+: the call for the caption of object \d+ \(a crop of frame \d+\) failed: /);
        assert.deepEqual(records(join(home, `folder-${k}`)).filter((r) => r.error !== null), [], "memories.jsonl holds the episodes built only");
        const failed = records(join(home, `folder-${k}`), "memory-failures.jsonl").filter((r) => r.error !== null) as (Record & { failedCall?: { call: string; frame: number; instance?: number } })[];
        assert.ok(failed.length > 0 && failed.every((r) => r.failedCall?.call === "caption" && Number.isInteger(r.failedCall.frame) && Number.isInteger(r.failedCall.instance)), JSON.stringify(failed));
      });
    }
    // the same command with a model that answers: the failed episodes are built now
    await withModelServer(() => openAiReply("a red cup"), async (server) => {
      const again = await runCli(args(server.url, "folder-0"), env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /2 episodes: 2 built, 0 kept from an earlier build, 0 failed/);
      // each episode once in memories.jsonl, its failed attempt kept apart and superseded
      const built = records(join(home, "folder-0"));
      assert.deepEqual(built.map((r) => r.episode).sort(), ["hm3d-v0/other", "hm3d-v0/scene"]);
      assert.ok(built.every((r) => r.error === null && r.graph !== null));
      assert.ok(records(join(home, "folder-0"), "memory-failures.jsonl").length > 0);
      const run = await loadRun(join(home, "folder-0"));
      assert.equal(run.metrics.find((m) => m.name === "episodes built")?.value, 2);
      assert.deepEqual(run.questions.map((q) => q.error), [undefined, undefined]);
      assert.equal((await runCli(args(server.url, "single-0", true), env)).code, 0);
    });
  });

  test("a captioner that fails for good fails its episodes alone: each is recorded with its reason, exit 1", async () => {
    const home = temporaryDir("eqakit-memory-folder-fail-");
    const memory = join(home, "memory");
    await withModelServer(() => ({ status: 503, body: { error: { message: "overloaded" } } }), async (server) => {
      const failed = await runCli(["memory", "build", "--benchmark", benchmark, "--frames", framesRoot, "--out", memory, "--no-detector", "--sampling", "every:4", "--captioner", "openai/gpt-4o", "--captioner-base-url", `${server.url}/v1`, "--max-retries", "1", "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stdout, /2 episodes: 0 built, 0 kept from an earlier build, 2 failed/);
      assert.match(failed.stdout, /failed: hm3d-v0\/scene: .*503.*after 1 retries/);
      assert.doesNotMatch(failed.stderr, /at .*\.ts:\d+/);
    });
    assert.deepEqual(records(memory, "memory-failures.jsonl").map((r) => [r.episode, r.graph, typeof r.error]), [["hm3d-v0/scene", null, "string"], ["hm3d-v0/other", null, "string"]]);
    assert.deepEqual(records(memory), [], "nothing built");

    // an unreachable endpoint: the same, recorded and gone on from
    const unreachable = await runCli(["memory", "build", "--benchmark", benchmark, "--frames", framesRoot, "--out", join(home, "memory2"), "--no-detector", "--sampling", "every:4", "--captioner", "openai/gpt-4o", "--captioner-base-url", "http://127.0.0.1:1/v1", "--max-retries", "0", "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
    assert.equal(unreachable.code, 1, unreachable.stderr);
    assert.match(unreachable.stdout, /2 failed/);
    assert.match(unreachable.stdout, /failed: hm3d-v0\/other: /);

    // the answer run says why the episode has no memory
    await withModelServer(() => openAiReply("A: a cup"), async (server) => {
      const answered = await runCli(["answer", "--benchmark", benchmark, "--memory", memory, "--agent", "svm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--captioner", "openai/gpt-4o", "--captioner-base-url", `${server.url}/v1`, "--no-detector", "--sampling", "every:4", "--no-force-guess", "--out", join(home, "run"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(answered.code, 1, answered.stderr);
      const traces = readFileSync(join(home, "run", "traces.jsonl"), "utf8");
      assert.match(traces, /the memory of episode hm3d-v0\/scene failed to build/);
    });
  });

  test("a ConceptGraphs-style JSON is imported as an episode's memory, and read by eqa answer --memory", async () => {
    const home = temporaryDir("eqakit-memory-import-");
    const memory = join(home, "memory");
    const file = join(home, "obj.json");
    writeFileSync(file, JSON.stringify({
      object_1: { id: 1, object_tag: "sofa", object_caption: "a grey three-seat sofa", bbox_center: [1, 0.4, 2], bbox_extent: [2, 0.8, 0.9], bbox_volume: 1.44 },
      object_2: { id: 2, object_tag: "cushion", object_caption: "a red cushion", bbox_center: [1, 0.9, 2], bbox_extent: [0.4, 0.2, 0.4] },
    }));
    const imported = await runCli(["memory", "import", file, "--episode", "hm3d-v0/scene", "--out", memory], cliEnv(home));
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /episode hm3d-v0\/scene: 2 objects, 1 relations/);
    const bad = join(home, "bad.json");
    writeFileSync(bad, JSON.stringify({ objects: [{ object_tag: "sofa", bbox_center: [1, 2] }] }));
    const refused = await runCli(["memory", "import", bad, "--episode", "hm3d-v0/scene", "--out", memory], cliEnv(home));
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /bad\.json.*not a ConceptGraphs-style scene graph: .*bbox_center/);

    await withModelServer(() => openAiReply("A: a red cushion"), async (server) => {
      const answered = await runCli(["answer", "--benchmark", benchmark, "--subset", writeSubset(home, ["q1"]), "--memory", memory, "--agent", "conceptgraph", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--no-force-guess", "--out", join(home, "run"), "--no-cache"], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(answered.code, 0, answered.stderr);
      const prompt = lastUserText(server.requests[0]!);
      assert.match(prompt, /- \[0\] a grey three-seat sofa \(sofa\), centre \(1\.00, 0\.40, 2\.00\) m, size 2\.00 x 0\.80 x 0\.90 m/);
      assert.match(prompt, /\[1\] cushion is on \[0\] sofa/);
    });
  });
});

function writeSubset(dir: string, ids: string[]): string {
  const file = join(dir, "subset.json");
  writeFileSync(file, JSON.stringify(ids));
  return file;
}

describe("what a memory folder keys its memories by", () => {
  test("--support-frames keys a memory apart; without it the key is the one memories built before it had", () => {
    assert.equal("supportFrames" in memoryBuildSettings({}), false);
    assert.equal("supportFrames" in memoryBuildSettings({ supportFrames: 0 }), false);
    assert.equal(memoryBuildSettings({ supportFrames: 2 }).supportFrames, 2);
    // without the detector nothing is detected, weakly or not
    assert.equal("supportFrames" in memoryBuildSettings({ detector: false, supportFrames: 2 }), false);
  });

  test("memories detected with boxes suppressed within each class are keyed apart from those suppressed across classes", () => {
    assert.deepEqual(memoryBuildSettings({}).detectorViews, { maxPerFrame: 100, suppression: "per-class" });
    assert.equal("detectorViews" in memoryBuildSettings({ detector: false }), false);
  });

  test("memories whose mask views keep every point, one object per mask id, and whose on/inside come from surfaces are keyed apart from those built before", () => {
    assert.equal(memoryBuildSettings({}).maskViews, "whole");
    assert.equal("maskViews" in memoryBuildSettings({ masks: false }), false);
    assert.equal(memoryBuildSettings({ masks: false }).relations, "surfaces");
    const older = { ...memoryBuildSettings({ detector: false }) };
    delete older.maskViews;
    delete older.relations;
    assert.notEqual(memorySettingsKey(memoryBuildSettings({ detector: false })), memorySettingsKey(older));
  });
});
