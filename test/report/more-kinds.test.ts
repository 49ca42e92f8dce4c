import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { loadRun, startViewer, QUESTION_VIEWS, type Viewer } from "../../src/report/index.js";
import { launchBrowser, layoutProblems, shown } from "../helpers/browser.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";
import { generateHome } from "../../src/sim/index.js";
import { RUN_KINDS } from "../../src/store/index.js";

/** Reward-model runs, a reward-model set built and reviewed, a memory build, a generated TAG-EQA dataset and an answer-tag run, each made by its command, read by the one loader. */
const home = temporaryDir("eqakit-more-kinds-");
const runs = { rmScore: join(home, "rm-score"), rmBench: join(home, "rm-bench"), rmBuild: join(home, "rm-build"), rmReview: join(home, "rm-review"), memory: join(home, "memory"), dataset: join(home, "dataset"), answers: join(home, "answer-tag"), hmEqa: join(home, "hm-eqa") };
const WIDTHS = [1366, 760, 390];
/** Each kind's headline metrics, as the report and the viewer name them. */
const HEADLINES: Record<keyof typeof runs, string[]> = {
  rmScore: ["accuracy", "RMSE"],
  rmBench: ["RMSE (K=2, vote)"],
  rmBuild: ["instances", "unusable responses", "benchmark split", "fine-tuning split", "environment: ScanNet", "score 6"],
  rmReview: ["accepted", "rejected", "corrected", "instances kept", "fine-tuning split"],
  memory: ["episodes built"],
  dataset: ["questions"],
  answers: ["answered"],
  hmEqa: ["accuracy (multiple choice)"],
};
let server: ModelServer;
let browser: Browser;
/** The requests `eqa rm build` sent. */
let buildRequests = 0;
/** The ground-truth score the review corrects to 9. */
let correctedFrom = 0;
/** The questions `eqa rm build` is given: one HM3D, two ScanNet episodes; the responder cannot answer the fourth, the scorer gives the second ScanNet one 2. */
const raw = readRawBenchmark();
const hm3d = raw.filter((q) => q.episode_history.startsWith("hm3d"));
const scannet = raw.filter((q) => q.episode_history.startsWith("scannet"));
const rmQuestions = [hm3d[0]!, scannet[0]!, scannet.find((q) => q.episode_history !== scannet[0]!.episode_history)!, hm3d.find((q) => q.episode_history !== hm3d[0]!.episode_history)!];
const [, , lowScored, unanswered] = rmQuestions;

