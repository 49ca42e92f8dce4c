/** The flags of `eqa reproduce`, which every table's runner reads. */
import type { LlmMatchMode } from "../eval/index.js";
import { UserError } from "../core/index.js";
import { MIXED_TABLE_ROWS, OPENEQA_FAMILIES, type MixedTableRow, type OpenEqaFamily } from "../reproduce/index.js";
import type { TagBaselineName } from "../generate/index.js";
import type { ImageFlags, ModelCallFlags } from "./options.js";
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
