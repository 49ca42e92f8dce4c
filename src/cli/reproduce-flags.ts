/** The flags of `eqa reproduce`, which every table's runner reads. */
import type { LlmMatchMode } from "../eval/index.js";
import { UserError } from "../core/index.js";
import { MIXED_TABLE_ROWS, OPENEQA_FAMILIES, TABLE_FILES, type MixedTableRow, type OpenEqaFamily, type PublishedTable } from "../reproduce/index.js";
import { formatRunCost } from "../report/index.js";
import type { TagBaselineName } from "../generate/index.js";
import type { CallPlan, RunCost } from "../models/index.js";
import type { ModelCallFlags, ImageFlags } from "./model-options.js";
import type { RunSession } from "./run-session.js";
import { wroteLine } from "./lifecycle.js";
import type { DryRunFlags } from "./dry-run.js";
import type { BatchFlags } from "./batch.js";

export interface ReproduceFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ImageFlags {
  instances?: string;
  maxK: number;
  model?: string;
  modelBaseUrl?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  judge?: string;
  judgeBaseUrl?: string;
  benchmark?: string;
  subset?: string;
  frames?: string;
  rows?: ReproduceRow[];
  mode: LlmMatchMode;
  published?: boolean;
  list?: boolean;
  out?: string;
  episodes?: string;
  env: "builtin" | "habitat";
  scenes?: string;
  bridgePython: string;
  prompts: string;
  maxSteps?: number;
  width?: number;
  height?: number;
  questions?: string;
  baselines?: TagBaselineName[];
}

/** Every row `--rows` may name: OpenEQA's families, and the Mixed EQA table's rows. */
export const REPRODUCE_ROWS = [...new Set([...OPENEQA_FAMILIES, ...MIXED_TABLE_ROWS])];
export type ReproduceRow = OpenEqaFamily | MixedTableRow;

/** The rows `--rows` picked of a table whose rows are `choices` (undefined: all); a row of another table is refused. */
export function rowsOf<Row extends ReproduceRow>(tableId: string, rows: readonly ReproduceRow[] | undefined, choices: readonly Row[]): Row[] | undefined {
  if (rows === undefined) return undefined;
  const others = rows.filter((r) => !(choices as readonly string[]).includes(r));
  if (others.length > 0) throw new UserError(`${tableId} has no row ${others.join(", ")}`, { field: "--rows" }, `its rows are ${choices.join(", ")}`);
  return rows as Row[];
}

/**
 * What `eqa reproduce` does for the tables of one paper: `prepare` loads and checks the inputs
 * (shared by the dry run and the run, so the two price and do the same rows), `plan` prices the
 * rows for `--dry-run` (its notes under the table of calls), `run` runs the rows and writes the
 * table, returning the exit code. The lifecycle (cli/lifecycle.ts) opens and closes the rest.
 */
export interface TableRunner<Prepared> {
  /** The tables it runs, by id. */
  readonly tables: readonly string[];
  prepare(table: PublishedTable, session: RunSession<ReproduceFlags>): Promise<Prepared>;
  plan(prepared: Prepared, plan: CallPlan, session: RunSession<ReproduceFlags>): Promise<readonly string[]>;
  run(prepared: Prepared, session: RunSession<ReproduceFlags>): Promise<number>;
}

/** `runner`, typed for a list of runners of different inputs. */
export function tableRunner<Prepared>(runner: TableRunner<Prepared>): TableRunner<unknown> {
  return runner as TableRunner<unknown>;
}

/**
 * A reproduced table as every runner prints it: the Markdown (after a blank line when `blank`), the
 * cost table unless no row called a model, and the files written with `rows` saying where the rows' runs are.
 */
export function printTable(markdown: string, cost: RunCost | undefined, dir: string, rows: string, blank = false): void {
  console.log(`${blank ? "\n" : ""}${markdown}`);
  if (cost) console.log(`${formatRunCost(cost)}\n`);
  console.log(wroteLine(dir, [...Object.values(TABLE_FILES), "summary.json"], { tail: ` and ${rows}` }));
}
