/**
 * A reproduced table: a paper's published rows, as `published.json` holds them, with the rows a
 * user ran set apart below them, laid out in the paper's columns and written as Markdown, CSV
 * and LaTeX (booktabs). Bold follows the papers: the published rows keep the paper's own bold;
 * among the user's rows the best value of each column is bold (the highest, or the lowest where
 * a column is better lower). Rows a user did not run are not in the table; a cell a user row
 * has no number for (a column its run does not measure) prints "–".
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { eqakitVersion, writeFileAtomically } from "../core/index.js";
import { ledgerCost, readCallLedger, type CallEntry, type RunCost } from "../models/index.js";
import { OWN_BENCHMARK, tableHeading, tableSource, type PublishedColumn, type PublishedTable } from "./published.js";
import { RUN_KIND } from "../store/index.js";

export const REPRODUCED_TABLE_FORMAT = "eqakit-reproduced-table/1" as const;
/** The files a reproduce run writes its table to. */
export const TABLE_FILES = { json: "table.json", markdown: "table.md", csv: "table.csv", latex: "table.tex" } as const;

const userCellSchema = z.object({
  value: z.number(),
  /** The ± printed after the value (for OpenEQA: the bootstrap standard error of the mean). */
  ci: z.number().optional(),
  /** The change printed in parentheses after the value (OpenEQA Table III: w/o guess minus with it). */
  change: z.number().optional(),
  /** The bootstrap confidence interval of the value (95 %), shown by the report. */
  interval: z.tuple([z.number(), z.number()]).optional(),
  /** How many items the value averages. */
  n: z.number().int().nonnegative(),
});
export type UserCell = z.infer<typeof userCellSchema>;

export const userRowSchema = z.object({
  id: z.string(),
  /** The row's label, in the paper's style ("openai/gpt-4o w/ openai/gpt-4o-mini"). */
  label: z.string(),
  /** The paper's section the row belongs to ("Blind LLMs"). */
  section: z.string(),
  /** The run folder of the row, relative to the reproduce run. */
  runDir: z.string(),
  /** Column id → cell; a column missing here was not measured by the row's run. */
  cells: z.record(z.string(), userCellSchema),
  /** True only when the row ran on the published rows' data and settings. */
  comparable: z.boolean(),
  /** What differs from the published rows' setup, each a short phrase; empty when comparable. */
  differences: z.array(z.string()),
  /** Questions whose answer or judgement failed, left out of the row's numbers. */
  failed: z.number().int().nonnegative(),
});
export type UserRow = z.infer<typeof userRowSchema>;

export const reproducedTableSchema = z.object({
  format: z.literal(REPRODUCED_TABLE_FORMAT),
  /** The published table's id (`openeqa-table-4`). */
  table: z.string(),
  rows: z.array(userRowSchema),
  /** What the run says about the table beside the rows' differences (columns it does not fill). */
  notes: z.array(z.string()).optional(),
});
export type ReproducedTable = z.infer<typeof reproducedTableSchema>;

/** A number as the paper prints it: OpenEQA's one decimal, or as many decimals as the column's published numbers have. */
function decimalsOf(table: PublishedTable, column: PublishedColumn): number {
  if (column.decimals !== undefined) return column.decimals;
  let most = 0;
  for (const row of table.rows) {
    const cell = row.cells[column.id];
    if (cell?.value === null || cell === undefined) continue;
    const printed = /(\d+)(?:\.(\d+))?/.exec(cell.text.replace(/<[^>]+>/g, ""));
    most = Math.max(most, printed?.[2]?.length ?? 0);
  }
  return most;
}

export interface LaidCell {
  text: string;
  bold: boolean;
}

/** One row of a table as it prints: the published rows first, then the user's. */
export interface LaidRow {
  section: string;
  label: string;
  source: "published" | "this run";
  comparable: boolean | null;
  cells: LaidCell[];
  values: (number | null)[];
  cis: (number | null)[];
  /** A user row's id, its cells' confidence intervals and how many items each averages. */
  id?: string;
  intervals?: ([number, number] | null)[];
  counts?: (number | null)[];
}

