import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadTrajectoryLog } from "../../src/data/index.js";
import { buildTagDataset, maskSightings } from "../../src/generate/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";
import { startOpenAiBatchServer } from "../helpers/provider-emulators.js";
import { costOf, ledgerCost, readCallLedger } from "../../src/models/index.js";
import type { TagQuestion } from "../../src/data/index.js";

/**
 * `eqa reproduce tag-eqa-table-2` against a loopback OpenAI-compatible server, on a TAG-EQA set
 * made from one recording of the built-in simulator (160×120).
 */

const bodyText = (r: ReceivedRequest): string => JSON.stringify(r.body);
const isCaption = (r: ReceivedRequest): boolean => bodyText(r).includes("image_url");
const isJudge = (r: ReceivedRequest): boolean => bodyText(r).includes("write down the answer's structure as JSON");

/** The judge reads every answer as one bread without a position: the structured score of each question is then fixed by its truth. */
function reply(request: ReceivedRequest): string {
  if (isCaption(request)) return "A room with a white fridge and a wooden shelf.";
  if (isJudge(request)) return JSON.stringify([{ predicate: "", objects: [{ type: "bread", caption: null, position: null }], value: 1 }]);
  return "A: There is one bread.\nExplanation: it was seen on the shelf.";
}

interface TableJson {
  table: string;
  rows: { id: string; runDir: string; comparable: boolean; differences: string[]; failed: number; cells: Record<string, { value: number; n: number }> }[];
}

