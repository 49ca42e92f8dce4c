/**
 * The published tables of the four seed papers (`published.json`, kept as data): every number
 * of OpenEQA's Tables II–V (seed 001), TAG-EQA's Table 2 (seed 002), EXPRESS-Bench's Tables 1–3
 * (seed 003) and EQA-RM's Tables 1–2 (seed 004), transcribed once from the seed text. Each
 * cell keeps the text it was read from (`text`, with the seed's own markup: `<b>` bold,
 * `<u>` underline, `±`, `*`, arrows), so `bench/published-rows.ts` can find every number in
 * the seed, and the number it names (`value`, plus `ci`, `change`, `delta` where printed).
 * A cell printed as "-" has `value: null`: the paper reports nothing there.
 */
import { z } from "zod";
import { UserError } from "../core/index.js";
import publishedJson from "./published.json" with { type: "json" };

export const PUBLISHED_FORMAT = "eqakit-published-tables/1";
/** The `seed` of a table of eqakit's own benchmark: every row is measured, none published. */
export const OWN_BENCHMARK = "eqakit";

const cellSchema = z.object({
  /** The cell exactly as the seed prints it. */
  text: z.string(),
  /** The number of the cell; null where the paper prints "-". */
  value: z.number().nullable(),
  /** The ± after the number. */
  ci: z.number().optional(),
  /** The change printed in parentheses (OpenEQA Table III: without force-a-guess minus with it). */
  change: z.number().optional(),
  /** The difference printed after an arrow (EQA-RM: relative to Qwen2-VL-2B-Instruct), unsigned, with the arrow as printed. */
  delta: z.number().optional(),
  arrow: z.enum(["up", "down"]).optional(),
  /** Marked with * (a number measured on a subset, as the footnote says). */
  asterisk: z.boolean().optional(),
  bold: z.boolean().optional(),
  underline: z.boolean().optional(),
});
export type PublishedCell = z.infer<typeof cellSchema>;

const rowSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  /** The row's label as the seed prints it. */
  label: z.string(),
  /** The row number the paper prints (OpenEQA). */
  number: z.number().int().positive().optional(),
  /** The section heading the row sits under. */
  section: z.string().optional(),
  /** An agent (or method), the paper's per-section average, or human performance. */
  kind: z.enum(["agent", "average", "human"]),
  /** OpenEQA's agent family, named as `eqa answer --agent` names it. */
  family: z.enum(["blind", "socratic", "conceptgraph", "svm", "vlm"]).optional(),
  model: z.string().optional(),
  captioner: z.string().optional(),
  /** Measured on a subset of the questions (the table's footnote says which). */
  subset: z.boolean().optional(),
  /** Column id → cell. */
  cells: z.record(z.string(), cellSchema),
});
export type PublishedRow = z.infer<typeof rowSchema>;

const columnSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  label: z.string(),
  /** The header spanning this column, where the table has two header rows. */
  group: z.string().optional(),
  higherIsBetter: z.boolean(),
  /** The decimals a column prints when no published number sets them (eqakit's own tables). */
  decimals: z.number().int().nonnegative().optional(),
});
export type PublishedColumn = z.infer<typeof columnSchema>;

const tableSchema = z.object({
  /** The name `eqa reproduce` takes (`openeqa-table-4`). */
  id: z.string().regex(/^[a-z0-9-]+$/),
  /** The seed paper; `eqakit` for eqakit's own benchmark, whose table has no published row (`OWN_BENCHMARK`). */
  seed: z.enum(["001", "002", "003", "004", "eqakit"]),
  seedFile: z.string(),
  /** The table's name in the paper ("TABLE IV", "Table 2"). */
  table: z.string(),
  title: z.string(),
  /** The caption, exactly as the seed prints it. */
  caption: z.string(),
  columns: z.array(columnSchema).min(1),
  /** What the paper says about the numbers (subsets, settings). */
  footnotes: z.array(z.string()),
  /** eqakit's own remarks on reading the table. */
  notes: z.array(z.string()),
  /** The settings the published rows ran at, as the paper states them. */
  settings: z.record(z.string(), z.unknown()),
  rows: z.array(rowSchema).min(1),
});
export type PublishedTable = z.infer<typeof tableSchema>;

export const publishedTablesSchema = z.object({
  format: z.literal(PUBLISHED_FORMAT),
  source: z.string(),
  tables: z.array(tableSchema),
});
export type PublishedTables = z.infer<typeof publishedTablesSchema>;

let parsed: PublishedTables | null = null;

/** Every published table, validated once. */
export function publishedTables(): PublishedTables {
  parsed ??= publishedTablesSchema.parse(publishedJson);
  return parsed;
}

/** The ids `eqa reproduce` knows, in the data file's order. */
export function publishedTableIds(): string[] {
  return publishedTables().tables.map((t) => t.id);
}

/** One published table by its id; a `UserError` naming the known ids otherwise. */
export function publishedTable(id: string): PublishedTable {
  const table = publishedTables().tables.find((t) => t.id === id);
  if (!table) throw new UserError(`no published table named ${id}`, { field: "TABLE" }, `known tables: ${publishedTableIds().join(", ")}`);
  return table;
}

/** Where a table's rows come from, as its title and caption say it. */
export function tableSource(table: Pick<PublishedTable, "seed">): string {
  return table.seed === OWN_BENCHMARK ? "eqakit's own benchmark, no published row" : `seed ${table.seed}`;
}

/** A table's heading: the paper's table name and title; an own benchmark's title alone (it names the task). */
export function tableHeading(table: Pick<PublishedTable, "seed" | "table" | "title">): string {
  return table.seed === OWN_BENCHMARK ? table.title : `${table.table}: ${table.title}`;
}
