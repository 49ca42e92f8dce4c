import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { loadRun, startViewer, type Viewer } from "../../src/report/index.js";
import { launchBrowser, layoutProblems, shown } from "../helpers/browser.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";
import { generateHome } from "../../src/sim/index.js";

/** Reward-model runs, a memory build, a generated TAG-EQA dataset and an answer-tag run, each made by its command, read by the one loader. */
const home = temporaryDir("eqakit-more-kinds-");
const runs = { rmScore: join(home, "rm-score"), rmBench: join(home, "rm-bench"), memory: join(home, "memory"), dataset: join(home, "dataset"), answers: join(home, "answer-tag"), hmEqa: join(home, "hm-eqa") };
const WIDTHS = [1366, 760, 390];
/** Each kind's headline metrics, as the report and the viewer name them. */
const HEADLINES: Record<keyof typeof runs, string[]> = {
  rmScore: ["accuracy", "RMSE"],
  rmBench: ["RMSE (K=2, vote)"],
  memory: ["episodes built"],
  dataset: ["questions"],
  answers: ["answered"],
  hmEqa: ["accuracy (multiple choice)"],
};
let server: ModelServer;
let browser: Browser;

/** The reward model gives every instance 7 with a critique; the blind agent of an HM-EQA exploration picks B. */
function rewardModel(request: ReceivedRequest) {
  if (JSON.stringify(request.body).includes("Answer with the letter of one option only")) return openAiReply("B");
  return openAiReply("<critique>\nThe trace matches the frames.\n</critique>\n<score>7</score>");
}