/** The table's rows in print order: the published ones (their own sections and bold), then the user's, best per column in bold. */
export function layRows(published: PublishedTable, reproduced: ReproducedTable): LaidRow[] {
  const decimals = published.columns.map((c) => decimalsOf(published, c));
  const rows: LaidRow[] = published.rows.map((row) => ({
    section: row.section ?? "",
    label: row.number !== undefined ? `${row.number} ${row.label}` : row.label,
    source: "published",
    comparable: null,
    cells: published.columns.map((c) => {
      const cell = row.cells[c.id]!;
      // a published number keeps the decimals the paper printed it with (41.8±3.2 beside 43.27)
      const own = /(\d+)(?:\.(\d+))?/.exec(cell.text.replace(/<[^>]+>/g, ""))?.[2]?.length ?? 0;
      return { text: cell.value === null ? cell.text : cellText(cell.value, cell.ci, own) + (cell.asterisk ? "*" : "") + (cell.change !== undefined ? ` (${cell.change > 0 ? "+" : ""}${cell.change})` : ""), bold: cell.bold === true };
    }),
    values: published.columns.map((c) => row.cells[c.id]!.value),
    cis: published.columns.map((c) => row.cells[c.id]!.ci ?? null),
  }));
  const best = published.columns.map((c) => {
    const values = reproduced.rows.map((r) => r.cells[c.id]?.value).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (values.length < 2) return null;
    return c.higherIsBetter ? Math.max(...values) : Math.min(...values);
  });
  for (const row of reproduced.rows) {
    rows.push({
      section: `This run: ${row.section}`,
      label: row.label,
      source: "this run",
      // eqakit's own benchmark has no published row to be comparable with
      comparable: published.seed === OWN_BENCHMARK ? null : row.comparable,
      cells: published.columns.map((c, k) => {
        const cell = row.cells[c.id];
        if (cell === undefined || !Number.isFinite(cell.value)) return { text: "–", bold: false };
        const change = cell.change === undefined ? "" : ` (${cell.change > 0 ? "+" : ""}${cell.change.toFixed(decimals[k]!)})`;
        return { text: cellText(cell.value, cell.ci, decimals[k]!) + change, bold: best[k] !== null && cell.value === best[k] };
      }),
      values: published.columns.map((c) => row.cells[c.id]?.value ?? null),
      cis: published.columns.map((c) => row.cells[c.id]?.ci ?? null),
      id: row.id,
      intervals: published.columns.map((c) => row.cells[c.id]?.interval ?? null),
      counts: published.columns.map((c) => row.cells[c.id]?.n ?? null),
    });
  }
  return rows;
}

function cellText(value: number, ci: number | undefined, decimals: number): string {
  return ci === undefined || !Number.isFinite(ci) ? value.toFixed(decimals) : `${value.toFixed(decimals)}±${ci.toFixed(decimals)}`;
}

/** The notes printed under the table: the paper's footnotes, eqakit's notes, and what each user row's setup differs in. */
export function tableNotes(published: PublishedTable, reproduced: ReproducedTable): string[] {
  const notes = [...published.footnotes.map((f) => `Paper: ${f}`), ...published.notes];
  // rows that differ in the same way share one note; eqakit's own tables have no published row to differ from
  const byDifferences = new Map<string, UserRow[]>();
  for (const row of published.seed === OWN_BENCHMARK ? [] : reproduced.rows) {
    const key = row.differences.join("; ");
    byDifferences.set(key, [...(byDifferences.get(key) ?? []), row]);
  }
  for (const [differences, rows] of byDifferences) {
    const who = rows.length === reproduced.rows.length ? "This run's rows" : `This run's ${rows.map((r) => r.id).join(", ")} row(s)`;
    notes.push(differences === "" ? `${who}: comparable with the published rows (the paper's questions, settings and judge family).` : `${who}: not comparable with the published rows: ${differences}.`);
  }
  for (const row of reproduced.rows) {
    if (row.failed > 0) notes.push(`This run's ${row.id} row: ${row.failed} question(s) failed and are left out of its numbers (see ${row.runDir}).`);
  }
  notes.push(...(reproduced.notes ?? []));
  return notes;
}

function columnHeader(column: PublishedColumn): string {
  return column.group && column.group !== column.label ? `${column.group}: ${column.label}` : column.label;
}

function markdownEscape(text: string): string {
  return text.replace(/\|/g, "\\|");
}

/** The table as Markdown: a title, one header row, section rows in italics, the user's rows after a rule, notes below. */
export function formatTableMarkdown(published: PublishedTable, reproduced: ReproducedTable): string {
  const mine = reproduced.rows.length > 0 && published.seed !== OWN_BENCHMARK;
  const header = ["method", ...published.columns.map(columnHeader), ...(mine ? ["comparable"] : [])];
  const lines = [`**${tableHeading(published)}** (${tableSource(published)})`, "", `| ${header.map(markdownEscape).join(" | ")} |`, `|${header.map((_, k) => (k === 0 ? " --- " : " ---: ")).join("|")}|`];
  let section: string | null = null;
  for (const row of layRows(published, reproduced)) {
    if (row.section !== section) {
      section = row.section;
      if (section !== "") lines.push(`| *${markdownEscape(section)}* |${" |".repeat(header.length - 1)}`);
    }
    const comparable = row.comparable === null ? "" : row.comparable ? "yes" : "no";
    lines.push(`| ${markdownEscape(row.label)} | ${row.cells.map((c) => (c.bold ? `**${markdownEscape(c.text)}**` : markdownEscape(c.text))).join(" | ")} |${mine ? ` ${comparable} |` : ""}`);
  }
  lines.push("", ...tableNotes(published, reproduced).map((n) => `- ${n}`));
  return `${lines.join("\n")}\n`;
}

