/**
 * `eqa reproduce express-table-3`: EXPRESS-Bench's ablation of VLMs (seed 003, Table 3), the
 * user's VLM driving Fine-EQA in its reference mode (`eqa explore --agent fine-eqa:reference`)
 * with the user's judge scoring C, C*, E_path and d_T. The row is one explore run folder,
 * `rows/fine-eqa-reference/`, which resumes as every explore run does; this module turns that
 * run's `summary.json` into the table's row. The paper's rows ran on EXPRESS-Bench in HM3D with
 * GPT-4o-mini judging; a run on other episodes or homes is marked not comparable, with why.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError, eqakitVersion, writeFileAtomically } from "../core/index.js";
import type { ReproduceSummary } from "./openeqa.js";
import type { PublishedTable } from "./published.js";
import { REPRODUCED_TABLE_FORMAT, TABLE_FILES, formatTableCsv, formatTableLatex, formatTableMarkdown, type ReproducedTable, type UserCell, type UserRow } from "./table.js";

export const EXPRESS_TABLES = ["express-table-3"] as const;
/** The row's explore run, relative to the reproduce run. */
export const EXPRESS_ROW_DIR = join("rows", "fine-eqa-reference");
/** The judge of the paper's EAC scores (EXPRESS-Bench's evaluation uses GPT-4o-mini). */
export const EXPRESS_PAPER_JUDGE = "gpt-4o-mini";

const metricsSchema = z.object({
  c: z.number().nullable(),
  cStar: z.number().nullable(),
  ePath: z.number().nullable(),
  dT: z.number().nullable(),
  nScored: z.number(),
  nPath: z.number(),
  nGoal: z.number(),
});
const exploreSummarySchema = z.object({
  counts: z.object({ episodes: z.number(), finished: z.number(), failed: z.number() }),
  judged: z.object({ judge: z.string(), failed: z.number(), express: metricsSchema.nullable() }).optional(),
  cost: z.object({ total: z.object({ dollars: z.number().nullable() }) }).optional(),
});

function readExploreSummary(runDir: string): z.infer<typeof exploreSummarySchema> {
  const path = join(runDir, "summary.json");
  try {
    return exploreSummarySchema.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    throw new UserError(`is not a judged explore summary: ${error instanceof Error ? error.message : String(error)}`, { file: path }, "run eqa reproduce express-table-3 again with --judge: the explore run resumes");
  }
}

export interface ExpressRowSetup {
  /** The VLM the row ran with (`openai/gpt-4o-mini`). */
  model: string;
  /** The judge, as the explore run names it. */
  judge: string;
  /** `builtin` or `habitat`. */
  env: string;
  /** The episodes file. */
  episodes: string;
}

/** What a row's setup differs in from the paper's (empty when it ran as the paper did). */
export function expressDifferences(setup: ExpressRowSetup): string[] {
  const differences: string[] = [];
  if (setup.env !== "habitat") differences.push("built-in homes, not HM3D");
  differences.push(`episodes of ${setup.episodes}, not EXPRESS-Bench's questions as the paper ran them`);
  if (!setup.judge.toLowerCase().includes(EXPRESS_PAPER_JUDGE)) differences.push(`judge ${setup.judge}, the paper's was GPT-4o-mini`);
  return differences;
}

/** The table's row from the explore run in `runDir` (its `summary.json` after `--judge`). */
export function expressRow(runDir: string, setup: ExpressRowSetup): UserRow {
  const parsed = readExploreSummary(runDir);
  const express = parsed.judged?.express;
  const cells: Record<string, UserCell> = {};
  const put = (id: string, value: number | null | undefined, n: number): void => {
    if (value !== null && value !== undefined && Number.isFinite(value) && n > 0) cells[id] = { value, n };
  };
  if (express) {
    put("c", express.c, express.nScored);
    put("c-star", express.cStar, express.nScored);
    put("e-path", express.ePath, express.nPath);
    put("d-t", express.dT, express.nGoal);
  }
  const differences = expressDifferences(setup);
  return {
    id: "fine-eqa-reference",
    label: setup.model,
    section: "Fine-EQA (reference mode)",
    runDir: EXPRESS_ROW_DIR,
    cells,
    comparable: differences.length === 0,
    differences,
    failed: parsed.counts.failed + (parsed.judged?.failed ?? 0),
  };
}

/**
 * Writes the table with the paper's rows and `row` into the reproduce run `dir` in the four
 * files, and its `summary.json` (the row and its explore run's counts and dollars, read from
 * `rowDir`); returns the Markdown.
 */
export async function writeExpressTable(published: PublishedTable, row: UserRow, dir: string, rowDir: string, settings: Record<string, unknown>): Promise<{ table: ReproducedTable; markdown: string }> {
  const notes = ["This run's row: eqakit's Fine-EQA reference mode (eqa explore --agent fine-eqa:reference) with the row's VLM for every question to it; C and C* from eqakit's EAC judge prompt, E_path and d_T in metres."];
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: published.id, rows: [row], notes };
  const markdown = formatTableMarkdown(published, table);
  await writeFileAtomically(join(dir, TABLE_FILES.json), `${JSON.stringify(table, null, 2)}\n`);
  await writeFileAtomically(join(dir, TABLE_FILES.markdown), markdown);
  await writeFileAtomically(join(dir, TABLE_FILES.csv), formatTableCsv(published, table));
  await writeFileAtomically(join(dir, TABLE_FILES.latex), formatTableLatex(published, table));
  const explored = readExploreSummary(rowDir);
  const summary: ReproduceSummary = {
    kind: "reproduce",
    eqakitVersion,
    createdAt: new Date().toISOString(),
    table: published.id,
    settings,
    rows: [row],
    runs: { [row.id]: { answered: explored.counts.finished, failed: row.failed, scored: explored.judged?.express?.nScored ?? 0, dollars: explored.cost?.total.dollars ?? null } },
  };
  await writeFileAtomically(join(dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return { table, markdown };
}
