import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli, type CliResult } from "../helpers/cli.js";
import { assertSameRun, jsonLines, killMidway } from "../helpers/kill.js";
import { buildMixedFixture, type MixedFixture } from "../helpers/mixed-set.js";
import { exactMatchJudgeScript, startModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

/**
 * `eqa reproduce mixed-eqa-table` on a small Mixed EQA set (one home, one recorded day, four
 * questions: test/helpers/mixed-set.ts): the built-in agents' program rows offline, and the
 * user's model row (recall-explore's model form) against a loopback VLM and judge. Each cell must
 * be the figure of its row's own mixed run (rows/<row>/summary.json).
 */

interface Estimate {
  n: number;
  mean: number;
  stderr: number;
  ci: [number, number];
}
interface RowSummary {
  kind: string;
  counts: { episodes: number; failed: number };
  metrics: { accuracy: { overall: Estimate | null; byCategory: Record<string, Estimate | null> }; spl: { overall: Estimate | null }; wastedMetres: { overall: Estimate | null } };
  cost: { total: { calls: number; dollars: number | null } };
}
interface TableJson {
  table: string;
  rows: { id: string; runDir: string; comparable: boolean; cells: Record<string, { value: number; ci?: number; interval?: [number, number]; n: number }> }[];
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
/** The explorers' frames small (64×48): nothing asserted depends on their size; they use all 150 steps of the budget. */
const size = ["--width", "64", "--height", "48", "--max-steps", "150"];

/** The cells a row's summary gives, column by column, as the table must print them. */
function cellsOf(summary: RowSummary): Record<string, unknown> {
  const cell = (e: Estimate | null | undefined) => (e && e.n > 0 ? { value: e.mean, ci: e.stderr, interval: e.ci, n: e.n } : undefined);
  const { accuracy, spl, wastedMetres } = summary.metrics;
  const cells: Record<string, unknown> = {
    past: cell(accuracy.byCategory.past),
    present: cell(accuracy.byCategory.present),
    "multi-past": cell(accuracy.byCategory.multi_past),
    "past-present": cell(accuracy.byCategory.past_present),
    overall: cell(accuracy.overall),
    spl: cell(spl.overall),
    "wasted-m": cell(wastedMetres.overall),
    cost: summary.cost.total.dollars === null ? undefined : { value: summary.cost.total.dollars, n: summary.counts.episodes },
  };
  return Object.fromEntries(Object.entries(cells).filter(([, v]) => v !== undefined));
}

function assertCellsAreRunSummaries(out: string, ids: string[]): TableJson {
  const table = readJson<TableJson>(join(out, "table.json"));
  assert.deepEqual(table.rows.map((r) => r.id), ids);
  for (const row of table.rows) {
    const summary = readJson<RowSummary>(join(out, row.runDir, "summary.json"));
    assert.equal(summary.kind, "mixed", `${row.id}: its folder is a mixed run`);
    assert.deepEqual(row.cells, cellsOf(summary), `${row.id}: the table's cells are its run's summary`);
  }
  return table;
}

let fixture: MixedFixture;
let home: string;

before(async () => {
  fixture = await buildMixedFixture({ width: 128, height: 96 });
  home = temporaryDir();
});

/** `eqa reproduce mixed-eqa-table` with the program rows, run to its end once: the first test checks it, the kill test compares its resumed rows with it. */
let offline: Promise<{ out: string; args: string[]; ran: CliResult }> | undefined;
function offlineTable(): Promise<{ out: string; args: string[]; ran: CliResult }> {
  offline ??= (async () => {
    const out = join(home, "offline");
    const args = ["reproduce", "mixed-eqa-table", "--episodes", fixture.file, ...size, "--out", out];
    return { out, args, ran: await runCli(args, cliEnv(home)) };
  })();
  return offline;
}

describe("eqa reproduce mixed-eqa-table", () => {
  test("the three built-in agents' rows, each a mixed run, in eqakit's own table (no published row) as Markdown, CSV and LaTeX; without --model the model row is skipped with a note; a rerun runs nothing again", async () => {
    const env = cliEnv(home);
    const { out, args, ran } = await offlineTable();
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /no --model, so the recall-explore-model row \(your model in recall-explore's model form\) is skipped/);
    const table = assertCellsAreRunSummaries(out, ["memory-only", "explore-only", "recall-explore"]);
    assert.equal(table.table, "mixed-eqa-table");
    // memory-only answers the past from memory and never moves; its present answers are the old ones
    const memory = table.rows[0]!.cells;
    assert.equal(memory.past?.value, 100);
    assert.equal(memory.present?.value, 0);
    assert.equal(memory["wasted-m"]?.value, 0);
    assert.equal(memory.cost?.value, 0, "the program rows call no model");
    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown.split("\n")[0]!, /^\*\*Mixed EQA: .*\*\* \(eqakit's own benchmark, no published row\)$/);
    assert.match(markdown, /\| method \| Accuracy \(%\): past \| Accuracy \(%\): present \| Accuracy \(%\): multi_past \| Accuracy \(%\): past_present \| Accuracy \(%\): overall \| SPL \| wasted m \| cost \(\$\) \|\n/);
    assert.doesNotMatch(markdown, /comparable/, "no published row to be comparable with");
    assert.match(markdown, /\| memory-only \(program\) \| \*\*100\.0±0\.0\*\* \| 0\.0±0\.0 \| – \|/);
    assert.match(readFileSync(join(out, "table.tex"), "utf8"), /\\caption\{Mixed EQA: .* eqakit's own benchmark, no published row: every row was measured with eqakit\.\}/);
    assert.match(readFileSync(join(out, "table.csv"), "utf8"), /^source,section,row,comparable,past,past_pm,present,present_pm,multi-past,/);
    const summary = readJson<{ kind: string; table: string; runs: Record<string, { failed: number }> }>(join(out, "summary.json"));
    assert.deepEqual([summary.kind, summary.table, Object.keys(summary.runs)], ["reproduce", "mixed-eqa-table", ["memory-only", "explore-only", "recall-explore"]]);

    // the same command again: every row's episodes stand, nothing runs, the same table
    const before = readFileSync(join(out, "table.json"), "utf8");
    const again = await runCli(args, env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(readFileSync(join(out, "table.json"), "utf8"), before);
    for (const row of ["memory-only", "explore-only", "recall-explore"]) assert.equal(jsonLines(join(out, "rows", row, "mixed.jsonl")).length, 4, `${row}: no episode run twice`);

    // --dry-run names each row, with no call for a program row
    const dry = await runCli([...args, "--dry-run"], env);
    assert.equal(dry.code, 0, dry.stderr);
    for (const row of ["memory-only", "explore-only", "recall-explore"]) {
      assert.match(dry.stdout, new RegExp(`\\n\\s+${row}\\s+0\\s+0\\s+\\$0(?![.\\d])`), `${row}: 0 calls, $0`);
      assert.match(dry.stdout, new RegExp(`row ${row}: 4 episode\\(s\\), 4 already run in rows/${row}, 0 to run, no model call`));
    }
  });

  test("killed with SIGKILL midway through a row and resumed, the table equals an uninterrupted one's, record for record; --rows picks the rows", async () => {
    const env = cliEnv(home);
    const args = (out: string) => ["reproduce", "mixed-eqa-table", "--episodes", fixture.file, "--rows", "memory-only,explore-only", ...size, "--out", out];
    // the uninterrupted rows: each row is a run of its own, the same with or without the other rows
    const { out: whole, ran: uninterrupted } = await offlineTable();
    assert.equal(uninterrupted.code, 0, uninterrupted.stderr);
    const resumed = join(home, "resumed");
    const exploring = join(resumed, "rows", "explore-only", "mixed.jsonl");
    await killMidway(args(resumed), env, () => jsonLines(exploring).length >= 1);
    assert.ok(jsonLines(exploring).length < 4, "killed before the row's end");
    const again = await runCli(args(resumed), env);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /skipped/, "the model row was not asked for");
    assertCellsAreRunSummaries(resumed, ["memory-only", "explore-only"]);
    const cells = (dir: string): unknown => readJson<TableJson>(join(dir, "table.json")).rows.filter((r) => r.id !== "recall-explore").map((r) => [r.id, r.cells]);
    assert.deepEqual(cells(resumed), cells(whole));
    for (const row of ["memory-only", "explore-only"]) {
      assertSameRun(join(whole, "rows", row), join(resumed, "rows", row), { records: [{ file: "mixed.jsonl" }], figures: ["predictions.json", { file: "summary.json", pick: (s) => [s.counts, s.metrics, s.questions] }] });
    }
  });

  test("with --model the recall-explore-model row runs the model form against the loopback VLM, LLM-Match judges it, --dry-run prices its calls, and its cost cell is the requests the server received", async () => {
    // the judge gives 5 when the response is the answer, else 1; the VLM always says the desk
    const server = await startModelServer(exactMatchJudgeScript("A: on the desk"));
    try {
      const env = cliEnv(home, { OPENAI_API_KEY: "sk-test" });
      const out = join(home, "model");
      const models = ["--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--no-cache", "--image-size", "64"];
      const args = ["reproduce", "mixed-eqa-table", "--episodes", fixture.file, "--rows", "memory-only,recall-explore-model", ...models, ...size, "--out", out];
      const dry = await runCli([...args, "--dry-run"], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0, "a dry run calls no model");
      assert.ok(!existsSync(out), "and writes nothing");
      assert.match(dry.stdout, /\n\s+memory-only\s+0\s+0\s+\$0(?![.\d])/);
      assert.match(dry.stdout, /\n\s+recall-explore-model\s+8\s+0\s+\$0\.0\d+/, "one VLM and one judge call for each of the 4 episodes, priced");
      assert.match(dry.stdout, /row recall-explore-model: 4 episode\(s\), 0 already run in rows\/recall-explore-model, 4 to run, one model call and one judge call each/);

      const ran = await runCli(args, env);
      assert.equal(ran.code, 0, ran.stderr);
      const table = assertCellsAreRunSummaries(out, ["memory-only", "recall-explore-model"]);
      const row = readJson<RowSummary>(join(out, "rows", "recall-explore-model", "summary.json"));
      assert.equal(row.cost.total.calls, server.requests.length, "every request the server received, and only those, in the row's cost");
      assert.equal(server.requests.length, 8);
      assert.ok((table.rows[1]!.cells.cost?.value ?? 0) > 0, "the row's dollars");
      // the VLM's "on the desk" is right for the past question alone
      assert.equal(table.rows[1]!.cells.past?.value, 100);
      assert.equal(table.rows[1]!.cells.present?.value, 0);
      const markdown = readFileSync(join(out, "table.md"), "utf8");
      assert.match(markdown, /\| recall-explore w\/ openai\/gpt-4o-mini \(judge openai\/gpt-4o\) \|/);
      assert.match(markdown, /recall-explore-model row: accuracy is LLM-Match's points/);
      const reproduceSummary = readJson<{ cost: { total: { calls: number } } }>(join(out, "summary.json"));
      assert.equal(reproduceSummary.cost.total.calls, 8, "the table's cost sums its rows' ledgers");
    } finally {
      await server.close();
    }
  });

  test("what the table cannot run is refused before anything runs (exit 2), naming the flag", async () => {
    const env = cliEnv(home);
    const cases: [string[], RegExp][] = [
      [["--rows", "recall-explore-model"], /--model/],
      [["--model", "openai/gpt-4o-mini"], /give the judge/],
      [["--rows", "blind"], /mixed-eqa-table has no row blind/],
      [["--published"], /no published rows/],
      [["--batch"], /--batch/],
    ];
    for (const [extra, message] of cases) {
      const out = join(home, `refused-${extra.join("-")}`);
      const refused = await runCli(["reproduce", "mixed-eqa-table", "--episodes", fixture.file, ...extra, "--out", out], env);
      assert.equal(refused.code, 2, `${extra.join(" ")}: ${refused.stderr}`);
      assert.match(refused.stderr, message);
      assert.ok(!existsSync(out), `${extra.join(" ")}: nothing written`);
    }
    const noSet = await runCli(["reproduce", "mixed-eqa-table", "--out", join(home, "no-set")], env);
    assert.equal(noSet.code, 2);
    assert.match(noSet.stderr, /eqa generate mixed/);
    const help = await runCli(["reproduce", "--help"], env);
    assert.match(help.stdout.replace(/\s+/g, " "), /mixed-eqa-table/);
  });
});
