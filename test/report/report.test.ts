import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import sharp from "sharp";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, screenshot } from "../helpers/browser.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, collect, runCli, startCli } from "../helpers/cli.js";
import { closedPortUrl } from "../helpers/model-server.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { openRun } from "../../src/store/index.js";

/** An answer that would run script if it were ever rendered as HTML. */
const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & "quoted" </td></tr>`;
const ABSTAIN = "The question is unanswerable from the provided images.";

const home = temporaryDir("eqakit-report-");
const framesRoot = join(home, "frames");
const benchmarkFile = join(home, "benchmark.json");
const runA = join(home, "vlm-run");
const runB = join(home, "score-master");
const runC = join(home, "without-guess");
const runD = join(home, "blind-answers");
const runE = join(home, "other-kind");
const runF = join(home, "empty");
let questions: { question_id: string; question: string; category: string; episode_history: string }[] = [];
let server: ModelServer;
let browser: Browser;

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

function script(request: ReceivedRequest) {
  const body = JSON.stringify(request.body);
  const asked = questions.findIndex((q) => body.includes(JSON.stringify(q.question).slice(1, -1)));
  if (body.includes("Your mark")) {
    const base = [2, 5, 3, 4, 1, 4][asked] ?? 3;
    return openAiReply(`Your mark: ${body.includes("Score Master") && asked === 1 ? 4 : base}`);
  }
  if (body.includes("Proposed Answer")) return openAiReply(`Action: ${asked === 3 ? "guess" : "keep"}`);
  if (body.includes("image_url")) return openAiReply(asked === 0 ? HOSTILE : asked === 3 ? ABSTAIN : "a brown chair");
  return openAiReply("A: a table");
}


function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return problems;
}

before(async () => {
  await writeRgbEpisode(join(framesRoot, "hm3d-v0", "000-fake"), 8, 160, 90);
  await writeRgbEpisode(join(framesRoot, "scannet-v0", "002-fake"), 8, 160, 90);
  const raw = readRawBenchmark();
  const picked = ["object recognition", "object localization", "attribute recognition", "functional reasoning", "world knowledge", "spatial understanding"].map((c) => raw.find((q) => q.category === c)!);
  questions = picked.map((q, i) => ({ ...q, episode_history: i < 4 ? "hm3d-v0/000-fake" : "scannet-v0/002-fake" }));
  writeFileSync(benchmarkFile, JSON.stringify(questions));
  server = await startModelServer(script);
  const model = ["--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`];
  const judge = ["--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--benchmark", benchmarkFile, "--no-cache"];
  const env = cliEnv(home);
  const a = await runCli(["run", "--agent", "vlm", ...model, "--frames", framesRoot, "--num-frames", "3", ...judge, "--out", runA], env);
  assert.equal(a.code, 0, a.stderr);
  const [b, c, d] = await Promise.all([
    runCli(["score", "--predictions", join(runA, "predictions.json"), ...judge, "--prompt-variant", "role=score-master", "--temperature", "0.1", "--out", runB], env),
    runCli(["score", "--predictions", join(runA, "predictions.json"), ...judge, "--without-guess", "--out", runC], env),
    runCli(["answer", "--agent", "blind", ...model, "--benchmark", benchmarkFile, "--no-cache", "--out", runD], env),
  ]);
  for (const r of [b, c, d]) assert.equal(r.code, 0, r.stderr);
  mkdirSync(runE);
  // a kind of run the report has no special view for (a reward-model benchmark writes bench.json and its own curves)
  const group = (accuracy: number, n: number) => ({ n, accuracy: { value: accuracy, ci: [accuracy - 10, accuracy + 10] }, rmse: { value: 1.5, ci: [1, 2] } });
  const metrics = (accuracy: number) => ({ tolerance: 2, confidence: 0.95, resamples: 100, environments: { hm3d: group(accuracy, 8) }, overall: group(accuracy, 8), pooled: group(accuracy, 8), categories: {}, failed: 0 });
  writeFileSync(join(runE, "bench.json"), JSON.stringify({ kind: "rm-bench", eqakitVersion: "0.1.0", createdAt: "2026-11-28T10:00:00.000Z", wallTimeMs: 1200, config: { ks: [1, 2], plotted: "vote", tolerance: 2 }, counts: { instances: 8, withGroundTruth: 8, samples: 16, failedSamples: 0, reused: 0 }, scaling: { vote: { "1": metrics(50), "2": metrics(62.5) }, mean: { "1": metrics(50), "2": metrics(62.5) } }, usage: { evaluations: { calls: 16, cacheHits: 2, promptTokens: 900, completionTokens: 300, images: 0, retries: 1 } } }));
  await sharp({ create: { width: 120, height: 80, channels: 3, background: { r: 20, g: 120, b: 200 } } }).png().toFile(join(runE, "scaling-curves.png"));
  // a run just started: its manifest written, nothing else yet (a folder without one is no run: test/report/run-folders.test.ts)
  await openRun({ dir: runF, kind: "answer", settings: {} });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