describe("eqa reproduce tag-eqa-table-2", () => {
  test("runs the Socratic baselines on a set made from a built-in recording, scores them and writes Table 2 beside the published rows; a rerun calls no model; --dry-run prices what is left to do", async () => {
    const home = temporaryDir("eqakit-reproduce-tag-");
    const recording = join(home, "rec");
    await copyRecording({ seed: 2, tasks: ["cool"], width: 160, height: 120 }, recording);
    const log = await loadTrajectoryLog(join(recording, "trajectory.json"));
    const sightings = await maskSightings(log, join(recording, "frames"));
    const { questions } = buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory: 4, seed: 0 });
    assert.ok(questions.length >= 2);
    const questionsFile = join(home, "questions.json");
    writeFileSync(questionsFile, JSON.stringify(questions));
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const out = join(home, "table2");
      const args = [
        "reproduce", "tag-eqa-table-2", "--questions", questionsFile, "--baselines", "socratic-ic,socratic-ic-or",
        "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${server.url}/v1`,
        "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, "--no-cache",
      ];
      const result = await runCli(args, cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      const table = JSON.parse(readFileSync(join(out, "table.json"), "utf8")) as TableJson;
      assert.equal(table.table, "tag-eqa-table-2");
      assert.deepEqual(table.rows.map((r) => r.id), ["socratic-ic", "socratic-ic-or"]);
      for (const row of table.rows) {
        assert.equal(row.comparable, false);
        assert.ok(row.differences.some((d) => d.includes("not the paper's TAG-EQA set")));
        assert.ok(row.differences.some((d) => d.includes("Gemma 2 9B")));
        assert.ok(row.differences.some((d) => d.includes("CogVLM 2")));
        assert.equal(row.failed, 0);
        assert.equal(row.cells.score!.n, questions.length);
        assert.equal(row.cells["grounded-score"]!.n, questions.length);
        // the same reply for every question of both rows: the same scores, the grounded one no higher
        assert.equal(row.cells.score!.value, table.rows[0]!.cells.score!.value);
        assert.ok(row.cells["grounded-score"]!.value <= row.cells.score!.value);
        assert.ok(row.cells.score!.value >= 1 && row.cells.score!.value <= 5);
        // each row's runs are the folders eqa answer-tag and eqa score-tag write
        const predictions = JSON.parse(readFileSync(join(out, row.runDir, "answers", "predictions.json"), "utf8")) as unknown[];
        assert.equal(predictions.length, questions.length);
        const scored = JSON.parse(readFileSync(join(out, row.runDir, "score", "summary.json"), "utf8")) as { kind: string; scores: { ungrounded: { mean: number } } };
        assert.equal(scored.kind, "tag-structured");
        assert.equal(scored.scores.ungrounded.mean, row.cells.score!.value);
      }
      const markdown = readFileSync(join(out, "table.md"), "utf8");
      assert.match(markdown, /\| Socratic LLM \+ Image captions \| 1\.33 \| 1\.29 \|/);
      assert.match(markdown, /\| LLM \+ API \| \*\*1\.80\*\*|\| LLM \+ API \| 1\.80 \|/);
      assert.match(markdown, /Socratic LLM \+ Image captions \+ OR \(openai\/gpt-4o w\/ openai\/gpt-4o-mini\)/);
      assert.match(markdown, /not comparable with the published rows/);
      assert.match(readFileSync(join(out, "table.csv"), "utf8"), /^source,section,row,comparable,score,score_pm,grounded-score,grounded-score_pm\n/);
      assert.match(readFileSync(join(out, "table.tex"), "utf8"), /\\toprule/);
      assert.match(result.stdout, /Grounded score/);

      // resumed: every answer, preparation and judgement is in the folder already
      const before = server.requests.length;
      const again = await runCli(args, cliEnv(home));
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, before, "a finished table calls no model again");
      assert.deepEqual((JSON.parse(readFileSync(join(out, "table.json"), "utf8")) as TableJson).rows, table.rows);

      // --dry-run: the captions, answers and judgements of the whole table, no call made
      const dry = await runCli([...args.filter((a) => a !== out && a !== "--out"), "--out", join(home, "dry"), "--dry-run"], cliEnv(home));
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, before, "--dry-run calls no model");
      assert.match(dry.stdout, /captioner/);
      assert.match(dry.stdout, new RegExp(`row socratic-ic: 1 trajectory to prepare, ${questions.length} of ${questions.length} question\\(s\\) to answer, ${questions.length} answer\\(s\\) to judge`));
      assert.match(dry.stdout, /captioner +openai\/gpt-4o-mini +100 /, "50 captions per row");
      // per row: its 50 captions, its answers and their judgements, and their dollars
      for (const row of ["socratic-ic", "socratic-ic-or"]) assert.match(dry.stdout, new RegExp(`^\\s+${row}\\s+${50 + 2 * questions.length}\\s+0\\s+\\$\\d`, "m"), dry.stdout);
      // on the finished folder: nothing left to prepare, answer or judge
      const done = await runCli([...args, "--dry-run"], cliEnv(home));
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, new RegExp(`row socratic-ic-or: 0 trajectories to prepare, 0 of ${questions.length} question\\(s\\) to answer, 0 answer\\(s\\) to judge`));
      assert.doesNotMatch(done.stdout, /captioner +openai/);
    });
  });

  test("--batch answers every row live, then sends all rows' judge requests as one batch; the table is a live run's and each batch reply is billed once at the batch price", async () => {
    const home = temporaryDir("eqakit-reproduce-tag-");
    const { questions, questionsFile } = await recordedSet(home);
    const args = (url: string, out: string, extra: string[] = []): string[] => [
      "reproduce", "tag-eqa-table-2", "--questions", questionsFile, "--baselines", "socratic-ic,socratic-ic-or",
      "--model", "openai/gpt-4o", "--model-base-url", `${url}/v1`, "--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${url}/v1`,
      "--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`, "--out", out, "--no-cache", ...extra,
    ];
    const liveOut = join(home, "live");
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const result = await runCli(args(server.url, liveOut), cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
    });

    const { emulator, server, liveJudgeCalls } = await startOpenAiBatchServer(reply, isJudge);
    try {
      const out = join(home, "batched");
      const result = await runCli(args(server.url, out, ["--batch", "--batch-poll-seconds", "0.05"]), cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(liveJudgeCalls(), 0);
      // both rows answer every question alike: the same judge request, sent once in the one batch
      const distinct = new Set(questions.map((q) => q.question)).size;
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [distinct]);
      const rows = (dir: string): unknown => (JSON.parse(readFileSync(join(dir, "table.json"), "utf8")) as TableJson).rows.map((r) => [r.id, r.cells, r.failed]);
      assert.deepEqual(rows(out), rows(liveOut));
      // the run folder's ledger: the batch's replies, each once at half the listed price
      const batchCost = ledgerCost(readCallLedger(out));
      assert.deepEqual(batchCost.roles.map((r) => [r.role, r.calls]), [["judge (batch)", distinct]]);
      assert.equal(batchCost.total.dollars, Math.round(costOf("openai/gpt-4o", { promptTokens: 10 * distinct, completionTokens: 3 * distinct })! * 0.5 * 1e9) / 1e9);
      // each row's scoring read every judgement from the cache: no judge call of its own
      for (const row of ["socratic-ic", "socratic-ic-or"]) {
        const judge = ledgerCost(readCallLedger(join(out, "rows", row, "score"))).roles.find((r) => r.role === "judge")!;
        assert.deepEqual([judge.calls, judge.cacheHits], [0, questions.length]);
      }
      // run again: nothing is asked or submitted
      const requests = server.requests.length;
      const again = await runCli(args(server.url, out, ["--batch", "--batch-poll-seconds", "0.05"]), cliEnv(home));
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, requests);
      assert.deepEqual(rows(out), rows(liveOut));
    } finally {
      await server.close();
    }
  });

  test("without --questions it says what the table needs, before any model is called (exit 2)", async () => {
    const home = temporaryDir("eqakit-reproduce-tag-");
    const result = await runCli(["reproduce", "tag-eqa-table-2", "--model", "openai/gpt-4o", "--judge", "openai/gpt-4o", "--out", join(home, "t")], cliEnv(home));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /needs a TAG-EQA set with observations/);
    assert.match(result.stderr, /eqa generate tag --source sim:DIR/);
  });
});

/** A TAG-EQA set made from one recording of the built-in simulator (160×120). */
async function recordedSet(home: string): Promise<{ questions: TagQuestion[]; questionsFile: string }> {
  const recording = join(home, "rec");
  await copyRecording({ seed: 2, tasks: ["cool"], width: 160, height: 120 }, recording);
  const log = await loadTrajectoryLog(join(recording, "trajectory.json"));
  const sightings = await maskSightings(log, join(recording, "frames"));
  const { questions } = buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory: 4, seed: 0 });
  const questionsFile = join(home, "questions.json");
  writeFileSync(questionsFile, JSON.stringify(questions));
  return { questions, questionsFile };
}