/** The reward model gives every instance 7 with a critique; the blind agent of an HM-EQA exploration picks B; rm build's responder and scorer answer as above. */
function rewardModel(request: ReceivedRequest) {
  const body = JSON.stringify(request.body);
  if (body.includes("Answer with the letter of one option only")) return openAiReply("B");
  if (body.includes("Role: You are an intelligent Embodied Question Answering")) {
    if (body.includes(JSON.stringify(unanswered!.question).slice(1, -1))) return openAiReply("I cannot tell from these frames.");
    return openAiReply("<reasoning_trace>\n<think>\nI scan the room.\n</think>\n</reasoning_trace>\n<predicted_answer>\nOn the table.\n</predicted_answer>");
  }
  if (body.includes("Answer Ground Truth: ")) return openAiReply(`<critique>\nChecked against the answer.\n</critique>\n<score>${body.includes(JSON.stringify(lowScored!.question).slice(1, -1)) ? 2 : 6}</score>`);
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
  // an EQARewardBench-style set: 4 questions, 2 responses each, then the human check
  const buildFrames = join(home, "build-frames");
  for (const q of rmQuestions) await writeRgbEpisode(join(buildFrames, q.episode_history), 6, 48, 32);
  const subset = join(home, "rm-subset.json");
  writeFileSync(subset, JSON.stringify(rmQuestions.map((q) => q.question_id)));
  const before = server.requests.length;
  const building = await runCli(["rm", "build", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--frames", buildFrames, "--responder", "openai/resp", "--responder-base-url", `${server.url}/v1`, "--scorer", "openai/scorer", "--scorer-base-url", `${server.url}/v1`, "--out", runs.rmBuild, "--no-cache"], env);
  assert.equal(building.code, 0, building.stderr);
  buildRequests = server.requests.length - before;
  const sheet = readFileSync(join(runs.rmBuild, "review.csv"), "utf8").split("\r\n");
  const made = readFileSync(join(runs.rmBuild, "instances.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; ground_truth_score: number });
  const ids = made.map((i) => i.id);
  correctedFrom = made[1]!.ground_truth_score;
  writeFileSync(join(home, "review.csv"), [sheet[0], `${ids[0]},,,,,,,,,reject,,`, `${ids[1]},,,,,,,,,,9,closer to 9`, `${ids[2]},,,,,,,,,accept,,`].join("\r\n"));
  const reviewed = await runCli(["rm", "review", "--instances", join(runs.rmBuild, "instances.jsonl"), "--import", join(home, "review.csv"), "--out", runs.rmReview], env);
  assert.equal(reviewed.code, 0, reviewed.stderr);

  const scenes = join(home, "scenes");
  await writeSceneEpisode(join(scenes, "hm3d-v0", "scene"), { layout: "hm3d", views: 6 });
  const benchmark = join(home, "benchmark.json");
  writeFileSync(benchmark, JSON.stringify([{ question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
  const built = await runCli(["memory", "build", "--benchmark", benchmark, "--frames", scenes, "--out", runs.memory, "--no-detector", "--sampling", "every:3"], env);
  assert.equal(built.code, 0, built.stderr);

  await copyRecording({ seed: 3, tasks: ["pick_and_place"], width: 64, height: 48 }, join(home, "recordings", "home-3"));
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

  test("eqa rm build: the instances made, by environment and question type, their ground-truth scores, the unusable responses, the split, and the cost of every call from the ledger", async () => {
    const run = await loadRun(runs.rmBuild);
    assert.equal(run.kind, "rm-build");
    const value = (name: string): number | null | undefined => run.metrics.find((m) => m.name === name)?.value;
    // 3 questions answered twice; the fourth's 2 replies hold no answer
    assert.deepEqual([value("instances"), value("unusable responses"), value("scores failed")], [6, 2, undefined]);
    assert.deepEqual([value("environment: HM3D"), value("environment: ScanNet")], [2, 4]);
    const categories = run.metrics.filter((m) => m.name.startsWith("question type: ")).reduce((n, m) => n + (m.value ?? 0), 0);
    assert.equal(categories, 6);
    assert.deepEqual([value("score 2"), value("score 6"), value("score 7")], [2, 4, 0]);
    assert.equal(value("mean ground-truth score"), (2 * 2 + 4 * 6) / 6);
    // all HM3D in the benchmark; one of the two ScanNet episodes set aside
    assert.deepEqual([value("benchmark split"), value("fine-tuning split")], [4, 2]);
    const failed = run.questions.filter((q) => q.error !== undefined);
    assert.deepEqual(failed.map((q) => [q.questionId, q.failedStage]).sort(), [0, 1].map((i) => [`${unanswered!.question_id}#${i}`, "answer"]));
    assert.ok(failed.every((q) => q.judgeReplies[0] === "I cannot tell from these frames."));
    const instance = run.questions.find((q) => q.questionId === `${lowScored!.question_id}#0`);
    assert.deepEqual([instance?.question, instance?.answer, instance?.groundTruth, instance?.category], [lowScored!.question, "On the table.", lowScored!.answer, lowScored!.category]);
    assert.match(instance?.judgeReplies[0] ?? "", /^ground-truth score 2\/10: Checked against the answer\.$/);
    // the responder's 8 calls and the scorer's 6, from the run's ledger
    const cost = run.costs.find((c) => c.stage === "rm-build")?.cost;
    assert.deepEqual(cost?.roles.map((r) => [r.role, r.calls]), [["responder", 8], ["scorer", 6]]);
    assert.equal(cost?.total.calls, buildRequests);
    assert.equal(run.otherUsage.find(([stage]) => stage === "rm-build")?.[1].calls, buildRequests);
    assert.deepEqual(run.notes, []);
  });

  test("eqa rm review --import: the instances accepted, rejected, corrected and not reviewed, those kept and the split again", async () => {
    const run = await loadRun(runs.rmReview);
    assert.equal(run.kind, "rm-review");
    const value = (name: string): number | null | undefined => run.metrics.find((m) => m.name === name)?.value;
    assert.deepEqual([value("accepted"), value("rejected"), value("corrected"), value("not reviewed"), value("instances kept")], [1, 1, 1, 3, 5]);
    assert.equal((value("benchmark split") ?? 0) + (value("fine-tuning split") ?? 0), 5);
    const [rejected, corrected, accepted] = run.questions;
    assert.deepEqual([rejected?.judgeReplies[0], corrected?.judgeReplies[0], accepted?.judgeReplies[0]], ["review: rejected", `review: score corrected from ${correctedFrom} to 9`, "review: kept"]);
    assert.equal(run.questions.length, 6);
    assert.deepEqual(run.costs, []);
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

  test("every kind read here has its question view, the one table the report and the viewer read per question", async () => {
    for (const dir of Object.values(runs)) {
      const run = await loadRun(dir);
      assert.ok((QUESTION_VIEWS as Record<string, unknown>)[run.kind], `${run.kind} (${dir})`);
    }
    for (const { kind } of RUN_KINDS) assert.ok(QUESTION_VIEWS[kind], `${kind} has no question view`);
    assert.equal(QUESTION_VIEWS["generate-tag"]?.answers, false, "a dataset holds questions, no answers");
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
        for (const kind of ["rm-score", "rm-bench", "rm-build", "rm-review", "memory", "generate-tag", "answer-tag", "explore"]) assert.ok(kinds.includes(kind), kind);
        assert.match((await page.locator('#question-table tr[data-id="hm-eqa-0"]').textContent()) ?? "", /GreyBlueRedGreen/, "the choices under the question");
        assert.ok(!kinds.includes("unknown"));
        for (const metric of Object.values(HEADLINES).flat()) assert.equal(await page.locator(`#metrics tr[data-metric="${metric}"]`).count() > 0, true, metric);
        assert.match((await page.locator('#question-table tr[data-id="i-2"]').textContent()) ?? "", /score 7[\s\S]*score 9|score 9[\s\S]*score 7/, "the reward model's score beside the ground truth");
        assert.match((await page.locator("#failures").textContent()) ?? "", /rm-build · rm-build: 2[\s\S]*response: /, "the build's unusable responses among the failures");
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
