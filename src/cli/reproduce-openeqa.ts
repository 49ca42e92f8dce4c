import { join } from "node:path";
import { UserError } from "../core/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { JUDGE_ROLE, checkPriceFile, type ModelSpec } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { answerOpenEqaRows, OPENEQA_A_EQA_TABLES, OPENEQA_EM_TABLES, OPENEQA_FAMILIES, TABLE_FILES, planOpenEqaTable, reproduceOpenEqaTable, openOpenEqaRun, aEqaNotes, aEqaRowDir, aEqaWithoutGuessDir, aEqaQuestionSet, scoreAEqaWithoutGuess, withoutGuessCells, aEqaRun, aEqaRunId, aEqaSettings, planAEqaRows, writeAEqaTable, type AEqaSetup, type OpenEqaFamily, type ReproduceOpenEqaOptions, type PublishedTable } from "../reproduce/index.js";
import { RUN_KIND, openRun } from "../store/index.js";
import { rowsOf, printTable, tableRunner, type ReproduceFlags } from "./reproduce-flags.js";
import type { RunSession } from "./run-session.js";
import { runTableRows } from "./reproduce-rows.js";
import { loadAEqaSetup, aEqaExploreSettings, aEqaPlanOptions, runAEqaRows, A_EQA_EPISODES_HINT } from "./reproduce-aeqa.js";

interface OpenEqaPrepared {
  options: ReproduceOpenEqaOptions;
  families: readonly OpenEqaFamily[];
  judgeSpec: ModelSpec;
  /** --episodes: the A-EQA columns' setup. */
  active?: AEqaSetup;
}

/** OpenEQA's EM-EQA tables (and with --episodes the A-EQA columns of Tables II and III): each family's row, then the table. */
export const openEqaRunner = tableRunner<OpenEqaPrepared>({
  tables: OPENEQA_EM_TABLES,
  async prepare(table, session) {
    const flags = session.flags;
    const model = session.role("model");
    const captioner = session.optionalRole("captioner");
    const judgeSpec = session.role("judge");
    const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
    // --episodes: the A-EQA columns (Tables II and III) run too, each family's row an explore run in rows/a-eqa-<family>
    const picked = rowsOf(table.id, flags.rows, OPENEQA_FAMILIES);
    const families = picked ?? OPENEQA_FAMILIES;
    const active = flags.episodes ? await loadAEqaSetup(table, flags, model, captioner, judgeSpec) : undefined;
    const options: ReproduceOpenEqaOptions = {
      ...(active ? { aEqa: { settings: aEqaSettings(active, aEqaExploreSettings(flags)), parts: families.flatMap((f) => [aEqaRowDir(f), ...(table.id === "openeqa-table-3" && f !== "blind" ? [aEqaWithoutGuessDir(f)] : [])]) } } : {}),
      table,
      selection,
      ...(flags.frames ? { framesRoot: flags.frames } : {}),
      ...(picked ? { families: picked } : {}),
      model,
      ...(captioner ? { captioner } : {}),
      judgeSpec,
      mode: flags.mode,
      outDir: session.outDir,
      concurrency: flags.concurrency,
    };
    return { options, families, judgeSpec, ...(active ? { active } : {}) };
  },
  async plan({ options, families, active }, plan, session) {
    // only the judge's calls would go through a batch: the table is priced live, the note says what --batch saves
    const notes = [...(await planOpenEqaTable(options, plan)), ...(active ? await planAEqaRows(active, families, { ...aEqaPlanOptions(session.flags, options.outDir), withoutGuess: options.table.id === "openeqa-table-3" }, plan) : [])];
    const batchNote = session.flags.batch ? ["with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the agents' calls stay live"] : [];
    return [`${options.table.id}: ${families.length} row(s) in ${options.outDir}`, ...notes, ...batchNote];
  },
  async run({ options, families, judgeSpec, active }, session) {
    checkPriceFile();
    const aEqaCode = active && options.aEqa ? await runAEqaColumns(options, active, families, session) : 0;
    const result = await runTableRows(
      session,
      judgeSpec,
      options.outDir,
      (callSettings, runtime, reporting) => answerOpenEqaRows({ ...options, callSettings, ...reporting }, runtime),
      (callSettings, runtime, reporting) => reproduceOpenEqaTable({ ...options, callSettings, ...reporting }, runtime),
    );
    printTable(result.markdown, result.summary.cost, result.runDir, `each row's run in ${join(result.runDir, "rows")}`);
    return aEqaCode !== 0 || result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
  },
});

