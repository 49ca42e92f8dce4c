/**
 * A full disk, made with /dev/full (every write to it fails with ENOSPC): a run's appended
 * records file is a symbolic link to it, or the temporary file an atomic write goes through
 * (`<file>.<pid>.tmp`, created as soon as the child process exists, long before it writes) is.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OutputError } from "../../src/core/index.js";
import { FrameFolderWriter, type ObservedFrame } from "../../src/episodes/index.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";
import { cliEnv, collect, runCli, startCli, type CliResult } from "../helpers/cli.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const FULL = "/dev/full";
const ENOSPC = /could not write the file: no space left on the device \(ENOSPC\)/;

/** The files under `dir`, relative, symbolic links included (not followed). */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => !lstatSync(join(dir, f)).isDirectory());
}

/** No temporary file and no empty picture is left anywhere under `dir`. */
function assertNothingPartial(dir: string): void {
  const files = filesUnder(dir);
  assert.deepEqual(files.filter((f) => f.endsWith(".tmp")), [], "temporary files left");
  assert.deepEqual(files.filter((f) => f.endsWith(".png") && lstatSync(join(dir, f)).size === 0), [], "empty PNGs left");
}

/** Exit 3, the file named, the disk said to be full, no stack trace. */
function assertFullDisk(result: CliResult, file: string): void {
  assert.equal(result.code, 3, result.stderr);
  assert.ok(result.stderr.includes(`eqa: ${file}: `), result.stderr);
  assert.match(result.stderr, ENOSPC);
  assert.match(result.stderr, /run the same command again/);
  assert.doesNotMatch(result.stderr, /^\s+at /m, "no stack trace");
}

/** Runs `eqa ARGS` with `<file>.<pid>.tmp` linked to /dev/full: the atomic write of `file` meets a full disk. */
async function runWithFullTemporary(args: string[], env: NodeJS.ProcessEnv, file: string): Promise<CliResult> {
  const child = startCli(args, env);
  symlinkSync(FULL, `${file}.${child.pid}.tmp`);
  return collect(child);
}

const lines = (file: string): string[] => readFileSync(file, "utf8").split("\n").filter((l) => l !== "");

before(() => {
  assert.ok(statSync(FULL).isCharacterDevice(), "/dev/full is the full disk these tests write to");
});

