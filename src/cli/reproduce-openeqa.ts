import { join } from "node:path";
import { UserError } from "../core/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection } from "../data/index.js";
import { JUDGE_ROLE, checkPriceFile } from "../models/index.js";
import { formatCallPlan, formatRunCost } from "../report/index.js";
import { answerOpenEqaRows, OPENEQA_FAMILIES, TABLE_FILES, planOpenEqaTable, reproduceOpenEqaTable, openOpenEqaRun, aEqaNotes, aEqaRowDir, aEqaWithoutGuessDir, aEqaQuestionSet, scoreAEqaWithoutGuess, withoutGuessCells, aEqaRun, aEqaRunId, aEqaSettings, planAEqaRows, writeAEqaTable, type ReproduceOpenEqaOptions, type PublishedTable } from "../reproduce/index.js";
import { RUN_KIND, defaultRunPath, openRun } from "../store/index.js";
import { modelCallSettings, openModelRuntime, resolveRoleModel } from "./options.js";
import { openCallPlan } from "./dry-run.js";
import { createProgress } from "./progress.js";
import { rowsOf, type ReproduceFlags } from "./reproduce-flags.js";
import { runTableRows } from "./reproduce-rows.js";
import { loadAEqaSetup, aEqaExploreSettings, aEqaPlanOptions, runAEqaRows, A_EQA_EPISODES_HINT } from "./reproduce-aeqa.js";

/** OpenEQA's EM-EQA tables (and with --episodes the A-EQA columns of Tables II and III): each family's row, then the table. */
export async function reproduceOpenEqaCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  const model = resolveRoleModel(flags, "model");
  const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
  const judgeSpec = resolveRoleModel(flags, "judge");
  const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
  const outDir = flags.out ?? defaultRunPath("reproduce");
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
    outDir,
    concurrency: flags.concurrency,
  };
  if (flags.dryRun) {
    // only the judge's calls would go through a batch: the table is priced live, the note says what --batch saves
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = [...(await planOpenEqaTable(options, plan.plan)), ...(active ? await planAEqaRows(active, families, { ...aEqaPlanOptions(flags, outDir), withoutGuess: table.id === "openeqa-table-3" }, plan.plan) : [])];
      const batchNote = flags.batch ? ["with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the agents' calls stay live"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${families.length} row(s) in ${outDir}`, ...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  let aEqaCode = 0;
  if (active && options.aEqa) {
    // the run folder is opened (and a folder of other settings refused) before the A-EQA rows write into it
    await openOpenEqaRun(options);
    const explored = await runAEqaRows(flags, active, families, table.id, outDir, flags.batch === true);
    aEqaCode = explored.code;
    if (table.id === "openeqa-table-3") {
      // Table III's A-EQA (w/o guess): each row's own answers where force-a-guess replaced them, judged as the EM-EQA ones are
      const opened = await openModelRuntime(flags);
      const judging = createProgress("judging w/o guess");
      try {
        const judge = opened.runtime.model(judgeSpec, { role: JUDGE_ROLE });
        for (const r of explored.rows) {
          if (r.family === "blind") continue;
          const scored = await scoreAEqaWithoutGuess(active, join(outDir, aEqaRowDir(r.family)), judge, opened.runtime, { concurrency: flags.concurrency, callSettings: modelCallSettings(flags, opened.cachePath), onProgress: (done, total, failed) => judging.update(done, total, `a-eqa-${r.family}${failed > 0 ? ` (${failed} failed)` : ""}`) });
          r.row = withoutGuessCells(r.row, scored);
        }
      } finally {
        judging.stop();
        opened.close();
      }
    }
    options.aEqa = { ...options.aEqa, rows: explored.rows.map((r) => r.row), notes: aEqaNotes(table.id, explored.rows.map((r) => r.measures), aEqaQuestionSet(active.episodes)), runs: Object.fromEntries(explored.rows.map((r) => [aEqaRunId(r.family), aEqaRun(r)])) };
  }
  const result = await runTableRows(
    flags,
    judgeSpec,
    outDir,
    (callSettings, runtime, reporting) => answerOpenEqaRows({ ...options, callSettings, ...reporting }, runtime),
    (callSettings, runtime, reporting) => reproduceOpenEqaTable({ ...options, callSettings, ...reporting }, runtime),
  );
  console.log(result.markdown);
  console.log(`${formatRunCost(result.summary.cost)}\n`);
  console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's run in ${join(result.runDir, "rows")}`);
  return aEqaCode !== 0 || result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
}

/**
 * openeqa-table-5 (A-EQA by category): each family's A-EQA row (`runAEqaRows`), then the table
 * beside the paper's rows. `--dry-run` prices the rows as `eqa explore --dry-run` does.
 */
export async function reproduceAEqaCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  if (!flags.episodes) throw new UserError(`${table.id} needs the A-EQA episodes the rows explore`, { field: "--episodes" }, A_EQA_EPISODES_HINT);
  const model = resolveRoleModel(flags, "model");
  const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
  const judgeSpec = resolveRoleModel(flags, "judge");
  const setup = await loadAEqaSetup(table, flags, model, captioner, judgeSpec);
  const families = rowsOf(table.id, flags.rows, OPENEQA_FAMILIES) ?? OPENEQA_FAMILIES;
  const outDir = flags.out ?? defaultRunPath("reproduce");
  const settings = { table: table.id, model: model.name, captioner: captioner?.name ?? null, judge: judgeSpec.name, mode: flags.mode, aEqa: aEqaSettings(setup, aEqaExploreSettings(flags)) };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planAEqaRows(setup, families, aEqaPlanOptions(flags, outDir), plan.plan);
      const batchNote = flags.batch ? ["with --batch each row's judge calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic) once it has explored; the explorer's and agents' calls stay live"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${families.length} A-EQA row(s) on ${setup.episodes.length} episode(s) (${flags.env === "builtin" ? "the built-in homes" : "HM3D"}) in ${outDir}`, ...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  const run = await openRun({ dir: outDir, kind: RUN_KIND.reproduce, settings, parts: families.map(aEqaRowDir) });
  const explored = await runAEqaRows(flags, setup, families, table.id, run.path, flags.batch === true);
  const written = await writeAEqaTable(table, run, explored.rows, setup, settings);
  console.log(`\n${written.markdown}`);
  console.log(`${formatRunCost(written.summary.cost)}\n`);
  console.log(`wrote ${run.path}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's explore run in ${join(run.path, "rows")}`);
  return explored.code !== 0 || explored.rows.some((r) => r.row.failed > 0) ? 1 : 0;
}