/** The A-EQA columns of Tables II and III: each family's explore row, Table III's w/o-guess judging, their cells set in `options.aEqa`; the rows' exit code. */
async function runAEqaColumns(options: ReproduceOpenEqaOptions, active: AEqaSetup, families: readonly OpenEqaFamily[], session: RunSession<ReproduceFlags>): Promise<number> {
  const { flags, outDir } = session;
  const tableId = options.table.id;
  // the run folder is opened (and a folder of other settings refused) before the A-EQA rows write into it
  await openOpenEqaRun(options);
  const explored = await runAEqaRows(session, active, families, tableId, outDir, flags.batch === true);
  if (tableId === "openeqa-table-3") {
    // Table III's A-EQA (w/o guess): each row's own answers where force-a-guess replaced them, judged as the EM-EQA ones are
    const opened = await session.runtime();
    const judging = session.progress("judging w/o guess");
    const judge = opened.runtime.model(active.judgeSpec, { role: JUDGE_ROLE });
    for (const r of explored.rows) {
      if (r.family === "blind") continue;
      const scored = await scoreAEqaWithoutGuess(active, join(outDir, aEqaRowDir(r.family)), judge, opened.runtime, { concurrency: flags.concurrency, callSettings: session.callSettings(opened), onProgress: (done, total, failed) => judging.update(done, total, `a-eqa-${r.family}${failed > 0 ? ` (${failed} failed)` : ""}`) });
      r.row = withoutGuessCells(r.row, scored);
    }
    await session.release(judging);
    await session.release(opened);
  }
  options.aEqa = { ...options.aEqa!, rows: explored.rows.map((r) => r.row), notes: aEqaNotes(tableId, explored.rows.map((r) => r.measures), aEqaQuestionSet(active.episodes)), runs: Object.fromEntries(explored.rows.map((r) => [aEqaRunId(r.family), aEqaRun(r)])) };
  return explored.code;
}

interface AEqaPrepared {
  table: PublishedTable;
  setup: AEqaSetup;
  families: readonly OpenEqaFamily[];
  settings: Record<string, unknown>;
}

/**
 * openeqa-table-5 (A-EQA by category): each family's A-EQA row (`runAEqaRows`), then the table
 * beside the paper's rows. `--dry-run` prices the rows as `eqa explore --dry-run` does.
 */
export const aEqaRunner = tableRunner<AEqaPrepared>({
  tables: OPENEQA_A_EQA_TABLES,
  async prepare(table, session) {
    const flags = session.flags;
    if (!flags.episodes) throw new UserError(`${table.id} needs the A-EQA episodes the rows explore`, { field: "--episodes" }, A_EQA_EPISODES_HINT);
    const model = session.role("model");
    const captioner = session.optionalRole("captioner");
    const judgeSpec = session.role("judge");
    const setup = await loadAEqaSetup(table, flags, model, captioner, judgeSpec);
    const families = rowsOf(table.id, flags.rows, OPENEQA_FAMILIES) ?? OPENEQA_FAMILIES;
    const settings = { table: table.id, model: model.name, captioner: captioner?.name ?? null, judge: judgeSpec.name, mode: flags.mode, aEqa: aEqaSettings(setup, aEqaExploreSettings(flags)) };
    return { table, setup, families, settings };
  },
  async plan({ table, setup, families }, plan, session) {
    const { flags, outDir } = session;
    const notes = await planAEqaRows(setup, families, aEqaPlanOptions(flags, outDir), plan);
    const batchNote = flags.batch ? ["with --batch each row's judge calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic) once it has explored; the explorer's and agents' calls stay live"] : [];
    return [`${table.id}: ${families.length} A-EQA row(s) on ${setup.episodes.length} episode(s) (${flags.env === "builtin" ? "the built-in homes" : "HM3D"}) in ${outDir}`, ...notes, ...batchNote];
  },
  async run({ table, setup, families, settings }, session) {
    checkPriceFile();
    const run = await openRun({ dir: session.outDir, kind: RUN_KIND.reproduce, settings, parts: families.map(aEqaRowDir) });
    const explored = await runAEqaRows(session, setup, families, table.id, run.path, session.flags.batch === true);
    const written = await writeAEqaTable(table, run, explored.rows, setup, settings);
    printTable(written.markdown, written.summary.cost, run.path, `each row's explore run in ${join(run.path, "rows")}`, true);
    return explored.code !== 0 || explored.rows.some((r) => r.row.failed > 0) ? 1 : 0;
  },
});
