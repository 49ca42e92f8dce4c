import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadTrajectoryLog, type TagQuestion, type TrajectoryLog } from "../../src/data/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { buildTagDataset, describeActions, maskSightings, observeTrajectory, selectObservations, tagAnswerContext, TrajectoryWorld, type ObjectSightings, type TagObservation } from "../../src/generate/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { jsonLines, killMidway } from "../helpers/kill.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";

/** The recording's sightings in its instance masks, the same for every copy of it: read once. */
let recordingSightings: Promise<ObjectSightings | null> | undefined;

/** A TAG-EQA set made from one recording of the built-in simulator (a cooling task, 160×120, as the demo records). */
async function recordedSet(perTrajectory = 6): Promise<{ home: string; log: TrajectoryLog; questions: TagQuestion[]; questionsFile: string }> {
  const home = temporaryDir();
  const out = join(home, "rec");
  await copyRecording({ seed: 2, tasks: ["cool"], width: 160, height: 120 }, out);
  const log = await loadTrajectoryLog(join(out, "trajectory.json"));
  recordingSightings ??= maskSightings(log, join(out, "frames"));
  const sightings = structuredClone(await recordingSightings);
  const { questions } = buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory, seed: 0 });
  const questionsFile = join(home, "questions.json");
  writeFileSync(questionsFile, JSON.stringify(questions));
  return { home, log, questions, questionsFile };
}

function bodyText(request: ReceivedRequest): string {
  return JSON.stringify(request.body);
}

const isCaption = (r: ReceivedRequest): boolean => bodyText(r).includes("image_url");
const isJudge = (r: ReceivedRequest): boolean => bodyText(r).includes("write down the answer's structure as JSON");
const isAnswer = (r: ReceivedRequest): boolean => !isCaption(r) && !isJudge(r);
/** The text of a request's first message. */
function promptOf(r: ReceivedRequest): string {
  const content = (r.body as { messages: { content: string | { type: string; text?: string }[] }[] }).messages[0]!.content;
  return typeof content === "string" ? content : content.map((p) => p.text ?? "").join("");
}

/** The captioner describes, the LLM answers with one bread and its position, the judge writes that down. */
function reply(request: ReceivedRequest): string {
  if (isCaption(request)) return "A room with a white fridge and a wooden shelf.";
  if (isJudge(request)) return JSON.stringify([{ predicate: "", objects: [{ type: "bread", caption: null, position: [1, 0, -2] }], value: 1 }]);
  return "A: There is one bread (x=1, y=0, z=-2).\nExplanation: it was seen on the shelf.";
}

function observation(step: number, objects: string[]): TagObservation {
  return { step, frame: step, position: [0, 0, 0], objects: objects.map((id) => ({ id, type: id.toLowerCase(), pixels: 100, position: null })) };
}

