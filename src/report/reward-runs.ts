/**
 * The folders of `eqa rm build` and `eqa rm review --import` as the report and the viewer read
 * them. Neither writes a summary: the figures come from the files themselves.
 * - rm build: the instances made (`instances.jsonl`), by environment and question type, the
 *   distribution of the ground-truth scores the scorer gave the candidates (0-10), the responses
 *   and scores that failed (the last record of each in `responses.jsonl`,
 *   `ground-truth-scores.jsonl`), the split (`benchmark.jsonl`, `finetune.jsonl`); its cost is
 *   the run's ledger of model calls, as every kind's.
 * - rm review: the sheet's decisions, counted by applying the copies the folder keeps of the
 *   instances and the filled sheet as `eqa rm review` did, the instances kept
 *   (`reviewed.jsonl`) and the split.
 * Instance files are read by `data/`'s loader (each line checked); the records of the two
 * steps against the shapes `reward/build.ts` writes.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { environmentLabel, parseRewardInstances, type RewardInstance } from "../data/index.js";
import { ledgerCost, ledgerUsage, readCallLedger, type RunCost, type UsageTotals } from "../models/index.js";
import { applyReview, BENCHMARK_SPLIT_FILE, FINETUNE_SPLIT_FILE, GT_SCORES_FILE, RESPONSES_FILE, REVIEWED_FILE, REWARD_INSTANCES_FILE } from "../reward/index.js";
import { runInputPath } from "../store/index.js";
import { readRecords } from "./files.js";
import type { HeadlineMetric } from "./run-kinds.js";

/** One instance (or a response that gave none) as a question row. */
export interface RewardBuildRow {
  questionId: string;
  question?: string;
  category?: string;
  episode?: string;
  groundTruth?: string;
  answer: string | null;
  /** The ground-truth scorer's score and critique, or the review's decision. */
  replies: string[];
  error?: string;
  failedStage?: "answer" | "judge";
}

export interface RewardFolder {
  headline: HeadlineMetric[];
  rows: RewardBuildRow[];
  /** The run's calls from its ledger (none for a review). */
  calls?: { usage: UsageTotals; cost: RunCost };
  notes: string[];
}

/** A line of `responses.jsonl` (step 1), the fields shown. */
const responseRecordSchema = z.looseObject({ key: z.string(), questionId: z.string(), sampleIndex: z.number(), reply: z.string().nullable(), reasoningTrace: z.array(z.string()), predictedAnswer: z.string().nullable(), error: z.string().optional() });
/** A line of `ground-truth-scores.jsonl` (step 2), the fields shown. */
const scoreRecordSchema = z.looseObject({ key: z.string(), responseKey: z.string(), reply: z.string().nullable(), score: z.number().nullable(), error: z.string().optional() });

/** An instance file of the folder, each line checked; undefined when absent, none when empty (every response failed). */
function instancesIn(path: string): RewardInstance[] | undefined {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, "utf8");
  return text.trim() === "" ? [] : parseRewardInstances(text, path);
}

/** The last record of each key: a resumed run appends the calls it asked again. */
function latest<T extends { key: string }>(path: string, schema: z.ZodType<T>): T[] {
  if (!existsSync(path)) return [];
  return [...new Map(readRecords(path, schema).map((r) => [r.key, r])).values()];
}

const share = (n: number, of: number): string => (of > 0 ? `${Math.round((100 * n) / of)}%` : "–");

