import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { HouseholdEnvironment, generateHome } from "../../src/sim/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

interface Summary {
  counts: { episodes: number; finished: number; failed: number; reused: number; answered: number };
  metrics: { pathLength: { meanMetres: number | null; meanSteps: number | null }; explorerMsPerStep: { mean: number | null } };
  failures: { questionId: string; error: string }[];
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;
const lines = (file: string): number => readFileSync(file, "utf8").trim().split("\n").length;

function writeEpisodes(dir: string, episodes: unknown[]): string {
  const file = join(dir, "episodes.json");
  writeFileSync(file, JSON.stringify(episodes));
  return file;
}

const SMALL = ["--width", "64", "--height", "48", "--max-steps", "30", "--no-cache"];

describe("eqa explore", () => {
  test("frontier on the built-in simulator: trajectories, pictures, frames, predictions; a non-navigable start fails alone; resume", async () => {
    const dir = temporaryDir();
    const home1 = generateHome(1);
    const episodes = writeEpisodes(dir, [
      { question_id: "q1", question: "What is in the kitchen?", scene: "home-0" },
      { question_id: "q2", question: "Where is the sofa?", scene: "home-0", start: { position: [-50, 0, -50], yaw: 0 } },
      { question_id: "q3/x", question: "Is the bed made?", scene: "home-1", start: { position: home1.start.position, yaw: 1 } },
    ]);
    const out = join(dir, "run");
    const env = cliEnv(dir);
    const first = await runCli(["explore", "--episodes", episodes, "--env", "builtin", "--agent", "frontier", "--out", out, ...SMALL], env);
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stdout, /2\/3 episodes finished, 1 failed/);
    assert.match(first.stdout, /explorer time per step \(without environment and model calls\): \d+\.\d+ ms/);
    const summary = readJson<Summary>(join(out, "summary.json"));
    assert.equal(summary.counts.finished, 2);
    assert.deepEqual(summary.failures.map((f) => f.questionId), ["q2"]);
    assert.match(summary.failures[0]?.error ?? "", /not navigable/);
    assert.ok((summary.metrics.pathLength.meanSteps ?? 0) > 0 && (summary.metrics.pathLength.meanMetres ?? 0) > 0);
    assert.equal(typeof summary.metrics.explorerMsPerStep.mean, "number");

    const predictions = readJson<{ question_id: string; answer: string | null }[]>(join(out, "predictions.json"));
    assert.deepEqual(predictions.map((p) => p.question_id), ["q1", "q3/x"]);
    for (const name of ["q1", "q3_x"]) {
      const trajectory = readJson<{ format: string; pathLengthSteps: number; pathLengthM: number; frames: number; steps: { position: number[] }[] }>(join(out, "trajectories", `${name}.json`));
      assert.equal(trajectory.format, "eqakit-explore-trajectory/1");
      assert.equal(trajectory.pathLengthSteps, 30);
      assert.equal(trajectory.steps.length, 31);
      assert.equal(readdirSync(join(out, "frames", name)).filter((f) => f.endsWith("-rgb.png")).length, trajectory.frames);
      const png = await sharp(join(out, "trajectories", `${name}.png`)).metadata();
      assert.equal(png.format, "png");
      assert.ok((png.width ?? 0) > 100 && (png.height ?? 0) > 100);
    }
    const q3 = readJson<{ steps: { position: number[]; yaw: number }[] }>(join(out, "trajectories", "q3_x.json"));
    assert.deepEqual(q3.steps[0]?.position, home1.start.position);

    // Resume: the finished episodes are kept as they are, the failed one is tried again.
    const frameTime = statSync(join(out, "frames", "q1", "00000-rgb.png")).mtimeMs;
    const second = await runCli(["explore", "--episodes", episodes, "--env", "builtin", "--agent", "frontier", "--out", out, ...SMALL], env);
    assert.equal(second.code, 1);
    assert.equal(readJson<Summary>(join(out, "summary.json")).counts.reused, 2);
    assert.equal(lines(join(out, "episodes.jsonl")), 4);
    assert.equal(statSync(join(out, "frames", "q1", "00000-rgb.png")).mtimeMs, frameTime);
  });

  test("frontier then an EM-EQA agent on the recorded frames (OpenEQA's A-EQA baseline)", async () => {
    const dir = temporaryDir();
    const episodes = writeEpisodes(dir, [{ question_id: "a1", question: "What is on the bed?", scene: "home-4" }]);
    const out = join(dir, "run");
    const images: number[] = [];
    await withModelServer(
      (request) => {
        images.push((JSON.stringify(request.body).match(/"type":"image_url"/g) ?? []).length);
        return openAiReply("A pillow.");
      },
      async (server) => {
        const result = await runCli(
          ["explore", "--episodes", episodes, "--agent", "frontier", "--em-agent", "vlm", "--num-frames", "4", "--no-force-guess", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--image-size", "64", "--out", out, ...SMALL],
          cliEnv(dir, { OPENAI_API_KEY: "sk-test" }),
        );
        assert.equal(result.code, 0, result.stderr);
      },
    );
    assert.equal(images[0], 4);
    assert.deepEqual(readJson<{ question_id: string; answer: string }[]>(join(out, "predictions.json")).map((p) => [p.question_id, p.answer]), [["a1", "A pillow."]]);
  });

  test("a finished run resumed does nothing new", async () => {
    const dir = temporaryDir();
    const episodes = writeEpisodes(dir, [{ question_id: "only", question: "Where is the lamp?", scene: "home-2" }]);
    const out = join(dir, "run");
    const env = cliEnv(dir);
    const args = ["explore", "--episodes", episodes, "--agent", "frontier", "--out", out, ...SMALL];
    assert.equal((await runCli(args, env)).code, 0);
    const again = await runCli(args, env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /1 reused/);
    assert.equal(lines(join(out, "episodes.jsonl")), 1);
  });

  test("environment processes that die, hang or send garbage fail their episodes alone", async () => {
    const dir = temporaryDir();
    const server = join(projectRoot, "src", "sim", "server-main.ts");
    const script = join(dir, "env.sh");
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        `SERVER="${process.execPath} --import tsx ${server} --seed 0 --width 48 --height 36 --no-masks"`,
        'case "$1" in',
        '  die) exec $SERVER --die-on observe ;;',
        '  hang) exec $SERVER --hang-on observe ;;',
        '  garbage) exec $SERVER --garbage-on observe ;;',
        "  *) exec $SERVER ;;",
        "esac",
        "",
      ].join("\n"),
    );
    const episodes = writeEpisodes(dir, [
      { question_id: "dies", question: "q?", scene: "die" },
      { question_id: "good-1", question: "q?", scene: "good" },
      { question_id: "hangs", question: "q?", scene: "hang" },
      { question_id: "garbage", question: "q?", scene: "garbage" },
      { question_id: "good-2", question: "q?", scene: "good" },
    ]);
    const out = join(dir, "run");
    const result = await runCli(
      ["explore", "--episodes", episodes, "--env", "stdio", "--env-command", `sh ${script} {scene}`, "--env-timeout", "3", "--agent", "frontier", "--out", out, "--max-steps", "12", "--no-cache"],
      cliEnv(dir, { PATH: process.env.PATH ?? "" }),
    );
    assert.equal(result.code, 1, result.stderr);
    const summary = readJson<Summary>(join(out, "summary.json"));
    assert.equal(summary.counts.finished, 2);
    const errors = Object.fromEntries(summary.failures.map((f) => [f.questionId, f.error]));
    assert.match(errors.dies ?? "", /environment exited/);
    assert.match(errors.hangs ?? "", /environment timeout: observe got no reply/);
    assert.match(errors.garbage ?? "", /environment malformed: not JSON/);
    assert.deepEqual(readJson<{ question_id: string }[]>(join(out, "predictions.json")).map((p) => p.question_id), ["good-1", "good-2"]);
  });

