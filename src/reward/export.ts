import { join } from "node:path";
import { eqakitVersion, writeFileAtomically } from "../core/index.js";
import type { RewardInstance, RewardInstanceFile } from "../data/index.js";
import type { ImageOptions } from "../episodes/index.js";
import type { ContentPart } from "../models/index.js";
import { augmentationSeed, permuteReasoningSteps, spatialMask, temporalShuffle, type MaskOptions } from "./augment.js";
import { KeyframeLoader } from "./keyframes.js";
import { RM_PROMPTS, formatReasoningTrace, promptContent, rmPromptHashes } from "./prompts.js";
import type { Variant } from "./rewards.js";
import { sampleRewardModel, type RmEvaluationRecord, type RmScoreOptions } from "./score-run.js";

/** An image stored once in an export's `images/` folder, named by its content hash. */
interface StoredImage {
  data: Uint8Array;
  sha256: string;
  mediaType: string;
}

async function storeImages(dir: string, images: readonly StoredImage[]): Promise<string[]> {
  const paths: string[] = [];
  for (const image of images) {
    const name = `images/${image.sha256}.${image.mediaType === "image/jpeg" ? "jpg" : "png"}`;
    await writeFileAtomically(join(dir, name), image.data);
    paths.push(name);
  }
  return paths;
}

/** A chat message's content in the open formats: TRL's typed parts, and LLaMA-Factory's text with `<image>` markers. */
function chatFormats(content: readonly ContentPart[]): { parts: Record<string, string>[]; text: string } {
  const parts = content.map((p): Record<string, string> => (p.type === "text" ? { type: "text", text: p.text } : { type: "image" }));
  const text = content.map((p) => (p.type === "text" ? p.text : "<image>")).join("");
  return { parts, text };
}

/** The target text of a kept evaluation: the critique and the score in the evaluator's structure. */
export function evaluationTarget(critique: string, score: number): string {
  return `<critique>\n${critique}\n</critique>\n<score>${score}</score>`;
}

/**
 * Eq. 1's rejective filter for one instance: sample k is kept when it is correct,
 * ε = |s_gt − s| < τ (strictly, as Eq. 1 writes it), and not all N samples are correct
 * (E_i = N: "too easy"). Samples without a score are incorrect.
 */
export function rejectiveFilter(scores: readonly (number | null)[], groundTruth: number, tolerance: number): boolean[] {
  const correct = scores.map((s) => s !== null && Math.abs(groundTruth - s) < tolerance);
  const all = correct.length > 0 && correct.every(Boolean);
  return correct.map((c) => c && !all);
}

export interface RftExportOptions extends Omit<RmScoreOptions, "samples" | "aggregate"> {
  /** N_RFT, candidate evaluations per instance from the auxiliary model. */
  candidates: number;
  tolerance: number;
}

export interface RftExportSummary {
  kind: "rm-rft";
  eqakitVersion: string;
  createdAt: string;
  config: Record<string, unknown>;
  counts: { instances: number; withGroundTruth: number; candidates: number; correct: number; tooEasyInstances: number; kept: number; keptWithoutCritique: number };
  files: string[];
}

/**
 * Rejective fine-tuning data (§4.2): N candidate evaluations per instance from an auxiliary
 * model that does not see the ground truth, kept per Eq. 1, written as chat-format JSONL with
 * the keyframes as image files: `rft.trl.jsonl` (TRL's SFTTrainer: `messages` with typed
 * parts, `images`) and `rft.llamafactory.jsonl` with `dataset_info.json` (LLaMA-Factory's
 * sharegpt format with `<image>` markers).
 */
export async function exportRft(options: RftExportOptions): Promise<RftExportSummary> {
  const run = await sampleRewardModel({ ...options, samples: options.candidates });
  const byId = new Map((options.instances ?? options.file.instances).map((i) => [i.id, i]));
  const loader = new KeyframeLoader({ instanceFile: options.file.path, ...(options.framesRoot !== undefined ? { framesRoot: options.framesRoot } : {}) }, options.image);
  const trl: string[] = [];
  const factory: string[] = [];
  const counts = { instances: run.records.length, withGroundTruth: 0, candidates: 0, correct: 0, tooEasyInstances: 0, kept: 0, keptWithoutCritique: 0 };
  for (const record of run.records) {
    const instance = byId.get(record.id)!;
    if (record.groundTruthScore === null) continue;
    counts.withGroundTruth++;
    const scores = record.samples.map((s) => s.score);
    const correct = scores.filter((s) => s !== null && Math.abs(record.groundTruthScore! - s) < options.tolerance).length;
    counts.candidates += scores.length;
    counts.correct += correct;
    if (correct === scores.length) counts.tooEasyInstances++;
    const keep = rejectiveFilter(scores, record.groundTruthScore, options.tolerance);
    if (!keep.some(Boolean)) continue;
    const images = await loader.keyframes(instance);
    const paths = await storeImages(options.outDir, images);
    const content = promptContent(RM_PROMPTS.evaluator, fields(instance, instance.reasoningTrace), images.map((i) => ({ type: "image", data: i.data, mediaType: i.mediaType })));
    const user = chatFormats(content);
    record.samples.forEach((sample, k) => {
      if (!keep[k]) return;
      if (sample.critique === null || sample.score === null) {
        counts.keptWithoutCritique++;
        return;
      }
      counts.kept++;
      const target = evaluationTarget(sample.critique, sample.score);
      const meta = { id: `${record.id}#${sample.sampleIndex}`, instance_id: record.id, score: sample.score, ground_truth_score: record.groundTruthScore };
      trl.push(JSON.stringify({ ...meta, messages: [{ role: "user", content: user.parts }, { role: "assistant", content: [{ type: "text", text: target }] }], images: paths }));
      factory.push(JSON.stringify({ ...meta, messages: [{ role: "user", content: user.text }, { role: "assistant", content: target }], images: paths }));
    });
  }
  await writeFileAtomically(join(options.outDir, "rft.trl.jsonl"), trl.map((l) => `${l}\n`).join(""));
  await writeFileAtomically(join(options.outDir, "rft.llamafactory.jsonl"), factory.map((l) => `${l}\n`).join(""));
  await writeFileAtomically(
    join(options.outDir, "dataset_info.json"),
    `${JSON.stringify({ eqa_rm_rft: { file_name: "rft.llamafactory.jsonl", formatting: "sharegpt", columns: { messages: "messages", images: "images" }, tags: { role_tag: "role", content_tag: "content", user_tag: "user", assistant_tag: "assistant" } } }, null, 2)}\n`,
  );
  const summary: RftExportSummary = {
    kind: "rm-rft",
    eqakitVersion,
    createdAt: new Date().toISOString(),
    config: { model: options.model.spec.name, instances: { path: options.file.path, sha256: options.file.sha256 }, candidates: options.candidates, tolerance: options.tolerance, prompts: rmPromptHashes([RM_PROMPTS.evaluator]), ...options.settings },
    counts,
    files: ["rft.trl.jsonl", "rft.llamafactory.jsonl", "dataset_info.json", "images/", "evaluations.jsonl"],
  };
  await run.run.writeJson("rft-summary.json", summary);
  return summary;
}

