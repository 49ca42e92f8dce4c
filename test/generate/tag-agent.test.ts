import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadTrajectoryLog, type TagQuestion, type TrajectoryLog } from "../../src/data/index.js";
import { ExternalAgent, parseExternalAgent } from "../../src/agents/index.js";
import { answerTagQuestions, buildTagDataset, maskSightings, runTagAnswers } from "../../src/generate/index.js";
import { RunDirectory } from "../../src/store/index.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { assertRefusedUnchanged } from "../helpers/tree.js";

/** A recording of the built-in simulator (a cooling task) in a fresh folder, and a TAG-EQA set made from it. */
async function recordedSet(): Promise<{ dir: string; out: string; log: TrajectoryLog; questions: TagQuestion[] }> {
  const dir = temporaryDir();
  const out = join(dir, "rec");
  // at 160×120 (the demo's size) enough objects cover the 10 pixels a sighting needs for a full set of questions
  await copyRecording({ seed: 2, tasks: ["cool"], width: 160, height: 120 }, out);
  const log = await loadTrajectoryLog(join(out, "trajectory.json"));
  const sightings = await maskSightings(log, join(out, "frames"));
  const { questions } = buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory: 10, seed: 0 });
  return { dir, out, log, questions };
}

describe("answerTagQuestions", () => {
  test("an agent of the user's own (task tag) gets each question with its frames, the grounding frame and its action history", async () => {
    const { dir, out, log, questions } = await recordedSet();
    assert.ok(questions.length > 0);
    const seenFile = join(dir, "seen.jsonl");
    const agentFile = join(dir, "agent.mjs");
    await writeFile(
      agentFile,
      `import { appendFileSync } from "node:fs";
export function initialize(params) { return { name: "counter", version: "1", supports: [params.task] }; }
export function answer(params) {
  appendFileSync(${JSON.stringify(seenFile)}, JSON.stringify({ id: params.question.id, frames: params.episode.frameCount, poses: params.tag.poses.length, origin: params.tag.poses[0].slice(0, 12), actions: params.tag.actions.map((a) => a.action + " " + a.object.type + " " + a.index) }) + "\\n");
  return { answer: JSON.stringify([{ predicate: "", objects: [], value: params.tag.actions.length }]) };
}
`,
    );
    const agent = new ExternalAgent(parseExternalAgent(agentFile), { task: "tag", episodes: true });
    let predictions;
    try {
      predictions = await answerTagQuestions(questions, new Map([[log.id, { frames: join(out, "frames"), log }]]), agent);
    } finally {
      await agent.close();
    }
    assert.deepEqual(predictions.map((p) => p.question_id), questions.map((q) => q.question_id));
    assert.ok(predictions.every((p) => p.answer === JSON.stringify([{ predicate: "", objects: [], value: log.events.length }])), JSON.stringify(predictions[0]));
    const received = (await readFile(seenFile, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { frames: number; poses: number; origin: number[]; actions: string[] });
    assert.equal(received.length, questions.length);
    for (const r of received) {
      assert.equal(r.poses, r.frames, "one grounding pose per frame");
      // the first frame's camera is the grounding frame: identity rotation, zero translation
      assert.deepEqual(r.origin.map((v) => Math.round(v * 1000) / 1000 + 0), [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]);
      assert.deepEqual(r.actions, log.events.map((e) => `${e.type} ${log.objects.find((o) => o.id === e.object)!.type} ${e.index}`));
    }

    // eqa answer-tag: the same from the set's questions.json, predictions for eqa score-tag
    const questionsFile = join(dir, "questions.json");
    await writeFile(questionsFile, JSON.stringify(questions));
    const cli = await runCli(["answer-tag", "--questions", questionsFile, "--agent", agentFile, "--out", join(dir, "answers")], cliEnv(dir));
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`${questions.length} of ${questions.length} questions answered, 0 without an answer, 0 failed`));
    const written = JSON.parse(await readFile(join(dir, "answers", "predictions.json"), "utf8")) as { question_id: string; answer: string }[];
    assert.deepEqual(written, predictions.map((p) => ({ question_id: p.question_id, answer: p.answer })));
    // the example Python agent counts what it did in its action history (exec: a process of the protocol)
    const example = join(import.meta.dirname, "..", "..", "examples", "agents", "tag_history.py");
    const countTimes = questions.filter((q) => q.tags.query_type === "countTimes" && !q.question.includes(" from your view"));
    assert.ok(countTimes.length > 0, "the set asks how many times something was done");
    const python = await runCli(["answer-tag", "--questions", questionsFile, "--agent", `exec:python3 ${example}`, "--out", join(dir, "python")], cliEnv(dir));
    assert.equal(python.code, 0, python.stderr);
    const pythonAnswers = JSON.parse(await readFile(join(dir, "python", "predictions.json"), "utf8")) as { question_id: string; answer: string | null }[];
    for (const q of countTimes) {
      const reply = pythonAnswers.find((p) => p.question_id === q.question_id)!.answer;
      assert.ok(reply !== null, q.question);
    }

    // a set without observations is refused, naming the record
    const alfredLike = join(dir, "judges-only.json");
    await writeFile(alfredLike, JSON.stringify(questions.map((q) => ({ ...q, episode_history: null }))));
    const refused = await runCli(["answer-tag", "--questions", alfredLike, "--agent", agentFile, "--out", join(dir, "refused")], cliEnv(dir));
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /no observations \(episode_history is null\): such a set is for judges only/);
    assert.match(refused.stderr, /judges-only\.json/);

    // a trajectory without its recording fails its questions alone
    const missing = await answerTagQuestions(questions.slice(0, 1), new Map(), agent);
    assert.equal(missing[0]!.answer, null);
    assert.match(missing[0]!.error ?? "", /no recording of trajectory/);
  });
});

