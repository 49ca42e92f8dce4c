import { join, resolve } from "node:path";
import { z } from "zod";
import { eqakitVersion, UserError } from "../core/index.js";
import type { RewardInstance, RewardInstanceFile } from "../data/index.js";
import { FrameCache, type EpisodeFrameImage, type ImageOptions } from "../episodes/index.js";
import type { BootstrapOptions } from "../eval/index.js";
import { rewardModelMetrics, type RewardMetrics, type ScoredInstance } from "./metrics.js";
import { REWARD_MODEL_ROLE, describeModel, emptyUsage, usageTotalsSchema, type CallPlan, sumUsage, runModelBatch, type ChatModel, type GenerationParams, type ModelRef, type RunCost, type UsageLedger, type UsageTotals, ledgerCost, readCallLedger, withCallContext, type ModelSpec } from "../models/index.js";
import { RunDirectory, openRun, readJsonl, recordParser, resultSettings, type RunContract, RUN_KIND, summaryHead, type RunSummaryHead } from "../store/index.js";
import { aggregateScores, type Aggregation } from "./aggregate.js";
import { TTS_PARAMS, evaluationInputKey, imageParts, sampleEvaluations, type RmSample } from "./evaluate.js";
import { KeyframeLoader } from "./keyframes.js";
import { RM_PROMPTS, rmPromptHashes } from "./prompts.js";

export const EVALUATIONS_FILE = "evaluations.jsonl";
export const RM_SCORES_FILE = "scores.json";
export const RM_SUMMARY_FILE = "summary.json";

/** What `eqa rm score` appends per instance: every sample with its raw reply, and the aggregates. */
export interface RmEvaluationRecord {
  id: string;
  inputKey: string;
  model: string;
  source: string;
  category?: string;
  groundTruthScore: number | null;
  keyframes: number[];
  images: string[];
  samples: RmSample[];
  /** The aggregated score by the run's method; null when no sample gave a score (a failed instance). */
  score: number | null;
  aggregates: Record<Aggregation, number | null>;
  usage: UsageTotals;
  finishedAt: string;
}

/** One line of a reward-model run's evaluations.jsonl, as `scoreRewardInstances` and `benchRewardModel` write it. */
export const rmEvaluationSchema = z.looseObject({
  id: z.string(),
  inputKey: z.string(),
  model: z.string(),
  source: z.string(),
  category: z.string().optional(),
  groundTruthScore: z.number().nullable(),
  keyframes: z.array(z.number()),
  images: z.array(z.string()),
  samples: z.custom<RmSample[]>(Array.isArray),
  score: z.number().nullable(),
  aggregates: z.custom<Record<Aggregation, number | null>>((v) => typeof v === "object" && v !== null && !Array.isArray(v)),
  usage: usageTotalsSchema,
  finishedAt: z.string(),
}) satisfies z.ZodType<RmEvaluationRecord>;

export interface RmScoreProgress {
  done: number;
  total: number;
  failed: number;
  reused: number;
}

export interface RmScoreOptions {
  file: RewardInstanceFile;
  instances?: RewardInstance[];
  /** The reward model as judge (it carries its spec). */
  model: ChatModel;
  /** K, the samples per instance (1 by default). */
  samples?: number;
  aggregate?: Aggregation;
  params?: GenerationParams;
  framesRoot?: string;
  image?: ImageOptions;
  outDir: string;
  concurrency?: number;
  tolerance?: number;
  bootstrap?: BootstrapOptions;
  usage?: UsageLedger;
  settings?: Record<string, unknown>;
  /** The kind of run folder (`rm-score`; `rm-bench` for `eqa rm bench`) and settings of its own beside the sampling's, for its manifest. */
  runKind?: typeof RUN_KIND["rm-score"] | typeof RUN_KIND["rm-bench"];
  runSettings?: Record<string, unknown>;
  onProgress?: (progress: RmScoreProgress) => void;
}

/** What a reward-model run's contract, configuration and dry run read: its options with the model known by its spec alone. */
export type RmScoreSetup = Omit<RmScoreOptions, "model" | "usage" | "onProgress"> & { model: ModelRef };

