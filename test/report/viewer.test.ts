import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { RATINGS_FILE_LIMIT, startViewer, type Viewer } from "../../src/report/index.js";
import { launchBrowser, screenshot } from "../helpers/browser.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { projectRoot, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";

const home = temporaryDir("eqakit-viewer-");
const framesRoot = join(home, "frames");
const benchmarkFile = join(home, "benchmark.json");
const vlmRun = join(home, "vlm");
const pythonRun = join(home, "python-blind");
const exploreRun = join(home, "explore");
const tagRun = join(home, "tag");
const blindPy = join(projectRoot, "examples", "agents", "blind.py");
const MARKS = [2, 5, 3, 4, 1, 4];
let questions: { question_id: string; question: string; category: string; episode_history: string }[] = [];
let server: ModelServer;
let browser: Browser;

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const lines = (path: string): string[] => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");

/** The VLM agent says "a brown chair", the Python blind agent "a table"; the judge marks by question (and 3 for "a table"); Fine-EQA's VLM stops at its second check. */
function script(req: ReceivedRequest) {
  const body = JSON.stringify(req.body);
  const asked = questions.findIndex((q) => body.includes(JSON.stringify(q.question).slice(1, -1)));
  if (body.includes("Give two marks.")) return openAiReply("1, 4");
  if (body.includes("Your mark")) return openAiReply(`Your mark: ${body.includes("a table") ? 3 : (MARKS[asked] ?? 3)}`);
  if (body.includes("Proposed Answer")) return openAiReply("Action: keep");
  if (asked >= 0) return openAiReply(body.includes("image_url") ? "a brown chair" : "A: a table");
  if (body.includes("You are given a QUESTION about a home and the IMAGE")) return openAiReply(body.includes('"step":1') ? "yes" : stopChecks++ >= 1 ? "yes" : "no");
  if (body.includes("Look at the picture and answer the question")) return openAiReply("A: Grey.");
  return openAiReply("living room");
}
let stopChecks = 0;

function watch(page: Page, base: string): { problems: string[]; foreign: string[] } {
  const problems: string[] = [];
  const foreign: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    if (!r.url().startsWith(`${base}/`)) foreign.push(r.url());
  });
  return { problems, foreign };
}

function post(base: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: "POST", headers: { "content-length": String(Buffer.byteLength(body)), ...headers } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Waits until the viewer shows the page of the address bar's route, rendered whole. */
async function shown(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const app = document.getElementById("app")!;
    return app.getAttribute("aria-busy") === "false" && app.getAttribute("data-shown") === location.hash;
  });
}

/** Waits until every image the selector finds has loaded (lazy ones are scrolled into view first). */
async function imagesLoaded(page: Page, selector: string): Promise<void> {
  for (const image of await page.locator(selector).all()) await image.scrollIntoViewIfNeeded({ timeout: 5000 });
  await page.waitForFunction((s) => [...document.querySelectorAll<HTMLImageElement>(s)].every((i) => i.complete && i.naturalWidth > 0), selector);
  await page.evaluate(() => window.scrollTo(0, 0));
}

const RATE = { "content-type": "application/json", "x-eqa-view": "rate" };

