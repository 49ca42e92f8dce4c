import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { loadRun, questionView, startViewer, type Viewer } from "../../src/report/index.js";
import { launchBrowser, shown } from "../helpers/browser.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";

/**
 * An `eqa answer-tag` run of TAG-EQA's Socratic baseline (a captioner and an LLM on a loopback
 * server) on a set generated from a recording of the built-in simulator, opened with eqa report
 * and eqa view from another folder: what its kind has, per question.
 */
const home = temporaryDir("eqakit-answer-tag-report-");
const work = join(home, "work");
const elsewhere = join(home, "elsewhere");
const run = join(work, "runs", "ic");
let server: ModelServer;
let browser: Browser;
let questions: { question_id: string; question: string; answer: string; trajectory: string }[] = [];
let summary: { cost: { total: { calls: number }; roles: { role: string; calls: number }[] } };

const isCaption = (r: ReceivedRequest): boolean => JSON.stringify(r.body).includes("image_url");

before(async () => {
  mkdirSync(work, { recursive: true });
  mkdirSync(elsewhere, { recursive: true });
  server = await startModelServer((r) => openAiReply(isCaption(r) ? "A kitchen with a white fridge." : "A: There is one mug."));
  const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
  await copyRecording({ seed: 3, tasks: ["pick_and_place"], width: 64, height: 48 }, join(work, "recordings", "home-3"));
  const generated = await runCli(["generate", "tag", "--source", "sim:recordings", "--out", "dataset", "--per-trajectory", "3"], env, work);
  assert.equal(generated.code, 0, generated.stderr);
  const models = ["--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${server.url}/v1`, "--no-cache"];
  const answered = await runCli(["answer-tag", "--questions", join("dataset", "questions.json"), "--agent", "socratic-ic", "--out", join("runs", "ic"), ...models], env, work);
  assert.equal(answered.code, 0, answered.stderr);
  questions = JSON.parse(readFileSync(join(work, "dataset", "questions.json"), "utf8")) as typeof questions;
  summary = JSON.parse(readFileSync(join(run, "summary.json"), "utf8")) as typeof summary;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

describe("an eqa answer-tag run in eqa report and eqa view", () => {
  test("loadRun gives each question the set's question, query type, ground truth and true structure beside the answer, the frames the agent was sent and its calls", async () => {
    const loaded = await loadRun(run);
    assert.equal(loaded.kind, "answer-tag");
    assert.deepEqual(loaded.questions.map((q) => q.questionId), questions.map((q) => q.question_id), "in the set's order");
    for (const [i, q] of loaded.questions.entries()) {
      assert.equal(q.question, questions[i]!.question);
      assert.equal(q.groundTruth, questions[i]!.answer);
      assert.ok(q.category, "the query type");
      assert.ok(q.truthText, "the true structure");
      assert.equal(q.answer, "There is one mug.");
      assert.ok(q.frames.length > 0, "the observations the captions were made of");
      assert.deepEqual(q.calls.map((c) => c.role), ["answer"]);
      assert.equal(q.trajectory, questions[i]!.trajectory);
    }
    assert.deepEqual(loaded.notes, []);
    assert.equal(questionView(loaded.kind).score, null, "an answer-tag run is not scored per question");
  });

  test("eqa report from another folder: questions with ground truth, the frames' thumbnails, and a Cost table whose calls are By role's", async () => {
    const out = join(elsewhere, "report.html");
    const cli = await runCli(["report", "../work/runs/ic", "--out", out], cliEnv(home), elsewhere);
    assert.equal(cli.code, 0, cli.stderr);
    const html = readFileSync(out, "utf8");
    assert.doesNotMatch(html, /no usage recorded/);
    const calls = /<tr data-run="ic" data-stage="answer-tag">.*?<td class="num" data-field="calls">(\d+)<\/td>/.exec(html)?.[1];
    assert.equal(Number(calls), summary.cost.total.calls, "the Cost table's calls are the ledger's");
    assert.equal(summary.cost.roles.reduce((n, r) => n + r.calls, 0), summary.cost.total.calls);
    assert.ok(summary.cost.roles.some((r) => r.role === "captioner" && r.calls > 0));
    const row = new RegExp(`<tr data-category="[^"]+" data-id="${questions[0]!.question_id}">(.*?)</tr>`, "s").exec(html)?.[1] ?? "";
    assert.ok(row.includes(questions[0]!.question.replace(/'/g, "&#39;")), "the question");
    assert.ok(row.includes(questions[0]!.answer.replace(/'/g, "&#39;")), "the ground truth");
    assert.match(row, /class="fthumb f\d+"/, "thumbnails of the frames the agent was sent");
    const headline = /<tr data-run="0">(.*?)<\/tr>/s.exec(html.slice(html.indexOf('id="headline"')))?.[1] ?? "";
    assert.match(headline, /socratic-ic \(openai\/gpt-4o\)/, "the agent and its model, from the run's manifest");
    assert.match(headline, /not scored: run eqa score-tag/);
  });

  test("eqa view: the question page shows the ground truth, the true structure, the recorded task, the captions and calls, no LLM-Match row", async () => {
    const viewer: Viewer = await startViewer({ runDirs: [run], port: 0 });
    const page = await browser.newPage();
    try {
      const listed = (await (await fetch(`${viewer.url}/api/runs`)).json()) as { runs: { agent: string | null; inProgress: boolean }[] };
      assert.deepEqual(listed.runs.map((r) => [r.agent, r.inProgress]), [["socratic-ic (openai/gpt-4o)", false]]);
      const id = questions[0]!.question_id;
      const detail = (await (await fetch(`${viewer.url}/api/runs/0/questions?id=${encodeURIComponent(id)}`)).json()) as { frames: number[]; transcript: { agent: string | null; task: string | null; calls: { role: string }[]; captions: unknown[]; plan: string | null }; scoreLabel: unknown };
      assert.equal(detail.scoreLabel, null);
      assert.deepEqual([...new Set(detail.transcript.calls.map((c) => c.role))].sort(), ["answer", "caption"]);
      assert.ok(detail.transcript.captions.length > 0, "the trajectory's captions");
      assert.equal(detail.transcript.agent, "socratic-ic");
      assert.ok(detail.transcript.task && detail.transcript.task !== "socratic-ic", "the recorded task is the recording's, not the agent's name");
      assert.ok(detail.transcript.plan, "the recording's plan");
      const frame = await fetch(`${viewer.url}/api/runs/0/frames/${encodeURIComponent(id)}/${detail.frames[0]}?size=thumb`);
      assert.equal(frame.status, 200);
      assert.equal(frame.headers.get("content-type"), "image/jpeg");
      const plan = await fetch(`${viewer.url}${detail.transcript.plan}`);
      assert.equal(plan.status, 200);

      await page.goto(`${viewer.url}/#/run/0/q/${encodeURIComponent(id)}`);
      await shown(page);
      const facts = (await page.locator("#question-detail").textContent()) ?? "";
      assert.ok(facts.includes(questions[0]!.answer), "the ground truth");
      assert.match(facts, /true structure/);
      assert.match(facts, new RegExp(`recorded task${detail.transcript.task.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      assert.doesNotMatch(facts, /LLM-Match/);
      assert.ok((await page.locator("#trace li.call").count()) > 1, "the caption and answer calls");
      assert.equal(await page.locator("#captions").count(), 1);
      await page.goto(`${viewer.url}/#/run/0`);
      await shown(page);
      assert.doesNotMatch((await page.locator("#app").textContent()) ?? "", /category –|σ/);
    } finally {
      await page.close();
      await viewer.close();
    }
  });
});