describe("eqa answer-tag", () => {
  test("appends each answer as it comes; a rerun asks only the questions without one, and refuses a folder of another set", async () => {
    const { dir, out, log, questions } = await recordedSet();
    assert.ok(questions.length >= 2);
    const questionsFile = join(dir, "questions.json");
    await writeFile(questionsFile, JSON.stringify(questions));
    const asked = join(dir, "asked.jsonl");
    const failFlag = join(dir, "fail");
    const agentFile = join(dir, "agent.mjs");
    // fails every second question while the flag file exists
    await writeFile(
      agentFile,
      `import { appendFileSync, existsSync } from "node:fs";
let n = 0;
export function initialize(params) { return { name: "flaky", version: "1", supports: [params.task] }; }
export function answer(params) {
  appendFileSync(${JSON.stringify(asked)}, params.question.id + "\\n");
  if (existsSync(${JSON.stringify(failFlag)}) && n++ % 2 === 1) throw new Error("flaky agent");
  return { answer: "two" };
}
`,
    );
    await writeFile(failFlag, "");
    const args = ["answer-tag", "--questions", questionsFile, "--agent", agentFile, "--out", join(dir, "run"), "--concurrency", "1"];
    const first = await runCli(args, cliEnv(dir));
    assert.equal(first.code, 1, first.stderr);
    const failed = Math.floor(questions.length / 2);
    assert.match(first.stdout, new RegExp(`${failed} failed`));
    assert.match(first.stdout, /run the same command again/);
    const records = (await readFile(join(dir, "run", "answers.jsonl"), "utf8")).trim().split("\n");
    assert.equal(records.length, questions.length, "one record appended per question");

    await writeFile(asked, "");
    await import("node:fs/promises").then((fs) => fs.rm(failFlag));
    const second = await runCli(args, cliEnv(dir));
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`resuming .*: ${questions.length - failed} of ${questions.length} questions already answered, ${failed} to ask`));
    assert.equal((await readFile(asked, "utf8")).trim().split("\n").length, failed, "only the failed questions are asked again");
    const predictions = JSON.parse(await readFile(join(dir, "run", "predictions.json"), "utf8")) as { question_id: string; answer: string | null }[];
    assert.deepEqual(predictions, questions.map((q) => ({ question_id: q.question_id, answer: "two" })));

    const other = join(dir, "other.json");
    await writeFile(other, JSON.stringify(questions.slice(1)));
    const refused = await runCli(["answer-tag", "--questions", other, "--agent", agentFile, "--out", join(dir, "run")], cliEnv(dir));
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /holds answers to a question this set does not have/);
    assert.match(refused.stderr, /answers\.jsonl/);
  });
});

