import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { UserError } from "../../src/core/index.js";
import { publishedTable, publishedTableIds, publishedTables } from "../../src/reproduce/index.js";

/**
 * The published tables' data file: its schema, and that every table is whole in shape (every
 * row has a cell in every column, the papers' row counts and footnotes). That each number is
 * the seed's is checked by bench/published-rows.ts against the seed text.
 */
describe("publishedTables", () => {
  test("holds every table eqa reproduce names: OpenEQA II–V, EXPRESS-Bench 1–3, TAG-EQA 2, EQA-RM 1–2", () => {
    assert.deepEqual(publishedTableIds(), [
      "openeqa-table-2",
      "openeqa-table-3",
      "openeqa-table-4",
      "openeqa-table-5",
      "express-table-1",
      "express-table-2",
      "express-table-3",
      "tag-eqa-table-2",
      "eqa-rm-table-1",
      "eqa-rm-table-2",
    ]);
  });

  test("every row has one cell per column and no cell outside the columns", () => {
    for (const table of publishedTables().tables) {
      const columns = table.columns.map((c) => c.id);
      assert.equal(new Set(columns).size, columns.length, `${table.id}: column ids are unique`);
      assert.equal(new Set(table.rows.map((r) => r.id)).size, table.rows.length, `${table.id}: row ids are unique`);
      for (const row of table.rows) assert.deepEqual(Object.keys(row.cells), columns, `${table.id} row ${row.id}`);
    }
  });

  test("each table has the paper's rows: OpenEQA's nine agents and the human, per-section averages in IV and V", () => {
    const counts = Object.fromEntries(publishedTables().tables.map((t) => [t.id, t.rows.length]));
    assert.deepEqual(counts, {
      "openeqa-table-2": 10,
      "openeqa-table-3": 10,
      "openeqa-table-4": 14,
      "openeqa-table-5": 14,
      "express-table-1": 2,
      "express-table-2": 2,
      "express-table-3": 3,
      "tag-eqa-table-2": 4,
      "eqa-rm-table-1": 8,
      "eqa-rm-table-2": 8,
    });
    for (const id of ["openeqa-table-2", "openeqa-table-3", "openeqa-table-4", "openeqa-table-5"]) {
      const agents = publishedTable(id).rows.filter((r) => r.kind === "agent");
      assert.deepEqual(agents.map((r) => r.number), [1, 2, 3, 4, 5, 6, 7, 8, 9], id);
      assert.deepEqual(agents.map((r) => r.family), ["blind", "blind", "socratic", "socratic", "conceptgraph", "conceptgraph", "svm", "svm", "vlm"], id);
    }
  });

  test("Table IV's GPT-4V row is the paper's 49.6±2.0, marked as measured on the 500-question subset the footnote names", () => {
    const table = publishedTable("openeqa-table-4");
    const gpt4v = table.rows.find((r) => r.id === "gpt-4v");
    assert.ok(gpt4v);
    assert.deepEqual(gpt4v.cells["llm-match"], { text: "49.6±2.0", value: 49.6, ci: 2 });
    assert.equal(gpt4v.subset, true);
    assert.ok(table.footnotes.some((f) => f.includes("500")));
    assert.ok(publishedTable("openeqa-table-5").footnotes.some((f) => f.includes("184")));
  });

  test("a cell printed as '-' has no value, and cells keep the seed's bold, ±, change and arrows", () => {
    const t2 = publishedTable("openeqa-table-2");
    assert.equal(t2.rows[0]!.cells["a-eqa-e"]!.value, null);
    const t3 = publishedTable("openeqa-table-3");
    assert.deepEqual(t3.rows.find((r) => r.id === "gpt-4-w-llava-1-5")!.cells["em-without-guess"], { text: "29.3 (-14.3)", value: 29.3, change: -14.3 });
    const rm = publishedTable("eqa-rm-table-1");
    const k32 = rm.rows.find((r) => r.id === "w-test-scaling-k-32")!;
    assert.equal(k32.cells["overall-rmse"]!.value, 2.727);
    assert.equal(k32.cells["overall-rmse"]!.arrow, "down");
    assert.equal(publishedTable("openeqa-table-4").rows[0]!.cells["object-recognition"]!.bold, true);
  });

  test("an unknown table is a user error that lists the known ones", () => {
    assert.throws(() => publishedTable("openeqa-table-9"), (e: unknown) => e instanceof UserError && e.message.includes("openeqa-table-4"));
  });
});
