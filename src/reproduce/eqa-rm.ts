/**
 * `eqa reproduce eqa-rm-table-1` and `eqa-rm-table-2`: the user's vision-language model as a
 * reward model on an EQARewardBench-style instance file (seed 004, Section 5.1), at the paper's
 * τ = 2 and test-time scaling K = 32, laid out beside the paper's rows.
 *
 * One `eqa rm bench` run in `rows/bench/` samples K evaluations per instance once; two rows come
 * from it: the model as a judge (K = 1, the paper's "VLM-as-a-Judge") and the same model with
 * test-time scaling (the first K samples by vote, as the paper's "w/ test scaling (K=32)").
 * Table 1: accuracy within τ and RMSE per environment (HM3D, ScanNet) and overall (the mean of the
 * environments, as the paper computes it). Table 2: accuracy per question category on the
 * ScanNet instances only, as the paper's caption says. EQARewardBench itself is not published,
 * so no row is comparable with the paper's; the notes say so, with any other difference (K, τ).
 * Resume is `eqa rm bench`'s: samples already in `rows/bench/evaluations.jsonl` are not asked again.
 * `--dry-run` plans the same run's requests (planRewardTable); `--batch` is not offered, as
 * `eqa rm bench` sends its samples live.
 */
import { join } from "node:path";
import { OPENEQA_CATEGORIES, UserError } from "../core/index.js";
import type { RewardInstance, RewardInstanceFile } from "../data/index.js";
import type { ImageOptions } from "../episodes/index.js";
import { REWARD_MODEL_ROLE, type CallPlan, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { TTS_PARAMS, benchRewardModel, planRewardScores, type RewardMetrics } from "../reward/index.js";
import { RUN_KIND, openRun } from "../store/index.js";
import type { ReproduceResult } from "./openeqa.js";
import type { PublishedTable } from "./published.js";
import { REPRODUCED_TABLE_FORMAT, writeReproduction, type ReproducedTable, type UserCell, type UserRow } from "./table.js";

export const EQA_RM_TABLES = ["eqa-rm-table-1", "eqa-rm-table-2"] as const;
/** The paper's accuracy tolerance τ and test-time scaling K (Section 5.1, Table 1). */
export const EQA_RM_TOLERANCE = 2;
export const EQA_RM_K = 32;

export interface ReproduceRewardOptions {
  table: PublishedTable;
  file: RewardInstanceFile;
  spec: ModelSpec;
  framesRoot?: string;
  image?: ImageOptions;
  /** Test-time scaling's K (default 32, the paper's). */
  maxK?: number;
  outDir: string;
  concurrency?: number;
  callSettings?: Record<string, unknown>;
  onProgress?: (done: number, total: number, failed: number) => void;
}

function checkTable(table: PublishedTable): void {
  if (!(EQA_RM_TABLES as readonly string[]).includes(table.id)) throw new Error(`reproduceRewardTable runs ${EQA_RM_TABLES.join(", ")}, not ${table.id}`);
}

/** A table's cells from reward-model metrics: environments and overall (Table 1) or categories (Table 2); no ± (the paper prints none). */
function rewardCells(tableId: string, metrics: RewardMetrics): Record<string, UserCell> {
  const cells: Record<string, UserCell> = {};
  const put = (id: string, estimate: { value: number; ci: [number, number] }, n: number): void => {
    if (n > 0 && Number.isFinite(estimate.value)) cells[id] = { value: estimate.value, n, ...(estimate.ci.every(Number.isFinite) ? { interval: estimate.ci } : {}) };
  };
  if (tableId === "eqa-rm-table-1") {
    for (const env of ["hm3d", "scannet"]) {
      const group = metrics.environments[env];
      if (!group) continue;
      put(`${env}-acc`, group.accuracy, group.n);
      put(`${env}-rmse`, group.rmse, group.n);
    }
    // the paper's Overall is the mean of its two environments: only shown when both are there
    if (metrics.environments.hm3d && metrics.environments.scannet) {
      put("overall-acc", metrics.overall.accuracy, metrics.overall.n);
      put("overall-rmse", metrics.overall.rmse, metrics.overall.n);
    }
  } else {
    for (const category of OPENEQA_CATEGORIES) {
      const group = metrics.categories[category];
      if (group) put(category.replace(/ /g, "-"), group.accuracy, group.n);
    }
  }
  return cells;
}

/** The table's instances: all of them for Table 1, the ScanNet ones for Table 2 (the ScanNet part of the benchmark alone). */
function tableInstances(options: Pick<ReproduceRewardOptions, "table" | "file">): RewardInstance[] {
  checkTable(options.table);
  const instances = options.table.id === "eqa-rm-table-2" ? options.file.instances.filter((i) => i.source === "scannet") : options.file.instances;
  if (instances.length === 0) throw new UserError("holds no ScanNet instance, and Table 2 is the ScanNet part of EQARewardBench", { file: options.file.path, field: "source" }, "give instances whose episode_history is scannet-v0/… (or whose source is scannet)");
  return instances;
}

/**
 * `--dry-run` of the table: the reward model's requests of the one `eqa rm bench` run in
 * `rows/bench/` (K samples per instance at the table's K; the K = 1 row is read from the first
 * of them), leaving out the instances that folder already holds, as `eqa rm bench --dry-run`
 * plans them. Calls no model and writes nothing. Returns the notes printed beside the plan.
 */
export async function planRewardTable(options: Omit<ReproduceRewardOptions, "concurrency" | "callSettings" | "onProgress">, plan: CallPlan): Promise<string[]> {
  const instances = tableInstances(options);
  const maxK = options.maxK ?? EQA_RM_K;
  const benchDir = join(options.outDir, "rows", "bench");
  // one benchmark run gives both rows: its calls are the "bench" row's, as in summary.json's runs
  const planned = await plan.forRow("bench", () => planRewardScores({ file: options.file, instances, model: { spec: options.spec }, samples: maxK, params: TTS_PARAMS, ...(options.framesRoot ? { framesRoot: options.framesRoot } : {}), ...(options.image ? { image: options.image } : {}), outDir: benchDir }, plan));
  const rows = maxK > 1 ? `2 row(s) from one set of samples: ${options.spec.name} as a judge (K = 1, each instance's first sample) and with test-time scaling (K = ${maxK})` : `1 row: ${options.spec.name} as a judge (K = 1)`;
  return [
    `${options.table.id}: ${rows}, in ${options.outDir}`,
    `${planned.instances} instance(s)${options.table.id === "eqa-rm-table-2" ? " (the ScanNet ones)" : ""}: ${planned.reused} already sampled in ${benchDir}, ${planned.pending} to sample, ${maxK} sample(s) each (${planned.calls} call(s))`,
  ];
}

/** Runs the reward-model benchmark for the table and writes the table with the paper's rows. */
export async function reproduceRewardTable(options: ReproduceRewardOptions, runtime: ModelRuntime): Promise<ReproduceResult> {
  const instances = tableInstances(options);
  const maxK = options.maxK ?? EQA_RM_K;
  const settings = { table: options.table.id, model: options.spec.name, instances: options.file.sha256, maxK, tolerance: EQA_RM_TOLERANCE };
  const run = await openRun({ dir: options.outDir, kind: RUN_KIND.reproduce, settings, parts: [join("rows", "bench")] });
  const benchDir = join(run.path, "rows", "bench");
  const result = await benchRewardModel({
    file: options.file,
    instances,
    model: runtime.model(options.spec, { role: REWARD_MODEL_ROLE }),
    ks: maxK === 1 ? [1] : [1, maxK],
    aggregate: "vote",
    params: TTS_PARAMS,
    ...(options.framesRoot ? { framesRoot: options.framesRoot } : {}),
    ...(options.image ? { image: options.image } : {}),
    outDir: benchDir,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    tolerance: EQA_RM_TOLERANCE,
    usage: runtime.usage,
    settings: options.callSettings ?? {},
    ...(options.onProgress ? { onProgress: (p: { done: number; total: number; failed: number }) => options.onProgress!(p.done, p.total, p.failed) } : {}),
  });
  const differences = [`${instances.length} instance(s) of ${options.file.path}, not EQARewardBench (not published)`, ...(maxK !== EQA_RM_K ? [`test-time scaling K = ${maxK}, the paper's was ${EQA_RM_K}`] : [])];
  const unscored = result.summary.counts.instances - result.summary.counts.withGroundTruth;
  // a row's failed instances: those with a ground truth whose first K samples gave no score
  const rows: UserRow[] = [
    { id: "judge", label: options.spec.name, section: "VLM-as-a-Judge", runDir: join("rows", "bench"), cells: rewardCells(options.table.id, result.summary.scaling.vote["1"]!), comparable: false, differences, failed: result.summary.scaling.vote["1"]!.failed },
  ];
  if (maxK > 1) {
    const scaled = result.summary.scaling.vote[String(maxK)]!;
    rows.push({ id: `k-${maxK}`, label: `${options.spec.name} w/ test scaling (K=${maxK})`, section: "Test-time scaling (vote)", runDir: join("rows", "bench"), cells: rewardCells(options.table.id, scaled), comparable: false, differences, failed: scaled.failed });
  }
  const notes = [`This run's rows score with eqakit's EQA-RM evaluator prompt at the paper's τ = ${EQA_RM_TOLERANCE} (eqa rm bench); ${unscored > 0 ? `${unscored} instance(s) without a ground-truth score are left out` : "every instance has a ground-truth score"}.`];
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: options.table.id, rows, notes };
  const runs = { bench: { answered: result.summary.counts.instances, failed: result.summary.counts.failedSamples, scored: result.summary.counts.withGroundTruth, dollars: result.summary.cost.total.dollars } };
  const { markdown, summary } = await writeReproduction(run.path, options.table, table, settings, runs);
  return { runDir: run.path, table, summary, markdown };
}