  test("fine-eqa with a scripted VLM, and bad flags exit 2", async () => {
    const dir = temporaryDir();
    const home = generateHome(0);
    const goal = [home.start.position[0], 0, home.start.position[2]];
    const episodes = writeEpisodes(dir, [
      { question_id: "f1", question: "What colour is the sofa?", answer: "Grey", scene: "home-0", goal_position: goal, gt_path_length: 2, gt_path_steps: 10 },
    ]);
    const out = join(dir, "run");
    let stops = 0;
    let eacImages = 0;
    await withModelServer(
      (request) => {
        const text = JSON.stringify(request.body);
        if (text.includes("Give two marks.")) {
          eacImages += (text.match(/"type":"image_url"/g) ?? []).length;
          return openAiReply("1, 4");
        }
        if (text.includes("Your mark:")) return openAiReply("Your mark: 4");
        if (text.includes("You are given a QUESTION about a home and the IMAGE")) return openAiReply(++stops >= 2 ? "yes" : "no");
        if (text.includes("Look at the picture and answer the question")) return openAiReply("A: Grey.");
        return openAiReply("living room");
      },
      async (server) => {
        const result = await runCli(
          ["explore", "--episodes", episodes, "--agent", "fine-eqa", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--width", "64", "--height", "48", "--image-size", "64", "--no-cache"],
          cliEnv(dir, { OPENAI_API_KEY: "sk-test" }),
        );
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /EXPRESS-Bench: C 80\.0 %, C\* 80\.0 %/);
        assert.match(result.stdout, /reachable floor seen: \d+\.\d % \(mean of 1\), least \d+\.\d %/);
      },
    );
    assert.equal(eacImages, 1);
    assert.deepEqual(readJson<{ question_id: string; answer: string }[]>(join(out, "predictions.json")).map((p) => [p.question_id, p.answer]), [["f1", "Grey."]]);
    type Judged = { judged: { llmMatch: { correctness: number }; efficiency: { metres: { efficiency: number; unit: string }; steps: { efficiency: number; unit: string } }; express: { c: number; cStar: number; ePath: number; dT: number } } };
    const summary = readJson<Summary & Judged & { usage: { episodes: { calls: number } } }>(join(out, "summary.json"));
    assert.ok(summary.usage.episodes.calls >= 4);
    const record = readJson<{ coverage: number }>(join(out, "episodes.jsonl"));
    assert.ok(record.coverage > 0 && record.coverage <= 1);
    assert.deepEqual((summary.metrics as { coverage?: unknown }).coverage, { mean: record.coverage, min: record.coverage, n: 1 });
    const trajectory = readJson<{ pathLengthM: number; pathLengthSteps: number }>(join(out, "trajectories", "f1.json"));
    const ratio = (gt: number, p: number): number => gt / Math.max(gt, p);
    assert.equal(summary.judged.llmMatch.correctness, 75);
    assert.ok(Math.abs(summary.judged.efficiency.metres.efficiency - 75 * ratio(2, trajectory.pathLengthM)) < 1e-9);
    assert.ok(Math.abs(summary.judged.efficiency.steps.efficiency - 75 * ratio(10, trajectory.pathLengthSteps)) < 1e-9);
    assert.equal(summary.judged.efficiency.steps.unit, "steps");
    assert.equal(summary.judged.express.c, 80);
    assert.ok(Math.abs(summary.judged.express.ePath - 80 * ratio(2, trajectory.pathLengthM)) < 1e-9);
    assert.ok(summary.judged.express.dT >= 0);

    const bad = await runCli(["explore", "--episodes", episodes, "--agent", "walk"], cliEnv(dir));
    assert.equal(bad.code, 2);
    const noFile = await runCli(["explore", "--episodes", join(dir, "missing.json"), "--agent", "frontier"], cliEnv(dir));
    assert.equal(noFile.code, 2);
    const badScene = writeEpisodes(dir, [{ question_id: "s", question: "q?", scene: "home-0", start: { position: [1, 2], yaw: 0 } }]);
    const invalid = await runCli(["explore", "--episodes", badScene, "--agent", "frontier"], cliEnv(dir));
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /start/);
  });

  test("EXPRESS-Bench's C and C* without gt_path_length; E_path from the start-to-goal geodesic distance; each figure names the episodes it leaves out", async () => {
    const dir = temporaryDir();
    const env = HouseholdEnvironment.fromSeed(0, { width: 64, height: 48 });
    const [x, y, z] = generateHome(0).start.position;
    const near: [number, number, number][] = [[x + 1, y, z], [x - 1, y, z], [x, y, z + 1], [x, y, z - 1]];
    const goal = (await Promise.all(near.map(async (p) => ((await env.isNavigable(p)) ? p : undefined)))).find((p) => p !== undefined);
    assert.ok(goal, "a navigable point 1 m from the start");
    const episodes = writeEpisodes(dir, [
      { question_id: "g1", question: "Is there a sofa?", answer: "Yes", scene: "home-0", goal_position: goal },
      { question_id: "g2", question: "Is there a bed?", answer: "Yes", scene: "home-0" },
    ]);
    const out = join(dir, "run");
    await withModelServer(
      (request) => {
        const text = JSON.stringify(request.body);
        // EAC is the request with the last frame; LLM-Match's has none
        if (text.includes("image_url") && text.includes("Your mark")) return openAiReply("1, 4");
        if (text.includes("Your mark")) return openAiReply("Your mark: 4");
        return openAiReply("Yes.");
      },
      async (server) => {
        const result = await runCli(
          ["explore", "--episodes", episodes, "--agent", "frontier", "--em-agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, ...SMALL],
          cliEnv(dir, { OPENAI_API_KEY: "sk-test" }),
        );
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /EXPRESS-Bench: C 80\.0 %, C\* 80\.0 % \(n=2, unjudged 0\), E_path [\d.]+ % \(n=1\), d_T [\d.]+ m \(n=1\)/);
        assert.match(result.stdout, /E_path leaves out 1 episode\(s\): no ground-truth path length/);
        assert.match(result.stdout, /d_T leaves out 1 episode\(s\): the episode has no goal_position/);
      },
    );
    const records = readFileSync(join(out, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { questionId: string; gtPathLengthM: number | null; pathLengthM: number });
    const g1 = records.find((r) => r.questionId === "g1")!;
    const expected = await env.geodesicDistance(generateHome(0).start.position, goal);
    assert.ok(g1.gtPathLengthM !== null && Math.abs(g1.gtPathLengthM - expected) < 1e-9, `lᵢ ${g1.gtPathLengthM} ≠ ${expected}`);
    assert.equal(records.find((r) => r.questionId === "g2")!.gtPathLengthM, null);
    type Express = { judged: { express: { c: number; ePath: number; nPath: number; leftOut: { metric: string; episodes: number }[] } } };
    const summary = readJson<Express>(join(out, "summary.json"));
    assert.equal(summary.judged.express.c, 80);
    assert.ok(Math.abs(summary.judged.express.ePath - 80 * (expected / Math.max(expected, g1.pathLengthM))) < 1e-9);
    assert.deepEqual(summary.judged.express.leftOut.map((l) => [l.metric, l.episodes]), [["E_path", 1], ["d_T", 1]]);
  });

  test("--judge: an EAC or LLM-Match reply that cannot be read is counted apart from failed calls, named, left out of that judge's figures; over a tenth, exit 1", async () => {
    const dir = temporaryDir();
    const episodes = writeEpisodes(dir, [
      { question_id: "g1", question: "Is there a sofa?", answer: "Yes", scene: "home-0" },
      { question_id: "g2", question: "Is there a bed?", answer: "Yes", scene: "home-0" },
      { question_id: "g3", question: "Is there a lamp?", answer: "Yes", scene: "home-0" },
    ]);
    const out = join(dir, "run");
    await withModelServer(
      (request) => {
        const text = JSON.stringify(request.body);
        if (text.includes("image_url") && text.includes("Your mark")) return openAiReply(text.includes("a bed?") ? "I cannot say." : "1, 4");
        if (text.includes("Your mark")) return openAiReply(text.includes("a lamp?") ? "Hard to tell." : "Your mark: 4");
        return openAiReply("Yes.");
      },
      async (server) => {
        const result = await runCli(
          ["explore", "--episodes", episodes, "--agent", "frontier", "--em-agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, ...SMALL],
          cliEnv(dir, { OPENAI_API_KEY: "sk-test" }),
        );
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stdout, /3 judged, 0 failed, 2 unreadable by the judge; LLM-Match C 75\.0 % \(n=2\)/);
        assert.match(result.stdout, /the judge's replies could not be read for 2 of 3 questions, more than 10%: exit 1 \(first: g2, eac: no numbers in the reply\)/);
      },
    );
    type Judged = { judged: { failed: number; express: { unjudged: number }; judgeUnreadable: { count: number; of: number; items: { questionId: string; judge: string; replies: string[] }[] } } };
    const { judged } = readJson<Judged>(join(out, "summary.json"));
    assert.equal(judged.failed, 0);
    assert.equal(judged.express.unjudged, 1);
    assert.deepEqual([judged.judgeUnreadable.count, judged.judgeUnreadable.of], [2, 3]);
    assert.deepEqual(judged.judgeUnreadable.items.map((i) => [i.questionId, i.judge, i.replies.length]), [["g2", "eac", 1], ["g3", "llm-match", 3]]);
  });
});