function csvField(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The table as CSV: one line per row, each column's value and its ± in two fields, empty where there is no number. */
export function formatTableCsv(published: PublishedTable, reproduced: ReproducedTable): string {
  const header = ["source", "section", "row", "comparable", ...published.columns.flatMap((c) => [c.id, `${c.id}_pm`])];
  const lines = [header.join(",")];
  for (const row of layRows(published, reproduced)) {
    const fields = [row.source, row.section, row.label, row.comparable === null ? "" : String(row.comparable), ...row.values.flatMap((v, k) => [v === null ? "" : String(v), row.cis[k] === null ? "" : String(row.cis[k])])];
    lines.push(fields.map(csvField).join(","));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * What each character LaTeX would refuse or misread becomes: its specials, and the symbols the
 * papers' tables and notes hold (arrows, primes, Greek letters, ±). Math symbols go in
 * `\ensuremath{}`, so that two side by side never make `$$`.
 */
const LATEX_CHARACTERS: Readonly<Record<string, string>> = {
  "\\": "\\textbackslash{}",
  "&": "\\&",
  "%": "\\%",
  $: "\\$",
  "#": "\\#",
  _: "\\_",
  "{": "\\{",
  "}": "\\}",
  "~": "\\textasciitilde{}",
  "^": "\\textasciicircum{}",
  "<": "\\textless{}",
  ">": "\\textgreater{}",
  "|": "\\textbar{}",
  "±": "\\ensuremath{\\pm}",
  "-": "-{}",
  "–": "--",
  "—": "---",
  "−": "\\ensuremath{-}",
  "↑": "\\ensuremath{\\uparrow}",
  "↓": "\\ensuremath{\\downarrow}",
  "→": "\\ensuremath{\\rightarrow}",
  "←": "\\ensuremath{\\leftarrow}",
  "′": "\\ensuremath{'}",
  "·": "\\ensuremath{\\cdot}",
  "×": "\\ensuremath{\\times}",
  "≤": "\\ensuremath{\\leq}",
  "≥": "\\ensuremath{\\geq}",
  "≈": "\\ensuremath{\\approx}",
  "≠": "\\ensuremath{\\neq}",
  "√": "\\ensuremath{\\surd}",
  "°": "\\ensuremath{^\\circ}",
  "ᵢ": "\\ensuremath{_i}",
  "…": "\\ldots{}",
  "§": "\\S{}",
  "‘": "`",
  "’": "'",
  "“": "``",
  "”": "''",
  "\u00a0": "~",
  ...Object.fromEntries(
    ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "o", "pi", "rho", "varsigma", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"].map((name, k) => [String.fromCodePoint(0x3b1 + k), name === "o" ? "o" : `\\ensuremath{\\${name}}`]),
  ),
  ...Object.fromEntries(
    [["Γ", "Gamma"], ["Δ", "Delta"], ["Θ", "Theta"], ["Λ", "Lambda"], ["Ξ", "Xi"], ["Π", "Pi"], ["Σ", "Sigma"], ["Φ", "Phi"], ["Ψ", "Psi"], ["Ω", "Omega"]].map(([c, name]) => [c, `\\ensuremath{\\${name}}`]),
  ),
};

/**
 * Text as LaTeX that pdflatex takes with its default encodings: one pass over the characters,
 * each replaced by a function (a replacement string would read `$'` and `$&` as patterns).
 * Latin-1 letters stay (LaTeX reads UTF-8); any other character LaTeX has no glyph for is
 * written as its code point (`U+4E2D`), so that the file always compiles.
 */
export function latexEscape(text: string): string {
  // "--" would print an en dash: the first hyphen of a pair is kept apart
  return text.replace(/-(?=-)|[\\&%$#_{}~^<>|]|[^\x00-\x7f]/gu, (character) => {
    const known = LATEX_CHARACTERS[character];
    if (known !== undefined) return known;
    const code = character.codePointAt(0)!;
    // LaTeX's default OT1 fonts have every Latin-1 letter but the eth and the thorn
    if (code >= 0xc0 && code <= 0xff && ![0xd0, 0xd7, 0xde, 0xf0, 0xf7, 0xfe].includes(code)) return character;
    return `\\texttt{U+${code.toString(16).toUpperCase().padStart(4, "0")}}`;
  });
}

/** The table as LaTeX with booktabs: sections as spanning italic rows, the user's rows after a midrule, bold as described above. */
export function formatTableLatex(published: PublishedTable, reproduced: ReproducedTable): string {
  const columns = published.columns;
  const lines = [
    "% needs \\usepackage{booktabs}",
    "\\begin{table}[t]",
    "\\centering",
    `\\caption{${latexEscape(published.seed === OWN_BENCHMARK ? `${published.title} eqakit's own benchmark, no published row: every row was measured with eqakit.` : `${published.title} Published rows from seed ${published.seed} (${published.table}); rows marked "this run" were measured with eqakit.`)}}`,
    `\\begin{tabular}{l${"r".repeat(columns.length)}}`,
    "\\toprule",
    `method & ${columns.map((c) => latexEscape(columnHeader(c))).join(" & ")} \\\\`,
    "\\midrule",
  ];
  let section: string | null = null;
  let source: string | null = null;
  const laid = layRows(published, reproduced);
  for (const row of laid) {
    if (source !== null && row.source !== source) lines.push("\\midrule");
    source = row.source;
    if (row.section !== section) {
      section = row.section;
      if (section !== "") lines.push(`\\multicolumn{${columns.length + 1}}{l}{\\textit{${latexEscape(section)}}} \\\\`);
    }
    const label = `${latexEscape(row.label)}${row.comparable === false ? "$^\\dagger$" : ""}`;
    lines.push(`${label} & ${row.cells.map((c) => (c.bold ? `\\textbf{${latexEscape(c.text)}}` : latexEscape(c.text))).join(" & ")} \\\\`);
  }
  lines.push("\\bottomrule", "\\end{tabular}");
  const notes = tableNotes(published, reproduced);
  const dagger = laid.some((r) => r.comparable === false) ? ["$^\\dagger$ not comparable with the published rows (see the notes)."] : [];
  lines.push(`\\par\\smallskip{\\footnotesize ${[...notes.map(latexEscape), ...dagger].join(" \\\\ ")}}`);
  lines.push("\\end{table}");
  return `${lines.join("\n")}\n`;
}

/** A reproduce run's `summary.json`: what decided its numbers, its rows, and each row's run. */
export interface ReproduceSummary {
  kind: typeof RUN_KIND.reproduce;
  eqakitVersion: string;
  createdAt: string;
  table: string;
  settings: Record<string, unknown>;
  rows: UserRow[];
  /** Each row's run summary (answers, scores, cost), by row id. */
  runs: Record<string, { answered: number; failed: number; scored: number; dollars: number | null }>;
  /** Calls, tokens and dollars per role of every row's run, from their ledgers of model calls (calls.jsonl). */
  cost: RunCost;
}

/**
 * The model calls of a reproduce run: the ledgers (calls.jsonl) of the run folder and of each
 * row's runs below it (`rows/<row>`, `rows/<row>/<stage>`), in path order.
 */
export function reproductionCalls(dir: string): CallEntry[] {
  const calls: CallEntry[] = [];
  const visit = (folder: string, depth: number): void => {
    calls.push(...readCallLedger(folder));
    if (depth === 0) return;
    const entries = existsSync(folder) ? readdirSync(folder, { withFileTypes: true }) : [];
    for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) visit(join(folder, entry.name), depth - 1);
  };
  calls.push(...readCallLedger(dir));
  visit(join(dir, "rows"), 2);
  return calls;
}

/** Writes a table in Markdown, CSV and LaTeX (booktabs) into `dir`; returns the Markdown. */
export async function writeTableFormats(dir: string, published: PublishedTable, table: ReproducedTable): Promise<string> {
  const markdown = formatTableMarkdown(published, table);
  await writeFileAtomically(join(dir, TABLE_FILES.markdown), markdown);
  await writeFileAtomically(join(dir, TABLE_FILES.csv), formatTableCsv(published, table));
  await writeFileAtomically(join(dir, TABLE_FILES.latex), formatTableLatex(published, table));
  return markdown;
}

/**
 * Writes a reproduce run's results into `dir`: its table beside the published rows in every
 * format (table.json, .md, .csv, .tex) and `summary.json` (with the cost of every row's calls,
 * from their ledgers); returns the Markdown and the summary.
 */
export async function writeReproduction(dir: string, published: PublishedTable, table: ReproducedTable, settings: Record<string, unknown>, runs: ReproduceSummary["runs"]): Promise<{ markdown: string; summary: ReproduceSummary }> {
  await writeFileAtomically(join(dir, TABLE_FILES.json), `${JSON.stringify(table, null, 2)}\n`);
  const markdown = await writeTableFormats(dir, published, table);
  const summary: ReproduceSummary = { kind: RUN_KIND.reproduce, eqakitVersion, createdAt: new Date().toISOString(), table: published.id, settings, rows: table.rows, runs, cost: ledgerCost(reproductionCalls(dir)) };
  await writeFileAtomically(join(dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return { markdown, summary };
}
