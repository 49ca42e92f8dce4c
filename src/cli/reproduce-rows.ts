import { join } from "node:path";
import { UserError } from "../core/index.js";
import { loadRewardInstances, loadTagQuestions } from "../data/index.js";
import { JUDGE_ROLE, REWARD_MODEL_ROLE, checkBatchSupport, checkPriceFile, type BatchCollector, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { formatCallPlan, formatRunCost } from "../report/index.js";
import { planRewardTable, reproduceRewardTable, TABLE_FILES, type PublishedTable, answerTagRows, planTagTable, reproduceTagTable } from "../reproduce/index.js";
import { tagSetEpisodes } from "../generate/index.js";
import { defaultRunPath } from "../store/index.js";
import { modelCallSettings, openModelRuntime, resolveRoleModel } from "./options.js";
import { openCallPlan } from "./dry-run.js";
import { createProgress } from "./progress.js";
import { runBatch } from "./batch.js";
import type { ReproduceFlags } from "./reproduce-flags.js";

/** A table's progress on one line: the row, then its stage ("row 2/5 socratic answering"). */
export interface RowReporting {
  onRow: (row: string, index: number, total: number) => void;
  onProgress: (stage: string, done: number, total: number, failed: number) => void;
}

/**
 * Runs a table's rows with `reproduce`. With --batch, `answer` first answers every row live and
 * collects the judge's requests of all rows; they go in one batch through the provider's batch
 * API, and `reproduce` then reads the judgements from the cache.
 */
export async function runTableRows<Result>(
  flags: ReproduceFlags,
  judgeSpec: ModelSpec,
  outDir: string,
  answer: (callSettings: ReturnType<typeof modelCallSettings>, runtime: ModelRuntime, reporting: RowReporting) => Promise<(collector: BatchCollector) => Promise<unknown>>,
  reproduce: (callSettings: ReturnType<typeof modelCallSettings>, runtime: ModelRuntime, reporting: RowReporting) => Promise<Result>,
): Promise<Result> {
  let progress = createProgress(flags.batch ? "answering" : "reproducing");
  let row = "";
  const reporting: RowReporting = {
    onRow: (name, index, total) => (row = `row ${index + 1}/${total} ${name}`),
    onProgress: (stage, done, total, failed) => progress.update(done, total, `${row} ${stage}${failed > 0 ? ` (${failed} failed)` : ""}`),
  };
  let batched: Awaited<ReturnType<typeof runBatch>> | undefined;
  if (flags.batch) {
    checkBatchSupport(judgeSpec);
    const live = await openModelRuntime(flags);
    let collect: (collector: BatchCollector) => Promise<unknown>;
    try {
      collect = await answer(modelCallSettings(flags, live.cachePath), live.runtime, reporting);
    } finally {
      progress.stop();
      live.close();
    }
    batched = await runBatch(flags, judgeSpec, JUDGE_ROLE, outDir, collect);
    progress = createProgress("reproducing");
  }
  const opened = batched?.opened ?? (await openModelRuntime(flags));
  try {
    return await reproduce(modelCallSettings(flags, opened.cachePath), opened.runtime, reporting);
  } finally {
    progress.stop();
    opened.close();
  }
}

/**
 * tag-eqa-table-2: each TAG-EQA baseline answers the set (an answer-tag run in
 * rows/<name>/answers) and eqa score-tag scores it (rows/<name>/score), then the table.
 */
export async function reproduceTagCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  if (!flags.questions) throw new UserError(`${table.id} needs a TAG-EQA set with observations`, { field: "--questions" }, "make one from simulator recordings (eqa sim record, then eqa generate tag --source sim:DIR) and pass its questions.json with --questions (the paper's set is not published)");
  const model = resolveRoleModel(flags, "model");
  const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : model;
  const judgeSpec = resolveRoleModel(flags, "judge");
  const questions = await loadTagQuestions(flags.questions);
  const episodes = await tagSetEpisodes(questions, flags.questions);
  const outDir = flags.out ?? defaultRunPath("reproduce");
  const options = { table, questions, questionsPath: flags.questions, episodes, ...(flags.baselines ? { baselines: flags.baselines } : {}), model, captioner, judgeSpec, outDir, concurrency: flags.concurrency };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planTagTable(options, plan.plan);
      const batchNote = flags.batch ? ["with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the baselines' calls stay live"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${notes.length - 1} row(s) in ${outDir}`, ...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  const result = await runTableRows(
    flags,
    judgeSpec,
    outDir,
    (callSettings, runtime, reporting) => answerTagRows({ ...options, callSettings, ...reporting }, runtime),
    (callSettings, runtime, reporting) => reproduceTagTable({ ...options, callSettings, ...reporting }, runtime),
  );
  console.log(result.markdown);
  console.log(`${formatRunCost(result.summary.cost)}\n`);
  console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's answer-tag and score-tag runs in ${join(result.runDir, "rows")}`);
  return result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
}

/** The eqa-rm tables: one `eqa rm bench` run with the user's model as the reward model. */
export async function reproduceRewardCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  if (!flags.instances) throw new UserError(`${table.id} needs EQARewardBench-style instances with ground-truth scores`, { field: "--instances" }, "EQARewardBench is not published: build a set with eqa rm build (docs/reward-models.md), then pass it with --instances FILE");
  const spec = resolveRoleModel(flags, "model");
  const file = await loadRewardInstances(flags.instances);
  const sampling = { table, file, spec, ...(flags.frames ? { framesRoot: flags.frames } : {}), image: { maxSide: flags.imageSize, format: flags.imageFormat }, maxK: flags.maxK, outDir: flags.out ?? defaultRunPath("reproduce") };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planRewardTable(sampling, plan.plan);
      const batchNote = flags.batch ? ["with --batch the reward model's samples go through the batch API at the batch price (half the listed price at OpenAI and Anthropic)"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  // --batch: the reward model's samples of the whole table through the batch API first, read from the cache by the benchmark run
  const batched = flags.batch ? await runBatch(flags, spec, REWARD_MODEL_ROLE, sampling.outDir, (collector) => planRewardTable(sampling, collector)) : undefined;
  const opened = batched?.opened ?? (await openModelRuntime(flags));
  const progress = createProgress("sampling");
  try {
    const result = await reproduceRewardTable(
      {
        ...sampling,
        concurrency: flags.concurrency,
        callSettings: modelCallSettings(flags, opened.cachePath),
        onProgress: (done, total, failed) => progress.update(done, total, failed > 0 ? `(${failed} failed)` : ""),
      },
      opened.runtime,
    );
    progress.stop();
    console.log(result.markdown);
    console.log(`${formatRunCost(result.summary.cost)}\n`);
    console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and the benchmark run in ${join(result.runDir, "rows", "bench")}`);
    return result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
  } finally {
    progress.stop();
    opened.close();
  }
}
