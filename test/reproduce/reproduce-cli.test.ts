import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { openAiReply, startModelServer, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { startOpenAiBatchServer } from "../helpers/provider-emulators.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";

/**
 * `eqa reproduce openeqa-table-4` against a loopback OpenAI-compatible server: OpenEQA's agent
 * families on a few questions of the OpenEQA fixture (two episodes, one HM3D and one ScanNet,
 * drawn as small synthetic scenes with depth, poses and instance masks), judged with LLM-Match.
 */

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

function bodyText(request: ReceivedRequest): string {
  return JSON.stringify(request.body);
}

function isJudgeCall(request: ReceivedRequest): boolean {
  return bodyText(request).includes("Your mark");
}

/** The judge gives 4, force-a-guess keeps, a captioner describes, every agent answers "a cup". */
function reply(request: ReceivedRequest): string {
  const text = bodyText(request);
  if (isJudgeCall(request)) return "Your mark: 4";
  if (text.includes("Proposed Answer:")) return "Action: keep";
  if (text.includes("image_url") && !text.includes("User Query")) return "A wooden table with a red cup on it.";
  return "A: a cup";
}

interface Setup {
  home: string;
  subset: string;
  frames: string;
  questions: number;
}

/** Four fixture questions on two episodes, and the two episodes' frames. */
async function setup(): Promise<Setup> {
  const home = temporaryDir("eqakit-reproduce-");
  const raw = readRawBenchmark();
  const hm3d = raw.find((q) => q.episode_history.startsWith("hm3d-v0/"))!.episode_history;
  const scannet = raw.find((q) => q.episode_history.startsWith("scannet-v0/"))!.episode_history;
  const chosen = [...raw.filter((q) => q.episode_history === hm3d).slice(0, 2), ...raw.filter((q) => q.episode_history === scannet).slice(0, 2)];
  const subset = join(home, "subset.json");
  writeFileSync(subset, JSON.stringify(chosen.map((q) => q.question_id)));
  const frames = join(home, "frames");
  await writeSceneEpisode(join(frames, hm3d), { layout: "hm3d", views: 8 });
  await writeSceneEpisode(join(frames, scannet), { layout: "scannet", views: 8 });
  return { home, subset, frames, questions: chosen.length };
}

function reproduceArgs(s: Setup, url: string, out: string, extra: string[] = []): string[] {
  return ["reproduce", "openeqa-table-4", "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--frames", s.frames, "--model", "openai/gpt-4o", "--model-base-url", `${url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`, "--concurrency", "1", "--out", out, ...extra];
}

interface TableJson {
  table: string;
  rows: { id: string; section: string; comparable: boolean; differences: string[]; failed: number; cells: Record<string, { value: number; ci?: number; n: number }> }[];
}

describe("eqa reproduce openeqa-table-4", () => {
  test("runs every agent family on the fixture questions and writes the table as Markdown, CSV and LaTeX beside the published rows", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const out = join(s.home, "table4");
      const result = await runCli(reproduceArgs(s, server.url, out), cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const table = readJson(join(out, "table.json")) as TableJson;
      assert.equal(table.table, "openeqa-table-4");
      assert.deepEqual(table.rows.map((r) => r.id), ["blind", "socratic", "conceptgraph", "svm", "vlm"]);
      for (const row of table.rows) {
        // every answer judged 4: (4 − 1)/4 · 100 = 75 over the four questions
        assert.equal(row.cells["llm-match"]!.value, 75, row.id);
        assert.equal(row.cells["llm-match"]!.n, s.questions, row.id);
        assert.equal(row.failed, 0);
        assert.ok(existsSync(join(out, "rows", row.id, "judgements.jsonl")), row.id);
      }
      // the multi-frame VLM row sends the paper's K = 50 frames (all 8 of these short episodes)
      const vlmCalls = server.requests.filter((r) => bodyText(r).includes("User Query") && bodyText(r).includes("image_url"));
      assert.equal(vlmCalls.length, s.questions);
      assert.equal((readJson(join(out, "rows", "vlm", "summary.answer.json")) as { counts: { answered: number } }).counts.answered, s.questions);

      const markdown = readFileSync(join(out, "table.md"), "utf8");
      assert.match(markdown, /\| 9 GPT-4V\* \| 43\.4 \| 42\.0 \| 57\.2 \| 33\.6 \| 63\.2 \| 57\.4 \| 50\.7 \| 49\.6±2\.0 \|/);
      assert.match(markdown, /\*This run: Blind LLMs\*/);
      assert.match(markdown, /\| openai\/gpt-4o \| .*75\.0±0\.0.* \| no \|/);
      assert.match(markdown, /This run's rows: not comparable with the published rows: 4 of OpenEQA v0's 1,636 questions \(subset .*\); judge openai\/gpt-4o, the paper's was GPT-4/);
      assert.match(markdown, /subset of 500 OpenEQA question/);
      assert.equal(result.stdout.includes("**TABLE IV: Category-level Performance on EM-EQA**"), true);

      const csv = readFileSync(join(out, "table.csv"), "utf8").trim().split("\n");
      assert.equal(csv[0], "source,section,row,comparable,object-recognition,object-recognition_pm,object-localization,object-localization_pm,attribute-recognition,attribute-recognition_pm,spatial-understanding,spatial-understanding_pm,object-state-recognition,object-state-recognition_pm,functional-reasoning,functional-reasoning_pm,world-knowledge,world-knowledge_pm,llm-match,llm-match_pm");
      assert.equal(csv.filter((l) => l.startsWith("published,")).length, 14);
      assert.equal(csv.filter((l) => l.startsWith("this run,")).length, 5);
      assert.ok(csv.includes("published,Multi-Frame VLMs,9 GPT-4V*,,43.4,,42,,57.2,,33.6,,63.2,,57.4,,50.7,,49.6,2"));

      const latex = readFileSync(join(out, "table.tex"), "utf8");
      assert.match(latex, /\\toprule/);
      assert.match(latex, /\\bottomrule/);
      assert.match(latex, /9 GPT-4V\* & 43\.4 & 42\.0 & 57\.2 & 33\.6 & 63\.2 & 57\.4 & 50\.7 & 49\.6\\ensuremath\{\\pm\}2\.0 \\\\/);
      // the paper's own bold stays on the published rows
      assert.match(latex, /1 GPT-4 & \\textbf\{15\.4\}/);
      // the user's rows follow a rule, each marked as not comparable
      assert.match(latex, /\\midrule\n\\multicolumn\{9\}\{l\}\{\\textit\{This run: Blind LLMs\}\} \\\\\nopenai\/gpt-4o\$\^\\dagger\$ &/);

      const manifest = readJson(join(out, "manifest.json")) as { kind: string };
      assert.equal(manifest.kind, "reproduce");

      // the report shows the table, the published rows first, this run's set apart with n
      const report = join(s.home, "report.html");
      const reported = await runCli(["report", out, "--out", report], cliEnv(s.home));
      assert.equal(reported.code, 0, reported.stderr);
      const page = readFileSync(report, "utf8");
      assert.match(page, /<section id="reproduced"><h2>Reproduced tables<\/h2>/);
      assert.match(page, /its table: <a href="#reproduced">Reproduced tables<\/a>/, "the headline points to the table");
      assert.doesNotMatch(page, /nothing to show yet/);
      assert.match(page, /<tr class="published"><td>9 GPT-4V\*<\/td>/);
      // each cell of this run's rows with its 95 % bootstrap interval (every answer judged 4: a point)
      assert.match(page, /<tr class="mine"><td>openai\/gpt-4o w\/ Sparse Voxel Map<\/td><td class="num"><b>75\.0±0\.0<\/b><br><span class="hint">\[75\.0, 75\.0\]<\/span><\/td>.*not comparable \(n = 4\)<\/td><\/tr>/);
    });
  });

  test("--rows leaves out the rows not run; without --frames, rows that need frames are refused before any model is called", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const refused = await runCli(["reproduce", "openeqa-table-4", "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(s.home, "refused")], cliEnv(s.home));
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /socratic, conceptgraph, svm, vlm row\(s\) need OpenEQA's episode histories/);
      assert.match(refused.stderr, /--rows blind/);
      assert.equal(server.requests.length, 0);

      const out = join(s.home, "blind");
      const result = await runCli(["reproduce", "openeqa-table-4", "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--rows", "blind", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const table = readJson(join(out, "table.json")) as TableJson;
      assert.deepEqual(table.rows.map((r) => r.id), ["blind"]);
      const csv = readFileSync(join(out, "table.csv"), "utf8").trim().split("\n");
      assert.equal(csv.filter((l) => l.startsWith("this run,")).length, 1);
    });
  });

  test("openeqa-table-2 fills the EM-EQA columns by source and says why the A-EQA ones are empty", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const out = join(s.home, "table2");
      const result = await runCli(["reproduce", "openeqa-table-2", "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--rows", "blind", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const row = (readJson(join(out, "table.json")) as TableJson).rows[0]!;
      assert.deepEqual(Object.fromEntries(Object.entries(row.cells).map(([k, c]) => [k, [c.value, c.n]])), { "em-scannet": [75, 2], "em-hm3d": [75, 2], "em-all": [75, 4] });
      const markdown = readFileSync(join(out, "table.md"), "utf8");
      assert.match(markdown, /\| openai\/gpt-4o \| 75\.0±0\.0 \| 75\.0±0\.0 \| 75\.0±0\.0 \| – \| – \| no \|/);
      assert.match(markdown, /no A-EQA numbers: give --episodes \(active episodes, --env builtin or --env habitat --scenes DIR\)/);
    });
  });

  test("openeqa-table-3 scores each agent's own answers where force-a-guess replaced them (w/o guess), none for the blind row", async () => {
    const s = await setup();
    // the socratic agent abstains, force-a-guess replaces its answer with the blind guess; the judge gives an abstention 1, an answer 4
    const abstaining = (request: ReceivedRequest): string => {
      const text = bodyText(request);
      if (isJudgeCall(request)) return text.includes("I cannot tell") ? "Your mark: 1" : "Your mark: 4";
      if (text.includes("Proposed Answer:")) return text.includes("I cannot tell") ? "Action: guess" : "Action: keep";
      if (text.includes("A wooden table with a red cup")) return "A: I cannot tell";
      return reply(request);
    };
    await withModelServer((request) => openAiReply(abstaining(request)), async (server) => {
      const out = join(s.home, "table3");
      const result = await runCli(["reproduce", "openeqa-table-3", "--benchmark", openEqaBenchmarkFile, "--subset", s.subset, "--frames", s.frames, "--rows", "blind,socratic", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const rows = (readJson(join(out, "table.json")) as TableJson).rows;
      assert.deepEqual(rows.map((r) => [r.id, Object.fromEntries(Object.entries(r.cells).map(([k, c]) => [k, c.value]))]), [
        ["blind", { em: 75 }],
        ["socratic", { em: 75, "em-without-guess": 0 }],
      ]);
      assert.ok(existsSync(join(out, "rows", "socratic-without-guess", "judgements.jsonl")));
      assert.match(readFileSync(join(out, "table.md"), "utf8"), /\| openai\/gpt-4o w\/ openai\/gpt-4o \| \*\*75\.0\*\* \| 0\.0 \(-75\.0\) \| – \| – \| no \|/);
    });
  });

  test("a run on questions of another benchmark is marked not comparable, naming the file", async () => {
    const s = await setup();
    const other = join(s.home, "mine.json");
    writeFileSync(other, JSON.stringify([{ question_id: "m1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/mine" }]));
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const out = join(s.home, "other");
      const result = await runCli(["reproduce", "openeqa-table-4", "--benchmark", other, "--rows", "blind", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4-0613", "--judge-base-url", `${server.url}/v1`, "--out", out], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      const table = readJson(join(out, "table.json")) as TableJson;
      assert.equal(table.rows[0]!.comparable, false);
      // a GPT-4 judge in compat mode is the paper's: only the questions differ
      assert.deepEqual(table.rows[0]!.differences, [`1 question(s) of ${other}, not the 1,636 of OpenEQA v0`]);
      // the row has a number only in the category its one question is in
      assert.deepEqual(Object.keys(table.rows[0]!.cells).sort(), ["llm-match", "object-recognition"]);
      assert.match(readFileSync(join(out, "table.md"), "utf8"), /\| openai\/gpt-4o \| 75\.0±0\.0 \| – \| – \|/);
    });
  });

  test("--dry-run names the calls, tokens and dollars of the whole table and calls no model", async () => {
    const s = await setup();
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const out = join(s.home, "dry");
      const result = await runCli([...reproduceArgs(s, server.url, out), "--dry-run"], cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(out), false);
      assert.match(result.stdout, /dry run: no model was called and nothing was written/);
      assert.match(result.stdout, /judge\s+openai\/gpt-4o/);
      assert.match(result.stdout, /agent\s+openai\/gpt-4o/);
      assert.match(result.stdout, /\$\d/);
      for (const row of ["blind", "socratic", "conceptgraph", "svm", "vlm"]) assert.match(result.stdout, new RegExp(`row ${row}: 4 question\\(s\\), 0 already answered, 4 to answer; 0 already judged, 4 to judge`));
      // per row: its calls and dollars, every role summed; the rows add up to the roles' table
      const lines = result.stdout.split("\n").map((l) => l.trim().split(/\s{2,}/));
      const roleRows = lines.filter((l) => l.length === 7 && /^openai\//.test(l[1]!));
      const rows = Object.fromEntries(lines.filter((l) => l.length === 4 && ["blind", "socratic", "conceptgraph", "svm", "vlm"].includes(l[0]!)).map((l) => [l[0]!, { calls: Number(l[1]), cached: Number(l[2]), dollars: Number(l[3]!.replace("$", "")) }]));
      assert.deepEqual(Object.keys(rows), ["blind", "socratic", "conceptgraph", "svm", "vlm"], result.stdout);
      assert.deepEqual(rows.blind && [rows.blind.calls, rows.blind.cached], [8, 0], "the blind row: 4 answers and 4 judgements");
      for (const [name, row] of Object.entries(rows)) assert.ok(row.dollars > 0, `${name}: ${row.dollars}`);
      assert.equal(Object.values(rows).reduce((total, r) => total + r.calls, 0), roleRows.reduce((total, r) => total + Number(r[2]), 0));
      const estimated = Number(/estimated cost: \$([\d.]+)/.exec(result.stdout)![1]);
      // each printed to four decimals: the sum within their rounding
      assert.ok(Math.abs(Object.values(rows).reduce((total, r) => total + r.dollars, 0) - estimated) <= 5 * 0.00005 + 0.00005, `rows' dollars add up to ${estimated}:\n${result.stdout}`);
    });
  });

  test("--batch answers live, then sends the judge's requests of the whole table as one batch, and the table reads the same as a live run's", async () => {
    const s = await setup();
    const { emulator, server, liveJudgeCalls } = await startOpenAiBatchServer(reply, isJudgeCall);
    try {
      const out = join(s.home, "batched");
      const result = await runCli(reproduceArgs(s, server.url, out, ["--rows", "blind,vlm", "--batch", "--batch-poll-seconds", "0.05", "--no-cache"]), cliEnv(s.home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(emulator.batches.size, 1);
      // both rows' four answers judged in the one batch (the blind row reads "a cup" from the A: line, the multi-frame row keeps the reply whole: two requests per question)
      assert.equal([...emulator.batches.values()][0]!.customIds.length, 2 * s.questions);
      assert.equal(liveJudgeCalls(), 0);
      const rows = (readJson(join(out, "table.json")) as TableJson).rows;
      assert.deepEqual(rows.map((r) => [r.id, r.cells["llm-match"]!.value, r.cells["llm-match"]!.n]), [["blind", 75, 4], ["vlm", 75, 4]]);
    } finally {
      await server.close();
    }
  });

  test("killed with SIGKILL midway and run again, it repeats no finished call and ends with the table of an uninterrupted run", async () => {
    const s = await setup();
    // the uninterrupted run, with its own cache, counts the requests the table needs
    const whole = await startModelServer((request) => openAiReply(reply(request)));
    const wholeOut = join(s.home, "whole");
    try {
      const done = await runCli(reproduceArgs(s, whole.url, wholeOut, ["--rows", "blind,socratic,vlm"]), cliEnv(join(s.home, "a")));
      assert.equal(done.code, 0, done.stderr);
    } finally {
      await whole.close();
    }
    const total = whole.requests.length;
    const server = await startModelServer(async (request) => {
      await new Promise((r) => setTimeout(r, 5));
      return openAiReply(reply(request));
    });
    try {
      const out = join(s.home, "resumed");
      const args = reproduceArgs(s, server.url, out, ["--rows", "blind,socratic,vlm"]);
      const env = cliEnv(join(s.home, "b"));
      await killMidway(args, env, () => server.requests.length >= total / 2);
      const resumed = await runCli(args, env);
      assert.equal(resumed.code, 0, resumed.stderr);
      // at most the one call in flight when it was killed (concurrency 1) is asked again
      assert.ok(server.requests.length <= total + 1, `${server.requests.length} requests, an uninterrupted run makes ${total}`);
      const table = (dir: string): unknown => (readJson(join(dir, "table.json")) as TableJson).rows.map((r) => [r.id, r.cells]);
      assert.deepEqual(table(out), table(wholeOut));
    } finally {
      await server.close();
    }
  });
});

describe("eqa reproduce --published", () => {
  test("prints the paper's table and, with --out, writes it as Markdown, CSV and LaTeX, without a model", async () => {
    const home = temporaryDir("eqakit-reproduce-published-");
    const out = join(home, "table-4");
    const run = await runCli(["reproduce", "openeqa-table-4", "--published", "--out", out], cliEnv(home));
    assert.equal(run.code, 0, run.stderr);
    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /TABLE IV/);
    assert.ok(run.stdout.includes(markdown.trim()), run.stdout);
    assert.match(readFileSync(join(out, "table.csv"), "utf8"), /^source,section,row,comparable,.*llm-match/);
    assert.match(readFileSync(join(out, "table.tex"), "utf8"), /\\toprule/);
    assert.equal(existsSync(join(out, "table.json")), false);
  });
});

describe("eqa reproduce --list", () => {
  test("names every table it takes, each of the papers' with its published rows and the Mixed EQA table as eqakit's own; no table is a usage error naming the list", async () => {
    const home = temporaryDir("eqakit-reproduce-list-");
    const listed = await runCli(["reproduce", "--list"], cliEnv(home));
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split("\n");
    assert.equal(lines.length, 11, listed.stdout);
    assert.match(listed.stdout, /^openeqa-table-4 +TABLE IV: Category-level Performance on EM-EQA \(14 published rows\)$/m);
    assert.match(listed.stdout, /^mixed-eqa-table +Mixed EQA: .*\(eqakit's own benchmark, no published row\)$/m);
    const none = await runCli(["reproduce", "--model", "openai/gpt-4o"], cliEnv(home));
    assert.equal(none.code, 2);
    assert.match(none.stderr, /<table>.*name the table to reproduce/);
    assert.match(none.stderr, /eqa reproduce --list/);
  });
});
