import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { startViewer, type Viewer } from "../../src/report/index.js";
import { launchBrowser, layoutProblems, openReport, screenshot, shown } from "../helpers/browser.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { buildMixedFixture, type MixedFixture } from "../helpers/mixed-set.js";
import { temporaryDir } from "../helpers/paths.js";

/** A Mixed EQA run made in one folder (recall-explore: it remembers, walks and looks), opened from another in a browser. */
const home = temporaryDir("eqakit-mixed-widths-");
const workA = join(home, "work-a");
const workB = join(home, "elsewhere");
const run = join(workA, "runs", "mixed");
const WIDTHS = [1366, 760, 390];
let fixture: MixedFixture;
let browser: Browser;

before(async () => {
  mkdirSync(workA, { recursive: true });
  mkdirSync(workB, { recursive: true });
  fixture = await buildMixedFixture({ width: 128, height: 96 });
  const ran = await runCli(["explore", "--episodes", fixture.file, "--agent", "recall-explore", "--max-steps", "150", "--width", "128", "--height", "96", "--out", "runs/mixed"], cliEnv(home), workA);
  assert.equal(ran.code, 0, ran.stderr);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

describe("a Mixed EQA run in the report and the viewer, opened from another folder", () => {
  for (const width of WIDTHS) {
    test(`at ${width} px: per category accuracy and SPL, each question with its answer, ground truth, history and plan, and no page scrolls sideways`, async () => {
      const out = join(workB, `report-${width}.html`);
      const page = await openReport(browser, ["../work-a/runs/mixed"], { out, cwd: workB, env: cliEnv(home), width });
      try {
        const headline = (await page.locator("#headline").textContent()) ?? "";
        assert.match(headline, /accuracy \(past\)/);
        assert.match(headline, /SPL/);
        const row = page.locator('#question-table tr[data-id="present-where-candle"]');
        const text = (await row.textContent()) ?? "";
        assert.match(text, /Where is the candle now\?/, "the question");
        assert.match(text, /bed/, "its ground truth");
        assert.match(text, /history: day 1 \(yesterday, morning\)/, "the history it was handed");
        const plan = await row.locator(".answer-plan .plan").evaluate((el) => getComputedStyle(el).backgroundImage);
        assert.match(plan, /^url\("data:image\/png;base64,/, "the walk on the plan");
        await screenshot(page, { path: join(home, `report-${width}.png`) });
        assert.deepEqual(await layoutProblems(page), []);
      } finally {
        await page.close();
      }

      const viewer: Viewer = await startViewer({ runDirs: [run], port: 0 });
      const view = await browser.newPage({ viewport: { width, height: 900 } });
      try {
        await view.goto(`${viewer.url}/`);
        await shown(view);
        assert.equal(await view.locator("#runs tbody tr").count(), 1);
        assert.doesNotMatch((await view.locator("#runs tbody").textContent()) ?? "", /unknown/);
        assert.deepEqual(await layoutProblems(view), [], "the runs page");
        await view.goto(`${viewer.url}/#/run/0`);
        await shown(view);
        assert.match((await view.locator(".pagehead").textContent()) ?? "", /4 questions/);
        assert.deepEqual(await layoutProblems(view), [], "the run's page");
        await view.goto(`${viewer.url}/#/run/0/q/present-where-candle`);
        await shown(view);
        const detail = (await view.locator("#question-detail").textContent()) ?? "";
        assert.match(detail, /ground truth\s*bed \(also: on the bed\)/, "the answer and its alternatives");
        assert.match(detail, /day 1 \(yesterday, morning\)/, "the history's day");
        assert.ok((await view.locator("#frames-card img").count()) > 0, "the frames the agent looked at");
        await screenshot(view, { path: join(home, `view-question-${width}.png`) });
        assert.deepEqual(await layoutProblems(view), [], "the question's page");
      } finally {
        await view.close();
        await viewer.close();
      }
    });
  }
});