describe("eqa report in Chromium", () => {
  test("runs made against a loopback model: charts, the summary's numbers, hostile text as text, filters and sorting", async () => {
    const out = join(home, "report.html");
    const made = await runCli(["report", runA, runB, runC, runD, runE, runF, "--out", out], cliEnv(home));
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /empty: no summary\.json/);
    const page = await browser.newPage();
    const problems = watch(page);
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(out).href);

    // the numbers are summary.json's
    const summaryA = readJson(join(runA, "summary.json")) as { score: { llmMatch: { overall: { mean: number }; byCategory: Record<string, { mean: number }> } } };
    const summaryB = readJson(join(runB, "summary.json")) as { llmMatch: { overall: { mean: number } }; config: { promptVariant: string; parameters: { temperature: number } } };
    assert.equal(summaryB.config.promptVariant, "role=score-master");
    assert.equal(summaryB.config.parameters.temperature, 0.1);
    const overall = await page.$$eval('#headline [data-field="overall"]', (cells) => cells.map((c) => [c.getAttribute("data-value"), c.textContent]));
    assert.deepEqual(overall[0], [String(summaryA.score.llmMatch.overall.mean), summaryA.score.llmMatch.overall.mean.toFixed(1)]);
    assert.deepEqual(overall[1], [String(summaryB.llmMatch.overall.mean), summaryB.llmMatch.overall.mean.toFixed(1)]);
    for (const [category, estimate] of Object.entries(summaryA.score.llmMatch.byCategory)) {
      const bar = page.locator(`#chart-category g.bar[data-run="0"][data-group="${category}"]`);
      assert.equal(await bar.getAttribute("data-mean"), String(estimate.mean), category);
    }
    assert.equal(await page.locator("#chart-category g.bar").count(), 3 * 6, "6 categories × 3 scored runs");
    assert.ok((await page.locator("#chart-source g.bar line.ci").count()) > 0, "intervals drawn");

    // hostile answer text is shown as text and never runs
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    const hostileRow = page.locator(`#question-table tr[data-id="${questions[0]!.question_id}"]`);
    assert.equal(await hostileRow.locator(".answer").first().textContent(), HOSTILE);

    // force-a-guess, cost, other kinds, failures sections
    const abstention = await page.locator("#abstention").textContent();
    assert.match(abstention ?? "", /vlm-run\s*61/);
    assert.match(await page.locator("#abstention tbody tr").first().textContent() ?? "", /16\.7%/);
    assert.match(await page.locator('#metrics tr[data-metric="accuracy (K=2, vote)"]').textContent() ?? "", /62\.5 %/);
    assert.match(await page.locator("#cost").textContent() ?? "", /judge/);
    assert.match(await page.locator("#cost").textContent() ?? "", /other-kind\s*evaluations\s*16\s*2\s*900\s*300/);
    assert.ok(await page.locator("#metrics img.figure").evaluate((img) => (img as HTMLImageElement).naturalWidth === 120));
    assert.match(await page.locator("#notes").textContent() ?? "", /no summary\.json/);
    assert.match(await hostileRow.textContent() ?? "", /a table/, "the blind run's answer beside it");
    assert.equal(await hostileRow.locator(".answer").nth(1).textContent(), HOSTILE, "a score run shows the answers it judged");
    const abstainedRow = page.locator(`#question-table tr[data-id="${questions[3]!.question_id}"]`);
    assert.equal(await abstainedRow.locator(".answer").nth(0).textContent(), "a table", "the blind guess replaced the abstention");
    assert.equal(await abstainedRow.locator(".answer").nth(2).textContent(), ABSTAIN, "the w/o-guess run judged the agent's own answer");
    const forced = page.locator(`#question-table tr[data-id="${questions[3]!.question_id}"] .forced`).first();
    assert.equal(await forced.textContent(), `forced guess: the agent said “${ABSTAIN}”, and the blind guess above was submitted`);
    assert.match(abstention ?? "", /LLM-Match with the guess, without it, and their difference are computed on the questions both scorings judged/);

    // thumbnails of the frames used, linked to the full-size frame files
    const thumbs = hostileRow.locator(".frames a.frame .fthumb");
    assert.equal(await thumbs.count(), 3, "3 frames used, at most 4 shown");
    assert.match(await thumbs.first().evaluate((e) => getComputedStyle(e).backgroundImage), /^url\("data:image\/jpeg;base64,/);
    assert.match((await hostileRow.locator(".frames a.frame").first().getAttribute("href")) ?? "", /^file:.*hm3d-v0\/000-fake\/\d{5}-rgb\.png$/);

    // filter and sort
    await page.selectOption("#q-category", "object localization");
    assert.equal(await page.locator("#question-table tbody tr:not([hidden])").count(), 1);
    await page.selectOption("#q-category", "");
    await page.selectOption("#q-score", "high");
    const high = await page.locator("#question-table tbody tr:not([hidden])").count();
    assert.equal(high, Object.values(readJson(join(runA, "metrics.json")) as Record<string, number>).filter((s) => s >= 3).length);
    await page.selectOption("#q-score", "");
    await page.click('#question-table th[data-col="5"]');
    await page.click('#question-table th[data-col="5"]');
    const sorted = await page.$$eval('#question-table tbody tr td.score[data-run="0"]', (cells) => cells.map((c) => Number(c.getAttribute("data-sort"))));
    assert.deepEqual(sorted, [...sorted].sort((x, y) => y - x));

    await screenshot(page, { path: join(home, "report.png"), fullPage: true });
    assert.ok(requests.every((u) => u.startsWith("file:") || u.startsWith("data:")), `no network: ${requests.filter((u) => !u.startsWith("file:") && !u.startsWith("data:")).join(", ")}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
});

function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; nosniff: string; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: "GET", headers }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), nosniff: String(res.headers["x-content-type-options"] ?? ""), body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("eqa view in Chromium", () => {
  test("browse, open a question (frames, trace, judge's reply), compare two runs; traversal refused", async () => {
    symlinkSync("/etc/passwd", join(runA, "link-out"));
    writeFileSync(join(runA, "notes.html"), "<script>window.__pwned=3</script>");
    const port = new URL(await closedPortUrl()).port;
    const child = startCli(["view", runA, runB, runD, "--port", port], cliEnv(home));
    const finished = collect(child);
    try {
      let stdout = "";
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes("serving")) resolve();
        });
        child.on("exit", () => reject(new Error(`eqa view exited: ${stdout}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      assert.match(stdout, new RegExp(`serving 3 run\\(s\\) at ${base}/`));

      const page = await browser.newPage();
      const problems = watch(page);
      await page.goto(`${base}/`);
      await page.waitForSelector("#runs tbody tr");
      assert.equal(await page.locator("#runs tbody tr").count(), 3);
      const summaryA = readJson(join(runA, "summary.json")) as { score: { llmMatch: { overall: { mean: number } } } };
      assert.equal(await page.locator('#runs [data-field="overall"]').first().textContent(), summaryA.score.llmMatch.overall.mean.toFixed(1));

      await page.click("#runs a >> nth=0");
      await page.waitForSelector("#questions tbody tr");
      assert.equal(await page.locator("#questions tbody tr").count(), 6);
      await page.waitForFunction(() => document.querySelectorAll("#f-run option").length === 3);
      assert.match((await page.locator("#f-run option").nth(2).textContent()) ?? "", /blind-answers · blind \(openai\/gpt-4o\)/, "switch agent");
      await page.selectOption("#f-category", "object localization");
      assert.equal(await page.locator("#questions tbody tr").count(), 1);
      await page.selectOption("#f-category", "");
      await page.click(`#questions tr[data-id="${questions[0]!.question_id}"]`);
      await page.waitForSelector("#question-detail");
      assert.equal(await page.locator("#question-detail dd.answer").textContent(), HOSTILE);
      assert.equal(await page.locator('img[src="x"]').count(), 0);
      assert.equal(await page.locator("#trace li").count(), 2, "the VLM's answer and the force-a-guess check");
      assert.match(await page.locator(".judge-reply").first().textContent() ?? "", /^Your mark: 2$/);
      const frames = page.locator("#frames img");
      assert.equal(await frames.count(), 3);
      await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>("#frames img")].every((i) => i.complete && i.naturalWidth > 0));
      await screenshot(page, { path: join(home, "viewer-question.png"), fullPage: true });

      await page.goto(`${base}/#/compare/0/1`);
      await page.waitForSelector("#compare tbody tr");
      assert.equal(await page.locator("#compare tbody tr").count(), 6);
      assert.match(await page.locator("#cmp-summary").textContent() ?? "", /6 questions scored in both: vlm-run higher on 1, lower on 0, equal on 5/);
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      assert.deepEqual(problems, []);
      await page.close();

      // files of the runs, as data; nothing outside them
      const summary = await rawGet(base, "/runs/0/files/summary.json");
      assert.equal(summary.status, 200);
      assert.match(summary.type, /^application\/json/);
      const html = await rawGet(base, "/runs/0/files/notes.html");
      assert.equal(html.status, 200);
      assert.match(html.type, /^text\/plain/);
      assert.equal(html.nosniff, "nosniff");
      for (const path of [
        "/runs/0/files/../../../../etc/passwd",
        "/runs/0/files/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/runs/0/files/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/runs/0/files/%2E%2E%5C%2E%2E%5Cetc%5Cpasswd",
        "/runs/0/files/link-out",
        "/runs/0/files/",
        "/runs/7/files/summary.json",
      ]) {
        const refused = await rawGet(base, path);
        assert.ok(refused.status === 403 || refused.status === 404, `${path}: ${refused.status}`);
        assert.doesNotMatch(refused.body, /root:/, path);
      }
      const rebound = await rawGet(base, "/runs/0/files/summary.json", { host: `attacker.example:${port}` });
      assert.equal(rebound.status, 403, "a foreign Host header (DNS rebinding) is refused");
      const unusedFrame = await rawGet(base, `/api/runs/0/frames/${questions[0]!.question_id}/2`);
      assert.equal(unusedFrame.status, 404, "only frames the agent used");
    } finally {
      child.kill("SIGTERM");
      await finished;
    }
  });
});

