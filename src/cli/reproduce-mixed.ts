import { resolve } from "node:path";
import { UserError } from "../core/index.js";
import { looksLikeMixedSet, readJsonFile } from "../data/index.js";
import { formatRunCost } from "../report/index.js";
import { MIXED_MODEL_ROW, MIXED_TABLES, MIXED_TABLE_ROWS, TABLE_FILES, mixedRowDir, planMixedTable, reproduceMixedTable, type MixedTableRow, type PublishedTable, type ReproduceMixedOptions } from "../reproduce/index.js";
import { rowsOf, printTable, tableRunner, type ReproduceFlags } from "./reproduce-flags.js";

const SET_HINT = "make a set with eqa generate mixed --seeds 0-9 --out DIR and pass DIR/episodes.json with --episodes (docs/mixed-eqa.md)";

/** The rows to run: `--rows`, else all; the model row only with `--model`, and skipped with a note without it. */
function pickRows(table: PublishedTable, flags: ReproduceFlags): MixedTableRow[] {
  const picked = rowsOf(table.id, flags.rows, MIXED_TABLE_ROWS);
  const rows = picked ?? [...MIXED_TABLE_ROWS];
  if (flags.model !== undefined) {
    if (rows.includes(MIXED_MODEL_ROW) && flags.judge === undefined) throw new UserError(`the ${MIXED_MODEL_ROW} row's answers are in words, which LLM-Match scores: give the judge`, { field: "--judge" }, "add --judge PROVIDER/MODEL (or set EQA_JUDGE)");
    return rows;
  }
  if (picked?.includes(MIXED_MODEL_ROW)) throw new UserError(`the ${MIXED_MODEL_ROW} row runs your model in recall-explore's model form: give it`, { field: "--model" }, "add --model PROVIDER/MODEL and --judge PROVIDER/MODEL, or leave the row out of --rows");
  if (rows.includes(MIXED_MODEL_ROW)) console.error(`note: ${table.id}: no --model, so the ${MIXED_MODEL_ROW} row (your model in recall-explore's model form) is skipped; give --model PROVIDER/MODEL and --judge PROVIDER/MODEL to run it`);
  return rows.filter((r) => r !== MIXED_MODEL_ROW);
}

/** What the Mixed EQA table does not take, refused before anything runs. */
function checkFlags(table: PublishedTable, flags: ReproduceFlags): void {
  if (flags.batch) throw new UserError(`${table.id} sends no batch: the program rows call no model, and the model row's judge calls follow each episode`, { field: "--batch" }, "drop --batch");
  if (flags.env !== "builtin") throw new UserError(`${table.id} runs in the built-in simulator, on each home's present.json`, { field: "--env" }, "drop --env");
  if (flags.published) throw new UserError(`${table.id} is eqakit's own benchmark: it has no published rows to print`, { field: "--published" }, "run its rows: eqa reproduce mixed-eqa-table --episodes SET/episodes.json");
}

/**
 * mixed-eqa-table: the built-in Mixed EQA agents (and with --model the user's VLM in
 * recall-explore's model form) on a set of `eqa generate mixed`, each row a mixed run in
 * rows/<row> as `eqa explore` makes it, then the table.
 */
export const mixedRunner = tableRunner<ReproduceMixedOptions>({
  tables: MIXED_TABLES,
  async prepare(table, session) {
    const flags = session.flags;
    checkFlags(table, flags);
    if (!flags.episodes) throw new UserError(`${table.id} needs a Mixed EQA set`, { field: "--episodes" }, SET_HINT);
    if (!looksLikeMixedSet(await readJsonFile(flags.episodes))) throw new UserError(`${table.id} runs a Mixed EQA set (eqakit-mixed/1), and this is not one`, { file: flags.episodes, field: "--episodes" }, SET_HINT);
    const rows = pickRows(table, flags);
    const modelRow = rows.includes(MIXED_MODEL_ROW);
    if (!modelRow && flags.judge !== undefined) console.error(`note: ${table.id}: the program rows are scored exactly, with no judge: --judge (or EQA_JUDGE) is not used`);
    return {
      table,
      setFile: resolve(flags.episodes),
      rows,
      ...(modelRow ? { model: { spec: session.role("model"), image: { maxSide: flags.imageSize, format: flags.imageFormat } }, judge: { spec: session.role("judge"), mode: flags.mode } } : {}),
      ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
      // eqa explore observes 640×480 unless given
      observation: { width: flags.width ?? 640, height: flags.height ?? 480 },
      outDir: session.outDir,
    };
  },
  async plan(options, plan) {
    return [`${options.table.id}: ${options.rows.length} row(s) in ${options.outDir}`, ...(await planMixedTable(options, plan))];
  },
  async run(options, session) {
    const opened = options.model ? await session.runtime() : undefined;
    const progress = session.progress("reproducing");
    let row = "";
    const result = await reproduceMixedTable(
      {
        ...options,
        ...(opened ? { callSettings: session.callSettings(opened) } : {}),
        onRow: (name, index, total) => (row = `row ${index + 1}/${total} ${name}`),
        onProgress: (done, total, failed) => progress.update(done, total, `${row}${failed > 0 ? ` (${failed} failed)` : ""}`),
      },
      opened?.runtime,
    );
    progress.stop();
    // the program rows call no model: a cost table only when some row did
    printTable(result.markdown, result.summary.cost.roles.length > 0 ? result.summary.cost : undefined, result.runDir, `each row's mixed run in ${options.rows.map(mixedRowDir).join(", ")}`);
    return result.exitCode;
  },
});
