import { canonicalJson, sha256Hex } from "../core/index.js";
import type { RewardInstance } from "../data/index.js";
import type { EpisodeFrameImage } from "../episodes/index.js";
import { ModelCallError, type ChatModel, type ChatRequest, type ContentPart, type GenerationParams, type UsageTotals } from "../models/index.js";
import { addUsage, emptyUsage, knownImageSha256 } from "../models/index.js";
import { parseEvaluation } from "./parse.js";
import { RM_PROMPTS, formatReasoningTrace, promptContent } from "./prompts.js";

/** Test-time scaling's sampling (seed 004, §5.1 and Table 5): temperature 0.8, top-p 0.9; completions up to 768 tokens. */
export const TTS_PARAMS: GenerationParams = { temperature: 0.8, topP: 0.9, maxTokens: 768 };

/** One sampled evaluation of an instance. */
export interface RmSample {
  sampleIndex: number;
  score: number | null;
  critique: string | null;
  wellFormed: boolean;
  /** The raw reply, kept for every sample (a failure is recorded with it). */
  reply: string | null;
  error?: string;
  /** The call itself failed (not the reply): such a sample is asked again on resume. */
  callFailed?: boolean;
  cached: boolean;
}

export function imageParts(images: readonly EpisodeFrameImage[]): ContentPart[] {
  return images.map((i) => {
    knownImageSha256(i.data, i.sha256);
    return { type: "image", data: i.data, mediaType: i.mediaType };
  });
}

/** The generative reward model's request: the paper's evaluator prompt (no ground truth) with the keyframes. */
export function evaluatorRequest(
  instance: Pick<RewardInstance, "question" | "predictedAnswer" | "reasoningTrace">,
  images: readonly ContentPart[],
  params: GenerationParams,
  sampleIndex: number,
): ChatRequest {
  const content = promptContent(
    RM_PROMPTS.evaluator,
    { question: instance.question, reasoning_trace: formatReasoningTrace(instance.reasoningTrace), predicted_answer: instance.predictedAnswer },
    images,
  );
  return { messages: [{ role: "user", content }], ...params, sampleIndex };
}

/** The key of what an evaluation is made from: the instance's text, the images' hashes and the parameters. */
export function evaluationInputKey(model: string, instance: RewardInstance, images: readonly EpisodeFrameImage[], params: GenerationParams, extra: Record<string, unknown> = {}): string {
  return sha256Hex(
    canonicalJson({
      model,
      question: instance.question,
      predictedAnswer: instance.predictedAnswer,
      reasoningTrace: instance.reasoningTrace,
      images: images.map((i) => i.sha256),
      params,
      ...extra,
    }),
  );
}

/**
 * Samples evaluations `from` … `to − 1` of one instance (each its own call, cached under its
 * sample index so that samples stay independent and a later, larger K reuses the first
 * ones). A failed call is recorded on its sample; a call error that makes every further call
 * fail (unreachable endpoint, refused key) is thrown.
 */
export async function sampleEvaluations(
  model: ChatModel,
  instance: RewardInstance,
  images: readonly ContentPart[],
  params: GenerationParams,
  indices: readonly number[],
  usage: UsageTotals = emptyUsage(),
): Promise<RmSample[]> {
  return Promise.all(
    indices.map(async (sampleIndex): Promise<RmSample> => {
      try {
        const response = await model.complete(evaluatorRequest(instance, images, params, sampleIndex));
        addUsage(usage, response.usage);
        const parsed = parseEvaluation(response.text);
        return {
          sampleIndex,
          score: parsed.score,
          critique: parsed.critique,
          wellFormed: parsed.wellFormed,
          reply: response.text,
          ...(parsed.error ? { error: parsed.error } : {}),
          cached: response.usage.cached,
        };
      } catch (error) {
        if (!(error instanceof ModelCallError) || error.fatalForRun) throw error;
        return { sampleIndex, score: null, critique: null, wellFormed: false, reply: null, error: `call failed: ${error.message}`, callFailed: true, cached: false };
      }
    }),
  );
}
