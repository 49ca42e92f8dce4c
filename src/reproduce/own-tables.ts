/**
 * The tables of eqakit's own benchmarks, laid out as the seed papers' tables are (columns, notes)
 * but with no published row: every row is one a user runs. With the published tables they make
 * the tables `eqa reproduce` takes.
 */
import { UserError } from "../core/index.js";
import { MIXED_CATEGORIES } from "../data/index.js";
import { OWN_BENCHMARK, publishedTableIds, publishedTables, type PublishedTable } from "./published.js";

/** A Mixed EQA category as a column id (`past_present` → `past-present`). */
export function mixedCategoryColumn(category: string): string {
  return category.replace(/_/g, "-");
}

/**
 * `mixed-eqa-table`: Mixed EQA (TAG-EQA's proposed task, docs/mixed-eqa.md) on a set made by
 * `eqa generate mixed`. Accuracy per category and overall (percent; a model-driven row's LLM-Match
 * points), SPL as LA-EQA computes it on the questions that need the present (0-1), metres walked
 * on the questions the history answers, and the dollars of the row's calls.
 */
export const MIXED_EQA_TABLE: PublishedTable = {
  id: "mixed-eqa-table",
  seed: OWN_BENCHMARK,
  seedFile: "docs/mixed-eqa.md",
  table: "Mixed EQA",
  title: "Mixed EQA: the built-in agents and your model on a generated set.",
  caption: "Mixed EQA: the built-in agents and your model on a generated set.",
  columns: [
    ...MIXED_CATEGORIES.map((c) => ({ id: mixedCategoryColumn(c), label: c, group: "Accuracy (%)", higherIsBetter: true, decimals: 1 })),
    { id: "overall", label: "overall", group: "Accuracy (%)", higherIsBetter: true, decimals: 1 },
    { id: "spl", label: "SPL", higherIsBetter: true, decimals: 3 },
    { id: "wasted-m", label: "wasted m", higherIsBetter: false, decimals: 2 },
    { id: "cost", label: "cost ($)", higherIsBetter: false, decimals: 4 },
  ],
  footnotes: [],
  notes: [
    "Accuracy: percent of a category's questions answered right (a failed or unanswered episode is wrong); ± is the bootstrap standard error of the mean.",
    "SPL: LA-EQA's success weighted by path length, min(1, L_gt / max(d, 0.01)), on the questions that need the present; wasted m: metres walked on the questions the history alone answers.",
    "Cost: the dollars of the row's model calls, from its run's ledger (calls.jsonl); the program agents call no model.",
  ],
  settings: {},
  rows: [],
};

const OWN_TABLES: readonly PublishedTable[] = [MIXED_EQA_TABLE];

/** Every table `eqa reproduce` takes: the seed papers' (in the data file's order), then eqakit's own. */
export function reproducibleTableIds(): string[] {
  return [...publishedTableIds(), ...OWN_TABLES.map((t) => t.id)];
}

/** A table `eqa reproduce` takes, by its id; a `UserError` naming the known ids otherwise. */
export function reproducibleTable(id: string): PublishedTable {
  const table = publishedTables().tables.find((t) => t.id === id) ?? OWN_TABLES.find((t) => t.id === id);
  if (!table) throw new UserError(`no table named ${id}`, { field: "TABLE" }, `known tables: ${reproducibleTableIds().join(", ")}`);
  return table;
}

/** Whether a table is one of eqakit's own benchmarks (no published row). */
export function isOwnBenchmark(table: Pick<PublishedTable, "seed">): boolean {
  return table.seed === OWN_BENCHMARK;
}
