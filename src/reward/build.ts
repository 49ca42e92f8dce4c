import { canonicalJson, seededRandom, sha256Hex, UserError, writeFileAtomically, type Question } from "../core/index.js";
import { environmentOf, readTextFile, writeRewardInstances, type RewardInstance } from "../data/index.js";
import { linspaceRoundIndices, openEpisode, resolveEpisodePath, type Episode, type ImageOptions } from "../episodes/index.js";
import { describeModel, runModelBatch, type ChatModel, type GenerationParams, type ModelSpec } from "../models/index.js";
import { RunDirectory, openRun, questionItems, resultSettings, RUN_KIND } from "../store/index.js";
import { parseCsv, toCsv } from "./csv.js";
import { imageParts } from "./evaluate.js";
import { parseAgentResponse, parseEvaluation } from "./parse.js";
import { RM_PROMPTS, formatReasoningTrace, promptContent, rmPromptHashes } from "./prompts.js";
import { derangingPermutation } from "./augment.js";

/** Step 1's sampling: diverse responses (the paper does not give its parameters). */
export const RESPONSE_PARAMS: GenerationParams = { temperature: 1.0, topP: 0.95, maxTokens: 2048 };
/** Step 2's scoring: deterministic (the paper does not give its parameters). */
export const GROUND_TRUTH_PARAMS: GenerationParams = { temperature: 0, maxTokens: 1024 };

export const RESPONSES_FILE = "responses.jsonl";
export const GT_SCORES_FILE = "ground-truth-scores.jsonl";
/** The instances `eqa rm build` made (scored responses), one JSON line each. */
export const REWARD_INSTANCES_FILE = "instances.jsonl";
/** The split (§3.2): the benchmark D_B and the fine-tuning set D_F, episode-disjoint. */
export const BENCHMARK_SPLIT_FILE = "benchmark.jsonl";
export const FINETUNE_SPLIT_FILE = "finetune.jsonl";
/** `eqa rm review --import`: the instances the review kept, corrected scores applied. */
export const REVIEWED_FILE = "reviewed.jsonl";

interface ResponseRecord {
  key: string;
  questionId: string;
  sampleIndex: number;
  reply: string | null;
  reasoningTrace: string[];
  predictedAnswer: string | null;
  keyframes: number[];
  error?: string;
}

interface GroundTruthRecord {
  key: string;
  responseKey: string;
  reply: string | null;
  score: number | null;
  critique: string | null;
  error?: string;
}

export interface BuildOptions {
  questions: Question[];
  framesRoot: string;
  /** The model that answers the questions (it carries its spec). */
  responder: ChatModel;
  /** The model that scores each response against the ground truth (it carries its spec). */
  scorer: ChatModel;
  /** Responses asked per question (each its own sample). */
  responsesPerQuestion: number;
  keyframes: number;
  image?: ImageOptions;
  outDir: string;
  concurrency?: number;
  /** Fraction of the ScanNet (non-HM3D) episodes set aside for fine-tuning. */
  finetuneFraction: number;
  seed: number;
  onProgress?: (stage: string, done: number, total: number) => void;
}

export interface BuildResult {
  instances: RewardInstance[];
  failedResponses: number;
  failedScores: number;
  split: SplitResult;
}

/**
 * EQARewardBench's pipeline (seed 004, §3.1, appendix D): step 1, a VLM answers each
 * question from N keyframes with the response-generation prompt (which asks for a plausible
 * wrong answer when evidence is thin: correct and incorrect responses both); step 2, a
 * stronger model scores each response knowing the ground-truth answer. Writes every reply
 * (responses.jsonl, ground-truth-scores.jsonl: resumable), instances.jsonl, review.csv for
 * the human check, and the episode-disjoint benchmark.jsonl / finetune.jsonl.
 */
