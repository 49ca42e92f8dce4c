import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadRun } from "../../src/report/index.js";
import { readRunManifest } from "../../src/store/index.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { assertRefusedUnchanged } from "../helpers/tree.js";

const questions = readRawBenchmark().slice(0, 3);
const isJudgeCall = (request: ReceivedRequest): boolean => JSON.stringify(request.body).includes("Your mark");
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

let server: ModelServer;
let home: string;
let subset: string;
let model: string[];
let judge: (name?: string) => string[];

before(async () => {
  server = await startModelServer((request) => openAiReply(isJudgeCall(request) ? "Your mark: 4" : "A: a chair"));
  home = temporaryDir();
  subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
  model = ["--agent", "blind", "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`];
  judge = (name = "openai/gpt-4o") => ["--judge", name, "--judge-base-url", `${server.url}/v1`];
});
after(() => server.close());

const cli = (args: string[], cwd?: string) => runCli([...args, "--no-cache", "--concurrency", "2"], cliEnv(home), cwd);
const answer = (out: string, extra: string[] = []) => cli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...model, ...extra, "--out", out]);
const score = (out: string, predictions: string, extra: string[] = [], cwd?: string) => cli(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...judge(), ...extra, "--out", out], cwd);
const run = (out: string, extra: string[] = []) => cli(["run", "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...model, ...judge(), ...extra, "--out", out]);

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
    const answers = join(home, "answers");
    assert.equal((await answer(answers)).code, 0);
    const predictions = join(answers, "predictions.json");
    await assertRefusedUnchanged(answers, () => score(answers, predictions), /kind answer, not llm-match/);

    const scored = join(home, "scored");
    assert.equal((await score(scored, predictions)).code, 0);
    const calls = server.requests.length;
    await assertRefusedUnchanged(scored, () => cli(["score", "--predictions", predictions, "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...judge("openai/gpt-4o-mini"), "--out", scored]), /judge\.model is "gpt-4o" there, "gpt-4o-mini" now/);
    await assertRefusedUnchanged(scored, () => score(scored, predictions, ["--mode", "compat"]), /mode is "robust" there, "compat" now/);
    const again = await score(scored, predictions, ["--concurrency", "1"]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.requests.length, calls, "every judgement reused");
  });

  test("eqa answer refuses a score folder and an answer folder of another model; eqa run refuses both", async () => {
    const answers = join(home, "answers-2");
    assert.equal((await answer(answers)).code, 0);
    const scored = join(home, "scored-2");
    assert.equal((await score(scored, join(answers, "predictions.json"))).code, 0);
    await assertRefusedUnchanged(scored, () => answer(scored), /kind llm-match, not answer/);
    await assertRefusedUnchanged(answers, () => cli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", "blind", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--out", answers]), /made with other settings/);
    await assertRefusedUnchanged(answers, () => run(answers), /kind answer, not run/);
    await assertRefusedUnchanged(scored, () => run(scored), /kind llm-match, not run/);
  });

  test("eqa run writes one manifest of kind run, resumes with the same settings and refuses another judge", async () => {
    const out = join(home, "run");
    assert.equal((await run(out)).code, 0);
    const manifest = readRunManifest(out)!;
    assert.equal(manifest.kind, "run");
    assert.deepEqual(Object.keys(manifest.settings).sort(), ["answer", "score"]);
    assert.equal((readJson(join(out, "summary.json")) as { kind: string }).kind, "run");
    const calls = server.requests.length;
    assert.equal((await run(out)).code, 0);
    assert.equal(server.requests.length, calls);
    await assertRefusedUnchanged(out, () => cli(["run", "--benchmark", openEqaBenchmarkFile, "--subset", subset, ...model, ...judge("openai/gpt-4o-mini"), "--out", out]), /score\.judge\.model/);
    await assertRefusedUnchanged(out, () => answer(out), /kind run, not answer/);
  });

  test("a folder written before manifests is checked by the kind its summary names, and resumes when it matches", async () => {
    const answers = join(home, "answers-3");
    assert.equal((await answer(answers)).code, 0);
    rmSync(join(answers, "manifest.json"));
    await assertRefusedUnchanged(answers, () => score(answers, join(answers, "predictions.json")), /kind answer, not llm-match/);
    const calls = server.requests.length;
    assert.equal((await answer(answers)).code, 0);
    assert.equal(server.requests.length, calls);
    assert.equal(readRunManifest(answers)?.kind, "answer");
  });
});