describe("eqa answer-tag into the folder of another set", () => {
  test("a set generated with more questions per trajectory reuses the ids for other questions: it is refused, naming the question and a new --out, and the folder is left as it was", async () => {
    const { dir, out, log } = await recordedSet();
    const sightings = await maskSightings(log, join(out, "frames"));
    const made = (perTrajectory: number) => buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory, seed: 0 }).questions;
    const ten = made(10);
    const sixteen = made(16);
    const byId = new Map(ten.map((q) => [q.question_id, q]));
    const changed = sixteen.filter((q) => byId.has(q.question_id) && JSON.stringify(byId.get(q.question_id)) !== JSON.stringify(q));
    assert.ok(changed.length > 0, "the two sets share ids for different questions");
    const tenFile = join(dir, "ten.json");
    const sixteenFile = join(dir, "sixteen.json");
    await writeFile(tenFile, JSON.stringify(ten));
    await writeFile(sixteenFile, JSON.stringify(sixteen));
    const agentFile = join(dir, "agent.mjs");
    await writeFile(agentFile, `export function initialize(params) { return { name: "two", version: "1", supports: [params.task] }; }\nexport function answer() { return { answer: "two" }; }\n`);
    const folder = join(dir, "answers");
    const first = await runCli(["answer-tag", "--questions", tenFile, "--agent", agentFile, "--out", folder], cliEnv(dir));
    assert.equal(first.code, 0, first.stderr);
    await assertRefusedUnchanged(folder, () => runCli(["answer-tag", "--questions", sixteenFile, "--agent", agentFile, "--out", folder], cliEnv(dir)), /holds a run of kind answer-tag over other questions: the question of this id in .*sixteen\.json is not the one there[^]*give --out a new folder for it, or give --questions .*inputs\/questions\.json to resume/);
    // the set it was made with resumes, every answer kept
    const again = await runCli(["answer-tag", "--questions", tenFile, "--agent", agentFile, "--out", folder], cliEnv(dir));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`${ten.length} of ${ten.length} questions already answered`));
    // the same set in a new folder is answered anew
    const fresh = await runCli(["answer-tag", "--questions", sixteenFile, "--agent", agentFile, "--out", join(dir, "answers-16")], cliEnv(dir));
    assert.equal(fresh.code, 0, fresh.stderr);
  });
});

describe("runTagAnswers: answers keyed by the agent, with their traces", () => {
  test("a second agent in the same folder is asked every question, not credited with the first one's answers; each answer keeps its trace and confidence", async () => {
    const { dir, out, log, questions } = await recordedSet();
    const episodes = new Map([[log.id, { frames: join(out, "frames"), log }]]);
    const asked = join(dir, "asked.jsonl");
    const agentFile = async (name: string, answer: string): Promise<string> => {
      const file = join(dir, `${name}.mjs`);
      await writeFile(
        file,
        `import { appendFileSync } from "node:fs";
export function initialize(params) { return { name: ${JSON.stringify(name)}, version: "1", supports: [params.task] }; }
export function answer(params, context) {
  appendFileSync(${JSON.stringify(asked)}, ${JSON.stringify(name)} + " " + params.question.id + "\\n");
  context.log("counted " + params.tag.actions.length + " actions", "debug");
  return { answer: ${JSON.stringify(answer)}, confidence: 0.25 };
}
`,
      );
      return file;
    };
    const folder = join(dir, "run");
    const askedBy = async (name: string): Promise<number> => (await readFile(asked, "utf8").catch(() => "")).split("\n").filter((l) => l.startsWith(`${name} `)).length;
    const run = async (file: string) => {
      const agent = new ExternalAgent(parseExternalAgent(file), { task: "tag", episodes: true });
      try {
        return await runTagAnswers(questions, episodes, agent, new RunDirectory(folder));
      } finally {
        await agent.close();
      }
    };

    const first = await run(await agentFile("first", "one"));
    assert.equal(first.reused, 0);
    assert.ok(first.predictions.every((p) => p.answer === "one"));
    const second = await run(await agentFile("second", "two"));
    assert.equal(second.reused, 0, "the first agent's answers are not the second's");
    assert.equal(await askedBy("second"), questions.length);
    assert.ok(second.predictions.every((p) => p.answer === "two"));
    const again = await run(join(dir, "second.mjs"));
    assert.equal(again.reused, questions.length, "the same agent resumes");
    assert.equal(await askedBy("second"), questions.length);

    type Line = { question_id: string; answer: string; confidence?: number; trace?: { agent: string; log?: { level: string; message: string }[]; notes: string[] } };
    const lines = (await readFile(join(folder, "answers.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as Line);
    const last = lines.at(-1)!;
    assert.equal(last.answer, "two");
    assert.equal(last.confidence, 0.25);
    assert.equal(last.trace?.agent, "second");
    assert.deepEqual(last.trace?.log, [{ level: "debug", message: `counted ${log.events.length} actions` }]);
  });
});
