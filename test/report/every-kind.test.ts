import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { buildHtmlReport, loadRun, startViewer, type Viewer } from "../../src/report/index.js";
import { launchBrowser, layoutProblems, openReport, shown, screenshot } from "../helpers/browser.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { lastUserText, openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { copyDemo } from "../helpers/recordings.js";

/**
 * Runs of several kinds made offline (an exploration judged on the built-in simulator, a score
 * of predictions made in another folder, the demo's folder of runs), then their report and
 * viewer opened from yet another working directory at a laptop's, a tablet's and a phone's width.
 */
const home = temporaryDir("eqakit-every-kind-");
const workA = join(home, "work-a");
const workB = join(home, "elsewhere");
const exploreRun = join(workA, "runs", "explore");
const scoreRun = join(workA, "runs", "my-model");
const demo = join(workA, "eqakit-demo");
const WIDTHS = [1366, 760, 390];
let server: ModelServer;
let demoServer: ModelServer;
let browser: Browser;
let stopChecks = 0;
let demoStdout = "";
let benchmark: { question_id: string; question: string; answer: string; category: string }[] = [];

function script(req: ReceivedRequest) {
  const body = JSON.stringify(req.body);
  if (body.includes("Give two marks.")) return openAiReply("1, 4");
  if (body.includes("Your mark")) return openAiReply("Your mark: 4");
  if (body.includes("You are given a QUESTION about a home and the IMAGE")) return openAiReply(stopChecks++ >= 1 ? "yes" : "no");
  if (body.includes("Look at the picture and answer the question")) return openAiReply("A: Grey.");
  return openAiReply("living room");
}

/** The demo's language-model agent says one red mug; the judge's extraction reads it as a structure. */
function demoScript(req: ReceivedRequest) {
  if (lastUserText(req).startsWith("You read an answer to a question about a home")) return openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "mug", caption: "red", position: null }], value: 1 }]));
  return openAiReply("A: There is one red mug.");
}

