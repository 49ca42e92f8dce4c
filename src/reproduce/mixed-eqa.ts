/**
 * `eqa reproduce mixed-eqa-table`: eqakit's own Mixed EQA benchmark (no published row), the three
 * built-in agents and the user's model on a set made by `eqa generate mixed`.
 *
 * Rows, in this order (or those `--rows` names):
 * - `memory-only`, `explore-only`, `recall-explore`: the built-in agents' program forms, which call
 *   no model and are scored exactly against each question's answer value;
 * - `recall-explore-model`: the recall-then-explore agent's model form, the user's VLM (`--model`)
 *   answering in words from the frames it retrieved and saw, scored by LLM-Match (`--judge`).
 * Each row is a mixed run in `rows/<row>`, made as `eqa explore --episodes SET/episodes.json
 * --agent <agent>` makes it (`exploreMixedSet`), so a killed table resumes row by row and episode
 * by episode, and each row's folder opens in the report and the viewer as that command's does.
 * The table's cells are the row's `summary.json` figures: accuracy per category and overall with
 * its bootstrap standard error, SPL and wasted metres overall, and the dollars of its ledger.
 *
 * Resume: the reproduce folder's manifest holds what decides every row's numbers (the set's hash,
 * the step budget, the observation size); a row's own manifest holds its agent, model and judge,
 * so another model in the same folder is refused by that row. The table files and `summary.json`
 * are written at the end.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../core/index.js";
import { MIXED_CATEGORIES } from "../data/index.js";
import type { MixedAgentName } from "../agents/index.js";
import { exploreMixedSet, planMixedSet, type LlmMatchMode, type MixedEstimate, type MixedSummary } from "../eval/index.js";
import { loadMixedHistory, recallMixedDay } from "../generate/index.js";
import type { ImageOptions } from "../episodes/index.js";
import { JUDGE_ROLE, type CallPlan, type ChatModel, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { RUN_KIND, openRun } from "../store/index.js";
import type { PublishedTable } from "./published.js";
import type { ReproduceResult, ReproduceSummary } from "./openeqa.js";
import { mixedCategoryColumn } from "./own-tables.js";
import { REPRODUCED_TABLE_FORMAT, writeReproduction, type ReproducedTable, type UserCell, type UserRow } from "./table.js";

export const MIXED_TABLES = ["mixed-eqa-table"] as const;
/** The table's rows: the built-in agents' program forms, then recall-explore's model form with the user's model. */
export const MIXED_TABLE_ROWS = ["memory-only", "explore-only", "recall-explore", "recall-explore-model"] as const;
export type MixedTableRow = (typeof MIXED_TABLE_ROWS)[number];
/** The row that needs `--model` (and `--judge`). */
export const MIXED_MODEL_ROW = "recall-explore-model" satisfies MixedTableRow;

/** The built-in agent a row runs. */
function rowAgent(row: MixedTableRow): MixedAgentName {
  return row === MIXED_MODEL_ROW ? "recall-explore" : row;
}

/** A row's mixed run folder, relative to the reproduce run. */
export function mixedRowDir(row: MixedTableRow): string {
  return join("rows", row);
}

export interface ReproduceMixedOptions {
  table: PublishedTable;
  /** The set's `episodes.json` (an absolute path: each row's manifest records it). */
  setFile: string;
  rows: readonly MixedTableRow[];
  /** The model row's VLM and judge; needed when `rows` holds `recall-explore-model`. */
  model?: { spec: ModelSpec; image: ImageOptions };
  judge?: { spec: ModelSpec; mode: LlmMatchMode };
  /** Each agent's most actions in the live environment (`--max-steps`; default `MIXED_MAX_STEPS`). */
  maxSteps?: number;
  observation: { width: number; height: number };
  outDir: string;
  /** How the process calls models (retries, timeouts, cache), recorded with the model row's run. */
  callSettings?: Record<string, unknown>;
  onRow?: (row: MixedTableRow, index: number, total: number) => void;
  onProgress?: (done: number, total: number, failed: number) => void;
}