describe("eqa answer on a full disk", () => {
  const questions = readRawBenchmark().slice(0, 3);
  const setup = (): { home: string; out: string; subset: string } => {
    const home = temporaryDir();
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
    return { home, out: join(home, "answers"), subset };
  };
  const answerArgs = (subset: string, out: string, url: string): string[] => ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${url}/v1`, "--out", out, "--concurrency", "1", "--no-cache"];

  test("the answers file cannot be appended to: exit 3 naming traces.jsonl; once space is back the same command completes", async () => {
    const { home, out, subset } = setup();
    mkdirSync(out);
    symlinkSync(FULL, join(out, "traces.jsonl"));
    await withModelServer(() => openAiReply("A: a chair"), async (server) => {
      const args = answerArgs(subset, out, server.url);
      const full = await runCli(args, cliEnv(home));
      assertFullDisk(full, join(out, "traces.jsonl"));
      assert.ok(!existsSync(join(out, "predictions.json")), "no predictions from a run that stopped");
      assertNothingPartial(out);

      rmSync(join(out, "traces.jsonl"));
      const resumed = await runCli(args, cliEnv(home));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /3 of 3 questions answered, 0 failed/);
      assert.equal((JSON.parse(readFileSync(join(out, "predictions.json"), "utf8")) as unknown[]).length, 3);
      assertNothingPartial(out);
    });
  });

  test("predictions.json cannot be written after every answer: exit 3 naming it, no temporary left; the rerun reuses all 3 answers", async () => {
    const { home, out, subset } = setup();
    mkdirSync(out);
    await withModelServer(() => openAiReply("A: a chair"), async (server) => {
      const args = answerArgs(subset, out, server.url);
      const full = await runWithFullTemporary(args, cliEnv(home), join(out, "predictions.json"));
      assertFullDisk(full, join(out, "predictions.json"));
      assert.equal(lines(join(out, "traces.jsonl")).length, 3, "the finished answers are kept");
      assert.ok(!existsSync(join(out, "predictions.json")));
      assertNothingPartial(out);
      const calls = server.requests.length;

      const resumed = await runCli(args, cliEnv(home));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /3 answer\(s\) reused/);
      assert.equal(server.requests.length, calls, "no question asked again");
      const predictions = JSON.parse(readFileSync(join(out, "predictions.json"), "utf8")) as { question_id: string; answer: string }[];
      assert.deepEqual(predictions.map((p) => p.question_id), questions.map((q) => q.question_id));
      assertNothingPartial(out);
    });
  });
});

describe("eqa explore on a full disk", () => {
  const SMALL = ["--width", "64", "--height", "48", "--max-steps", "30", "--no-cache"];
  const setup = (): { dir: string; out: string; args: string[] } => {
    const dir = temporaryDir();
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, JSON.stringify([
      { question_id: "q1", question: "What is in the kitchen?", scene: "home-0" },
      { question_id: "q2", question: "Where is the sofa?", scene: "home-0" },
    ]));
    const out = join(dir, "run");
    return { dir, out, args: ["explore", "--episodes", episodes, "--env", "builtin", "--agent", "frontier", "--out", out, ...SMALL] };
  };

  test("the episodes file cannot be appended to: exit 3 naming episodes.jsonl, not a failed episode; the same command then completes", async () => {
    const { dir, out, args } = setup();
    mkdirSync(out);
    symlinkSync(FULL, join(out, "episodes.jsonl"));
    const full = await runCli(args, cliEnv(dir));
    assertFullDisk(full, join(out, "episodes.jsonl"));
    assert.ok(!existsSync(join(out, "summary.json")));
    assertNothingPartial(out);

    rmSync(join(out, "episodes.jsonl"));
    const resumed = await runCli(args, cliEnv(dir));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /2\/2 episodes finished, 0 failed/);
    assertNothingPartial(out);
  });

  test("an episode's picture cannot be written: the run stops with exit 3 naming it (not exit 1); the rerun reuses the finished episode and completes", async () => {
    const { dir, out, args } = setup();
    mkdirSync(join(out, "trajectories"), { recursive: true });
    const full = await runWithFullTemporary(args, cliEnv(dir), join(out, "trajectories", "q2.png"));
    assertFullDisk(full, join(out, "trajectories", "q2.png"));
    const kept = lines(join(out, "episodes.jsonl")).map((l) => JSON.parse(l) as { questionId: string; error: string | null });
    assert.deepEqual(kept.map((r) => [r.questionId, r.error]), [["q1", null]], "q1 kept; q2 not recorded as a failed episode");
    assert.ok(!existsSync(join(out, "trajectories", "q2.png")));
    assert.ok(!existsSync(join(out, "summary.json")));
    assertNothingPartial(out);

    const resumed = await runCli(args, cliEnv(dir));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /2\/2 episodes finished, 0 failed, 1 reused/);
    assert.ok(statSync(join(out, "trajectories", "q2.png")).size > 0);
    assertNothingPartial(out);
  });
});

describe("eqa memory build on a full disk", () => {
  test("an object's crop cannot be written: exit 3 naming it, no empty picture; the same command then writes everything", async () => {
    const home = temporaryDir();
    const frames = join(home, "scene");
    await writeSceneEpisode(frames, { layout: "hm3d", views: 12 });
    const out = join(home, "memory");
    mkdirSync(join(out, "crops"), { recursive: true });
    const args = ["memory", "build", "--frames", frames, "--out", out, "--no-detector"];
    const full = await runWithFullTemporary(args, cliEnv(home), join(out, "crops", "3.png"));
    assertFullDisk(full, join(out, "crops", "3.png"));
    assert.ok(!existsSync(join(out, "crops", "3.png")));
    assertNothingPartial(out);

    const again = await runCli(args, cliEnv(home));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /5 instances/);
    for (const file of ["scene-graph.json", "topdown.png", join("crops", "3.png")]) assert.ok(statSync(join(out, file)).size > 0, file);
    assertNothingPartial(out);
  });
});

describe("FrameFolderWriter on a full disk", () => {
  test("a refused frame picture is an OutputError naming it; the frame's other files are whole and no temporary or empty file is left", async () => {
    const dir = join(temporaryDir(), "frames");
    mkdirSync(dir);
    const width = 8;
    const height = 6;
    const frame: ObservedFrame = {
      width,
      height,
      camera: { width, height, fx: 5, fy: 5, cx: 4, cy: 3 },
      pose: Float64Array.from([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
      rgb: new Uint8Array(width * height * 3).fill(120),
      depth: new Float32Array(width * height).fill(2),
    };
    symlinkSync(FULL, join(dir, `00000-rgb.png.${process.pid}.tmp`));
    const writer = new FrameFolderWriter(dir);
    await assert.rejects(writer.write(frame), (error: unknown) => {
      assert.ok(error instanceof OutputError);
      assert.equal(error.location.file, join(dir, "00000-rgb.png"));
      assert.match(error.message, ENOSPC);
      return true;
    });
    assert.deepEqual(filesUnder(dir).sort(), ["00000-depth.png", "00000.txt", "intrinsic_color.txt", "intrinsic_depth.txt"]);
    assertNothingPartial(dir);
  });
});