describe("selectObservations", () => {
  test("keeps every event's observation and each object once through the minimum spanning tree of events and objects (TAG-EQA section 4), then spreads the rest of K", () => {
    // step 4 sees A-D (its edges weigh 1/4), step 7 sees E at the second event, step 3 is the first event seeing nothing
    const observations = [["A"], ["A", "B"], ["B", "C"], [], ["A", "B", "C", "D"], ["D"], ["E"], ["E"], ["C"], ["A"]].map((objects, step) => observation(step, objects));
    const events = [{ step: 3 }, { step: 7 }];
    assert.deepEqual(selectObservations(observations, events, 3), { indices: [3, 4, 7], essential: 3 });
    const four = selectObservations(observations, events, 4);
    assert.equal(four.essential, 3);
    assert.equal(four.indices.length, 4);
    for (const kept of [3, 4, 7]) assert.ok(four.indices.includes(kept));
    // K at least the observations: all of them
    assert.deepEqual(selectObservations(observations, events, 10).indices, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // more essential observations than K: the events' first
    assert.deepEqual(selectObservations(observations, events, 2).indices, [3, 7]);
  });
});

describe("observeTrajectory", () => {
  test("estimates each visible object's position from its mask's depth, in the grounding frame: within centimetres of the truth for small objects, the visible side of furniture within a metre", async () => {
    const { home, log } = await recordedSet(1);
    const episode = await openEpisode(join(home, "rec", "frames"), log.id);
    const tag = await tagAnswerContext(log, episode);
    const observations = await observeTrajectory({ id: log.id, episode, log, tag });
    assert.equal(observations.length, log.steps.length);
    assert.deepEqual(observations[0]!.position, [0, 0, 0], "the first observation's camera is the grounding frame's origin");
    const world = new TrajectoryWorld(log);
    const kinds = new Map(log.objects.map((o) => [o.id, o.kind]));
    const errors: Record<string, number[]> = { object: [], furniture: [] };
    for (const o of observations) {
      for (const seen of o.objects) {
        const truth = world.groundedPositionNear(seen.id, o.step);
        assert.ok(seen.position && truth && seen.pixels >= 10);
        errors[kinds.get(seen.id)!]?.push(Math.hypot(truth[0] - seen.position[0], truth[1] - seen.position[1], truth[2] - seen.position[2]));
      }
    }
    const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    assert.ok(errors.object!.length > 20 && errors.furniture!.length > 20);
    assert.ok(median(errors.object!) < 0.15, `small objects: median error ${median(errors.object!)} m`);
    assert.ok(median(errors.furniture!) < 0.6, `furniture: median error ${median(errors.furniture!)} m`);
  });
});

describe("eqa answer-tag --agent socratic-ic | socratic-ic-or", () => {
  test("the Socratic baselines caption up to 50 observations once per trajectory, answer every question from the action history and the captions, and eqa score-tag scores the answers", async () => {
    const { home, log, questions, questionsFile } = await recordedSet();
    assert.ok(questions.length >= 3, `the set has ${questions.length} questions`);
    const actions = describeActions(log);
    assert.ok(actions.some((a) => a.text === "put the bread in the fridge" && a.success));
    assert.ok(actions.some((a) => a.text === "picked up the bread"));
    assert.ok(actions.some((a) => a.text === "moved forward" && !a.success), "a move into a wall is described as failed");
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const models = ["--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${server.url}/v1`, "--no-cache"];
      const ic = await runCli(["answer-tag", "--questions", questionsFile, "--agent", "socratic-ic", "--out", join(home, "ic"), ...models], cliEnv(home));
      assert.equal(ic.code, 0, ic.stderr);
      assert.match(ic.stdout, new RegExp(`${questions.length} of ${questions.length} questions answered, 0 without an answer, 0 failed`));
      const captions = server.requests.filter(isCaption);
      assert.equal(captions.length, 50, "K = 50 observations of the 203-step trajectory, each captioned once");
      assert.ok(captions.every((r) => (r.body as { model: string }).model === "gpt-4o-mini"), "captions by the captioner");
      const answers = server.requests.filter(isAnswer);
      assert.equal(answers.length, questions.length);
      const history = promptOf(answers[0]!);
      assert.match(history, /Step 128: action: put the bread in the fridge \(succeeded\)/);
      assert.match(history, /Step \d+: observation at \(x=-?[\d.]+, y=-?[\d.]+, z=-?[\d.]+\): A room with a white fridge/);
      assert.doesNotMatch(history, /Objects:/);
      const predictions = JSON.parse(readFileSync(join(home, "ic", "predictions.json"), "utf8")) as { question_id: string; answer: string }[];
      assert.deepEqual(predictions.map((p) => p.question_id), questions.map((q) => q.question_id));
      assert.ok(predictions.every((p) => p.answer === "There is one bread (x=1, y=0, z=-2)."));

      const before = server.requests.length;
      const or = await runCli(["answer-tag", "--questions", questionsFile, "--agent", "socratic-ic-or", "--out", join(home, "or"), ...models], cliEnv(home));
      assert.equal(or.code, 0, or.stderr);
      const orRequests = server.requests.slice(before);
      const orCaptions = orRequests.filter(isCaption).map(promptOf);
      assert.equal(orCaptions.length, 50);
      // the visible objects' tags go into the caption prompt, their estimated positions into each observation
      assert.ok(orCaptions.some((p) => /These objects are visible in it: [^.]*\bfridge\b/.test(p)), orCaptions[0]);
      const orHistory = promptOf(orRequests.filter(isAnswer)[0]!);
      assert.match(orHistory, /Objects: [^\n]*\bfridge \(x=-?[\d.]+, y=-?[\d.]+, z=-?[\d.]+\)/);

      const score = await runCli(["score-tag", "--questions", questionsFile, "--predictions", join(home, "or", "predictions.json"), "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(home, "or-score"), "--no-cache"], cliEnv(home));
      assert.equal(score.code, 0, score.stderr);
      const summary = JSON.parse(readFileSync(join(home, "or-score", "summary.json"), "utf8")) as { counts: { scored: number } };
      assert.equal(summary.counts.scored, questions.length);
    });
  });

  test("killed with SIGKILL after its first answer and run again, it neither captions again nor asks an answered question again", async () => {
    const { home, questions, questionsFile } = await recordedSet(8);
    // answers come late, so that the run can be killed between two of them
    await withModelServer((request) => ({ ...openAiReply(reply(request)), ...(isAnswer(request) ? { delayMs: 150 } : {}) }), async (server) => {
      const out = join(home, "ic");
      const args = ["answer-tag", "--questions", questionsFile, "--agent", "socratic-ic", "--out", out, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--concurrency", "1", "--no-cache"];
      await killMidway(args, cliEnv(home), () => jsonLines(join(out, "answers.jsonl")).length >= 1);
      const answeredFirst = new Set(jsonLines(join(out, "answers.jsonl")).map((r) => (r as { question_id: string }).question_id));
      assert.ok(answeredFirst.size >= 1 && answeredFirst.size < questions.length, `${answeredFirst.size} answered before the kill`);
      assert.equal(jsonLines(join(out, "prepared.jsonl")).length, 1, "the trajectory's preparation was kept");
      const captionsBefore = server.requests.filter(isCaption).length;
      const requestsBefore = server.requests.length;
      const resumed = await runCli(args, cliEnv(home));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /1 preparations reused/);
      const after = server.requests.slice(requestsBefore);
      assert.equal(after.filter(isCaption).length, 0, "no caption asked again");
      assert.equal(server.requests.filter(isCaption).length, captionsBefore);
      const asked = after.filter(isAnswer).map((r) => /\nQ: (.*)$/.exec(promptOf(r))![1]!);
      for (const q of questions) if (answeredFirst.has(q.question_id)) assert.ok(!asked.includes(q.question), `answered before the kill, asked again: ${q.question_id}`);
      const predictions = JSON.parse(readFileSync(join(out, "predictions.json"), "utf8")) as { answer: string | null }[];
      assert.equal(predictions.length, questions.length);
      assert.ok(predictions.every((p) => p.answer !== null));
    });
  });
  test("a question whose answer fails fails alone (recorded with its error, exit 1), and the next run asks that question alone", async () => {
    const { home, questions, questionsFile } = await recordedSet();
    const failing = questions[0]!;
    let refused = 0;
    // the first ask of one question's answer is refused as a bad request (not retried: it fails that item)
    await withModelServer((request) => {
      if (isAnswer(request) && promptOf(request).endsWith(`Q: ${failing.question}`) && refused++ === 0) return { status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } };
      return openAiReply(reply(request));
    }, async (server) => {
      const out = join(home, "ic");
      const args = ["answer-tag", "--questions", questionsFile, "--agent", "socratic-ic", "--out", out, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--no-cache"];
      const first = await runCli(args, cliEnv(home));
      assert.equal(first.code, 1, first.stderr);
      assert.match(first.stdout, new RegExp(`${questions.length - 1} of ${questions.length} questions answered, 0 without an answer, 1 failed`));
      const failures = JSON.parse(readFileSync(join(out, "agent-failures.json"), "utf8")) as { question_id: string; error: string }[];
      assert.deepEqual(failures.map((f) => f.question_id), [failing.question_id]);
      const before = server.requests.length;
      const second = await runCli(args, cliEnv(home));
      assert.equal(second.code, 0, second.stderr);
      const asked = server.requests.slice(before);
      assert.equal(asked.filter(isCaption).length, 0, "the preparation is reused");
      assert.deepEqual(asked.filter(isAnswer).map((r) => promptOf(r).endsWith(`Q: ${failing.question}`)), [true]);
    });
  });
  test("a preparation that fails fails the questions waiting for it, and the trajectory's next question prepares it again", async () => {
    const { home, questions, questionsFile } = await recordedSet();
    let refused = 0;
    // the first caption asked is refused as a bad request: the first preparation fails
    await withModelServer((request) => (isCaption(request) && refused++ === 0 ? { status: 400, body: { error: { message: "bad image", type: "invalid_request_error" } } } : openAiReply(reply(request))), async (server) => {
      const out = join(home, "ic");
      const args = ["answer-tag", "--questions", questionsFile, "--agent", "socratic-ic", "--out", out, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--concurrency", "1", "--no-cache"];
      const first = await runCli(args, cliEnv(home));
      assert.equal(first.code, 1, first.stderr);
      const failures = JSON.parse(readFileSync(join(out, "agent-failures.json"), "utf8")) as { question_id: string; error: string }[];
      assert.deepEqual(failures.map((f) => f.question_id), [questions[0]!.question_id]);
      assert.match(failures[0]!.error, /bad image/);
      assert.equal(jsonLines(join(out, "prepared.jsonl")).length, 1, "the second preparation succeeded and was kept");
      const before = server.requests.length;
      const second = await runCli(args, cliEnv(home));
      assert.equal(second.code, 0, second.stderr);
      assert.equal(server.requests.slice(before).filter(isCaption).length, 0);
      assert.equal(server.requests.slice(before).filter(isAnswer).length, 1);
    });
  });
});