const PERCEPTION = { history: loadMixedHistory, recall: recallMixedDay };

function rowLabel(row: MixedTableRow, options: Pick<ReproduceMixedOptions, "model" | "judge">): string {
  return row === MIXED_MODEL_ROW ? `recall-explore w/ ${options.model?.spec.name ?? "?"} (judge ${options.judge?.spec.name ?? "?"})` : `${row} (program)`;
}

function cellOf(estimate: MixedEstimate | null | undefined): UserCell | undefined {
  if (!estimate || estimate.n === 0) return undefined;
  return { value: estimate.mean, ci: estimate.stderr, interval: estimate.ci, n: estimate.n };
}

/** A row's cells, each read from its run's summary. */
export function mixedRowCells(summary: Pick<MixedSummary, "metrics" | "cost" | "counts">): Record<string, UserCell> {
  const { accuracy, spl, wastedMetres } = summary.metrics;
  const dollars = summary.cost.total.dollars;
  const cells: Record<string, UserCell | undefined> = {
    ...Object.fromEntries(MIXED_CATEGORIES.map((c) => [mixedCategoryColumn(c), cellOf(accuracy.byCategory[c])])),
    overall: cellOf(accuracy.overall),
    spl: cellOf(spl.overall),
    "wasted-m": cellOf(wastedMetres.overall),
    cost: dollars === null ? undefined : { value: dollars, n: summary.counts.episodes },
  };
  return Object.fromEntries(Object.entries(cells).filter((e): e is [string, UserCell] => e[1] !== undefined));
}

/** What decides every row's numbers: the reproduce folder's manifest holds it. */
function tableSettings(options: ReproduceMixedOptions, setSha256: string): Record<string, unknown> {
  // the set by its content, so that the same set resumes from wherever it is given
  return { table: options.table.id, episodes: { sha256: setSha256 }, maxSteps: options.maxSteps ?? null, observation: options.observation };
}

/** The options of a row's mixed run; `chat` gives the model row its VLM and judge (a runtime's, or a plan's). */
function rowRunOptions(options: ReproduceMixedOptions, row: MixedTableRow, outDir: string, chat?: (spec: ModelSpec, role: string) => ChatModel) {
  const modelRow = row === MIXED_MODEL_ROW && options.model && options.judge && chat;
  return {
    setFile: options.setFile,
    agent: rowAgent(row),
    outDir: join(outDir, mixedRowDir(row)),
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    observation: options.observation,
    ...(modelRow ? { model: { chat: chat(options.model!.spec, "agent"), image: options.model!.image }, judge: { chat: chat(options.judge!.spec, JUDGE_ROLE), mode: options.judge!.mode } } : {}),
  };
}

function checkModelRow(options: ReproduceMixedOptions): void {
  if (options.rows.includes(MIXED_MODEL_ROW) && (!options.model || !options.judge)) throw new Error(`the ${MIXED_MODEL_ROW} row needs the model and the judge`);
}

/**
 * Runs the table's rows (each a mixed run under `rows/<row>`, resumed where it stands), then
 * writes the table (table.json, .md, .csv, .tex) and `summary.json`; `exitCode` is 1 when some
 * row's run had failed episodes (counted wrong in its numbers, as its summary counts them).
 */