before(async () => {
  server = await startModelServer(rewardModel);
  const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
  const frames = join(home, "frames");
  await writeRgbEpisode(join(frames, "hm3d-v0", "000-a"), 6, 64, 48);
  const instances = join(home, "instances.jsonl");
  writeFileSync(instances, ["i-1", "i-2"].map((id, i) => JSON.stringify({ id, question: `Question ${i}?`, predicted_answer: "An answer.", reasoning_trace: ["I look around."], episode_history: "hm3d-v0/000-a", ground_truth_score: 6 + 3 * i, category: "object recognition" })).join("\n") + "\n");
  const model = ["--instances", instances, "--frames", frames, "--model", "openai/judge-vl", "--model-base-url", `${server.url}/v1`, "--no-cache"];
  const scored = await runCli(["rm", "score", ...model, "--out", runs.rmScore], env);
  assert.equal(scored.code, 0, scored.stderr);
  const benched = await runCli(["rm", "bench", ...model, "--max-k", "2", "--resamples", "100", "--out", runs.rmBench], env);
  assert.equal(benched.code, 0, benched.stderr);

  const scenes = join(home, "scenes");
  await writeSceneEpisode(join(scenes, "hm3d-v0", "scene"), { layout: "hm3d", views: 6 });
  const benchmark = join(home, "benchmark.json");
  writeFileSync(benchmark, JSON.stringify([{ question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
  const built = await runCli(["memory", "build", "--benchmark", benchmark, "--frames", scenes, "--out", runs.memory, "--no-detector", "--sampling", "every:3"], env);
  assert.equal(built.code, 0, built.stderr);

  const recorded = await runCli(["sim", "record", "--seed", "3", "--task", "pick_and_place", "--out", join(home, "recordings", "home-3"), "--width", "64", "--height", "48"], env);
  assert.equal(recorded.code, 0, recorded.stderr);
  const generated = await runCli(["generate", "tag", "--source", `sim:${join(home, "recordings")}`, "--out", runs.dataset, "--per-trajectory", "3"], env);
  assert.equal(generated.code, 0, generated.stderr);
  const agent = join(home, "agent.mjs");
  writeFileSync(agent, `export function initialize(params) { return { name: "two", version: "1", supports: [params.task] }; }\nexport function answer() { return { answer: "two" }; }\n`);
  const answered = await runCli(["answer-tag", "--questions", join(runs.dataset, "questions.json"), "--agent", agent, "--out", runs.answers], env);
  assert.equal(answered.code, 0, answered.stderr);
  // an HM-EQA question (multiple choice) explored in built-in home 0
  const hmQuestions = join(home, "questions.csv");
  writeFileSync(hmQuestions, ["scene,floor,question,choices,question_formatted,answer,label", `home-0,0,What colour is the sofa?,"['Grey', 'Blue', 'Red', 'Green']",What colour is the sofa? A) Grey B) Blue C) Red D) Green. Answer:,B,identification`].join("\r\n") + "\r\n");
  const [x, y, z] = generateHome(0).start.position;
  writeFileSync(join(home, "scene_init_poses.csv"), ["scene_floor,init_x,init_y,init_z,init_angle", `home-0_0,${x},${y},${z},0.5`].join("\r\n") + "\r\n");
  const explored = await runCli(["explore", "--episodes", hmQuestions, "--env", "builtin", "--agent", "frontier", "--em-agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--out", runs.hmEqa, "--width", "64", "--height", "48", "--max-steps", "10", "--no-cache"], env);
  assert.equal(explored.code, 0, explored.stderr);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

describe("loadRun on every other kind eqakit writes", () => {
  test("eqa rm score: EQA-RM's accuracy and RMSE with their intervals, each instance's score beside its ground truth", async () => {
    const run = await loadRun(runs.rmScore);
    assert.equal(run.kind, "rm-score");
    const summary = JSON.parse(readFileSync(join(runs.rmScore, "summary.json"), "utf8")) as { metrics: { overall: { accuracy: { value: number }; rmse: { value: number } } } };
    assert.equal(run.metrics.find((m) => m.name === "accuracy")?.value, summary.metrics.overall.accuracy.value);
    assert.equal(run.metrics.find((m) => m.name === "RMSE")?.value, summary.metrics.overall.rmse.value);
    assert.deepEqual(run.questions.map((q) => [q.questionId, q.answer, q.groundTruth]), [["i-1", "score 7", "score 6"], ["i-2", "score 7", "score 9"]]);
    assert.match(run.questions[0]!.judgeReplies[0] ?? "", /<score>7<\/score>/);
  });

  test("eqa rm bench: accuracy and RMSE at each K, its curves as a figure", async () => {
    const run = await loadRun(runs.rmBench);
    assert.equal(run.kind, "rm-bench");
    const names = run.metrics.map((m) => m.name);
    for (const name of ["accuracy (K=1, vote)", "accuracy (K=2, vote)", "RMSE (K=2, vote)"]) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
    assert.ok(run.figures.some((f) => f.endsWith("scaling-curves.png")));
  });

  test("eqa memory build: the episodes built, each with its object instances", async () => {
    const run = await loadRun(runs.memory);
    assert.equal(run.kind, "memory");
    assert.equal(run.metrics.find((m) => m.name === "episodes built")?.value, 1);
    assert.equal(run.questions[0]?.questionId, "hm3d-v0/scene");
    assert.match(run.questions[0]?.answer ?? "", /object instance/);
  });

  test("eqa generate tag: the dataset's questions with their answers, counted by query type", async () => {
    const run = await loadRun(runs.dataset);
    assert.equal(run.kind, "generate-tag");
    const questions = JSON.parse(readFileSync(join(runs.dataset, "questions.json"), "utf8")) as { question_id: string; answer: string }[];
    assert.deepEqual(run.questions.map((q) => [q.questionId, q.groundTruth]), questions.map((q) => [q.question_id, q.answer]));
    assert.equal(run.metrics.find((m) => m.name === "questions")?.value, questions.length);
  });

  test("eqa answer-tag: every answer the agent gave, before it is scored", async () => {
    const run = await loadRun(runs.answers);
    assert.equal(run.kind, "answer-tag");
    assert.ok(run.questions.length > 0 && run.questions.every((q) => q.answer === "two"));
    assert.equal(run.metrics.find((m) => m.name === "answered")?.value, run.questions.length);
  });

  test("an HM-EQA exploration: its multiple-choice accuracy, each question's choices and the letter read", async () => {
    const run = await loadRun(runs.hmEqa);
    assert.equal(run.kind, "explore");
    assert.equal(run.metrics.find((m) => m.name === "accuracy (multiple choice)")?.value, 100);
    const [q] = run.questions;
    assert.deepEqual(q?.choices, ["Grey", "Blue", "Red", "Green"]);
    assert.equal(q?.groundTruth, "B");
    assert.deepEqual([q?.choice, q?.correct], ["B", true]);
  });

  for (const width of WIDTHS) {
    test(`at ${width} px, their report and viewer, opened from another folder, show each kind's headline, answers and ground truth, and no page scrolls sideways`, async () => {
      const cwd = temporaryDir("eqakit-more-kinds-cwd-");
      const out = join(home, "elsewhere", `report-${width}.html`);
      const made = await runCli(["report", ...Object.values(runs), "--out", out], cliEnv(home), cwd);
      assert.equal(made.code, 0, made.stderr);
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        await page.goto(pathToFileURL(out).href);
        const kinds = (await page.locator("#headline").textContent()) ?? "";
        for (const kind of ["rm-score", "rm-bench", "memory", "generate-tag", "answer-tag", "explore"]) assert.ok(kinds.includes(kind), kind);
        assert.match((await page.locator('#question-table tr[data-id="hm-eqa-0"]').textContent()) ?? "", /GreyBlueRedGreen/, "the choices under the question");
        assert.ok(!kinds.includes("unknown"));
        for (const metric of Object.values(HEADLINES).flat()) assert.equal(await page.locator(`#metrics tr[data-metric="${metric}"]`).count() > 0, true, metric);
        assert.match((await page.locator('#question-table tr[data-id="i-2"]').textContent()) ?? "", /score 7[\s\S]*score 9|score 9[\s\S]*score 7/, "the reward model's score beside the ground truth");
        assert.deepEqual(await layoutProblems(page), [], `the report at ${width} px`);
      } finally {
        await page.close();
      }

      const viewer: Viewer = await startViewer({ runDirs: Object.values(runs), port: 0 });
      const view = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        await view.goto(`${viewer.url}/`);
        await shown(view);
        assert.equal(await view.locator("#runs tbody tr").count(), Object.keys(runs).length);
        assert.doesNotMatch((await view.locator("#runs tbody").textContent()) ?? "", /unknown/);
        assert.deepEqual(await layoutProblems(view), [], "the runs page");
        for (const [index, [name, dir]] of Object.entries(runs).entries()) {
          await view.goto(`${viewer.url}/#/run/${index}`);
          await shown(view);
          const text = (await view.locator("#app").textContent()) ?? "";
          for (const metric of HEADLINES[name as keyof typeof runs]) assert.ok(text.includes(metric), `${name}'s ${metric} at ${width} px`);
          assert.deepEqual(await layoutProblems(view), [], `${name}'s page`);
          const [question] = (await loadRun(dir)).questions;
          assert.ok(question, `${name} has questions`);
          await view.goto(`${viewer.url}/#/run/${index}/q/${encodeURIComponent(question.questionId)}`);
          await shown(view);
          const detail = (await view.locator("#app").textContent()) ?? "";
          if (typeof question.answer === "string") assert.ok(detail.includes(question.answer), `${name}'s answer "${question.answer}"`);
          if (question.groundTruth !== undefined) assert.ok(detail.includes(question.groundTruth), `${name}'s ground truth "${question.groundTruth}"`);
          assert.deepEqual(await layoutProblems(view), [], `${name}'s question page`);
        }
      } finally {
        await view.close();
        await viewer.close();
      }
    });
  }
});