/**
 * The run folder of `eqa rm score` (or `eqa rm bench`) as its manifest declares it: the reward
 * model, K, the aggregation, the generation parameters, the prompts' hashes, the image options and
 * the tolerance decide the results; the instance file (copied in when small) and the frames are inputs.
 */
export function rmRunContract(options: RmScoreSetup): RunContract {
  return {
    dir: options.outDir,
    kind: options.runKind ?? RUN_KIND["rm-score"],
    settings: resultSettings({
      model: describeModel(options.model.spec),
      samples: options.samples ?? 1,
      aggregate: options.aggregate ?? "vote",
      parameters: options.params ?? TTS_PARAMS,
      prompts: rmPromptHashes([RM_PROMPTS.evaluator]),
      image: options.image ?? {},
      tolerance: options.tolerance ?? 2,
      ...options.runSettings,
      ...options.settings,
    }),
    inputs: [{ name: "instances", path: options.file.path, copy: true }, ...(options.framesRoot ? [{ name: "frames", path: options.framesRoot }] : [])],
    items: { noun: "instance", input: "instances", flag: "--instances", file: options.file.path, list: options.file.instances.map((i) => ({ id: i.id, content: i })) },
  };
}

export interface RmRunResult {
  run: RunDirectory;
  records: RmEvaluationRecord[];
  reused: number;
  wallTimeMs: number;
}

/**
 * Samples K evaluations of every instance with the generative reward model and appends one
 * record per instance as it finishes. Run again in the same directory, it asks only for the
 * instances not done with the same inputs (a sample whose call failed is asked again).
 */
export async function sampleRewardModel(options: RmScoreOptions): Promise<RmRunResult> {
  const started = performance.now();
  const instances = options.instances ?? options.file.instances;
  const k = options.samples ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new UserError(`the number of samples must be a whole number of at least 1, got ${k}`, { field: "--samples" });
  const params = options.params ?? TTS_PARAMS;
  const aggregate = options.aggregate ?? "vote";
  // the keyframes are prepared in memory only: a dry run leaves no prepared frame on disk either
  const loader = new KeyframeLoader({ instanceFile: options.file.path, ...(options.framesRoot !== undefined ? { framesRoot: options.framesRoot } : {}) }, options.image, new FrameCache({ dir: false }));
  for (const instance of instances) loader.episodePath(instance); // every episode is found before any call
  const run = await openRun(rmRunContract(options));
  options.usage?.attach(run.path);
  const earlier = new Map<string, RmEvaluationRecord>();
  for (const record of run.readRecords(EVALUATIONS_FILE, recordParser(rmEvaluationSchema)).records) earlier.set(record.id, record);

  const records = new Map<string, RmEvaluationRecord>();
  const progress: RmScoreProgress = { done: 0, total: instances.length, failed: 0, reused: 0 };
  const appender = run.appender(EVALUATIONS_FILE);
  const indices = Array.from({ length: k }, (_, i) => i);
  try {
    await runModelBatch<RewardInstance, RmEvaluationRecord | null>({
      items: instances,
      concurrency: options.concurrency ?? 8,
      work: async (instance) => {
        const { keyframes, images, inputKey } = await instanceInputs(loader, instance, options.model.name, params, k, options.image);
        const before = earlier.get(instance.id);
        if (before && reusable(before, inputKey)) {
          progress.reused++;
          records.set(instance.id, before);
          return null;
        }
        const usage = emptyUsage();
        const samples = await sampleEvaluations(options.model, instance, imageParts(images), params, indices, usage);
        const scores = samples.map((s) => s.score);
        const aggregates = { vote: aggregateScores(scores, "vote"), mean: aggregateScores(scores, "mean") };
        return {
          id: instance.id,
          inputKey,
          model: options.model.name,
          source: instance.source,
          ...(instance.category !== undefined ? { category: instance.category } : {}),
          groundTruthScore: instance.groundTruthScore,
          keyframes,
          images: images.map((i) => i.sha256),
          samples,
          score: aggregates[aggregate],
          aggregates,
          usage,
          finishedAt: new Date().toISOString(),
        };
      },
      failed: () => null,
      finished: (instance, record) => {
        if (record) {
          appender.append(record);
          records.set(instance.id, record);
        }
        progress.done++;
        const kept = records.get(instance.id);
        if (!kept || kept.score === null) progress.failed++;
        options.onProgress?.({ ...progress });
      },
      models: [options.model.spec],
      itemId: (instance) => instance.id,
    });
  } finally {
    appender.close();
  }
  const ordered = instances.map((i) => records.get(i.id)).filter((r): r is RmEvaluationRecord => r !== undefined);
  return { run, records: ordered, reused: progress.reused, wallTimeMs: performance.now() - started };
}

