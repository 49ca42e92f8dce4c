/**
 * Checks the published tables of `src/reproduce/published.json` against the seed papers'
 * text in `../shared/seeds`: every cell's text is found on its row's line of the table, in
 * column order, and every number the cell names (value, ±, change, delta) is in that text.
 * Prints one JSON line: tables, rows and numbers checked, and every mismatch.
 *
 *   node --import tsx bench/published-rows.ts [--seeds ../shared/seeds]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { publishedTables, type PublishedCell } from "../src/reproduce/index.js";

const at = process.argv.indexOf("--seeds");
const seedsDir = at >= 0 ? (process.argv[at + 1] as string) : join(import.meta.dirname, "..", "..", "shared", "seeds");

/** A number as the seed may print it: 3.0 → "3.0", 6.08 → "6.080" are both matched by the digits before padding. */
function printedForms(n: number): RegExp {
  const [int, frac = ""] = String(Math.abs(n)).split(".");
  return new RegExp(`(^|[^0-9.])${n < 0 ? "-" : "[+-]?"}${int}${frac === "" ? "(\\.0+)?" : `\\.${frac}0*`}(?![0-9])`);
}

const mismatches: string[] = [];
let rows = 0;
let numbers = 0;
const tables = publishedTables().tables;
for (const table of tables) {
  const lines = readFileSync(join(seedsDir, table.seedFile), "utf8").split("\n");
  const captionAt = lines.findIndex((l) => l.startsWith(table.caption.slice(0, 60)));
  if (captionAt < 0) mismatches.push(`${table.id}: caption not found in ${table.seedFile}`);
  else if (lines[captionAt] !== table.caption) mismatches.push(`${table.id}: caption differs from ${table.seedFile}:${captionAt + 1}`);
  // the table's lines: those with the table's column count of tabs, nearest the caption
  const tableLines = lines.map((text, i) => ({ text, i })).filter((l) => l.text.split("\t").length >= table.columns.length + 1);
  for (const row of table.rows) {
    rows += 1;
    const cells = table.columns.map((c) => row.cells[c.id]);
    const candidates = tableLines.filter((l) => l.text.split("\t")[0]!.replace(/<[^>]+>/g, "").includes(row.label.replace(/<[^>]+>/g, "")) || (row.label === "Human Agent" && l.text.startsWith("\t")));
    const line = candidates
      .filter((l) => cells.every((cell, k) => cell !== undefined && l.text.split("\t")[k + 1]?.trim() === cell.text))
      .sort((a, b) => Math.abs(a.i - captionAt) - Math.abs(b.i - captionAt))[0];
    if (!line) {
      mismatches.push(`${table.id} row ${row.id}: no line of ${table.seedFile} holds its label and cells ${cells.map((c) => c?.text).join(" | ")}`);
      continue;
    }
    for (const [k, column] of table.columns.entries()) {
      const cell = cells[k] as PublishedCell;
      const printed = line.text.split("\t")[k + 1]!.trim();
      const named = [cell.value, cell.ci, cell.change, cell.delta].filter((n): n is number => typeof n === "number");
      for (const n of named) {
        numbers += 1;
        if (!printedForms(n).test(printed)) mismatches.push(`${table.id} row ${row.id} column ${column.id}: ${n} is not in "${printed}" (${table.seedFile}:${line.i + 1})`);
      }
      const printedNumbers = printed.match(/\d+(\.\d+)?/g)?.length ?? 0;
      if (printedNumbers !== named.length) mismatches.push(`${table.id} row ${row.id} column ${column.id}: "${printed}" prints ${printedNumbers} numbers, the data file names ${named.length}`);
    }
  }
}
console.log(JSON.stringify({ tables: tables.length, rows, numbers, mismatches }));
if (mismatches.length > 0) process.exitCode = 1;
