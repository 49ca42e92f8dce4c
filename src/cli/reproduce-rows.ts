import { join } from "node:path";
import { UserError } from "../core/index.js";
import { loadRewardInstances, loadTagQuestions } from "../data/index.js";
import { JUDGE_ROLE, REWARD_MODEL_ROLE, checkBatchSupport, checkPriceFile, type BatchCollector, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { EQA_RM_TABLES, TAG_TABLES, planRewardTable, reproduceRewardTable, TABLE_FILES, answerTagRows, planTagTable, reproduceTagTable, type ReproduceRewardOptions, type ReproduceTagOptions } from "../reproduce/index.js";
import { tagSetEpisodes } from "../generate/index.js";
import { printTable, tableRunner, type ReproduceFlags } from "./reproduce-flags.js";
import type { BatchedRuntime, RunSession } from "./run-session.js";

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
  session: RunSession<ReproduceFlags>,
  judgeSpec: ModelSpec,
  outDir: string,
  answer: (callSettings: Record<string, unknown>, runtime: ModelRuntime, reporting: RowReporting) => Promise<(collector: BatchCollector) => Promise<unknown>>,
  reproduce: (callSettings: Record<string, unknown>, runtime: ModelRuntime, reporting: RowReporting) => Promise<Result>,
): Promise<Result> {
  let progress = session.progress(session.flags.batch ? "answering" : "reproducing");
  let row = "";
  const reporting: RowReporting = {
    onRow: (name, index, total) => (row = `row ${index + 1}/${total} ${name}`),
    onProgress: (stage, done, total, failed) => progress.update(done, total, `${row} ${stage}${failed > 0 ? ` (${failed} failed)` : ""}`),
  };
  let batched: BatchedRuntime | undefined;
  if (session.flags.batch) {
    checkBatchSupport(judgeSpec);
    const live = await session.runtime();
    const collect = await answer(session.callSettings(live), live.runtime, reporting);
    await session.release(progress);
    await session.release(live);
    batched = await session.batch(judgeSpec, JUDGE_ROLE, outDir, collect);
    progress = session.progress("reproducing");
  }
  const opened = batched ?? (await session.runtime());
  const result = await reproduce(session.callSettings(opened), opened.runtime, reporting);
  // the bar stops before the table is printed; on a failure the lifecycle stops and closes both
  await session.release(progress);
  await session.release(opened);
  return result;
}

/**
 * tag-eqa-table-2: each TAG-EQA baseline answers the set (an answer-tag run in
 * rows/<name>/answers) and eqa score-tag scores it (rows/<name>/score), then the table.
 */
export const tagRunner = tableRunner<Omit<ReproduceTagOptions, "onRow" | "onProgress" | "callSettings">>({
  tables: TAG_TABLES,
  async prepare(table, session) {
    const flags = session.flags;
    if (!flags.questions) throw new UserError(`${table.id} needs a TAG-EQA set with observations`, { field: "--questions" }, "make one from simulator recordings (eqa sim record, then eqa generate tag --source sim:DIR) and pass its questions.json with --questions (the paper's set is not published)");
    const model = session.role("model");
    const captioner = session.optionalRole("captioner") ?? model;
    const judgeSpec = session.role("judge");
    const questions = await loadTagQuestions(flags.questions);
    const episodes = await tagSetEpisodes(questions, flags.questions);
    return { table, questions, questionsPath: flags.questions, episodes, ...(flags.baselines ? { baselines: flags.baselines } : {}), model, captioner, judgeSpec, outDir: session.outDir, concurrency: flags.concurrency };
  },
  async plan(options, plan, session) {
    const notes = await planTagTable(options, plan);
    const batchNote = session.flags.batch ? ["with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the baselines' calls stay live"] : [];
    return [`${options.table.id}: ${notes.length - 1} row(s) in ${options.outDir}`, ...notes, ...batchNote];
  },
  async run(options, session) {
    checkPriceFile();
    const result = await runTableRows(
      session,
      options.judgeSpec,
      options.outDir,
      (callSettings, runtime, reporting) => answerTagRows({ ...options, callSettings, ...reporting }, runtime),
      (callSettings, runtime, reporting) => reproduceTagTable({ ...options, callSettings, ...reporting }, runtime),
    );
    printTable(result.markdown, result.summary.cost, result.runDir, `each row's answer-tag and score-tag runs in ${join(result.runDir, "rows")}`);
    return result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
  },
});

/** The eqa-rm tables: one `eqa rm bench` run with the user's model as the reward model. */
export const rewardRunner = tableRunner<Omit<ReproduceRewardOptions, "concurrency" | "callSettings" | "onProgress">>({
  tables: EQA_RM_TABLES,
  async prepare(table, session) {
    const flags = session.flags;
    if (!flags.instances) throw new UserError(`${table.id} needs EQARewardBench-style instances with ground-truth scores`, { field: "--instances" }, "EQARewardBench is not published: build a set with eqa rm build (docs/reward-models.md), then pass it with --instances FILE");
    const spec = session.role("model");
    const file = await loadRewardInstances(flags.instances);
    return { table, file, spec, ...(flags.frames ? { framesRoot: flags.frames } : {}), image: { maxSide: flags.imageSize, format: flags.imageFormat }, maxK: flags.maxK, outDir: session.outDir };
  },
  async plan(sampling, plan, session) {
    const notes = await planRewardTable(sampling, plan);
    const batchNote = session.flags.batch ? ["with --batch the reward model's samples go through the batch API at the batch price (half the listed price at OpenAI and Anthropic)"] : [];
    return [...notes, ...batchNote];
  },
  async run(sampling, session) {
    // --batch: the reward model's samples of the whole table through the batch API first, read from the cache by the benchmark run
    const opened = session.flags.batch ? await session.batch(sampling.spec, REWARD_MODEL_ROLE, sampling.outDir, (collector) => planRewardTable(sampling, collector)) : await session.runtime();
    const progress = session.progress("sampling");
    const result = await reproduceRewardTable(
      {
        ...sampling,
        concurrency: session.flags.concurrency,
        callSettings: session.callSettings(opened),
        onProgress: (done, total, failed) => progress.update(done, total, failed > 0 ? `(${failed} failed)` : ""),
      },
      opened.runtime,
    );
    progress.stop();
    printTable(result.markdown, result.summary.cost, result.runDir, `the benchmark run in ${join(result.runDir, "rows", "bench")}`);
    return result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
  },
});
