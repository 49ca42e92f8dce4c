/**
 * The report's section for `eqa reproduce` runs: the paper's table with its published rows,
 * then, set apart under a heading of their own, the rows the run measured with each cell's ±
 * and 95 % bootstrap interval, how many questions a row averages, whether it is comparable,
 * and the table's notes.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { TABLE_FILES, layRows, reproducibleTable, reproducedTableSchema, tableHeading, tableNotes, tableSource, type ReproducedTable } from "../reproduce/index.js";
import { readJsonFile } from "./files.js";
import { html, type Html } from "./html-parts.js";
import type { LoadedRun } from "./runs.js";
import { RUN_KIND } from "../store/index.js";

/** The table a reproduce run folder wrote (`table.json`), or undefined before the run has finished one. */
export function loadReproducedTable(dir: string): ReproducedTable | undefined {
  const file = join(dir, TABLE_FILES.json);
  return existsSync(file) ? readJsonFile(file, reproducedTableSchema) : undefined;
}

export function reproducedTablesSection(runs: readonly LoadedRun[]): Html {
  const tables = runs.flatMap((run) => {
    if (run.kind !== RUN_KIND.reproduce) return [];
    const table = loadReproducedTable(run.dir);
    return table ? [{ run, table }] : [];
  });
  if (tables.length === 0) return html``;
  return html`<section id="reproduced"><h2>Reproduced tables</h2>${tables.map(({ run, table }) => {
    const published = reproducibleTable(table.table);
    const rows = layRows(published, table);
    const cellHtml = (text: string, bold: boolean, interval: [number, number] | null | undefined): Html => {
      const range = interval ? html`<br><span class="hint">[${interval[0].toFixed(1)}, ${interval[1].toFixed(1)}]</span>` : html``;
      return bold ? html`<td class="num"><b>${text}</b>${range}</td>` : html`<td class="num">${text}${range}</td>`;
    };
    let section: string | null = null;
    const body = rows.map((row) => {
      const heading = row.section !== section && row.section !== "" ? html`<tr class="section"><td colspan="${String(published.columns.length + 2)}"><i>${row.section}</i></td></tr>` : html``;
      section = row.section;
      const n = row.counts ? Math.max(0, ...row.counts.map((c) => c ?? 0)) : null;
      const mark = row.comparable === null ? "" : row.comparable ? "comparable" : "not comparable";
      return html`${heading}<tr class="${row.source === "this run" ? "mine" : "published"}"><td>${row.label}</td>${row.cells.map((c, k) => cellHtml(c.text, c.bold, row.intervals?.[k]))}<td>${mark}${n !== null ? ` (n = ${n})` : ""}</td></tr>`;
    });
    return html`<h3>${run.label}: ${tableHeading(published)} (${tableSource(published)})</h3><table class="grid compact"><thead><tr><th>method</th>${published.columns.map((c) => html`<th>${c.group && c.group !== c.label ? `${c.group}: ${c.label}` : c.label}</th>`)}<th>this run</th></tr></thead><tbody>${body}</tbody></table><ul>${tableNotes(published, table).map((note) => html`<li>${note}</li>`)}</ul>`;
  })}</section>`;
}