export async function buildRewardBench(options: BuildOptions): Promise<BuildResult> {
  const episodes = new Map<string, Promise<Episode>>();
  const episodeOf = (q: Question): Promise<Episode> => {
    const path = resolveEpisodePath(options.framesRoot, q.episodeHistory, { id: q.questionId, field: "episode_history" });
    if (path === undefined) throw new UserError(`no frames for episode ${q.episodeHistory} under ${options.framesRoot}`, { id: q.questionId, field: "episode_history" }, "check --frames: it should hold one folder (or video) per episode_history");
    let e = episodes.get(path);
    if (!e) episodes.set(path, (e = openEpisode(path, q.episodeHistory)));
    return e;
  };
  // every episode is there and inside --frames before any work
  for (const q of options.questions) if (resolveEpisodePath(options.framesRoot, q.episodeHistory, { id: q.questionId, field: "episode_history" }) === undefined) await episodeOf(q);
  // kind rm-build: the responder, the scorer, responses per question, keyframes, images, the split's fraction and seed decide the instances
  const run = await openRun({
    dir: options.outDir,
    kind: RUN_KIND["rm-build"],
    settings: resultSettings({ responder: describeModel(options.responder.spec), scorer: describeModel(options.scorer.spec), responsesPerQuestion: options.responsesPerQuestion, keyframes: options.keyframes, image: options.image ?? {}, finetuneFraction: options.finetuneFraction, seed: options.seed }),
    inputs: [{ name: "frames", path: options.framesRoot }],
    items: questionItems(options.questions),
  });

  // step 1: responses
  const jobs = options.questions.flatMap((q) => Array.from({ length: options.responsesPerQuestion }, (_, i) => ({ question: q, sampleIndex: i })));
  const responseKey = (q: Question, i: number): string => sha256Hex(canonicalJson({ responder: options.responder.name, q: q.questionId, question: q.question, i, n: options.keyframes, prompt: rmPromptHashes([RM_PROMPTS.response]), params: RESPONSE_PARAMS }));
  const responses = new Map<string, ResponseRecord>();
  for (const r of run.readRecords(RESPONSES_FILE, asObject<ResponseRecord>).records) if (!r.error?.startsWith("call failed")) responses.set(r.key, r);
  const pending = jobs.filter((j) => !responses.has(responseKey(j.question, j.sampleIndex)));
  let done = jobs.length - pending.length;
  const appendResponse = run.appender(RESPONSES_FILE);
  try {
    await runModelBatch({
      items: pending,
      concurrency: options.concurrency ?? 8,
      work: async ({ question, sampleIndex }): Promise<ResponseRecord> => {
        const episode = await episodeOf(question);
        const keyframes = linspaceRoundIndices(episode.frameCount, options.keyframes);
        const images = await episode.images(keyframes, options.image);
        const content = promptContent(RM_PROMPTS.response, { question: question.question }, imageParts(images));
        const response = await options.responder.complete({ messages: [{ role: "user", content }], ...RESPONSE_PARAMS, sampleIndex });
        const parsed = parseAgentResponse(response.text);
        return { key: responseKey(question, sampleIndex), questionId: question.questionId, sampleIndex, reply: response.text, reasoningTrace: parsed.reasoningTrace, predictedAnswer: parsed.predictedAnswer, keyframes, ...(parsed.error ? { error: parsed.error } : {}) };
      },
      failed: ({ question, sampleIndex }, error) => ({ key: responseKey(question, sampleIndex), questionId: question.questionId, sampleIndex, reply: null, reasoningTrace: [], predictedAnswer: null, keyframes: [], error: `call failed: ${error.message}` }),
      finished: (_job, record) => {
        appendResponse.append(record);
        responses.set(record.key, record);
        options.onProgress?.("responses", ++done, jobs.length);
      },
      models: [options.responder.spec],
    });
  } finally {
    appendResponse.close();
  }

  // step 2: ground-truth scores
  const usable = jobs
    .map((j) => ({ question: j.question, response: responses.get(responseKey(j.question, j.sampleIndex))! }))
    .filter((x) => x.response && x.response.predictedAnswer !== null && x.response.reasoningTrace.length > 0);
  const scoreKey = (r: ResponseRecord, q: Question): string => sha256Hex(canonicalJson({ scorer: options.scorer.name, response: r.key, reply: r.reply, answer: q.answer, prompt: rmPromptHashes([RM_PROMPTS.groundTruth]), params: GROUND_TRUTH_PARAMS }));
  const scores = new Map<string, GroundTruthRecord>();
  for (const s of run.readRecords(GT_SCORES_FILE, asObject<GroundTruthRecord>).records) if (!s.error?.startsWith("call failed")) scores.set(s.key, s);
  const toScore = usable.filter((x) => !scores.has(scoreKey(x.response, x.question)));
  done = usable.length - toScore.length;
  const appendScore = run.appender(GT_SCORES_FILE);
  try {
    await runModelBatch({
      items: toScore,
      concurrency: options.concurrency ?? 8,
      work: async ({ question, response }): Promise<GroundTruthRecord> => {
        const episode = await episodeOf(question);
        const images = await episode.images(response.keyframes, options.image);
        const content = promptContent(
          RM_PROMPTS.groundTruth,
          { question: question.question, answer_gt: question.answer, reasoning_trace: formatReasoningTrace(response.reasoningTrace), predicted_answer: response.predictedAnswer! },
          imageParts(images),
        );
        const reply = await options.scorer.complete({ messages: [{ role: "user", content }], ...GROUND_TRUTH_PARAMS });
        const parsed = parseEvaluation(reply.text);
        return { key: scoreKey(response, question), responseKey: response.key, reply: reply.text, score: parsed.score, critique: parsed.critique, ...(parsed.error ? { error: parsed.error } : {}) };
      },
      failed: ({ question, response }, error) => ({ key: scoreKey(response, question), responseKey: response.key, reply: null, score: null, critique: null, error: `call failed: ${error.message}` }),
      finished: (_item, record) => {
        appendScore.append(record);
        scores.set(record.key, record);
        options.onProgress?.("ground-truth scores", ++done, usable.length);
      },
      models: [options.scorer.spec],
    });
  } finally {
    appendScore.close();
  }

  const instances: RewardInstance[] = [];
  let failedScores = 0;
  for (const { question, response } of usable) {
    const scored = scores.get(scoreKey(response, question));
    if (!scored || scored.score === null) {
      failedScores++;
      continue;
    }
    instances.push({
      id: `${question.questionId}#${response.sampleIndex}`,
      questionId: question.questionId,
      question: question.question,
      predictedAnswer: response.predictedAnswer!,
      reasoningTrace: response.reasoningTrace,
      episodeHistory: question.episodeHistory,
      keyframes: response.keyframes,
      numKeyframes: response.keyframes.length,
      groundTruthAnswer: question.answer,
      groundTruthScore: Math.round(scored.score),
      source: environmentOf(question.episodeHistory),
      category: question.category,
      ...(scored.critique !== null ? { critique: scored.critique } : {}),
    });
  }
  await writeRewardInstances(run.file(REWARD_INSTANCES_FILE), instances);
  await writeFileAtomically(run.file("review.csv"), reviewCsv(instances));
  const split = splitByEpisode(instances, { finetuneFraction: options.finetuneFraction, seed: options.seed });
  await writeSplit(run, split);
  return { instances, failedResponses: jobs.length - usable.length, failedScores, split };
}