export async function reproduceMixedTable(options: ReproduceMixedOptions, runtime?: ModelRuntime): Promise<ReproduceResult & { exitCode: number }> {
  checkModelRow(options);
  const setSha256 = sha256Hex(readFileSync(options.setFile));
  const settings = tableSettings(options, setSha256);
  const run = await openRun({ dir: options.outDir, kind: RUN_KIND.reproduce, settings, parts: options.rows.map(mixedRowDir), inputs: [{ name: "episodes", path: options.setFile, copy: true }] });
  const rows: UserRow[] = [];
  const runs: ReproduceSummary["runs"] = {};
  const failures: string[] = [];
  for (const [index, row] of options.rows.entries()) {
    options.onRow?.(row, index, options.rows.length);
    const modelRow = row === MIXED_MODEL_ROW;
    if (modelRow && !runtime) throw new Error(`the ${MIXED_MODEL_ROW} row needs a model runtime`);
    const chat = runtime && modelRow ? (spec: ModelSpec, role: string) => runtime.model(spec, { role }) : undefined;
    const { summary } = await exploreMixedSet(
      {
        ...rowRunOptions(options, row, run.path, chat),
        ...(modelRow && runtime ? { usage: runtime.usage, ...(options.callSettings ? { settings: options.callSettings } : {}) } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      },
      PERCEPTION,
    );
    // a failed episode is in the row's numbers (wrong, SPL 0), not left out: the row's `failed` counts what is left out
    if (summary.counts.failed > 0) failures.push(`This run's ${row} row: ${summary.counts.failed} episode(s) failed and count as wrong answers with SPL 0 (see ${mixedRowDir(row)}/summary.json).`);
    const section = modelRow ? "Your model (recall-explore's model form, scored by LLM-Match)" : "Built-in agents (programs, scored exactly)";
    rows.push({ id: row, label: rowLabel(row, options), section, runDir: mixedRowDir(row), cells: mixedRowCells(summary), comparable: false, differences: [], failed: 0 });
    runs[row] = { answered: summary.counts.answered, failed: summary.counts.failed, scored: summary.counts.episodes, dollars: summary.cost.total.dollars };
  }
  const notes = [...failures];
  if (options.rows.includes(MIXED_MODEL_ROW)) notes.push(`This run's ${MIXED_MODEL_ROW} row: accuracy is LLM-Match's points (100·(σ−1)/4, judge ${options.judge!.spec.name}, ${options.judge!.mode} mode) and SPL weighs each path by them; the program rows are scored exactly.`);
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: options.table.id, rows, notes };
  const summarySettings = { ...settings, episodes: { file: options.setFile, sha256: setSha256 }, rows: [...options.rows], model: options.model?.spec.name ?? null, judge: options.judge?.spec.name ?? null };
  const { markdown, summary } = await writeReproduction(run.path, options.table, table, summarySettings, runs);
  return { runDir: run.path, table, summary, markdown, exitCode: Object.values(runs).some((r) => r.failed > 0) ? 1 : 0 };
}

/**
 * What `reproduceMixedTable` would call, recorded in `plan` row by row: the program rows call no
 * model (each listed with its episodes still to run); the model row's one request per episode to
 * run, at its most (every day's first frames and blank frames of what it sees now), and the
 * judge's LLM-Match request on a stand-in answer. Calls no model, writes nothing.
 */
export async function planMixedTable(options: Omit<ReproduceMixedOptions, "onRow" | "onProgress" | "callSettings">, plan: CallPlan): Promise<string[]> {
  checkModelRow(options);
  const notes: string[] = [];
  for (const row of options.rows) {
    await plan.forRow(row, async () => {
      const planned = await planMixedSet(rowRunOptions(options, row, options.outDir, (spec, role) => plan.model(spec, role, role === JUDGE_ROLE ? "Your mark: 3" : "A: an answer")), PERCEPTION);
      const calls = row === MIXED_MODEL_ROW ? "one model call and one judge call each" : "no model call (the program form)";
      notes.push(`row ${row}: ${planned.episodes} episode(s), ${planned.reused} already run in ${mixedRowDir(row)}, ${planned.pending} to run, ${calls}`);
    });
  }
  if (options.rows.includes(MIXED_MODEL_ROW)) notes.push(`the ${MIXED_MODEL_ROW} row's requests are priced at their most: every day's first frames as the history it retrieves, and blank ${options.observation.width}×${options.observation.height} frames as what it sees now; the judge's LLM-Match request is built with a stand-in answer`);
  return notes;
}