/** An instance's keyframes, their images and the key of what its evaluations are made from. */
async function instanceInputs(loader: KeyframeLoader, instance: RewardInstance, model: string, params: GenerationParams, k: number, image: ImageOptions | undefined): Promise<{ keyframes: number[]; images: EpisodeFrameImage[]; inputKey: string }> {
  const keyframes = await loader.keyframeIndices(instance);
  const images = await (await loader.episode(instance)).images(keyframes, image);
  return { keyframes, images, inputKey: evaluationInputKey(model, instance, images, params, { samples: k, prompt: rmPromptHashes([RM_PROMPTS.evaluator]) }) };
}

/** A record made from the same inputs whose calls all went through: a run keeps it and asks nothing again. */
function reusable(record: RmEvaluationRecord, inputKey: string): boolean {
  return record.inputKey === inputKey && record.samples.every((s) => !s.callFailed);
}

/** What `eqa rm bench --dry-run` and `eqa rm score --batch` plan. */
export interface RmSamplePlan {
  instances: number;
  /** Instances the run directory already holds with the same inputs. */
  reused: number;
  /** Instances that would be sampled now, K calls each. */
  pending: number;
  /** The calls: pending × K. */
  calls: number;
}

/**
 * Records, in `plan`, the reward model's request for every sample of every instance the run
 * directory does not hold yet, built as sampleRewardModel builds them (keyframes, images,
 * sample indices). Calls no model and writes nothing: the run directory's evaluations are
 * only read, and a missing directory is left missing.
 */
export async function planRewardScores(options: RmScoreSetup, plan: CallPlan): Promise<RmSamplePlan> {
  const instances = options.instances ?? options.file.instances;
  const k = options.samples ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new UserError(`the number of samples must be a whole number of at least 1, got ${k}`, { field: "--samples" });
  const params = options.params ?? TTS_PARAMS;
  // the keyframes are prepared in memory only: a dry run leaves no prepared frame on disk either
  const loader = new KeyframeLoader({ instanceFile: options.file.path, ...(options.framesRoot !== undefined ? { framesRoot: options.framesRoot } : {}) }, options.image, new FrameCache({ dir: false }));
  for (const instance of instances) loader.episodePath(instance);
  const earlier = new Map<string, RmEvaluationRecord>();
  for (const record of readJsonl(join(resolve(options.outDir), EVALUATIONS_FILE), recordParser(rmEvaluationSchema), false).records) earlier.set(record.id, record);
  const model = plan.model(options.model.spec, REWARD_MODEL_ROLE);
  const indices = Array.from({ length: k }, (_, i) => i);
  let reused = 0;
  let pending = 0;
  for (const instance of instances) {
    const { images, inputKey } = await instanceInputs(loader, instance, model.name, params, k, options.image);
    const before = earlier.get(instance.id);
    if (before && reusable(before, inputKey)) {
      reused++;
      continue;
    }
    pending++;
    await withCallContext({ item: instance.id }, () => sampleEvaluations(model, instance, imageParts(images), params, indices));
  }
  return { instances: instances.length, reused, pending, calls: pending * k };
}

/** The aggregate of the first K samples of a record (test-time scaling from shared samples). */
export function scoreOfFirst(record: RmEvaluationRecord, k: number, method: Aggregation): number | null {
  return aggregateScores(
    record.samples.filter((s) => s.sampleIndex < k).map((s) => s.score),
    method,
  );
}