function asObject<T>(value: unknown): T | undefined {
  return typeof value === "object" && value !== null && typeof (value as { key?: unknown }).key === "string" ? (value as T) : undefined;
}

export interface SplitResult {
  benchmark: RewardInstance[];
  finetune: RewardInstance[];
  benchmarkEpisodes: number;
  finetuneEpisodes: number;
}

/**
 * The paper's split (§3.2): every HM3D instance goes to the benchmark (D_B, out of
 * distribution for a model fine-tuned on ScanNet); the episodes of every other environment
 * are shuffled (seeded) and `finetuneFraction` of them go to the fine-tuning set D_F with all
 * their instances, the rest to the benchmark. No episode is in both.
 */
export function splitByEpisode(instances: readonly RewardInstance[], options: { finetuneFraction: number; seed: number }): SplitResult {
  if (!(options.finetuneFraction >= 0 && options.finetuneFraction <= 1)) throw new UserError(`the fine-tuning fraction must be from 0 to 1, got ${options.finetuneFraction}`, { field: "--finetune-fraction" });
  const episodes = [...new Set(instances.filter((i) => i.source !== "hm3d").map((i) => i.episodeHistory))].sort();
  const order = episodes.length > 0 ? derangingPermutation(episodes.length, seededRandom(options.seed)) : [];
  const count = Math.round(episodes.length * options.finetuneFraction);
  const finetuneEpisodes = new Set(order.slice(0, count).map((i) => episodes[i]!));
  const benchmark = instances.filter((i) => !finetuneEpisodes.has(i.episodeHistory));
  const finetune = instances.filter((i) => finetuneEpisodes.has(i.episodeHistory));
  return { benchmark, finetune, benchmarkEpisodes: new Set(benchmark.map((i) => i.episodeHistory)).size, finetuneEpisodes: finetuneEpisodes.size };
}