function fields(instance: RewardInstance, steps: readonly string[]): Record<string, string> {
  return { question: instance.question, reasoning_trace: formatReasoningTrace(steps), predicted_answer: instance.predictedAnswer };
}

export interface GrpoExportOptions {
  file: RewardInstanceFile;
  instances?: RewardInstance[];
  framesRoot?: string;
  image?: ImageOptions;
  outDir: string;
  seed: number;
  variants?: readonly Variant[];
  mask?: MaskOptions;
}

export interface GrpoRecord {
  id: string;
  instance_id: string;
  variant: Variant;
  /** Conversational prompt with typed parts (TRL's GRPOTrainer, verl's chat prompts). */
  prompt: { role: "user"; content: Record<string, string>[] }[];
  /** The same prompt as one string with `<image>` markers (OpenRLHF's --input_key). */
  prompt_text: string;
  images: string[];
  /**
   * What the reward server reads, as a string (OpenRLHF's --data.label_key): `{"score": s_gt,
   * "variant": …, "group": instance id, "group_prompts": variants exported}`, so that the samples
   * of an instance's variants are contrasted together.
   */
  label: string;
  ground_truth_score: number;
  source: string;
  /** How the variant was made: the frame or step order, the masked patches per frame, the seed. */
  perturbation: Record<string, unknown>;
}

/**
 * C-GRPO prompt sets (§4.3): for every instance with a ground-truth score, the original
 * prompt and its three perturbed versions (keyframes shuffled in time, 15% of 16×16 patches
 * of each keyframe masked to 0, reasoning steps permuted), each seeded from `seed` and the
 * instance id, written to `grpo.jsonl` with the images under `images/`.
 */
export async function exportGrpo(options: GrpoExportOptions): Promise<{ records: number; skipped: number; path: string }> {
  const variants = options.variants ?? ["original", "temporal", "spatial", "reasoning"];
  const loader = new KeyframeLoader({ instanceFile: options.file.path, ...(options.framesRoot !== undefined ? { framesRoot: options.framesRoot } : {}) }, options.image);
  const lines: string[] = [];
  let skipped = 0;
  for (const instance of options.instances ?? options.file.instances) {
    if (instance.groundTruthScore === null) {
      skipped++;
      continue;
    }
    const frames: StoredImage[] = await loader.keyframes(instance);
    for (const variant of variants) {
      const seed = augmentationSeed(options.seed, instance.id, variant);
      let images: StoredImage[] = frames;
      let steps = instance.reasoningTrace;
      let perturbation: Record<string, unknown> = {};
      if (variant === "temporal") {
        const shuffled = temporalShuffle(frames, seed);
        images = shuffled.frames;
        perturbation = { seed, frameOrder: shuffled.order };
      } else if (variant === "spatial") {
        const masked = await Promise.all(frames.map((f, i) => spatialMask(f.data, augmentationSeed(options.seed, instance.id, variant, i), options.mask)));
        images = masked;
        perturbation = { seed, maskedPatches: masked.map((m) => m.patches.length) };
      } else if (variant === "reasoning") {
        const permuted = permuteReasoningSteps(instance.reasoningTrace, seed);
        steps = permuted.steps;
        perturbation = { seed, stepOrder: permuted.order };
      }
      const paths = await storeImages(options.outDir, images);
      const content = promptContent(RM_PROMPTS.evaluator, fields(instance, steps), images.map((i) => ({ type: "image", data: i.data, mediaType: i.mediaType })));
      const chat = chatFormats(content);
      const record: GrpoRecord = {
        id: `${instance.id}#${variant}`,
        instance_id: instance.id,
        variant,
        prompt: [{ role: "user", content: chat.parts }],
        prompt_text: chat.text,
        images: paths,
        label: JSON.stringify({ score: instance.groundTruthScore, variant, group: instance.id, group_prompts: variants.length }),
        ground_truth_score: instance.groundTruthScore,
        source: instance.source,
        perturbation,
      };
      lines.push(JSON.stringify(record));
    }
  }
  const path = join(options.outDir, "grpo.jsonl");
  await writeFileAtomically(path, lines.map((l) => `${l}\n`).join(""));
  return { records: lines.length, skipped, path };
}