before(async () => {
  mkdirSync(workA, { recursive: true });
  mkdirSync(workB, { recursive: true });
  server = await startModelServer(script);
  demoServer = await startModelServer(demoScript);
  const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
  // an exploration judged by LLM-Match and EAC, its episodes file named relative to work-a
  writeFileSync(join(workA, "episodes.json"), JSON.stringify([{ question_id: "home1-kitchen", question: "What colour is the sofa?", answer: "Grey", scene: "home-1" }]));
  const explored = await runCli(["explore", "--episodes", "episodes.json", "--agent", "fine-eqa", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", "runs/explore", "--width", "64", "--height", "48", "--image-size", "64", "--no-cache"], env, workA);
  assert.equal(explored.code, 0, explored.stderr);
  // a score of predictions made elsewhere, typed relative to work-a
  benchmark = readRawBenchmark().slice(0, 4).map((q) => ({ ...q, question_id: `home-1-heat-${q.question_id}` }));
  writeFileSync(join(workA, "benchmark.json"), JSON.stringify(benchmark));
  writeFileSync(join(workA, "my-agent-predictions.json"), JSON.stringify(benchmark.map((q, i) => ({ question_id: q.question_id, answer: `answer ${i}` }))));
  const scored = await runCli(["score", "--predictions", "my-agent-predictions.json", "--benchmark", "benchmark.json", "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--no-cache", "--out", "runs/my-model"], env, workA);
  assert.equal(scored.code, 0, scored.stderr);
  // the demo's recording, questions and program agent, the demo going on from there with its language-model agent
  await copyDemo({ seeds: [1], perTrajectory: 4 }, join(workA, "eqakit-demo"));
  const made = await runCli(["demo", "--out", "eqakit-demo", "--seeds", "1", "--per-trajectory", "4", "--model", "openai/test-vlm", "--model-base-url", `${demoServer.url}/v1`, "--agents", "vlm", "--no-cache"], env, workA);
  assert.equal(made.code, 0, made.stderr);
  demoStdout = made.stdout;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await demoServer?.close();
});

describe("one run loader for the report and the viewer", () => {
  test("an exploration judged by eqa explore --judge loads whole: every line of its judgements, its questions with ground truth, EXPRESS-Bench's figures", async () => {
    const run = await loadRun(exploreRun);
    assert.equal(run.kind, "explore");
    assert.deepEqual(run.notes.filter((n) => /unreadable|could not/.test(n)), []);
    const [q] = run.questions;
    assert.equal(q?.questionId, "home1-kitchen");
    assert.equal(q?.groundTruth, "Grey");
    assert.equal(q?.question, "What colour is the sofa?");
    assert.equal(q?.score, 4, "the LLM-Match mark of judgements.jsonl");
    assert.ok(q?.eac && !("error" in q.eac), "the EAC judgement");
    const names = run.metrics.map((m) => m.name);
    for (const name of ["LLM-Match", "C", "C*", "E_path", "d_T", "path length", "episodes finished"]) assert.ok(names.includes(name), `${name} among ${names.join(", ")}`);
    const summary = JSON.parse(readFileSync(join(exploreRun, "summary.json"), "utf8")) as { judged: { express: { cStar: number | null } }; cost: { roles: { role: string; calls: number; dollars: number | null }[] } };
    assert.equal(run.metrics.find((m) => m.name === "C*")?.value, summary.judged.express.cStar);
    // the cost is the summary's, as the command wrote it
    assert.deepEqual(run.costs.find((c) => c.stage === "explore")?.cost.roles.map((r) => [r.role, r.calls, r.dollars]), summary.cost.roles.map((r) => [r.role, r.calls, r.dollars]));
  });

  test("a line of eqakit's own file that cannot be read is an error naming the file and line, not a skip", async () => {
    const copy = join(home, "torn-explore");
    mkdirSync(copy);
    for (const name of ["summary.json", "episodes.jsonl", "judgements.jsonl", "commands.jsonl"]) writeFileSync(join(copy, name), readFileSync(join(exploreRun, name)));
    appendFileSync(join(copy, "judgements.jsonl"), `${JSON.stringify({ questionId: "home1-kitchen", llmMatch: "four" })}\n`);
    await assert.rejects(loadRun(copy), (error: Error) => error.name === "UserError" && /judgements\.jsonl:2/.test(error.message));
    const cli = await runCli(["report", copy, "--out", join(home, "torn.html")], cliEnv(home), workB);
    assert.equal(cli.code, 2);
    assert.match(cli.stderr, /judgements\.jsonl:2/);
  });

  test("a folder of runs (eqa demo's) is each of its agents' runs, for eqa report and eqa view alike, and reports from another folder as the demo's own report does", async () => {
    const cli = await runCli(["report", demo, "--out", join(home, "demo.html")], cliEnv(home), workB);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /\(2 run\(s\)/, "the program agent and the vlm agent");
    const html = readFileSync(join(home, "demo.html"), "utf8");
    assert.ok(html.includes('id="tag-table"'), "the program agent's structured scores");
    assert.ok(!html.includes(">unknown<"));
    assert.match(html, /<section id="recordings">/, "the demo's recordings, as in the report eqa demo writes");
    assert.ok(html.includes('data-recording="home-1"'));
    assert.match(html, /<h1>eqakit demo: TAG-EQA questions on simulated homes<\/h1>/);
    assert.doesNotMatch(html, /not answered in this run/);
    const undated = (page: string): string => page.replace(/generated \d{4}-\d\d-\d\dT[\d:.]+Z/, "generated …");
    assert.equal(undated(html), undated(readFileSync(join(demo, "report.html"), "utf8")), "the demo's own report, byte for byte but its date");
    // the vlm agent's answers: thumbnails of the frames it was sent, in its column of the TAG table
    const vlmCell = /<tr data-category="[^"]*" data-id="[^"]+">(?:(?!<\/tr>).)*<\/tr>/s.exec(html.slice(html.indexOf('id="tag-table"')))?.[0] ?? "";
    assert.match(vlmCell, /class="fthumb f\d+"/, "the frames the vlm agent was sent");
    // the vlm agent's run: its answers' cost and its judge's, each as its summary states it
    const vlm = await loadRun(join(demo, "runs", "vlm"));
    const judged = JSON.parse(readFileSync(join(demo, "runs", "vlm", "summary.json"), "utf8")) as { cost: { total: { calls: number } } };
    const answered = JSON.parse(readFileSync(join(demo, "runs", "vlm", "answers", "summary.json"), "utf8")) as { cost: { total: { calls: number } } };
    assert.equal(vlm.costs.find((c) => c.stage === "structured judge")?.cost.total.calls, judged.cost.total.calls);
    assert.equal(vlm.costs.find((c) => c.stage === "answer")?.cost.total.calls, answered.cost.total.calls);
  });

  test("eqa demo's report shows each recording's plan and four of its frames spread from first to last, each image embedded once, at every width without the page scrolling sideways", async () => {
    const recording = join(demo, "recordings", "home-1");
    assert.match(demoStdout, new RegExp(`recorded frames: ${join(demo, "recordings", "home-N", "frames").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} for N = 1 `));
    const html = readFileSync(join(demo, "report.html"), "utf8");
    const sources = [...html.matchAll(/background-image:url\("(data:image\/(?:jpeg|png);base64,[^"]+)"\)/g)].map((m) => m[1]!);
    assert.ok(sources.length >= 5, `${sources.length} embedded images`);
    assert.equal(new Set(sources).size, sources.length, "each image embedded once");
    const colour = readdirSync(join(recording, "frames")).filter((f) => /-rgb\.png$/.test(f)).sort();
    for (const width of WIDTHS) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        await page.goto(pathToFileURL(join(demo, "report.html")).href);
        const figure = page.locator('#recordings figure.recording[data-recording="home-1"]');
        assert.equal(await figure.count(), 1);
        const shownFrames = await figure.locator(".frames a").evaluateAll((links) => links.map((a) => ({ href: a.getAttribute("href") ?? "", image: getComputedStyle(a.firstElementChild!).backgroundImage, width: a.firstElementChild!.getBoundingClientRect().width })));
        assert.deepEqual(shownFrames.map((f) => decodeURIComponent(f.href.split("/").at(-1)!)), [colour[0], colour[Math.round((colour.length - 1) / 3)], colour[Math.round((2 * (colour.length - 1)) / 3)], colour.at(-1)], "four colour frames, first and last included");
        for (const f of shownFrames) {
          assert.match(f.image, /^url\("data:image\/jpeg;base64,/);
          assert.ok(f.width > 0);
        }
        const plan = await figure.locator(".plan").evaluate((el) => ({ image: getComputedStyle(el).backgroundImage, height: el.getBoundingClientRect().height, href: el.parentElement?.getAttribute("href") ?? "" }));
        assert.match(plan.image, /^url\("data:image\/png;base64,/, "the plan");
        assert.ok(plan.height > 0);
        assert.equal(plan.href, pathToFileURL(join(recording, "plan.png")).href);
        await screenshot(page, { path: join(home, `demo-report-${width}.png`), fullPage: false });
        assert.deepEqual(await layoutProblems(page), []);
      } finally {
        await page.close();
      }
    }
    // a recording's folder name is text like any other: escaped
    const odd = join(home, "odd-recordings");
    cpSync(recording, join(odd, `home-<img src=x>"'`), { recursive: true });
    const built = await buildHtmlReport([join(demo, "runs", "program")], { recordings: odd });
    assert.ok(!built.html.includes("<img src=x>"));
    assert.ok(built.html.includes('data-recording="home-&lt;img src=x&gt;&quot;&#39;"'));
    assert.equal((built.html.match(/class="fthumb f\d+"/g) ?? []).length >= 4, true, "its frames shown");
  });

  for (const width of WIDTHS) {
    test(`at ${width} px, the report and the viewer opened from another folder show answers, ground truth and each kind's headline, and no page scrolls sideways`, async () => {
      const out = join(workB, `report-${width}.html`);
      const page = await openReport(browser, ["../work-a/runs/my-model", exploreRun, demo], { out, cwd: workB, env: cliEnv(home), width });
      try {
        const headline = (await page.locator("#headline").textContent()) ?? "";
        assert.match(headline, /C\* \d/, "EXPRESS-Bench's C* in the headline");
        assert.doesNotMatch(headline, /Other metrics/);
        assert.doesNotMatch((await page.locator("body").textContent()) ?? "", /No scored run/);
        const metrics = (await page.locator("#metrics").textContent()) ?? "";
        for (const name of ["E_path", "d_T", "structured score (grounded)"]) assert.ok(metrics.includes(name), name);
        const explored = page.locator('#question-table tr[data-id="home1-kitchen"]');
        assert.match((await explored.textContent()) ?? "", /Grey/, "the exploration's ground truth");
        // docs/reports.md: thumbnails of the frames the agent used, and the path it walked
        assert.ok((await explored.locator(".frames .fthumb").count()) > 0, "the frames the explorer's calls were sent");
        const plan = await explored.locator(".answer-plan .plan").evaluate((el) => ({ image: getComputedStyle(el).backgroundImage, height: el.getBoundingClientRect().height, href: el.parentElement?.getAttribute("href") ?? "" }));
        assert.match(plan.image, /^url\("data:image\/png;base64,/, "the exploration's top-down picture");
        assert.ok(plan.height > 0);
        assert.equal(plan.href, pathToFileURL(join(exploreRun, "trajectories", "home1-kitchen.png")).href);
        const scoredRow = page.locator(`#question-table tr[data-id="${benchmark[0]!.question_id}"]`);
        assert.match((await scoredRow.textContent()) ?? "", /answer 0/, "the score run's answer, from predictions named relative to where it ran");
        assert.match((await scoredRow.textContent()) ?? "", new RegExp(benchmark[0]!.answer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), "its ground truth");
        assert.match((await page.locator("#q-count").textContent()) ?? "", /^\d+ of \d+ questions/);
        assert.doesNotMatch((await page.locator("#q-count").textContent()) ?? "", /^0 of 0/);
        await screenshot(page, { path: join(home, `report-${width}.png`) });
        assert.deepEqual(await layoutProblems(page), []);
      } finally {
        await page.close();
      }

      const viewer: Viewer = await startViewer({ runDirs: ["../work-a/runs/my-model", exploreRun, demo].map((d) => (d.startsWith("..") ? join(workB, d) : d)), port: 0 });
      const view = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        await view.goto(`${viewer.url}/`);
        await shown(view);
        assert.equal(await view.locator("#runs tbody tr").count(), 4, "my-model, explore, and the demo's program and vlm runs");
        assert.doesNotMatch((await view.locator("#runs tbody").textContent()) ?? "", /unknown/);
        assert.deepEqual(await layoutProblems(view), [], "the runs page");
        await view.goto(`${viewer.url}/#/run/1`);
        await shown(view);
        assert.match((await view.locator(".pagehead").textContent()) ?? "", /1 questions/);
        assert.deepEqual(await layoutProblems(view), [], "the exploration's page");
        const cell = await view.locator('tr[data-id="home1-kitchen"] td.qtext').evaluate((td) => td.getBoundingClientRect().width);
        assert.ok(cell >= 120, `the question column is ${cell} px wide`);
        await screenshot(view, { path: join(home, `view-explore-${width}.png`) });
        await view.goto(`${viewer.url}/#/run/1/q/home1-kitchen`);
        await shown(view);
        assert.match((await view.locator("#question-detail").textContent()) ?? "", /ground truth\s*Grey/);
        assert.ok((await view.locator("#frames-card img").count()) > 0, "the frames the explorer used");
        assert.deepEqual(await layoutProblems(view), [], "the exploration's question page");
        await view.goto(`${viewer.url}/#/run/0`);
        await shown(view);
        const id = benchmark[0]!.question_id;
        assert.equal(await view.locator(`tr[data-id="${id}"] code.qid`).textContent(), id, "the id whole");
        const idBox = await view.locator(`tr[data-id="${id}"] code.qid`).evaluate((c) => c.scrollWidth <= c.clientWidth + 1);
        assert.ok(idBox, "the id is not cut");
        assert.deepEqual(await layoutProblems(view), [], "the score run's page");
        // the demo's vlm agent answered in runs/vlm/answers/: its calls are the question's transcript
        const tagDataset = JSON.parse(readFileSync(join(demo, "dataset", "questions.json"), "utf8")) as { question_id: string }[];
        await view.goto(`${viewer.url}/#/run/3/q/${encodeURIComponent(tagDataset[0]!.question_id)}`);
        await shown(view);
        assert.match((await view.locator(".pagehead, h2").first().textContent()) ?? "", /./);
        assert.ok((await view.locator("#trace li.call").count()) > 0, "the vlm agent's model calls");
        assert.match((await view.locator("#trace").textContent()) ?? "", /one red mug/);
        const thumb = await view.locator("#trace .thumb img").first().getAttribute("src");
        assert.ok(thumb, "the frames the agent was sent, as thumbnails");
        const served = await view.request.get(`${viewer.url}${thumb}`);
        assert.equal(served.status(), 200);
        assert.equal(served.headers()["content-type"], "image/jpeg");
        assert.deepEqual(await layoutProblems(view), [], "the TAG question's page");
        await view.goto(`${viewer.url}/#/compare`);
        await shown(view);
        assert.ok((await view.locator("#compare tbody tr").count()) > 0, "Compare opens on the first two runs' table");
        assert.deepEqual(await layoutProblems(view), [], "the compare page");
        await screenshot(view, { path: join(home, `view-compare-${width}.png`) });
      } finally {
        await view.close();
        await viewer.close();
      }
    });
  }

  test("with one run, Compare says there is nothing to compare rather than a run against itself", async () => {
    const viewer = await startViewer({ runDirs: [scoreRun], port: 0 });
    const page = await browser.newPage();
    try {
      await page.goto(`${viewer.url}/#/compare`);
      await shown(page);
      assert.match((await page.locator("#app").textContent()) ?? "", /needs two runs/);
      assert.equal(await page.locator("#cmp-a").count(), 0);
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  test("a question the run holds no answer to is not offered for rating, and the notes say why the answers are missing", async () => {
    const moved = join(home, "moved-score");
    mkdirSync(moved);
    for (const name of ["summary.json", "judgements.jsonl", "commands.jsonl"]) writeFileSync(join(moved, name), readFileSync(join(scoreRun, name)));
    // no manifest, no copy: the predictions are only where the summary names them, relative to a folder that is gone
    const summary = JSON.parse(readFileSync(join(moved, "summary.json"), "utf8")) as { config: { predictions: { path: string } } };
    summary.config.predictions.path = "gone/my-agent-predictions.json";
    writeFileSync(join(moved, "summary.json"), JSON.stringify(summary));
    const run = await loadRun(moved);
    assert.ok(run.questions.every((q) => q.answer === undefined));
    assert.ok(run.notes.some((n) => /predictions gone\/my-agent-predictions\.json are not there any more: answers are not shown/.test(n)), run.notes.join("; "));
    const viewer = await startViewer({ runDirs: [moved], port: 0 });
    const page = await browser.newPage();
    try {
      await page.goto(`${viewer.url}/#/run/0/q/${encodeURIComponent(benchmark[0]!.question_id)}`);
      await shown(page);
      assert.equal(await page.locator("#no-answer").count(), 1);
      assert.equal(await page.locator("#rating-save, .rating .scale").count(), 0);
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  test("buildHtmlReport takes run folders as paths, read by the same loader", async () => {
    const { html } = await buildHtmlReport([exploreRun]);
    assert.ok(html.includes('data-id="home1-kitchen"'));
    assert.ok(html.includes('data-metric="C*"'));
  });
});
