import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadRun } from "../../src/report/index.js";
import { openRun, readRunManifest } from "../../src/store/index.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";
import { assertRefusedUnchanged } from "../helpers/tree.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";

const questions = readRawBenchmark().slice(0, 3);
const isJudgeCall = (request: ReceivedRequest): boolean => JSON.stringify(request.body).includes("Your mark");
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

let server: ModelServer;
let home: string;
let subset: string;
let model: string[];
let judge: (name?: string) => string[];
/** An answer run, a score run of its predictions and a run, each made once for the file: tests work on copies (copyOf). */
let made: { answers: string; scored: string; run: string };

before(async () => {
  server = await startModelServer((request) => openAiReply(isJudgeCall(request) ? "Your mark: 4" : "A: a chair"));
  home = temporaryDir();
  subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
  model = ["--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`];
  judge = (name = "openai/gpt-4o") => ["--judge", name, "--judge-base-url", `${server.url}/v1`];
  made = { answers: join(home, "made", "answers"), scored: join(home, "made", "scored"), run: join(home, "made", "run") };
  const answered = await answer(made.answers);
  assert.equal(answered.code, 0, answered.stderr);
  const scored = await score(made.scored, join(made.answers, "predictions.json"));
  assert.equal(scored.code, 0, scored.stderr);
  const ran = await run(made.run);
  assert.equal(ran.code, 0, ran.stderr);
});
after(() => server.close());

const cli = (args: string[], cwd?: string) => runCli([...args, "--no-cache", "--concurrency", "2"], cliEnv(home), cwd);
const answer = (out: string, extra: string[] = []) => cli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...model, ...extra, "--out", out]);
const score = (out: string, predictions: string, extra: string[] = [], cwd?: string) => cli(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...judge(), ...extra, "--out", out], cwd);
const run = (out: string, extra: string[] = []) => cli(["run", "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...model, ...judge(), ...extra, "--out", out]);
/** A copy at `to` of the folder `made[name]`, which the same command into `to` would have made. */
function copyOf(name: keyof typeof made, to: string): string {
  cpSync(made[name], to, { recursive: true });
  return to;
}

function predictionsFile(dir: string, name = "my-predictions.json"): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(questions.map((q) => ({ question_id: q.question_id, answer: `${q.answer}, I think` }))));
  return path;
}