before(async () => {
  await writeRgbEpisode(join(framesRoot, "hm3d-v0", "000-fake"), 8, 160, 90);
  const raw = readRawBenchmark();
  const picked = ["object recognition", "object localization", "attribute recognition", "functional reasoning", "world knowledge", "spatial understanding"].map((c) => raw.find((q) => q.category === c)!);
  questions = picked.map((q) => ({ ...q, episode_history: "hm3d-v0/000-fake" }));
  writeFileSync(benchmarkFile, JSON.stringify(questions));
  server = await startModelServer(script);
  const judge = ["--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--benchmark", benchmarkFile, "--no-cache"];
  const model = ["--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`];
  const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
  const episodes = join(home, "episodes.json");
  writeFileSync(episodes, JSON.stringify([{ question_id: "f1", question: "What colour is the sofa?", answer: "Grey", scene: "home-0" }]));
  const [a, b] = await Promise.all([
    runCli(["run", "--agent", "vlm", ...model, "--frames", framesRoot, "--num-frames", "3", ...judge, "--out", vlmRun], env),
    runCli(["run", "--agent", `exec:python3 ${blindPy}`, ...model, ...judge, "--out", pythonRun], env),
  ]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const x = await runCli(["explore", "--episodes", episodes, "--agent", "fine-eqa", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", exploreRun, "--width", "64", "--height", "48", "--image-size", "64", "--no-cache"], env);
  assert.equal(x.code, 0, x.stderr);
  // a TAG-EQA run on questions generated from a recording in the built-in simulator, answered with the true structures
  await copyRecording({ seed: 3, tasks: ["pick_and_place"], width: 64, height: 48 }, join(home, "recordings", "home-3"));
  const generated = await runCli(["generate", "tag", "--source", `sim:${join(home, "recordings")}`, "--out", join(home, "dataset"), "--per-trajectory", "3"], env);
  assert.equal(generated.code, 0, generated.stderr);
  const tagQuestions = readJson(join(home, "dataset", "questions.json")) as { question_id: string; structured_answer: unknown }[];
  writeFileSync(join(home, "tag-predictions.json"), JSON.stringify(tagQuestions.map((q) => ({ question_id: q.question_id, answer: q.structured_answer }))));
  const scored = await runCli(["score-tag", "--questions", join(home, "dataset", "questions.json"), "--predictions", join(home, "tag-predictions.json"), "--similarity", "exact", "--out", tagRun], env);
  assert.equal(scored.code, 0, scored.stderr);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

describe("eqa view in Chromium", () => {
  test("transcript, frame lightbox, keyboard, plan, rating and diff views work at a laptop's width and a narrow one, light and dark; only the viewer's origin is asked", async () => {
    const viewer: Viewer = await startViewer({ runDirs: [vlmRun, pythonRun, exploreRun, tagRun], port: 0 });
    const shots = join(home, "screenshots");
    mkdirSync(shots);
    const page = await browser.newPage({ viewport: { width: 1366, height: 820 } });
    const { problems, foreign } = watch(page, viewer.url);
    try {
      await page.goto(`${viewer.url}/`);
      await shown(page);
      await page.waitForSelector("#runs tbody tr");
      assert.equal(await page.locator("#runs tbody tr").count(), 4);
      assert.equal(await page.locator('#runs [data-field="in-progress"]').count(), 0, "every run has its summary");
      assert.match((await page.locator("#runs tbody").textContent()) ?? "", /explore/);
      await screenshot(page, { path: join(shots, "runs-1366.png"), fullPage: true });

      // a run's questions: sortable, filterable, opened with the keyboard
      await page.goto(`${viewer.url}/#/run/0`);
      await shown(page);
      await page.waitForSelector("#questions tbody tr");
      assert.equal(await page.locator("#questions tbody tr").count(), 6);
      // how the run was made: its stages, models, counts, and tokens and dollars per role
      await page.click("#run-info > summary");
      const info = (await page.locator("#run-info").textContent()) ?? "";
      assert.match(info, /answer.*judge \(LLM-Match\)/);
      assert.match(info, /questions 6/);
      assert.match(info, /openai\/gpt-4o/);
      const summary = readJson(join(vlmRun, "summary.json")) as { answer: { cost: { roles: { role: string; calls: number }[] } } };
      const roles = await page.$$eval("#run-costs tbody tr", (rows) => (rows as HTMLTableRowElement[]).map((r): [string, number, string] => [r.cells[1]!.textContent ?? "", Number(r.cells[3]!.textContent), r.cells[7]!.textContent ?? ""]));
      for (const role of summary.answer.cost.roles) assert.ok(roles.some(([name, calls, dollars]) => name === role.role && calls === role.calls && /^\$/.test(dollars)), role.role);
      await screenshot(page, { path: join(shots, "run-1366.png"), fullPage: true });
      const markColumn = await page.locator('#questions th:text-is("σ")').getAttribute("data-col");
      await page.click(`#questions th[data-col="${markColumn}"]`);
      const marks = await page.$$eval(`#questions tbody tr td:nth-child(${Number(markColumn) + 1})`, (cells) => cells.map((c) => Number(c.textContent)));
      assert.deepEqual(marks, [...MARKS].sort((x, y) => y - x), "the first click sorts marks high to low");
      await page.selectOption("#f-category", "object localization");
      assert.equal(await page.locator("#questions tbody tr").count(), 1);
      await page.selectOption("#f-category", "");
      await page.fill("#f-search", questions[2]!.question.slice(0, 12));
      assert.equal(await page.locator("#questions tbody tr").count(), 1);
      await page.fill("#f-search", "");
      await page.locator("#f-search").blur();
      await page.keyboard.press("?");
      assert.equal(await page.locator("#help").isVisible(), true, "? lists the keys");
      await page.keyboard.press("Escape");
      assert.equal(await page.locator("#help").isHidden(), true);
      await page.keyboard.press("j");
      await page.keyboard.press("j");
      const second = await page.locator("#questions tbody tr.selected").getAttribute("data-id");
      await page.keyboard.press("Enter");
      await shown(page);
      await page.waitForSelector("#question-detail");
      assert.equal(decodeURIComponent(new URL(page.url()).hash), `#/run/0/q/${second}`);
      assert.equal(await page.locator("#q-position").textContent(), "2 of 6");

      // the transcript: each call with its messages, the frames sent as thumbnails, the reply, tokens and latency
      const first = questions[0]!;
      await page.goto(`${viewer.url}/#/run/0/q/${encodeURIComponent(first.question_id)}`);
      await shown(page);
      await page.waitForSelector("#trace li.call");
      assert.equal(await page.locator("#trace li.call").count(), 2, "the VLM's answer and the force-a-guess check");
      const call = page.locator("#trace li.call").first();
      assert.match((await call.locator("header").textContent()) ?? "", /answer.*openai\/gpt-4o.*\d+ → \d+ tokens · (\d+ ms|[\d.]+ s) · \$0\.0000\d+/, "tokens, latency and dollars at gpt-4o's price");
      assert.match((await call.locator(".msg").first().textContent()) ?? "", new RegExp(first.question.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
      assert.equal(await call.locator(".thumb img").count(), 3);
      assert.deepEqual(await call.locator(".thumb span").allTextContents(), (readJson(join(vlmRun, "predictions.json")) as unknown[]).length > 0 ? (JSON.parse(lines(join(vlmRun, "traces.jsonl"))[0]!) as { trace: { frames: number[] } }).trace.frames.map((f) => `frame ${f}`) : []);
      assert.equal(await call.locator(".msg.reply pre").textContent(), "a brown chair");
      await imagesLoaded(page, "#trace .thumb img, #frames img");

      // the lightbox: full size, ←/→ move, Esc closes
      await page.click("#frames .thumb >> nth=0");
      await page.waitForFunction(() => (document.getElementById("lightbox-img") as HTMLImageElement).naturalWidth === 160);
      const caption = await page.locator("#lightbox-caption").textContent();
      await page.keyboard.press("ArrowRight");
      assert.notEqual(await page.locator("#lightbox-caption").textContent(), caption);
      await page.keyboard.press("Escape");
      assert.equal(await page.locator("#lightbox").isHidden(), true);

      // a rating: a mark by key, a comment, saved to the run's ratings.jsonl
      await page.fill("#rate-reviewer", "ada");
      await page.locator("#rate-reviewer").blur();
      await page.keyboard.press("2");
      assert.equal(await page.locator("#rate-2").getAttribute("aria-pressed"), "true");
      await page.fill("#rate-comment", "the chair is <b>not</b> there");
      await page.click("#rate-save");
      await page.waitForSelector("#rate-status:text-matches('saved')");
      assert.equal(await page.locator("#rate-list li").count(), 1);
      assert.equal(await page.locator("#rate-list b").count(), 1, "the comment is text, the name is the only bold");
      const stored = JSON.parse(lines(join(vlmRun, "ratings.jsonl"))[0]!) as { questionId: string; score: number; comment: string; reviewer: string };
      assert.deepEqual([stored.questionId, stored.score, stored.comment, stored.reviewer], [first.question_id, 2, "the chair is <b>not</b> there", "ada"]);
      await screenshot(page, { path: join(shots, "question-1366-light.png"), fullPage: true });

      // an external agent's log lines
      await page.goto(`${viewer.url}/#/run/1/q/${encodeURIComponent(first.question_id)}`);
      await shown(page);
      await page.waitForSelector("#agent-log li");
      assert.match((await page.locator("#agent-log").textContent()) ?? "", /model replied 'A: a table'/);
      assert.match((await page.locator("#transcript").textContent()) ?? "", /blind-python/);

      // an exploration: its plan, its steps, the stop checks' answers on the calls that asked them
      await page.goto(`${viewer.url}/#/run/2`);
      await shown(page);
      await page.waitForSelector("#questions tbody tr");
      assert.match((await page.locator("#questions tbody tr").textContent()) ?? "", /What colour is the sofa\?.*Grey\..*answered/);
      assert.equal(await page.locator("#questions tbody tr .mark").textContent(), "3", "LLM-Match's mark of an exploration judged with --judge");
      await page.click('#questions tr[data-id="f1"]');
      await shown(page);
      await page.waitForSelector("#plan-img");
      await page.waitForFunction(() => (document.getElementById("plan-img") as HTMLImageElement).naturalWidth > 100);
      assert.match((await page.locator("#question-detail").textContent()) ?? "", /EAC \(EXPRESS-Bench\)δ·σ 4\.00 \(grounding δ 1, accuracy σ 4\)/);
      const trajectory = readJson(join(exploreRun, "trajectories", "f1.json")) as { steps: unknown[] };
      assert.equal(await page.locator("#steps tbody tr").count(), trajectory.steps.length);
      const record = JSON.parse(lines(join(exploreRun, "episodes.jsonl"))[0]!) as { details: { stopChecks: { yes: boolean }[]; calls: unknown[] } };
      assert.equal(await page.locator("#stop-checks li").count(), record.details.stopChecks.length);
      assert.equal(await page.locator("#trace li.call").count(), record.details.calls.length);
      assert.equal(await page.locator("#trace .pill:text-matches('^stop check: yes')").count(), record.details.stopChecks.filter((c) => c.yes).length);
      assert.ok(await page.locator("#trace .thumb img").count() > 0, "the views shown to the VLM");
      await imagesLoaded(page, "#trace .thumb img");
      await page.emulateMedia({ colorScheme: "dark" });
      await screenshot(page, { path: join(shots, "explore-1366-dark.png"), fullPage: true });
      const darkBackground = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      await page.emulateMedia({ colorScheme: "light" });
      assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), darkBackground, "the dark look follows the system");

      // a TAG-EQA question: the recording's plan with the agent's path, and its steps
      await page.goto(`${viewer.url}/#/run/3`);
      await shown(page);
      await page.waitForSelector("#questions tbody tr");
      await page.click("#questions tbody tr >> nth=0");
      await shown(page);
      await page.waitForSelector("#plan-img");
      await page.waitForFunction(() => (document.getElementById("plan-img") as HTMLImageElement).naturalWidth > 400);
      const log = readJson(join(home, "recordings", "home-3", "trajectory.json")) as { steps: unknown[]; task: { description: string } };
      assert.equal(await page.locator("#steps tbody tr").count(), log.steps.length);
      assert.match((await page.locator("#question-detail").textContent()) ?? "", new RegExp(`recorded task${log.task.description}`));
      assert.match((await page.locator("#question-detail").textContent()) ?? "", /true structure/);
      await screenshot(page, { path: join(shots, "tag-1366-light.png"), fullPage: true });

      // the diff: the two runs' answers per question, changed words and marks highlighted
      await page.goto(`${viewer.url}/#/compare/0/1`);
      await shown(page);
      await page.waitForSelector("#compare tbody tr");
      assert.equal(await page.locator("#compare tbody tr").count(), 6);
      assert.equal(await page.locator("#compare tbody tr.differs").count(), 6, "every answer changed");
      assert.equal(await page.locator("#compare tbody tr").first().locator(".answer.a .del").count() > 0, true);
      assert.equal(await page.locator("#compare tbody tr").first().locator(".answer.b .ins").count() > 0, true);
      assert.equal(await page.locator("#compare .delta.up").count(), MARKS.filter((m) => m < 3).length);
      assert.equal(await page.locator("#compare .delta.down").count(), MARKS.filter((m) => m > 3).length);
      // per category: the second run against the first on the questions both scored, with a paired bootstrap interval
      assert.equal(await page.locator("#cmp-deltas tbody tr").count(), 1 + 6, "overall and each category");
      const points = MARKS.map((m) => (100 * (m - 1)) / 4);
      const overall = 50 - points.reduce((x, y) => x + y, 0) / points.length;
      assert.equal(await page.locator('#cmp-deltas tr[data-group="overall"] .delta').textContent(), overall.toFixed(1));
      assert.equal(await page.locator("#cmp-deltas tr.significant").count(), 0, "6 questions are too few to mark");
      await screenshot(page, { path: join(shots, "compare-1366.png"), fullPage: true });

      // the theme toggle, and a narrow window
      await page.setViewportSize({ width: 760, height: 900 });
      await page.click("#theme");
      await page.click("#theme");
      assert.equal(await page.evaluate(() => document.documentElement.getAttribute("data-theme")), "dark");
      await page.goto(`${viewer.url}/#/run/0/q/${encodeURIComponent(first.question_id)}`);
      await shown(page);
      await page.waitForSelector("#trace li.call");
      await imagesLoaded(page, "#trace .thumb img, #frames img");
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `nothing wider than a 760-pixel window (${overflow} px over)`);
      await screenshot(page, { path: join(shots, "question-760-dark.png"), fullPage: true });

      for (const name of ["runs-1366.png", "run-1366.png", "question-1366-light.png", "explore-1366-dark.png", "compare-1366.png", "question-760-dark.png", "tag-1366-light.png"]) assert.ok(statSync(join(shots, name)).size > 10_000, name);
      assert.deepEqual(problems, []);
      assert.deepEqual(foreign, [], "no request leaves the viewer's origin");
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  test("ratings exported from the viewer feed eqa judge-agreement, each reviewer an annotator", async () => {
    const rated = join(home, "vlm-rated");
    cpSync(vlmRun, rated, { recursive: true, filter: (path) => !path.endsWith("ratings.jsonl") });
    const viewer = await startViewer({ runDirs: [rated], port: 0 });
    const page = await browser.newPage();
    const { problems } = watch(page, viewer.url);
    try {
      const humans: Record<string, number[]> = { grace: [2, 4, 3, 5, 1, 4], alan: [1, 5, 2, 4, 2, 5] };
      for (const [reviewer, scores] of Object.entries(humans)) {
        await page.goto(`${viewer.url}/#/run/0`);
        await shown(page);
        await page.waitForSelector("#questions tbody tr");
        await page.click("#questions tbody tr >> nth=0");
        await shown(page);
        await page.waitForSelector("#rating");
        await page.fill("#rate-reviewer", reviewer);
        // through the run's questions with the keyboard: a mark (1-5), s saves, j goes on
        const seen: string[] = [];
        for (let step = 0; step < questions.length; step++) {
          await shown(page);
          await page.waitForFunction((n) => document.getElementById("q-position")?.textContent === `${n} of 6`, step + 1);
          const id = decodeURIComponent(new URL(page.url()).hash).split("/q/")[1]!;
          seen.push(id);
          await page.locator("#rate-reviewer").blur();
          await page.keyboard.press(String(scores[questions.findIndex((q) => q.question_id === id)]));
          await page.keyboard.press("s");
          await page.waitForSelector("#rate-status:text-matches('saved')");
          await page.keyboard.press("j");
        }
        assert.equal(new Set(seen).size, 6, "j visits every question once");
      }
      await page.goto(`${viewer.url}/#/run/0`);
      await shown(page);
      await page.waitForSelector("#questions tbody tr");
      const exported = await page.evaluate(async () => (await fetch(document.getElementById("ratings-export")!.getAttribute("href")!)).text());
      const file = join(home, "ratings.json");
      writeFileSync(file, exported);
      const records = JSON.parse(exported) as { question_id: string; score: number; annotator: string }[];
      const byKey = (r: [string, string, number]): string => `${r[0]} ${r[1]}`;
      assert.deepEqual(
        records.map((r): [string, string, number] => [r.annotator, r.question_id, r.score]).sort((x, y) => byKey(x).localeCompare(byKey(y))),
        Object.entries(humans).flatMap(([reviewer, scores]) => questions.map((q, i): [string, string, number] => [reviewer, q.question_id, scores[i]!])).sort((x, y) => byKey(x).localeCompare(byKey(y))),
      );
      // the table as CSV: every question with its mark and its reviewers' mean
      const csv = await page.evaluate(async () => (await fetch(document.getElementById("csv-export")!.getAttribute("href")!)).text());
      const table = csv.trim().split("\r\n").map((row) => row.split(","));
      assert.deepEqual(table[0], ["question_id", "category", "question", "answer", "score", "ratings", "rating_mean"]);
      assert.equal(table.length, 7);
      for (const row of table.slice(1)) {
        const i = questions.findIndex((q) => q.question_id === row[0]);
        assert.equal(row.at(-4), "a brown chair");
        assert.deepEqual(row.slice(-3).map(Number), [MARKS[i], 2, (humans.grace![i]! + humans.alan![i]!) / 2], row[0]);
      }
      const agreement = await runCli(["judge-agreement", rated, file, "--label", "GPT-4o", "Humans", "--resamples", "200"], cliEnv(home));
      assert.equal(agreement.code, 0, agreement.stderr);
      assert.match(agreement.stdout, /Humans: 6 item\(s\), 2 annotator\(s\), scores averaged per item/);
      assert.match(agreement.stdout, /Spearman ρ/);
      assert.match(agreement.stdout, /per annotator \(Humans\):[\s\S]*grace\s+6 [\s\S]*alan\s+6 /);
    } finally {
      await page.close();
      await viewer.close();
    }
    assert.deepEqual(problems, []);
  });

  test("a run in progress: a record appended while the page is open shows up; a trace written before calls kept their messages shows what it has", async () => {
    const live = join(home, "live");
    mkdirSync(live);
    // a trace as older versions wrote it: calls without messages, latency or tokens
    const older = lines(join(vlmRun, "traces.jsonl")).map((line) => {
      const record = JSON.parse(line) as { trace: { calls: Record<string, unknown>[] } };
      for (const call of record.trace.calls) {
        delete call.messages;
        delete call.latencyMs;
        delete call.usage;
      }
      return JSON.stringify(record);
    });
    writeFileSync(join(live, "traces.jsonl"), `${older[0]}\n`);
    const viewer = await startViewer({ runDirs: [live], port: 0 });
    const page = await browser.newPage();
    const { problems } = watch(page, viewer.url);
    try {
      await page.goto(`${viewer.url}/`);
      await shown(page);
      await page.waitForSelector("#runs tbody tr");
      assert.equal(await page.locator('#runs [data-field="in-progress"]').count(), 1, "no summary yet: in progress");
      await page.click("#runs a >> nth=0");
      await shown(page);
      await page.waitForSelector("#questions tbody tr");
      assert.equal(await page.locator("#questions tbody tr").count(), 1);
      appendFileSync(join(live, "traces.jsonl"), `${older[1]}\n`);
      await page.waitForFunction(() => document.querySelectorAll("#questions tbody tr").length === 2, undefined, { timeout: 8000 });
      assert.match((await page.locator("#f-count").textContent()) ?? "", /2 of 2/);
      assert.match((await page.locator("#live").textContent()) ?? "", /updated/);

      await page.click("#questions tbody tr >> nth=0");
      await shown(page);
      await page.waitForSelector("#trace li.call");
      const first = page.locator("#trace li.call").first();
      assert.match((await first.textContent()) ?? "", /written before traces kept the messages/);
      assert.equal(await first.locator(".thumb").count(), 0, "without --frames the viewer has no frames to show");
      assert.equal(await first.locator(".msg.reply pre").textContent(), "a brown chair");
    } finally {
      await page.close();
      await viewer.close();
    }
    assert.deepEqual(problems, []);
  });
});

describe("eqa view of an exploration answered by an EM-EQA agent", () => {
  test("the frontier's steps and plan, and the answering agent's call with the recorded frames it was sent", async () => {
    const out = join(home, "frontier");
    const episodes = join(home, "frontier-episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "a1", question: "What is on the bed?", scene: "home-4" }]));
    const result = await runCli(["explore", "--episodes", episodes, "--agent", "frontier", "--em-agent", "vlm", "--num-frames", "4", "--no-force-guess", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--image-size", "64", "--width", "64", "--height", "48", "--max-steps", "30", "--no-cache", "--out", out], cliEnv(home, { OPENAI_API_KEY: "sk-test" }));
    assert.equal(result.code, 0, result.stderr);
    const viewer = await startViewer({ runDirs: [out], port: 0 });
    const page = await browser.newPage();
    const { problems, foreign } = watch(page, viewer.url);
    try {
      await page.goto(`${viewer.url}/#/run/0/q/a1`);
      await shown(page);
      const trajectory = readJson(join(out, "trajectories", "a1.json")) as { steps: unknown[] };
      assert.equal(await page.locator("#steps tbody tr").count(), trajectory.steps.length);
      assert.equal(await page.locator("#trace li.call").count(), 1, "the VLM agent's one call");
      const sent = (JSON.parse(lines(join(out, "episodes.jsonl"))[0]!) as { details: { trace: { frames: number[] } } }).details.trace.frames;
      assert.deepEqual(await page.locator("#trace .thumb span").allTextContents(), sent.map((f) => `frame ${f}`));
      await imagesLoaded(page, "#trace .thumb img, #plan-img");
    } finally {
      await page.close();
      await viewer.close();
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(foreign, []);
  });
});

describe("eqa view compare", () => {
  test("an answer that is missing (null) reads \"(no answer)\", never \"null\", and its row is marked as differing", async () => {
    const [a, b] = [join(home, "cmp-a"), join(home, "cmp-b")];
    const traces = lines(join(vlmRun, "traces.jsonl"));
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "traces.jsonl"), `${traces.join("\n")}\n`);
    const missing = JSON.parse(traces[0]!) as { questionId: string; answer: string | null };
    missing.answer = null;
    writeFileSync(join(b, "traces.jsonl"), `${[JSON.stringify(missing), ...traces.slice(1)].join("\n")}\n`);
    const viewer = await startViewer({ runDirs: [a, b], port: 0 });
    const page = await browser.newPage();
    const { problems } = watch(page, viewer.url);
    try {
      await page.goto(`${viewer.url}/#/compare/0/1`);
      await shown(page);
      const row = page.locator(`#compare tr[data-id="${missing.questionId}"]`);
      assert.equal(await row.locator(".answer.b").textContent(), "(no answer)");
      assert.equal(await row.locator(".answer.a").textContent(), "a brown chair");
      assert.equal(await row.getAttribute("class"), "differs");
      assert.doesNotMatch((await page.locator("#compare").textContent()) ?? "", /null/);
      assert.equal(await page.locator("#compare tbody tr.differs").count(), 1, "the other answers are the same");
      await page.check("#cmp-differs");
      assert.equal(await page.locator("#compare tbody tr").count(), 1);
      assert.match((await page.locator("#cmp-count").textContent()) ?? "", /1 of 6 · 1 differ/);
    } finally {
      await page.close();
      await viewer.close();
    }
    assert.deepEqual(problems, []);
  });
});

describe("eqa view ratings", () => {
  test("a rating is validated, capped in size, and accepted only from the viewer's own page", async () => {
    const run = join(home, "rated");
    mkdirSync(run);
    const line = lines(join(vlmRun, "traces.jsonl"))[0]!;
    writeFileSync(join(run, "traces.jsonl"), `${line}\n`);
    const id = (JSON.parse(line) as { questionId: string }).questionId;
    const viewer = await startViewer({ runDirs: [run], port: 0 });
    try {
      const ok = JSON.stringify({ questionId: id, score: 4, comment: "fine", reviewer: "ada" });
      const cases: [string, string, Record<string, string>, number, RegExp][] = [
        ["no header", ok, { "content-type": "application/json" }, 403, /viewer's own page/],
        ["a form", "score=5", { "content-type": "application/x-www-form-urlencoded", "x-eqa-view": "rate" }, 403, /viewer's own page/],
        ["another origin", ok, { ...RATE, origin: "http://attacker.example" }, 403, /viewer's own page/],
        ["a mark of 6", JSON.stringify({ questionId: id, score: 6, reviewer: "ada" }), RATE, 400, /score: .*5/],
        ["a mark of 2.5", JSON.stringify({ questionId: id, score: 2.5, reviewer: "ada" }), RATE, 400, /score/],
        ["no reviewer", JSON.stringify({ questionId: id, score: 3 }), RATE, 400, /reviewer/],
        ["a reviewer with markup", JSON.stringify({ questionId: id, score: 3, reviewer: "<script>" }), RATE, 400, /reviewer: letters, digits/],
        ["a long comment", JSON.stringify({ questionId: id, score: 3, reviewer: "ada", comment: "x".repeat(2001) }), RATE, 400, /comment/],
        ["a huge body", JSON.stringify({ questionId: id, score: 3, reviewer: "ada", comment: "x".repeat(20_000) }), RATE, 413, /16 KB/],
        ["not JSON", "{", RATE, 400, /not JSON/],
        ["an unknown question", JSON.stringify({ questionId: "nope", score: 3, reviewer: "ada" }), RATE, 404, /no such question/],
      ];
      for (const [what, body, headers, status, message] of cases) {
        const reply = await post(viewer.url, "/api/runs/0/ratings", body, headers);
        assert.equal(reply.status, status, `${what}: ${reply.body}`);
        assert.match(reply.body, message, what);
      }
      assert.equal(existsSync(join(run, "ratings.jsonl")), false, "nothing refused was written");
      const accepted = await post(viewer.url, "/api/runs/0/ratings", ok, { ...RATE, origin: viewer.url });
      assert.equal(accepted.status, 200, accepted.body);
      assert.equal(lines(join(run, "ratings.jsonl")).length, 1);

      writeFileSync(join(run, "ratings.jsonl"), `${"x".repeat(RATINGS_FILE_LIMIT - 10)}\n`);
      const full = await post(viewer.url, "/api/runs/0/ratings", ok, RATE);
      assert.equal(full.status, 507, full.body);
      assert.match(full.body, /ratings\.jsonl is full/);
      assert.equal(statSync(join(run, "ratings.jsonl")).size, RATINGS_FILE_LIMIT - 9);
    } finally {
      await viewer.close();
    }
  });
});
