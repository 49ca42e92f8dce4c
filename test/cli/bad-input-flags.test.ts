import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("--out naming an existing file", () => {
  // every command that writes a run or output directory, with otherwise usable flags
  const commands: [string, (dir: string) => string[]][] = [
    ["score", (dir) => ["score", "--predictions", join(dir, "predictions.json"), "--judge", "openai/gpt-4o"]],
    ["answer", () => ["answer", "--agent", "blind", "--model", "openai/gpt-4o"]],
    ["run", () => ["run", "--agent", "blind", "--model", "openai/gpt-4o", "--judge", "openai/gpt-4o"]],
    ["rm score", (dir) => ["rm", "score", "--instances", join(dir, "instances.jsonl"), "--model", "openai/gpt-4o"]],
    ["rm bench", (dir) => ["rm", "bench", "--instances", join(dir, "instances.jsonl"), "--model", "openai/gpt-4o"]],
    ["rm build", (dir) => ["rm", "build", "--responder", "openai/gpt-4o", "--scorer", "openai/gpt-4o", "--frames", dir]],
    ["memory build", (dir) => ["memory", "build", "--frames", dir]],
    ["generate tag", (dir) => ["generate", "tag", "--source", `sim:${dir}`]],
    ["sim home", () => ["sim", "home", "--seed", "3"]],
    ["sim record", () => ["sim", "record", "--seed", "3", "--task", "random"]],
    ["explore", (dir) => ["explore", "--episodes", join(dir, "episodes.json"), "--agent", "frontier"]],
    ["score-tag", (dir) => ["score-tag", "--questions", join(dir, "questions.json"), "--predictions", join(dir, "predictions.json")]],
  ];
  for (const [name, args] of commands) {
    test(`eqa ${name} refuses it with exit 2, naming the flag and the path, before writing anything`, async () => {
      const dir = temporaryDir();
      const file = join(dir, "taken.txt");
      writeFileSync(file, "keep me\n");
      const result = await runCli([...args(dir), "--out", file], cliEnv(dir));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--out <(dir|file)>/);
      assert.match(result.stderr, new RegExp(`${escape(file)} is an existing file, not a directory`));
      assert.equal(readFileSync(file, "utf8"), "keep me\n");
      assert.deepEqual(readdirSync(dir), ["taken.txt"]);
    });
  }

  test("eqa sim home refuses an --out below a file (a file where a parent folder should be)", async () => {
    const dir = temporaryDir();
    const file = join(dir, "taken.txt");
    writeFileSync(file, "keep me\n");
    const result = await runCli(["sim", "home", "--seed", "3", "--out", join(file, "home")], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--out <dir>/);
    assert.match(result.stderr, new RegExp(`${escape(file)} is a file, so ${escape(join(file, "home"))} cannot be made a directory`));
    assert.deepEqual(readdirSync(dir), ["taken.txt"]);
  });
});

describe("eqa report --out", () => {
  function writeRun(dir: string): string {
    const run = join(dir, "run");
    mkdirSync(run);
    // an exploration's summary in the shape eqa explore writes, with nothing explored
    const summary = {
      kind: "explore",
      eqakitVersion: "0.1.0",
      createdAt: "2026-01-01T00:00:00.000Z",
      wallTimeMs: 0,
      config: {},
      counts: { episodes: 1, finished: 0, failed: 1, answered: 0 },
      stops: {},
      metrics: { pathLength: { meanMetres: null, meanSteps: null }, goalDistance: { meanMetres: null, n: 0 } },
      failures: [{ questionId: "q1", error: "the environment stopped" }],
    };
    writeFileSync(join(run, "summary.json"), JSON.stringify(summary));
    return run;
  }

  test("into folders that do not exist yet: they are made and the report written whole", async () => {
    const dir = temporaryDir();
    const run = writeRun(dir);
    const out = join(dir, "reports", "today", "report.html");
    const result = await runCli(["report", run, "--out", out], cliEnv(dir));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`wrote ${escape(out)} \\(1 run\\(s\\)`));
    assert.match(readFileSync(out, "utf8"), /^<!doctype html>/i);
    assert.deepEqual(readdirSync(join(dir, "reports", "today")), ["report.html"]);
  });

  test("naming a directory is refused with exit 2, naming the flag and the path", async () => {
    const dir = temporaryDir();
    const run = writeRun(dir);
    const result = await runCli(["report", run, "--out", run], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--out <file>/);
    assert.match(result.stderr, new RegExp(`${escape(run)} is a directory, not a file`));
    assert.deepEqual(readdirSync(run), ["summary.json"]);
  });
});