describe("eqa score, answer and run keep their run folders", () => {
  test("a score run's answers are read from its own copy of the predictions, from any folder, after the file is gone", async () => {
    const cwd = join(home, "project-a");
    predictionsFile(cwd);
    const result = await score("runs/my-model", "my-predictions.json", [], cwd);
    assert.equal(result.code, 0, result.stderr);
    const dir = join(cwd, "runs", "my-model");
    const manifest = readRunManifest(dir)!;
    assert.equal(manifest.kind, "llm-match");
    assert.equal(manifest.inputs.find((i) => i.name === "predictions")?.path, join(cwd, "my-predictions.json"));
    assert.match(manifest.command ?? "", /^eqa score --predictions my-predictions\.json /);
    rmSync(join(cwd, "my-predictions.json"));
    // the test runs in another folder than the score did
    const loaded = await loadRun(dir);
    assert.deepEqual(
      loaded.questions.map((q) => q.answer),
      questions.map((q) => `${q.answer}, I think`),
    );
  });

  test("eqa score refuses an answer folder and a score folder of another judge, changing nothing; the same settings resume", async () => {
    const answers = copyOf("answers", join(home, "answers"));
    const predictions = join(made.answers, "predictions.json");
    await assertRefusedUnchanged(answers, () => score(answers, predictions), /kind answer, not llm-match/);

    const scored = copyOf("scored", join(home, "scored"));
    const calls = server.requests.length;
    await assertRefusedUnchanged(scored, () => cli(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...judge("openai/gpt-4o-mini"), "--out", scored]), /the judge is openai\/gpt-4o there, openai\/gpt-4o-mini now\)[^]*run with --judge openai\/gpt-4o to resume/);
    await assertRefusedUnchanged(scored, () => score(scored, predictions, ["--mode", "compat"]), /mode is "robust" there, "compat" now/);
    const again = await score(scored, predictions, ["--concurrency", "1"]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.requests.length, calls, "every judgement reused");
  });

  test("eqa answer refuses a score folder and an answer folder of another model; eqa run refuses both", async () => {
    const answers = copyOf("answers", join(home, "answers-2"));
    const scored = copyOf("scored", join(home, "scored-2"));
    await assertRefusedUnchanged(scored, () => answer(scored), /kind llm-match, not answer/);
    await assertRefusedUnchanged(answers, () => cli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--out", answers]), /made with other settings/);
    await assertRefusedUnchanged(answers, () => run(answers), /kind answer, not run/);
    await assertRefusedUnchanged(scored, () => run(scored), /kind llm-match, not run/);
  });

  test("eqa run writes one manifest of kind run, resumes with the same settings and refuses another judge", async () => {
    const out = copyOf("run", join(home, "run"));
    const manifest = readRunManifest(out)!;
    assert.equal(manifest.kind, "run");
    assert.deepEqual(Object.keys(manifest.settings).sort(), ["answer", "score"]);
    assert.equal((readJson(join(out, "summary.json")) as { kind: string }).kind, "run");
    const calls = server.requests.length;
    assert.equal((await run(out)).code, 0);
    assert.equal(server.requests.length, calls);
    await assertRefusedUnchanged(out, () => cli(["run", "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...model, ...judge("openai/gpt-4o-mini"), "--out", out]), /the judge \(score\.judge\) is openai\/gpt-4o there, openai\/gpt-4o-mini now/);
    await assertRefusedUnchanged(out, () => answer(out), /kind run, not answer/);
  });

  test("eqa merge gives the merged run a manifest with the shards' kind and settings", async () => {
    const predictions = predictionsFile(join(home, "merge-inputs"));
    const shards = [0, 1].map((i) => join(home, `shard-${i}`));
    for (const [i, out] of shards.entries()) assert.equal((await score(out, predictions, ["--shard", `${i}/2`])).code, 0);
    const merged = join(home, "merged");
    const result = await runCli(["merge", ...shards, "--out", merged], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    const manifest = readRunManifest(merged)!;
    assert.equal(manifest.kind, "llm-match");
    assert.equal(manifest.settingsHash, readRunManifest(shards[0]!)!.settingsHash);
    assert.deepEqual(manifest.inputs.map((i) => [i.name, i.path]), [["shard 0/2", shards[0]], ["shard 1/2", shards[1]]]);
    assert.deepEqual(Object.keys(manifest.items ?? {}), questions.map((q) => q.question_id).sort(), "the questions the shards were given");
    assert.deepEqual(manifest.items, readRunManifest(shards[0]!)!.items);
    // the merged run resumes under the command that made its shards, less the shard
    const calls = server.requests.length;
    assert.equal((await score(merged, predictions)).code, 0);
    assert.equal(server.requests.length, calls);
  });

  test("eqa answer, score and run refuse a benchmark that asks other questions under the folder's ids; the benchmark they were made with resumes", async () => {
    const other = join(home, "other-benchmark.json");
    writeFileSync(other, JSON.stringify(questions.map((q, i) => (i === 1 ? { ...q, answer: "a lamp" } : q))));
    const withOther = (args: string[]): string[] => args.map((a) => (a === openEqaBenchmarkFile ? other : a));
    const answers = copyOf("answers", join(home, "answers-4"));
    const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const message = new RegExp(`over other questions: the question of this id in ${escape(other)} is not the one there[^]*or give --benchmark ${escape(openEqaBenchmarkFile)} to resume`);
    await assertRefusedUnchanged(answers, () => cli(withOther(["answer", "--benchmark", openEqaBenchmarkFile, ...model, "--out", answers])), message);
    const scored = copyOf("scored", join(home, "scored-4"));
    const predictions = join(made.answers, "predictions.json");
    await assertRefusedUnchanged(scored, () => cli(withOther(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, ...judge(), "--out", scored])), message);
    const out = copyOf("run", join(home, "run-4"));
    await assertRefusedUnchanged(out, () => cli(withOther(["run", "--benchmark", openEqaBenchmarkFile, ...model, ...judge(), "--out", out])), message);
    const calls = server.requests.length;
    assert.equal((await answer(answers)).code, 0);
    assert.equal(server.requests.length, calls, "every answer reused");
  });

  test("a folder written before manifests is checked by the kind its summary names, and resumes when it matches", async () => {
    const answers = copyOf("answers", join(home, "answers-3"));
    rmSync(join(answers, "manifest.json"));
    await assertRefusedUnchanged(answers, () => score(answers, join(answers, "predictions.json")), /kind answer, not llm-match/);
    const calls = server.requests.length;
    assert.equal((await answer(answers)).code, 0);
    assert.equal(server.requests.length, calls);
    assert.equal(readRunManifest(answers)?.kind, "answer");
  });
});

describe("every other command that writes a run folder keeps it", () => {
  const dir = temporaryDir("eqakit-contract-");
  const runs = {
    rmScore: join(dir, "rm-score"),
    rmBench: join(dir, "rm-bench"),
    memory: join(dir, "memory"),
    dataset: join(dir, "dataset"),
    answers: join(dir, "answer-tag"),
    tagScore: join(dir, "score-tag"),
    explore: join(dir, "explore"),
  };
  let rm: ModelServer;
  let env: NodeJS.ProcessEnv;
  /** Each command with the flags that made its run in `runs`, and other result-deciding settings. */
  let commands: Record<keyof typeof runs, { args: (out: string) => string[]; other: (out: string) => string[]; kind: string }>;
  /** eqa rm build and eqa score-tag --validate, into `out` (refused before any model call). */
  let rmBuild: (out: string) => string[];
  let validate: (out: string) => string[];

  before(async () => {
    rm = await startModelServer(() => openAiReply("<critique>\nThe trace matches the frames.\n</critique>\n<score>7</score>"));
    env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    const frames = join(dir, "frames");
    await writeRgbEpisode(join(frames, "hm3d-v0", "000-a"), 6, 64, 48);
    const instances = join(dir, "instances.jsonl");
    writeFileSync(instances, ["i-1", "i-2"].map((id, i) => JSON.stringify({ id, question: `Question ${i}?`, predicted_answer: "An answer.", reasoning_trace: ["I look around."], episode_history: "hm3d-v0/000-a", ground_truth_score: 6 + 3 * i, category: "object recognition" })).join("\n") + "\n");
    const rmModel = (name = "openai/judge-vl") => ["--instances", instances, "--frames", frames, "--model", name, "--model-base-url", `${rm.url}/v1`, "--no-cache"];
    const scenes = join(dir, "scenes");
    await writeSceneEpisode(join(scenes, "hm3d-v0", "scene"), { layout: "hm3d", views: 4 });
    const benchmark = join(dir, "benchmark.json");
    writeFileSync(benchmark, JSON.stringify([{ question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
    await copyRecording({ seed: 3, tasks: ["pick_and_place"], width: 64, height: 48 }, join(dir, "recordings", "home-3"));
    const agent = (answer: string): string => {
      const path = join(dir, `agent-${answer}.mjs`);
      writeFileSync(path, `export function initialize(params) { return { name: "${answer}", version: "1", supports: [params.task] }; }\nexport function answer() { return { answer: "${answer}" }; }\n`);
      return path;
    };
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "e1", question: "What is in the kitchen?", scene: "home-0" }]));
    const explore = (steps: string) => ["explore", "--episodes", episodes, "--env", "builtin", "--agent", "frontier", "--width", "64", "--height", "48", "--max-steps", steps, "--no-cache"];
    rmBuild = (out) => ["rm", "build", "--benchmark", benchmark, "--frames", scenes, "--responder", "openai/judge-vl", "--responder-base-url", `${rm.url}/v1`, "--scorer", "openai/judge-vl", "--scorer-base-url", `${rm.url}/v1`, "--responses", "1", "--no-cache", "--out", out];
    validate = (out) => ["score-tag", "--validate", "--questions", join(runs.dataset, "questions.json"), "--judge", "openai/judge-vl", "--judge-base-url", `${rm.url}/v1`, "--similarity", "exact", "--no-cache", "--out", out];
    commands = {
      rmScore: { kind: "rm-score", args: (out) => ["rm", "score", ...rmModel(), "--out", out], other: (out) => ["rm", "score", ...rmModel("openai/other-vl"), "--out", out] },
      rmBench: { kind: "rm-bench", args: (out) => ["rm", "bench", ...rmModel(), "--max-k", "2", "--resamples", "100", "--out", out], other: (out) => ["rm", "bench", ...rmModel(), "--max-k", "2", "--resamples", "100", "--tolerance", "1", "--out", out] },
      memory: { kind: "memory", args: (out) => ["memory", "build", "--benchmark", benchmark, "--frames", scenes, "--no-detector", "--sampling", "every:2", "--out", out], other: (out) => ["memory", "build", "--benchmark", benchmark, "--frames", scenes, "--no-detector", "--sampling", "every:2", "--out", out] },
      dataset: { kind: "generate-tag", args: (out) => ["generate", "tag", "--source", `sim:${join(dir, "recordings")}`, "--per-trajectory", "3", "--out", out], other: (out) => ["generate", "tag", "--source", `sim:${join(dir, "recordings")}`, "--per-trajectory", "3", "--seed", "5", "--out", out] },
      answers: { kind: "answer-tag", args: (out) => ["answer-tag", "--questions", join(runs.dataset, "questions.json"), "--agent", agent("two"), "--out", out], other: (out) => ["answer-tag", "--questions", join(runs.dataset, "questions.json"), "--agent", agent("three"), "--out", out] },
      tagScore: { kind: "tag-structured", args: (out) => ["score-tag", "--questions", join(runs.dataset, "questions.json"), "--predictions", join(runs.answers, "predictions.json"), "--similarity", "exact", "--out", out], other: (out) => ["score-tag", "--questions", join(runs.dataset, "questions.json"), "--predictions", join(runs.answers, "predictions.json"), "--similarity", "exact", "--grounded", "--out", out] },
      explore: { kind: "explore", args: (out) => [...explore("20"), "--out", out], other: (out) => [...explore("25"), "--out", out] },
    };
    for (const name of Object.keys(runs) as (keyof typeof runs)[]) {
      const result = await runCli(commands[name].args(runs[name]), env);
      assert.notEqual(result.code, 2, `${name}: ${result.stderr}`);
      assert.equal(readRunManifest(runs[name])?.kind, commands[name].kind, name);
    }
  });
  after(() => rm.close());

  test("each command refuses the folder of every other kind with exit 2 and changes nothing", async () => {
    // each command into the next one's folder: every folder is the target of one command, so they run at once
    const names = Object.keys(runs) as (keyof typeof runs)[];
    await Promise.all(
      names.map((name, i) => {
        const target = names[(i + 1) % names.length]!;
        return assertRefusedUnchanged(runs[target], () => runCli(commands[name].args(runs[target]), env), new RegExp(`kind ${commands[target].kind}, not ${commands[name].kind}`));
      }),
    );
  });

  test("each command refuses its own kind's folder made with other settings, and resumes it with the same settings", async () => {
    const differs: Partial<Record<keyof typeof runs, RegExp>> = { rmScore: /the model is openai\/judge-vl there, openai\/other-vl now/, rmBench: /tolerance is 2 there, 1 now/, dataset: /seed is 0 there, 5 now/, answers: /made with other settings/, tagScore: /grounded is false there, true now/, explore: /maxSteps is 20 there, 25 now/ };
    await Promise.all((Object.entries(differs) as [keyof typeof runs, RegExp][]).map(([name, message]) => assertRefusedUnchanged(runs[name], () => runCli(commands[name].other(runs[name]), env), message)));
    const calls = rm.requests.length;
    for (const name of Object.keys(runs) as (keyof typeof runs)[]) {
      const again = await runCli(commands[name].args(runs[name]), env);
      assert.notEqual(again.code, 2, `${name}: ${again.stderr}`);
    }
    assert.equal(rm.requests.length, calls, "the reward model's evaluations were all reused");
  });

  test("each command that reads a question set refuses one that reuses the folder's ids for other questions, episodes or instances, changing nothing", async () => {
    const swap = (args: string[], from: string, to: string): string[] => args.map((a) => (a === from ? to : a));
    const instances = join(dir, "instances.jsonl");
    const otherInstances = join(dir, "instances-other.jsonl");
    writeFileSync(otherInstances, readFileSync(instances, "utf8").replace("Question 0?", "Question zero?"));
    const questions = join(runs.dataset, "questions.json");
    // beside the dataset's folder: its episode_history paths are relative to the file
    const otherQuestions = join(dir, "other-set", "questions.json");
    mkdirSync(join(dir, "other-set"));
    const set = readJson(questions) as { question: string }[];
    writeFileSync(otherQuestions, JSON.stringify(set.map((q, i) => (i === 0 ? { ...q, question: `${q.question} Answer in one word.` } : q))));
    const episodes = join(dir, "episodes.json");
    const otherEpisodes = join(dir, "episodes-other.json");
    writeFileSync(otherEpisodes, readFileSync(episodes, "utf8").replace("What is in the kitchen?", "What is in the hall?"));
    const cases: [keyof typeof runs, string, string, RegExp][] = [
      ["rmScore", instances, otherInstances, /over other instances: the instance of this id in .*instances-other\.jsonl is not the one there/],
      ["rmBench", instances, otherInstances, /over other instances: the instance of this id/],
      ["answers", questions, otherQuestions, /over other questions: the question of this id in .*other-set\/questions\.json is not the one there/],
      ["tagScore", questions, otherQuestions, /over other questions: the question of this id/],
      ["explore", episodes, otherEpisodes, /over other episodes: the episode of this id in .*episodes-other\.json is not the one there/],
    ];
    const calls = rm.requests.length;
    for (const [name, from, to, message] of cases) await assertRefusedUnchanged(runs[name], () => runCli(swap(commands[name].args(runs[name]), from, to), env), message);
    assert.equal(rm.requests.length, calls, "no model was called");
  });

  test("eqa explore --judge judges the exploration in its own folder; eqa rm build, eqa score-tag --validate and eqa demo refuse another kind's folder, and eqa rm score a demo's", async () => {
    const judged = await runCli([...commands.explore.args(runs.explore), "--judge", "openai/judge-vl", "--judge-base-url", `${rm.url}/v1`], env);
    assert.notEqual(judged.code, 2, judged.stderr);
    assert.equal(readRunManifest(runs.explore)?.kind, "explore");
    await assertRefusedUnchanged(runs.tagScore, () => runCli(["demo", "--out", runs.tagScore, "--seeds", "2", "--per-trajectory", "4"], env), /kind tag-structured, not demo/);
    // a demo folder written before manifests: its recordings, dataset and runs
    const demo = join(dir, "old-demo");
    for (const sub of ["recordings", "dataset", "runs"]) mkdirSync(join(demo, sub), { recursive: true });
    await assertRefusedUnchanged(demo, () => runCli(commands.rmScore.args(demo), env), /kind demo, not rm-score/);
    const calls = rm.requests.length;
    await assertRefusedUnchanged(runs.rmScore, () => runCli(rmBuild(runs.rmScore), env), /kind rm-score, not rm-build/);
    await assertRefusedUnchanged(runs.tagScore, () => runCli(validate(runs.tagScore), env), /kind tag-structured, not tag-validate/);
    assert.equal(rm.requests.length, calls, "no model was called");
    // a demo of other homes in the folder of a demo: refused before anything is recorded
    const made = join(dir, "demo");
    await openRun({ dir: made, kind: "demo", settings: { seeds: [2], tasksPerHome: 2, perTrajectory: 4, width: 160, height: 120 } });
    await assertRefusedUnchanged(made, () => runCli(["demo", "--out", made, "--seeds", "3", "--per-trajectory", "4"], env), /seeds is \[2\] there, \[3\] now/);
  });
});
