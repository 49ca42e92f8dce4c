import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StructuredAnswer } from "../../src/data/index.js";
import { exactTextSimilarity, scoreTagRun, type TagPrediction, type TagScoreSummary } from "../../src/eval/index.js";
import { buildHtmlReport, createViewerApp, loadRun } from "../../src/report/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, startModelServer } from "../helpers/model-server.js";
import { readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { tagDataset } from "../eval/structured-fixtures.js";

/** Text that would run script if it were ever rendered as HTML. */
const HOSTILE = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> & "quoted"`;

const home = temporaryDir("eqakit-tag-report-");
const questions = tagDataset();
const byId = new Map(questions.map((q) => [q.question_id, q]));
const questionsFile = join(home, "questions.json");
const programRun = join(home, "program");
const llmRun = join(home, "llm-agent");
const llmMatchRun = join(home, "llm-match");
const truth = (id: string): StructuredAnswer => byId.get(id)!.structured_answer;

function writeJson(name: string, value: unknown): string {
  const path = join(home, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** The program agent answers from the true structures (one count off); the language model less well, once with hostile free text. */
function programPredictions(): TagPrediction[] {
  return questions.map((q) => ({ question_id: q.question_id, answer: q.question_id === "q-times" ? [{ predicate: "", objects: truth("q-times")[0]!.objects, value: 2 }] : q.structured_answer }));
}

function llmPredictions(): TagPrediction[] {
  return [
    { question_id: "q-count", answer: [{ predicate: "", objects: [{ type: "cup", caption: HOSTILE, position: null }], value: 3 }] },
    { question_id: "q-list", answer: truth("q-list") },
    { question_id: "q-state", answer: HOSTILE },
    { question_id: "q-colour", answer: [] },
    { question_id: "q-where", answer: null },
    { question_id: "q-times", answer: truth("q-times") },
  ];
}

async function scoreTag(outDir: string, predictions: TagPrediction[], name: string): Promise<TagScoreSummary> {
  const predictionsPath = writeJson(name, predictions);
  const result = await scoreTagRun({ questions, questionsPath: questionsFile, predictions, predictionsPath, outDir, match: { similarity: exactTextSimilarity() }, bootstrap: { resamples: 200 } });
  return result.summary;
}

let programSummary: TagScoreSummary;
let llmSummary: TagScoreSummary;

before(async () => {
  writeFileSync(questionsFile, JSON.stringify(questions));
  [programSummary, llmSummary] = await Promise.all([scoreTag(programRun, programPredictions(), "program.json"), scoreTag(llmRun, llmPredictions(), "llm.json")]);
});

describe("TAG-EQA runs in the report", () => {
  test("loadRun reads a structured-judge run with its questions and predictions", async () => {
    const run = await loadRun(llmRun);
    assert.equal(run.kind, "tag-structured");
    assert.equal(run.questions.length, 0, "no LLM-Match rows");
    assert.deepEqual(run.notes, []);
    const tag = run.tag!;
    assert.equal(tag.summary!.scores.grounded.mean, llmSummary.scores.grounded.mean);
    assert.deepEqual(tag.questions.map((q) => q.questionId), questions.map((q) => q.question_id));
    const state = tag.questions.find((q) => q.questionId === "q-state")!;
    assert.equal(state.prediction, HOSTILE);
    assert.equal(state.status, "failed", "free text without a judge");
    assert.match(state.error ?? "", /--judge/);
    const list = tag.questions.find((q) => q.questionId === "q-list")!;
    assert.equal(list.question, byId.get("q-list")!.question);
    assert.deepEqual(list.truth, truth("q-list"));
    assert.deepEqual(list.predicted, truth("q-list"));
    assert.equal(list.score, 5);
    assert.equal(list.tags!.query_type, "listObjects");
    const where = tag.questions.find((q) => q.questionId === "q-where")!;
    assert.equal(where.prediction, null);
    assert.equal(where.valid, false);
    assert.equal(where.errors!.objectFalseNegatives, 1);
  });

  test("two agents side by side: scores, valid answers, error and category charts, every question, hostile text escaped", async () => {
    const runs = [await loadRun(programRun, "program"), await loadRun(llmRun, "gpt")];
    const { html } = await buildHtmlReport(runs, { thumbnails: 0 });
    const section = html.slice(html.indexOf('<section id="tag">'), html.indexOf("</section>", html.indexOf('<section id="tag">')));
    assert.ok(section.length > 0, "a TAG section");
    for (const [r, summary] of [programSummary, llmSummary].entries()) {
      assert.ok(section.includes(`data-field="tag-grounded" data-value="${summary.scores.grounded.mean}"`), `run ${r} grounded mean`);
      assert.ok(section.includes(`data-field="tag-ungrounded" data-value="${summary.scores.ungrounded.mean}"`), `run ${r} ungrounded mean`);
      assert.ok(section.includes(`data-field="tag-valid" data-value="${summary.validAnswerRate}"`), `run ${r} valid-answer rate`);
      assert.ok(section.includes(`<g class="bar" data-run="${r}" data-group="grounded" data-mean="${summary.scores.grounded.mean}">`));
      assert.ok(section.includes(`data-group="valid answers" data-mean="${100 * summary.validAnswerRate}"`));
      assert.ok(section.includes(`<g class="bar" data-run="${r}" data-group="object false negatives" data-mean="${100 * summary.errors.objectFalseNegatives.answers}">`));
      for (const [key, pair] of Object.entries(summary.categories.queryType)) {
        assert.ok(section.includes(`<g class="bar" data-run="${r}" data-group="query: ${key}" data-mean="${pair.grounded.mean}">`), `run ${r} query ${key}`);
      }
    }
    assert.ok(programSummary.scores.grounded.mean > llmSummary.scores.grounded.mean);
    for (const chart of ["chart-tag-scores", "chart-tag-valid", "chart-tag-errors", "chart-tag-category"]) assert.ok(section.includes(`id="${chart}"`), chart);
    for (const group of ["predicate: location", "conditions: 2", "ambiguous", "spatiotemporal"]) assert.ok(section.includes(`data-group="${group}"`), group);

    // every question once, both runs' scores in it, the truth's groups with their coordinates
    for (const q of questions) assert.equal(section.split(new RegExp(`<tr data-category="${q.tags.query_type}" data-id="${q.question_id}"(?: class="differs")?>`)).length, 2, q.question_id);
    assert.ok(section.includes(`<tr data-category="listObjects" data-id="q-list"><td`), "both runs scored q-list 5: it does not differ");
    const row = (id: string): string => {
      const start = section.indexOf(`data-id="${id}"`);
      return section.slice(start, section.indexOf("</tr>", start));
    };
    assert.match(row("q-count"), /location: on the countertop \(x=3\.10, y=0\.15, z=-2\.40\)<\/span> → <b class="value">1<\/b>/);
    assert.match(row("q-count"), /green ceramic cup.*@ \(0\.40, 0\.95, -0\.80\)/);
    assert.match(row("q-times"), /data-run="0" data-points="[\d.]+" data-score="[\d.]+" data-csv="[\d.]+">/);
    assert.match(row("q-times"), /data-run="1" data-points="100" data-score="5" data-csv="5">5\.00/);
    assert.match(row("q-times"), /<td class="num score up" data-sort="5" data-run="1"/, "above the first run's score");
    assert.match(row("q-state"), /<td class="num score" data-sort="-1" data-run="1"/, "a failure is neither up nor down");
    assert.match(row("q-state"), /data-run="1" data-points="" data-score="" data-csv="">failed/);
    assert.match(row("q-where"), /\(no answer\)/);

    // hostile text from a prediction is text, never markup
    assert.ok(!html.includes(HOSTILE));
    assert.ok(!html.includes("<script>window"));
    assert.ok(!html.includes("<img src=x"));
    assert.ok(row("q-state").includes("&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt; &amp; &quot;quoted&quot;"));
    assert.ok(row("q-count").includes("&lt;script&gt;"), "a caption in a structured prediction too");
    assert.equal(html.match(/<script>/g)?.length, 1, "only the report's own script");
    assert.ok(!html.includes('id="questions"'), "no LLM-Match question table for TAG runs alone");
    assert.ok(!html.includes('id="charts"'));
  });

  test("a TAG run still scoring (judgements, no summary yet) is recognised and shown from its records", async () => {
    const partial = join(home, "partial");
    mkdirSync(partial);
    copyFileSync(join(llmRun, "judgements.jsonl"), join(partial, "judgements.jsonl"));
    const run = await loadRun(partial);
    assert.equal(run.kind, "tag-structured");
    assert.equal(run.tag!.summary, undefined);
    assert.equal(run.tag!.questions.length, questions.length);
    assert.equal(run.tag!.questions.find((q) => q.questionId === "q-list")!.score, 5);
    assert.match(run.notes.join("\n"), /no summary\.json/);
    const { html } = await buildHtmlReport([run], { thumbnails: 0 });
    assert.match(html, /no summary yet: 6 judgement\(s\) so far/);
    assert.match(html, /<tr data-category="" data-id="q-list">/, "questions by id only, without their file");
  });

  test("a mixed report: an LLM-Match run and a TAG run, through eqa report", async () => {
    const server = await startModelServer(() => openAiReply("Your mark: 4"));
    try {
      const picked = readRawBenchmark().slice(0, 2);
      const benchmark = writeJson("benchmark.json", picked);
      const predictions = writeJson("openeqa-predictions.json", picked.map((q) => ({ question_id: q.question_id, answer: "a chair" })));
      const env = cliEnv(home);
      const scored = await runCli(["score", "--predictions", predictions, "--benchmark", benchmark, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--no-cache", "--out", llmMatchRun], env);
      assert.equal(scored.code, 0, scored.stderr);
      const out = join(home, "mixed.html");
      const made = await runCli(["report", llmMatchRun, programRun, llmRun, "--out", out], env);
      assert.equal(made.code, 0, made.stderr);
      const html = readFileSync(out, "utf8");
      const llmMatch = JSON.parse(readFileSync(join(llmMatchRun, "summary.json"), "utf8")) as { llmMatch: { overall: { mean: number } } };
      assert.equal(llmMatch.llmMatch.overall.mean, 75);
      assert.ok(html.includes(`data-field="overall" data-value="75"`), "the LLM-Match headline");
      assert.ok(html.includes('id="chart-category"') && html.includes('id="question-table"'), "LLM-Match charts and questions");
      for (const q of picked) assert.ok(html.includes(`data-id="${q.question_id}"`));
      assert.ok(html.includes('id="tag-table"') && html.includes(`data-run="1" data-group="grounded" data-mean="${programSummary.scores.grounded.mean}"`), "the TAG runs keep their report indices");
      assert.match(html, /<h3>llm-agent · structured judge: 1<\/h3>/, "the TAG failure listed");
      assert.ok(html.includes("<li>q-state: <span"));
      // TAG runs have their own headline: the LLM-Match one holds no row of dashes for them
      const headline = html.slice(html.indexOf('<section id="headline">'), html.indexOf("</section>", html.indexOf('<section id="headline">')));
      assert.ok(headline.includes('<tr data-run="0">') && !headline.includes('<tr data-run="1">') && !headline.includes('<tr data-run="2">'));
      assert.ok(!html.includes("<script>window"));
    } finally {
      await server.close();
    }
  });

  test("the viewer lists TAG runs with their grounded score and serves their questions", async () => {
    const app = createViewerApp([programRun, llmRun]);
    const get = async (path: string): Promise<unknown> => (await app.request(path, { headers: { host: "127.0.0.1" } })).json();
    const listed = (await get("/api/runs")) as { runs: { kind: string; overall: number | null; scale: string }[] };
    assert.deepEqual(listed.runs.map((r) => [r.kind, r.overall, r.scale]), [
      ["tag-structured", programSummary.scores.grounded.mean, "1-5"],
      ["tag-structured", llmSummary.scores.grounded.mean, "1-5"],
    ]);
    const run = (await get("/api/runs/1")) as { categories: string[]; questions: { questionId: string; answer: string | null; score: number | null }[] };
    assert.equal(run.questions.length, questions.length);
    assert.ok(run.categories.includes("listObjects"));
    assert.equal(run.questions.find((q) => q.questionId === "q-state")!.answer, HOSTILE, "as data: the viewer's script shows it as text");
    const detail = (await get("/api/runs/0/questions/q-count")) as { tag: { truth: StructuredAnswer; groundedScore: number } };
    assert.deepEqual(detail.tag.truth, truth("q-count"));
    assert.equal(detail.tag.groundedScore, 5);
    const report = await app.request("/report", { headers: { host: "127.0.0.1" } });
    assert.equal(report.status, 200);
    const page = await report.text();
    assert.ok(page.includes('id="tag-table"'));
    assert.match(report.headers.get("content-security-policy") ?? "", /script-src 'sha256-/);
  });
});
