import { UserError, loadPromptFile, pythonFormat, pythonStrip, type Question } from "../core/index.js";
import type { Episode, ImageOptions, SamplingSpec } from "../episodes/index.js";
import { ModelCallError, type ChatModel, type ChatRequest, type GenerationParams, type Protocol } from "../models/index.js";
import { BLIND_PROMPT, OPENEQA_ANSWER_PARAMS } from "./blind.js";
import { imagePart, newTrace, parseAnswerLine, promptHashes, sampledImages, tracedCall } from "./calls.js";
import { forceGuess, FORCE_GUESS_PROMPT } from "./force-guess.js";
import { checkFrameCount, oversizeReason } from "./limits.js";
import type { Agent, AgentAnswer } from "./types.js";

/** How OpenEQA's multi-frame baselines ask each provider (gpt4v.py, claude-vision.py, gemini-pro-vision.py). */
interface VlmStyle {
  prompt: string;
  frames: number;
  params: GenerationParams;
  /** gpt4v.py returns the reply as it is; the Claude and Gemini baselines take the "A:" line. */
  parse: (reply: string | null) => string | null;
}

export const VLM_STYLES: Record<Protocol, VlmStyle> = {
  openai: { prompt: "openeqa-gpt4v", frames: 50, params: OPENEQA_ANSWER_PARAMS, parse: (reply) => reply },
  anthropic: { prompt: "openeqa-claude3-vision", frames: 20, params: { maxTokens: 128, stop: ["User Query:"] }, parse: parseAnswerLine },
  google: { prompt: "openeqa-gemini-pro-vision", frames: 15, params: {}, parse: parseAnswerLine },
};

export interface FrameOptions {
  /** Frame sampling; uniform with the provider's default K when absent. */
  sampling?: SamplingSpec;
  image?: ImageOptions;
}

/**
 * The prompt split as the reference splits it: the text before "User Query:", the frames,
 * then "User Query:" and the rest with the question filled in.
 */
export function splitVisionPrompt(promptName: string, question: string): { prefix: string; suffix: string } {
  const parts = pythonStrip(loadPromptFile(promptName).text).split("User Query:");
  if (parts.length !== 2) throw new Error(`prompt ${promptName} must contain "User Query:" exactly once`);
  return { prefix: parts[0]!, suffix: `User Query:${pythonFormat(parts[1]!, { question })}` };
}

/** OpenEQA's multi-frame VLM: K frames between the prompt's two halves, in the provider's own message format. */
export class VlmAgent implements Agent {
  readonly name = "vlm";
  readonly needsEpisode = true;
  readonly configuration: Record<string, unknown>;
  private readonly style: VlmStyle;
  private readonly sampling: SamplingSpec;

  constructor(
    private readonly model: ChatModel,
    private readonly options: FrameOptions & { forceGuess: boolean },
  ) {
    const spec = model.spec;
    this.style = VLM_STYLES[spec.protocol];
    this.sampling = options.sampling ?? { kind: "uniform", count: this.style.frames };
    if (this.sampling.kind === "uniform") checkFrameCount(spec, this.sampling.count, "--num-frames");
    this.configuration = {
      agent: this.name,
      model: model.name,
      sampling: this.sampling,
      image: options.image ?? {},
      parameters: this.style.params,
      forceGuess: options.forceGuess,
      prompts: promptHashes([this.style.prompt, ...(options.forceGuess ? [FORCE_GUESS_PROMPT, BLIND_PROMPT] : [])]),
    };
  }

  async answer(question: Question, episode: Episode | undefined): Promise<AgentAnswer> {
    if (!episode) throw new UserError("the vlm agent needs frames", { id: question.questionId }, "pass --frames DIR");
    const trace = newTrace(this.name);
    const images = await sampledImages(episode, this.sampling, this.options.image, trace);
    const { prefix, suffix } = splitVisionPrompt(this.style.prompt, question.question);
    const request: ChatRequest = {
      messages: [
        {
          role: "user",
          content: [...(prefix ? [{ type: "text" as const, text: prefix }] : []), ...images.map(imagePart), { type: "text", text: suffix }],
        },
      ],
      ...this.style.params,
    };
    const tooLarge = oversizeReason(this.model.spec, request);
    if (tooLarge) throw new ModelCallError("bad_request", tooLarge, this.model.spec.baseURL);
    const response = await tracedCall(trace, this.model, "answer", this.style.prompt, request, trace.frames);
    trace.agentAnswer = this.style.parse(response.text);
    const answer = this.options.forceGuess ? await forceGuess(question, trace.agentAnswer, this.model, trace) : trace.agentAnswer;
    return { answer, trace };
  }
}