describe("model base URLs", () => {
  // each flag with a command that would call a model through it
  const flags: [string, string, (dir: string) => string[]][] = [
    ["--judge-base-url", "not-a-url", (dir) => ["score", "--predictions", join(dir, "predictions.json"), "--judge", "openai/gpt-4o"]],
    ["--model-base-url", "ftp://models.example.com/v1", () => ["answer", "--agent", "blind", "--model", "openai/gpt-4o"]],
    ["--model-base-url", "localhost:8000/v1", (dir) => ["rm", "score", "--instances", join(dir, "instances.jsonl"), "--model", "vllm/qwen"]],
    ["--renderer-base-url", "not a url", (dir) => ["generate", "tag", "--source", `sim:${dir}`, "--renderer", "ollama/qwen2.5"]],
  ];
  for (const [flag, url, args] of flags) {
    test(`${flag} ${url} stops the command with exit 2 naming the flag, before any call or file`, async () => {
      const dir = temporaryDir();
      const result = await runCli([...args(dir), flag, url, "--out", join(dir, "run")], cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`option ${flag}: "${escape(url)}" is not an http or https URL`));
      assert.match(result.stderr, new RegExp(`give ${flag} the endpoint's http\\(s\\) address`));
      assert.doesNotMatch(result.stderr, /\n\s+at /);
      assert.deepEqual(readdirSync(dir), []);
    });
  }

  const variables: [string, string, string][] = [
    ["OPENAI_BASE_URL", "openai/gpt-4o", "not-a-url"],
    ["ANTHROPIC_BASE_URL", "anthropic/claude-sonnet-4-5", "ftp://claude.example.com"],
    ["GEMINI_BASE_URL", "google/gemini-2.5-flash", "generativelanguage.googleapis.com"],
    ["VLLM_BASE_URL", "vllm/Qwen/Qwen2.5-VL-7B-Instruct", "file:///v1"],
  ];
  for (const [variable, judge, url] of variables) {
    test(`${variable}=${url} stops the command with exit 2 naming the variable`, async () => {
      const dir = temporaryDir();
      const env = cliEnv(dir, { [variable]: url, OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-test", GEMINI_API_KEY: "test" });
      const result = await runCli(["score", "--predictions", join(dir, "predictions.json"), "--judge", judge, "--out", join(dir, "run")], env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`field "${variable}": "${escape(url)}" is not an http or https URL`));
      assert.deepEqual(readdirSync(dir), []);
    });
  }

  test("a --judge-base-url overrides an unusable OPENAI_BASE_URL, which is then not in the way", async () => {
    const dir = temporaryDir();
    const env = cliEnv(dir, { OPENAI_BASE_URL: "not-a-url", OPENAI_API_KEY: "sk-test" });
    // the next problem is the missing predictions file: the URLs passed
    const result = await runCli(["score", "--predictions", join(dir, "predictions.json"), "--benchmark", join(dir, "benchmark.json"), "--judge", "openai/gpt-4o", "--judge-base-url", "http://127.0.0.1:9/v1", "--out", join(dir, "run")], env);
    assert.equal(result.code, 2, result.stderr);
    assert.doesNotMatch(result.stderr, /OPENAI_BASE_URL|not an http/);
    assert.match(result.stderr, /benchmark\.json/);
  });
});

describe("--frames naming nothing", () => {
  const commands: [string, (dir: string) => string[]][] = [
    ["answer", () => ["answer", "--agent", "vlm", "--model", "openai/gpt-4o"]],
    ["run", () => ["run", "--agent", "vlm", "--model", "openai/gpt-4o", "--judge", "openai/gpt-4o"]],
    ["rm build", () => ["rm", "build", "--responder", "openai/gpt-4o", "--scorer", "openai/gpt-4o"]],
    ["rm score", (dir) => ["rm", "score", "--instances", join(dir, "instances.jsonl"), "--model", "openai/gpt-4o"]],
    ["memory build", () => ["memory", "build"]],
  ];
  for (const [name, args] of commands) {
    test(`eqa ${name} --frames /missing is a usage error (exit 2) before any model call or file`, async () => {
      const dir = temporaryDir();
      const missing = join(dir, "no-such-frames");
      const result = await runCli([...args(dir), "--frames", missing, "--out", join(dir, "run")], cliEnv(dir, { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--frames <dir>/);
      assert.match(result.stderr, new RegExp(`${escape(missing)}: no such folder or video`));
      assert.deepEqual(readdirSync(dir), []);
    });
  }
});

describe("eqa explore --env-command", () => {
  test("is split into words as a shell would: a quoted path with a space runs", async () => {
    const dir = temporaryDir();
    // the built-in simulator's stdio server, started from a folder whose name holds a space
    const folder = join(dir, "my env");
    mkdirSync(folder);
    const script = join(folder, "env.mjs");
    writeFileSync(script, `await import(${JSON.stringify(pathToFileURL(join(projectRoot, "src", "sim", "server-main.ts")).href)});\n`);
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "q1", question: "What is in the kitchen?", scene: "home-0" }]));
    const out = join(dir, "run");
    const command = `"${process.execPath}" --import tsx "${script}" --seed 0 --width 48 --height 36 --no-masks --scene '{scene}'`;
    const result = await runCli(["explore", "--episodes", episodes, "--env", "stdio", "--env-command", command, "--agent", "frontier", "--max-steps", "8", "--out", out, "--no-cache"], cliEnv(dir));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /1\/1 episodes finished, 0 failed/);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { counts: { finished: number } };
    assert.equal(summary.counts.finished, 1);
  });

  const refused: [string, string][] = [
    ["python3 env.py | tee env.log", "\"|\" is a shell operator"],
    ["python3 env.py && echo done", "\"&&\" is a shell operator"],
    ["python3 env.py; rm -rf run", "\";\" is a shell operator"],
    ["python3 env.py > env.log", "\">\" is a shell operator"],
    ["python3 envs/*.py", "\"envs/\\*\\.py\" is a file pattern that only a shell would expand"],
  ];
  for (const [command, reason] of refused) {
    test(`refuses ${command} with exit 2 naming the flag, before any work`, async () => {
      const dir = temporaryDir();
      const episodes = join(dir, "episodes.json");
      writeFileSync(episodes, JSON.stringify([{ question_id: "q1", question: "q?", scene: "home-0" }]));
      const result = await runCli(["explore", "--episodes", episodes, "--env", "stdio", "--env-command", command, "--agent", "frontier", "--out", join(dir, "run")], cliEnv(dir));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /option '--env-command <command>' argument/);
      assert.match(result.stderr, new RegExp(reason));
      assert.match(result.stderr, /started without a shell/);
      assert.deepEqual(readdirSync(dir), ["episodes.json"]);
    });
  }
});