export async function writeSplit(run: RunDirectory, split: SplitResult): Promise<void> {
  await writeRewardInstances(run.file(BENCHMARK_SPLIT_FILE), split.benchmark);
  await writeRewardInstances(run.file(FINETUNE_SPLIT_FILE), split.finetune);
}

export const REVIEW_COLUMNS = ["id", "source", "category", "question", "ground_truth_answer", "predicted_answer", "reasoning_trace", "critique", "ground_truth_score", "decision", "corrected_score", "note"] as const;

/** The human check's sheet: one row per instance; a reviewer fills `decision` (accept, reject) or `corrected_score`. */
export function reviewCsv(instances: readonly RewardInstance[]): string {
  return toCsv(
    REVIEW_COLUMNS,
    instances.map((i) => [i.id, i.source, i.category ?? "", i.question, i.groundTruthAnswer ?? "", i.predictedAnswer, i.reasoningTrace.map((s, n) => `${n + 1}. ${s}`).join("\n"), i.critique ?? "", i.groundTruthScore, "", "", ""]),
  );
}

export interface ReviewOutcome {
  instances: RewardInstance[];
  accepted: number;
  rejected: number;
  corrected: number;
  unreviewed: number;
}

/**
 * Applies a filled review sheet: `reject` drops an instance; a `corrected_score` (0-10)
 * replaces its score; `accept` or an empty decision keeps it. Rows are matched by id;
 * instances without a row are kept as they are (counted as unreviewed).
 */
export async function applyReview(instances: readonly RewardInstance[], csvPath: string): Promise<ReviewOutcome> {
  const { rows, lines } = parseCsv(await readTextFile(csvPath), csvPath);
  const header = rows[0]?.map((h) => h.trim());
  if (!header) throw new UserError("the review sheet is empty", { file: csvPath });
  const column = (name: string): number => {
    const at = header.indexOf(name);
    if (at === -1) throw new UserError(`the review sheet has no "${name}" column`, { file: csvPath, line: 1 }, `export a fresh sheet with eqa rm review --export; its columns are ${REVIEW_COLUMNS.join(", ")}`);
    return at;
  };
  const [idAt, decisionAt, correctedAt] = [column("id"), column("decision"), column("corrected_score")];
  const byId = new Map(instances.map((i) => [i.id, i]));
  const decisions = new Map<string, { reject: boolean; score?: number }>();
  rows.slice(1).forEach((row, r) => {
    const line = lines[r + 1]!;
    const id = (row[idAt] ?? "").trim();
    if (!byId.has(id)) throw new UserError(`unknown instance id "${id}"`, { file: csvPath, line, field: "id" }, "the sheet must come from the same instances file");
    const decision = (row[decisionAt] ?? "").trim().toLowerCase();
    const correctedText = (row[correctedAt] ?? "").trim();
    if (!["", "accept", "reject"].includes(decision)) throw new UserError(`decision "${decision}" is not accept, reject or empty`, { file: csvPath, line, id, field: "decision" });
    let score: number | undefined;
    if (correctedText !== "") {
      score = Number(correctedText);
      if (!Number.isInteger(score) || score < 0 || score > 10) throw new UserError(`corrected score "${correctedText}" is not a whole number from 0 to 10`, { file: csvPath, line, id, field: "corrected_score" });
    }
    decisions.set(id, { reject: decision === "reject", ...(score !== undefined ? { score } : {}) });
  });
  const outcome: ReviewOutcome = { instances: [], accepted: 0, rejected: 0, corrected: 0, unreviewed: 0 };
  for (const instance of instances) {
    const d = decisions.get(instance.id);
    if (!d) {
      outcome.unreviewed++;
      outcome.instances.push(instance);
    } else if (d.reject) outcome.rejected++;
    else if (d.score !== undefined) {
      outcome.corrected++;
      outcome.instances.push({ ...instance, groundTruthScore: d.score });
    } else {
      outcome.accepted++;
      outcome.instances.push(instance);
    }
  }
  return outcome;
}