/** Instances with a ground-truth score and an aggregated score, ready for the metrics. */
export function scoredPairs(records: readonly RmEvaluationRecord[], score: (r: RmEvaluationRecord) => number | null): ScoredInstance[] {
  const pairs: ScoredInstance[] = [];
  for (const r of records) {
    const s = score(r);
    if (s === null || r.groundTruthScore === null) continue;
    pairs.push({ score: s, groundTruth: r.groundTruthScore, source: r.source, ...(r.category !== undefined ? { category: r.category } : {}) });
  }
  return pairs;
}

export interface RmScoreSummary extends RunSummaryHead<typeof RUN_KIND["rm-score"]> {
  counts: { instances: number; scored: number; failed: number; withGroundTruth: number; samples: number; failedSamples: number; malformedSamples: number; reused: number };
  /** Against the ground-truth scores, when the instances have them. */
  metrics: RewardMetrics | null;
  failures: { id: string; errors: string[]; replies: (string | null)[] }[];
  usage: { evaluations: UsageTotals; thisProcess: ReturnType<UsageLedger["snapshot"]> | null };
  /** Tokens and dollars of the reward model, from every instance the run directory holds. */
  cost: RunCost;
}

/** `eqa rm score`: samples, aggregates, writes scores.json ({id: score}) and summary.json. */
export async function scoreRewardInstances(options: RmScoreOptions): Promise<{ summary: RmScoreSummary; runDir: string; scores: Record<string, number | null> }> {
  const result = await sampleRewardModel(options);
  const aggregate = options.aggregate ?? "vote";
  const scores: Record<string, number | null> = {};
  for (const r of result.records) scores[r.id] = r.aggregates[aggregate];
  const pairs = scoredPairs(result.records, (r) => r.aggregates[aggregate]);
  const usage = sumUsage(result.records.map((r) => r.usage));
  const samples = result.records.flatMap((r) => r.samples);
  const summary: RmScoreSummary = {
    ...summaryHead(RUN_KIND["rm-score"], result.wallTimeMs, {
      model: describeModel(options.model.spec),
      instances: { path: options.file.path, sha256: options.file.sha256, count: (options.instances ?? options.file.instances).length },
      samples: options.samples ?? 1,
      aggregate,
      parameters: options.params ?? TTS_PARAMS,
      prompts: rmPromptHashes([RM_PROMPTS.evaluator]),
      image: options.image ?? {},
      frames: options.framesRoot ?? null,
      tolerance: options.tolerance ?? 2,
      concurrency: options.concurrency ?? 8,
      ...options.settings,
    }),
    counts: {
      instances: result.records.length,
      scored: result.records.filter((r) => r.aggregates[aggregate] !== null).length,
      failed: result.records.filter((r) => r.aggregates[aggregate] === null).length,
      withGroundTruth: result.records.filter((r) => r.groundTruthScore !== null).length,
      samples: samples.length,
      failedSamples: samples.filter((s) => s.score === null).length,
      malformedSamples: samples.filter((s) => !s.wellFormed).length,
      reused: result.reused,
    },
    metrics: pairs.length > 0 ? rewardModelMetrics(pairs, { ...(options.tolerance !== undefined ? { tolerance: options.tolerance } : {}), ...(options.bootstrap ? { bootstrap: options.bootstrap } : {}) }) : null,
    failures: result.records
      .filter((r) => r.aggregates[aggregate] === null)
      .map((r) => ({ id: r.id, errors: r.samples.map((s) => s.error ?? "no score"), replies: r.samples.map((s) => s.reply) })),
    usage: { evaluations: usage, thisProcess: options.usage?.snapshot() ?? null },
    cost: ledgerCost(readCallLedger(result.run.path)),
  };
  await result.run.writeJson(RM_SCORES_FILE, scores);
  await result.run.writeJson(RM_SUMMARY_FILE, summary);
  return { summary, runDir: result.run.path, scores };
}