describe("eqa explore: episodes it cannot run", () => {
  test("an episodes file without episodes is a usage error (exit 2) naming the file", async () => {
    const dir = temporaryDir();
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, "[]");
    const result = await runCli(["explore", "--episodes", episodes, "--agent", "frontier", "--out", join(dir, "run"), "--no-cache"], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${escape(episodes)}: the file holds no episodes`));
    assert.match(result.stderr, /--episodes takes a JSON list of at least one episode/);
    assert.deepEqual(readdirSync(dir), ["episodes.json"]);
  });

  test("a scene the built-in simulator does not have is a usage error (exit 2) naming the file, the record and the field", async () => {
    const dir = temporaryDir();
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, JSON.stringify([
      { question_id: "q1", question: "What is in the kitchen?", scene: "home-0" },
      { question_id: "q2", question: "Where is the sofa?", scene: "kitchen" },
    ]));
    const result = await runCli(["explore", "--episodes", episodes, "--agent", "frontier", "--out", join(dir, "run"), "--no-cache"], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${escape(episodes)}, record 2 \\(id q2\\), field "scene": scene "kitchen" is not a built-in home \\(they are named home-<seed>, e\\.g\\. home-3\\)`));
    assert.deepEqual(readdirSync(dir), ["episodes.json"]);
  });
});

describe("eqa memory build: a broken episode", () => {
  test("a frames folder without images is a usage error (exit 2) naming the folder", async () => {
    const dir = temporaryDir();
    const frames = join(dir, "episode");
    mkdirSync(frames);
    writeFileSync(join(frames, "notes.txt"), "no frames here\n");
    const result = await runCli(["memory", "build", "--frames", frames, "--out", join(dir, "memory"), "--no-detector"], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${escape(frames)}: episode episode: the episode folder has no frames`));
    assert.ok(!readdirSync(dir).includes("memory"));
  });

  test("a frame that is not an image is a usage error (exit 2) naming the file", async () => {
    const dir = temporaryDir();
    const frames = await writeRgbEpisode(join(dir, "episode"), 3, 64, 48);
    writeFileSync(join(frames, "00001-rgb.png"), "this is not a png\n");
    const result = await runCli(["memory", "build", "--frames", frames, "--out", join(dir, "memory"), "--no-detector"], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${escape(join(frames, "00001-rgb.png"))}: episode episode: cannot read the image`));
    assert.ok(!readdirSync(dir).includes("memory"));
  });

  test("a truncated frame the detector cannot decode is a usage error (exit 2) naming the file, not a crash", async () => {
    const dir = temporaryDir();
    const frames = await writeRgbEpisode(join(dir, "episode"), 3, 64, 48);
    const broken = join(frames, "00002-rgb.png");
    // the header (size, depth) is intact, the pixel data is cut off
    writeFileSync(broken, readFileSync(broken).subarray(0, 60));
    const result = await runCli(["memory", "build", "--frames", frames, "--out", join(dir, "memory")], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${escape(broken)}: cannot read the image`));
    assert.match(result.stderr, /damaged, truncated or not an image/);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  });
});

describe("options named in messages", () => {
  test("a mistyped required option is named with the near match, as a mistyped optional one is", async () => {
    const dir = temporaryDir();
    const result = await runCli(["score", "--prediction", join(dir, "predictions.json"), "--out", join(dir, "run")], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /unknown option '--prediction'\n\(Did you mean --predictions\?\)/);
    assert.doesNotMatch(result.stderr, /required option/);
    const missing = await runCli(["score", "--out", join(dir, "run")], cliEnv(dir));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /required option '--predictions <file>' not specified/);
  });

  test("a flag's error calls it an option, not a field", async () => {
    const dir = temporaryDir();
    const predictions = join(dir, "predictions.json");
    writeFileSync(predictions, "[]");
    const result = await runCli(["score", "--predictions", predictions, "--judge", "openai/gpt-4o", "--out", join(dir, "run")], cliEnv(dir));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /^eqa: option --judge: OPENAI_API_KEY is not set/);
  });
});
