import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPRODUCED_TABLE_FORMAT, TABLE_FILES, isOwnBenchmark, latexEscape, reproducibleTable, reproducibleTableIds, writeTableFormats, type PublishedTable, type ReproducedTable } from "../../src/reproduce/index.js";

/**
 * Every table eqa reproduce writes, the paper's rows alone (`--published`) and beside a run's
 * rows (eqakit's own benchmarks: a run's rows alone, no comparable column), says in its LaTeX what its Markdown says, cell by cell, and compiles with pdflatex and
 * booktabs where Debian's texlive-latex-base and texlive-latex-recommended are installed (the
 * rest of each test holds without them).
 */

/** Math commands eqakit's LaTeX may hold, as the characters they print. */
const MATH: Record<string, string> = {
  pm: "±", uparrow: "↑", downarrow: "↓", rightarrow: "→", leftarrow: "←", cdot: "·", times: "×", leq: "≤", geq: "≥", approx: "≈", neq: "≠", surd: "√",
  alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", theta: "θ", lambda: "λ", mu: "μ", pi: "π", rho: "ρ", sigma: "σ", tau: "τ", phi: "φ", omega: "ω", Sigma: "Σ", Delta: "Δ",
};

/** LaTeX text (no tabular syntax) back to the text it prints. */
function latexToText(latex: string): string {
  return latex
    .replace(/\\ensuremath\{\\([A-Za-z]+)\}|\$\\([A-Za-z]+)\$/g, (whole, name?: string, inline?: string) => MATH[name ?? inline ?? ""] ?? whole)
    .replace(/\$'\$/g, "′")
    .replace(/\\ensuremath\{'\}/g, "′")
    .replace(/\\ensuremath\{-\}/g, "−")
    .replace(/\\ensuremath\{_i\}/g, "ᵢ")
    .replace(/\\ensuremath\{\^\\circ\}/g, "°")
    .replace(/\\texttt\{U\+([0-9A-F]{4,6})\}/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/\\textbackslash\{\}/g, "\u0000")
    .replace(/\\textasciitilde\{\}/g, "~")
    .replace(/\\textasciicircum\{\}/g, "^")
    .replace(/\\textless\{\}/g, "<")
    .replace(/\\textgreater\{\}/g, ">")
    .replace(/\\textbar\{\}/g, "|")
    .replace(/\\ldots\{\}/g, "…")
    .replace(/\\S\{\}/g, "§")
    .replace(/---/g, "—")
    .replace(/--/g, "–")
    .replace(/-\{\}/g, "-")
    .replace(/``/g, "“")
    .replace(/''/g, "”")
    .replace(/\\([&%$#_{}])/g, "$1")
    .replace(/\u0000/g, "\\");
}

interface TableText {
  header: string[];
  /** A section's name, or a row's label and cells (bold as `**x**`), with whether the row is marked not comparable. */
  rows: ({ section: string } | { label: string; cells: string[]; notComparable: boolean })[];
  notes: string[];
}

function splitMarkdownCells(line: string): string[] {
  return line
    .slice(2, -2)
    .split(/(?<!\\) \| /)
    .map((cell) => cell.replace(/\\\|/g, "|"));
}

function markdownText(markdown: string, mine: boolean): TableText {
  const lines = markdown.split("\n");
  const tableLines = lines.filter((l) => l.startsWith("| "));
  const header = splitMarkdownCells(tableLines[0]!).slice(1, mine ? -1 : undefined);
  const rows: TableText["rows"] = [];
  for (const line of tableLines.slice(2)) {
    const section = /^\| \*(.*)\* \|( \|)*$/.exec(line);
    if (section) {
      rows.push({ section: section[1]!.replace(/\\\|/g, "|") });
      continue;
    }
    const cells = splitMarkdownCells(line.trimEnd().endsWith(" |") ? line : `${line} |`);
    const comparable = mine ? cells.pop() : "";
    rows.push({ label: cells[0]!, cells: cells.slice(1), notComparable: comparable === "no" });
  }
  const notes = lines.filter((l) => l.startsWith("- ")).map((l) => l.slice(2));
  return { header, rows, notes };
}

function latexText(latex: string): TableText & { dagger: boolean; caption: string } {
  const lines = latex.split("\n");
  const caption = latexToText(/^\\caption\{(.*)\}$/.exec(lines.find((l) => l.startsWith("\\caption{"))!)![1]!);
  const headerLine = lines.find((l) => l.startsWith("method & "))!;
  const cellsOf = (line: string): string[] => line.replace(/ \\\\$/, "").split(" & ");
  const header = cellsOf(headerLine).slice(1).map(latexToText);
  const body = lines.slice(lines.indexOf(headerLine) + 2, lines.indexOf("\\bottomrule"));
  const rows: TableText["rows"] = [];
  for (const line of body) {
    if (line === "\\midrule") continue;
    const section = /^\\multicolumn\{\d+\}\{l\}\{\\textit\{(.*)\}\} \\\\$/.exec(line);
    if (section) {
      rows.push({ section: latexToText(section[1]!) });
      continue;
    }
    const [label, ...cells] = cellsOf(line);
    const notComparable = label!.endsWith("$^\\dagger$");
    rows.push({
      label: latexToText(notComparable ? label!.slice(0, -"$^\\dagger$".length) : label!),
      cells: cells.map((c) => {
        const bold = /^\\textbf\{(.*)\}$/.exec(c);
        return bold ? `**${latexToText(bold[1]!)}**` : latexToText(c);
      }),
      notComparable,
    });
  }
  const notesLine = /^\\par\\smallskip\{\\footnotesize (.*)\}$/.exec(lines.find((l) => l.startsWith("\\par\\smallskip"))!)![1]!;
  const notes = notesLine.split(" \\\\ ");
  const dagger = notes.at(-1)!.startsWith("$^\\dagger$");
  return { caption, header, rows, notes: (dagger ? notes.slice(0, -1) : notes).map(latexToText), dagger };
}

/** A run's rows for `table`: one with every column (its label and notes full of characters LaTeX treats apart), one with a column it did not measure. */
function runRows(table: PublishedTable): ReproducedTable {
  const cells = Object.fromEntries(table.columns.map((c, k) => [c.id, { value: 40 + k + 0.123, ci: 1.5, ...(k === 0 ? { change: -2.5 } : {}), n: 20 }]));
  const some = Object.fromEntries(table.columns.slice(1).map((c) => [c.id, { value: 12.5, n: 20 }]));
  return {
    format: REPRODUCED_TABLE_FORMAT,
    table: table.id,
    rows: [
      {
        id: "mine_1",
        label: "openai/gpt-4o w/ my_model & co — 100% ~ {K=2}^ $'",
        section: "Blind LLMs #1",
        runDir: "rows/mine_1",
        cells,
        comparable: false,
        differences: ["built-in homes, not HM3D", "δ = 1 and τ = 2 ($' is not a pattern) -- 3·√area > 5 | x \\ y"],
        failed: 1,
      },
      { id: "mine-2", label: "Crème brûlée ð 中", section: "Blind LLMs #1", runDir: "rows/mine-2", cells: some, comparable: true, differences: [], failed: 0 },
    ],
    notes: ["C′ ↑ and E′ ↑ are LLM-Match's (Eqs. 5, 6); Σᵢ over questions"],
  };
}

/** `pdflatex` with booktabs, or why it cannot compile here. */
function latexCompiler(): { available: true } | { available: false; why: string } {
  const version = spawnSync("pdflatex", ["--version"], { encoding: "utf8" });
  if (version.error || version.status !== 0) return { available: false, why: "no pdflatex (Debian: texlive-latex-base)" };
  const booktabs = spawnSync("kpsewhich", ["booktabs.sty"], { encoding: "utf8" });
  if (booktabs.error || booktabs.stdout.trim() === "") return { available: false, why: "no booktabs.sty (Debian: texlive-latex-recommended)" };
  return { available: true };
}

/** Compiles the tables in one article with booktabs and nothing else; the log's first error when pdflatex refuses. */
function compile(dir: string, name: string, tables: string[]): string | null {
  const file = join(dir, `${name}.tex`);
  writeFileSync(file, ["\\documentclass{article}", "\\usepackage{booktabs}", "\\begin{document}", ...tables.flatMap((t) => [t, "\\clearpage"]), "\\end{document}", ""].join("\n"));
  const result = spawnSync("pdflatex", ["-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "-output-directory", dir, file], { cwd: dir, encoding: "utf8" });
  if (result.status === 0) return null;
  const log = readFileSync(join(dir, `${name}.log`), "utf8");
  return log.slice(log.indexOf("\n!") + 1).split("\n").slice(0, 4).join("\n");
}

describe("formatTableLatex", () => {
  const compiler = latexCompiler();

  for (const id of reproducibleTableIds()) {
    test(`${id}: the LaTeX of the published rows and of a run's says what the Markdown says, cell by cell, in characters pdflatex takes${compiler.available ? ", and pdflatex compiles it with booktabs" : ""}`, async () => {
      const table = reproducibleTable(id);
      const dir = mkdtempSync(join(tmpdir(), "eqakit-latex-"));
      const written: string[] = [];
      for (const [name, reproduced] of [["published", { format: REPRODUCED_TABLE_FORMAT, table: id, rows: [] } satisfies ReproducedTable], ["run", runRows(table)]] as const) {
        const out = mkdtempSync(join(dir, `${name}-`));
        await writeTableFormats(out, table, reproduced);
        const markdown = readFileSync(join(out, TABLE_FILES.markdown), "utf8");
        const latex = readFileSync(join(out, TABLE_FILES.latex), "utf8");
        // a table of eqakit's own benchmark has no published row to be comparable with: no such column
        const mine = reproduced.rows.length > 0 && !isOwnBenchmark(table);
        const fromMarkdown = markdownText(markdown, mine);
        const fromLatex = latexText(latex);
        assert.deepEqual(fromLatex.header, fromMarkdown.header, `${id} (${name}): header`);
        assert.deepEqual(fromLatex.rows, fromMarkdown.rows, `${id} (${name}): rows`);
        assert.deepEqual(fromLatex.notes, fromMarkdown.notes, `${id} (${name}): notes`);
        assert.equal(fromLatex.dagger, mine && reproduced.rows.some((r) => !r.comparable), `${id} (${name}): the dagger's note is there when a row is not comparable`);
        assert.ok(fromLatex.caption.startsWith(table.title), `${id} (${name}): the caption opens with the paper's title`);
        if (isOwnBenchmark(table)) {
          assert.match(fromLatex.caption, /eqakit's own benchmark, no published row/, `${id} (${name}): the caption marks eqakit's own benchmark`);
          assert.match(markdown.split("\n")[0]!, /\(eqakit's own benchmark, no published row\)$/, `${id} (${name}): so does the Markdown's title`);
        }
        // LaTeX's default encodings take ASCII and the Latin-1 letters, nothing else
        const foreign = [...latex].filter((c) => c.codePointAt(0)! > 0x7f && !/[À-ÖØ-Ýß-öø-ý]/u.test(c) && c !== "ÿ");
        assert.deepEqual(foreign, [], `${id} (${name}): characters pdflatex refuses`);
        written.push(latex);
      }
      if (compiler.available) assert.equal(compile(dir, id, written), null, `${id}: pdflatex refuses the table`);
    });
  }

  test("a character that looks like a replacement pattern is written as itself: C′ ↑ stays one prime and one arrow, a note is not repeated", () => {
    assert.equal(latexEscape("C′ ↑"), "C\\ensuremath{'} \\ensuremath{\\uparrow}");
    assert.equal(latexEscape("a $' b $& c $` d"), "a \\$' b \\$\\& c \\$` d");
    assert.equal(latexEscape("δ·σ, τ = 2"), "\\ensuremath{\\delta}\\ensuremath{\\cdot}\\ensuremath{\\sigma}, \\ensuremath{\\tau} = 2");
  });
});