/** Instances counted by a field, most first, then by name. */
function countBy(instances: readonly RewardInstance[], field: (i: RewardInstance) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const i of instances) counts.set(field(i), (counts.get(field(i)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function splitHeadline(dir: string, notes: string[]): HeadlineMetric[] {
  const benchmark = instancesIn(join(dir, BENCHMARK_SPLIT_FILE));
  const finetune = instancesIn(join(dir, FINETUNE_SPLIT_FILE));
  if (!benchmark || !finetune) {
    notes.push(`no ${BENCHMARK_SPLIT_FILE} and ${FINETUNE_SPLIT_FILE} yet: the split is written when the command ends`);
    return [];
  }
  const episodes = (list: RewardInstance[]): number => new Set(list.map((i) => i.episodeHistory)).size;
  return [
    { name: "benchmark split", value: benchmark.length, unit: "", about: `EQA-RM's D_B: instances of ${episodes(benchmark)} episode(s), every HM3D one among them (${BENCHMARK_SPLIT_FILE})` },
    { name: "fine-tuning split", value: finetune.length, unit: "", about: `EQA-RM's D_F: instances of ${episodes(finetune)} episode(s), none of them in the benchmark (${FINETUNE_SPLIT_FILE})` },
  ];
}

/** Instances by environment and question type, and the distribution of their ground-truth scores. */
function instanceHeadline(instances: readonly RewardInstance[]): HeadlineMetric[] {
  const out: HeadlineMetric[] = [];
  for (const [source, n] of countBy(instances, (i) => i.source)) out.push({ name: `environment: ${environmentLabel(source)}`, value: n, unit: "", about: `instances from ${environmentLabel(source)} episodes (${share(n, instances.length)})` });
  for (const [category, n] of countBy(instances, (i) => i.category ?? "(no category)")) out.push({ name: `question type: ${category}`, value: n, unit: "", about: `instances of questions of this OpenEQA category (${share(n, instances.length)})` });
  const scored = instances.flatMap((i) => (i.groundTruthScore === null ? [] : [i.groundTruthScore]));
  if (scored.length > 0) {
    out.push({ name: "mean ground-truth score", value: scored.reduce((a, s) => a + s, 0) / scored.length, unit: "", n: scored.length, about: "the score out of 10 the scorer gave the candidates, knowing the answer" });
    for (let score = 0; score <= 10; score++) {
      const n = scored.filter((s) => s === score).length;
      out.push({ name: `score ${score}`, value: n, unit: "", about: `candidates whose ground-truth score is ${score} of 10 (${share(n, scored.length)})` });
    }
  }
  return out;
}

/** The question an instance answers: its text, category, episode and ground truth. */
function questionFields(i: RewardInstance | undefined): Pick<RewardBuildRow, "question" | "category" | "episode" | "groundTruth"> {
  if (!i) return {};
  return { question: i.question, ...(i.category !== undefined ? { category: i.category } : {}), episode: i.episodeHistory, ...(i.groundTruthAnswer !== undefined ? { groundTruth: i.groundTruthAnswer } : {}) };
}

function instanceRow(i: RewardInstance, review?: string): RewardBuildRow {
  const scored = i.groundTruthScore === null ? [] : [`ground-truth score ${i.groundTruthScore}/10${i.critique ? `: ${i.critique}` : ""}`];
  return {
    ...questionFields(i),
    questionId: i.id,
    answer: i.predictedAnswer,
    replies: review === undefined ? scored : [review, ...scored],
  };
}

/** An `eqa rm build` folder: its instances, their breakdown and score distribution, its failures, its split and its calls. */
export function loadRewardBuild(dir: string): RewardFolder {
  const notes: string[] = [];
  const responses = latest(join(dir, RESPONSES_FILE), responseRecordSchema);
  const scores = latest(join(dir, GT_SCORES_FILE), scoreRecordSchema);
  const instances = instancesIn(join(dir, REWARD_INSTANCES_FILE));
  if (!instances) notes.push(`no ${REWARD_INSTANCES_FILE} yet: the run may still be going, or was stopped; its responses are counted from ${RESPONSES_FILE}`);
  // as the build decides: a response is usable with an answer and a reasoning trace
  const unusable = responses.filter((r) => r.predictedAnswer === null || r.reasoningTrace.length === 0);
  const unscored = scores.filter((s) => s.score === null);
  const questions = new Set(responses.map((r) => r.questionId)).size;
  const made = instances ?? [];
  const headline: HeadlineMetric[] = [
    { name: "instances", value: made.length, unit: "", about: `scored responses: ${responses.length} response(s) to ${questions} question(s), ${unusable.length} unusable, ${unscored.length} without a ground-truth score` },
    ...splitHeadline(dir, instances ? notes : []),
  ];
  if (unusable.length > 0) headline.push({ name: "unusable responses", value: unusable.length, unit: "", about: `the responder's replies without an answer or a reasoning trace, failed calls among them (${share(unusable.length, responses.length)})` });
  if (unscored.length > 0) headline.push({ name: "scores failed", value: unscored.length, unit: "", about: `usable responses the scorer gave no score (${share(unscored.length, scores.length)}): left out of the instances` });
  headline.push(...instanceHeadline(made));

  const rows = made.map((i) => instanceRow(i));
  const responseOf = new Map(responses.map((r) => [r.key, r]));
  // a failed response's question, as another response's instance has it (the responses file names only its id)
  const questionOf = new Map(made.map((i) => [i.questionId ?? i.id, i]));
  const rowOf = (r: z.infer<typeof responseRecordSchema>, error: string, failedStage: "answer" | "judge", replies: (string | null)[]): RewardBuildRow => ({
    ...questionFields(questionOf.get(r.questionId)),
    questionId: `${r.questionId}#${r.sampleIndex}`,
    answer: r.predictedAnswer,
    replies: replies.flatMap((reply) => (reply === null ? [] : [reply])),
    error,
    failedStage,
  });
  for (const r of unusable) rows.push(rowOf(r, `response: ${r.error ?? "no answer or no reasoning trace in the reply"}`, "answer", [r.reply]));
  for (const s of unscored) {
    const r = responseOf.get(s.responseKey);
    if (r) rows.push(rowOf(r, `ground-truth score: ${s.error ?? "no score in the reply"}`, "judge", [s.reply]));
  }
  const ledger = readCallLedger(dir);
  return { headline, rows, ...(ledger.length > 0 ? { calls: { usage: ledgerUsage(ledger), cost: ledgerCost(ledger) } } : {}), notes };
}

/** An `eqa rm review --import` folder: the sheet's decisions, the instances kept, the split. */
export async function loadRewardReview(dir: string): Promise<RewardFolder> {
  const notes: string[] = [];
  const kept = instancesIn(join(dir, REVIEWED_FILE));
  const headline: HeadlineMetric[] = [];
  const rows: RewardBuildRow[] = [];
  // the folder keeps copies of both inputs: the decisions are counted as the command counted them
  const instancesFile = runInputPath(dir, "instances");
  const sheet = runInputPath(dir, "review");
  const given = instancesFile ? instancesIn(instancesFile) : undefined;
  if (given && sheet) {
    const outcome = await applyReview(given, sheet);
    const reviewed = given.length - outcome.unreviewed;
    headline.push(
      { name: "accepted", value: outcome.accepted, unit: "", about: `instances the reviewer accepted as they were (${share(outcome.accepted, reviewed)} of ${reviewed} reviewed)` },
      { name: "rejected", value: outcome.rejected, unit: "", about: `instances the reviewer rejected: left out (${share(outcome.rejected, reviewed)})` },
      { name: "corrected", value: outcome.corrected, unit: "", about: `instances kept with the reviewer's corrected score (${share(outcome.corrected, reviewed)})` },
      { name: "not reviewed", value: outcome.unreviewed, unit: "", about: "instances without a row in the sheet: kept as they were" },
    );
    const keptById = new Map(outcome.instances.map((i) => [i.id, i]));
    for (const i of given) {
      const after = keptById.get(i.id);
      const decision = !after ? "review: rejected" : after.groundTruthScore !== i.groundTruthScore ? `review: score corrected from ${i.groundTruthScore ?? "none"} to ${after.groundTruthScore ?? "none"}` : "review: kept";
      rows.push(instanceRow(after ?? i, decision));
    }
  } else {
    notes.push("the copies of the instances and of the review sheet are not in the folder: the decisions are not counted");
    for (const i of kept ?? []) rows.push(instanceRow(i));
  }
  headline.push({ name: "instances kept", value: kept?.length ?? null, unit: "", about: `in ${REVIEWED_FILE}${given ? `, of ${given.length} given` : ""}` });
  headline.push(...splitHeadline(dir, notes));
  return { headline, rows, notes };
}