describe("eqa judge-agreement", () => {
  test("the ρ matrix across prompt variants of real score runs; bad input exits 2", async () => {
    const env = cliEnv(home);
    const human = join(home, "human.csv");
    const marks = [[2, 5, 3, 4, 1, 4], [1, 5, 3, 5, 2, 3], [2, 4, 4, 4, 1, 5]];
    writeFileSync(human, ["question_id,annotator,score", ...marks.flatMap((m, a) => m.map((s, i) => `${questions[i]!.question_id},${a},${s}`))].join("\n"));
    const [result, bad, noRun, badVariant, annotated] = await Promise.all([
      runCli(["judge-agreement", runA, runB, runC, "--resamples", "500", "--json", join(home, "agreement.json")], env),
      runCli(["judge-agreement", runA, join(home, "nowhere")], env),
      runCli(["report", join(home, "nowhere")], env),
      runCli(["score", "--predictions", join(runA, "predictions.json"), "--prompt-variant", "role=wizard"], env),
      runCli(["judge-agreement", runA, human, "--label", "GPT-4o", "Human", "--resamples", "200"], env),
    ]);
    assert.equal(annotated.code, 0, annotated.stderr);
    assert.match(annotated.stdout, /Human: 6 item\(s\), 3 annotator\(s\)/);
    assert.match(annotated.stdout, /per annotator \(Human\):\n\s*annotator\s+n\s+vs\. other humans\s+vs\. GPT-4o\n\s*0\s+6\s+\S+ \[.*\]\s+1\.00 /);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /score-master \(role=score-master, T=0\.1\)/);
    assert.match(result.stdout, /Spearman ρ/);
    const saved = readJson(join(home, "agreement.json")) as { matrix: { pairs: { estimate: { n: number; resamples: number } }[] } };
    assert.equal(saved.matrix.pairs.length, 3);
    assert.equal(saved.matrix.pairs[0]!.estimate.n, 6);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /nowhere: no such file or run directory/);
    assert.equal(noRun.code, 2);
    assert.equal(badVariant.code, 2);
    assert.match(badVariant.stderr, /role=ai\|score-master\|professional/);
  });
});
