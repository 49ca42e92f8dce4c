import { resolve } from "node:path";
import { UserError } from "../core/index.js";
import { looksLikeMixedSet, readJsonFile } from "../data/index.js";
import { checkPriceFile } from "../models/index.js";
import { formatCallPlan, formatRunCost } from "../report/index.js";
import { MIXED_MODEL_ROW, MIXED_TABLE_ROWS, TABLE_FILES, mixedRowDir, planMixedTable, reproduceMixedTable, type MixedTableRow, type PublishedTable, type ReproduceMixedOptions } from "../reproduce/index.js";
import { defaultRunPath } from "../store/index.js";
import { modelCallSettings, openModelRuntime, resolveRoleModel } from "./options.js";
import { openCallPlan } from "./dry-run.js";
import { createProgress } from "./progress.js";
import { rowsOf, type ReproduceFlags } from "./reproduce-flags.js";

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
export async function reproduceMixedCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  checkFlags(table, flags);
  if (!flags.episodes) throw new UserError(`${table.id} needs a Mixed EQA set`, { field: "--episodes" }, SET_HINT);
  if (!looksLikeMixedSet(await readJsonFile(flags.episodes))) throw new UserError(`${table.id} runs a Mixed EQA set (eqakit-mixed/1), and this is not one`, { file: flags.episodes, field: "--episodes" }, SET_HINT);
  const rows = pickRows(table, flags);
  const modelRow = rows.includes(MIXED_MODEL_ROW);
  if (!modelRow && flags.judge !== undefined) console.error(`note: ${table.id}: the program rows are scored exactly, with no judge: --judge (or EQA_JUDGE) is not used`);
  const outDir = flags.out ?? defaultRunPath("reproduce");
  const options: ReproduceMixedOptions = {
    table,
    setFile: resolve(flags.episodes),
    rows,
    ...(modelRow ? { model: { spec: resolveRoleModel(flags, "model"), image: { maxSide: flags.imageSize, format: flags.imageFormat } }, judge: { spec: resolveRoleModel(flags, "judge"), mode: flags.mode } } : {}),
    ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
    // eqa explore observes 640×480 unless given
    observation: { width: flags.width ?? 640, height: flags.height ?? 480 },
    outDir,
  };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planMixedTable(options, plan.plan);
      console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${rows.length} row(s) in ${outDir}`, ...notes], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  if (modelRow) checkPriceFile();
  const opened = modelRow ? await openModelRuntime(flags) : undefined;
  const progress = createProgress("reproducing");
  let row = "";
  try {
    const result = await reproduceMixedTable(
      {
        ...options,
        ...(opened ? { callSettings: modelCallSettings(flags, opened.cachePath) } : {}),
        onRow: (name, index, total) => (row = `row ${index + 1}/${total} ${name}`),
        onProgress: (done, total, failed) => progress.update(done, total, `${row}${failed > 0 ? ` (${failed} failed)` : ""}`),
      },
      opened?.runtime,
    );
    progress.stop();
    console.log(result.markdown);
    // the program rows call no model: a cost table only when some row did
    if (result.summary.cost.roles.length > 0) console.log(`${formatRunCost(result.summary.cost)}\n`);
    console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's mixed run in ${rows.map(mixedRowDir).join(", ")}`);
    return result.exitCode;
  } finally {
    progress.stop();
    opened?.close();
  }
}
