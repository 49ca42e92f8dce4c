import { UserError, loadPromptFile, renderPromptFile, type Question } from "../core/index.js";
import type { Episode, EpisodeFrameImage, SamplingSpec } from "../episodes/index.js";
import type { ChatModel } from "../models/index.js";
import { BLIND_PROMPT, OPENEQA_ANSWER_PARAMS } from "./blind.js";
import { imagePart, newTrace, parseAnswerLine, promptHashes, sampledImages, tracedCall } from "./calls.js";
import { forceGuess, FORCE_GUESS_PROMPT } from "./force-guess.js";
import type { FrameOptions } from "./vlm.js";
import type { Agent, AgentAnswer, AgentTrace } from "./types.js";

export const CAPTION_PROMPT = "socratic-caption";
export const SOCRATIC_ANSWER_PROMPT = "socratic-answer";
/** Frames captioned per question unless told otherwise. */
export const SOCRATIC_DEFAULT_FRAMES = 15;
const CAPTION_PARAMS = { temperature: 0.2, maxTokens: 256, seed: 1234 } as const;

/**
 * OpenEQA's Socratic LLM with frame captions (Fig. 7): a captioning model describes each of K
 * frames, then a language model answers from the captions. A frame is captioned once per
 * captioner however many questions use it (in-process, and across runs by the model-call cache).
 */
export class SocraticAgent implements Agent {
  readonly name = "socratic";
  readonly needsEpisode = true;
  readonly configuration: Record<string, unknown>;
  private readonly sampling: SamplingSpec;
  private readonly captions = new Map<string, Promise<string | null>>();

  constructor(
    private readonly model: ChatModel,
    private readonly captioner: ChatModel,
    private readonly options: FrameOptions & { forceGuess: boolean },
  ) {
    this.sampling = options.sampling ?? { kind: "uniform", count: SOCRATIC_DEFAULT_FRAMES };
    this.configuration = {
      agent: this.name,
      model: model.name,
      captioner: captioner.name,
      sampling: this.sampling,
      image: options.image ?? {},
      parameters: { answer: OPENEQA_ANSWER_PARAMS, caption: CAPTION_PARAMS },
      forceGuess: options.forceGuess,
      prompts: promptHashes([CAPTION_PROMPT, SOCRATIC_ANSWER_PROMPT, ...(options.forceGuess ? [FORCE_GUESS_PROMPT, BLIND_PROMPT] : [])]),
    };
  }

  async answer(question: Question, episode: Episode | undefined): Promise<AgentAnswer> {
    if (!episode) throw new UserError("the socratic agent needs frames", { id: question.questionId }, "pass --frames DIR");
    const trace = newTrace(this.name);
    const images = await sampledImages(episode, this.sampling, this.options.image, trace);
    const captions = await Promise.all(images.map((image) => this.caption(image, trace)));
    trace.captions = Object.fromEntries(images.map((image, i) => [String(image.index), captions[i] ?? ""]));
    const described = images.map((image, i) => `Frame ${image.index}: ${(captions[i] ?? "").replace(/\s+/g, " ").trim()}`).join("\n");
    const prompt = renderPromptFile(SOCRATIC_ANSWER_PROMPT, { captions: described, question: question.question });
    const response = await tracedCall(trace, this.model, "answer", SOCRATIC_ANSWER_PROMPT, { messages: [{ role: "user", content: prompt }], ...OPENEQA_ANSWER_PARAMS });
    trace.agentAnswer = parseAnswerLine(response.text);
    const answer = this.options.forceGuess ? await forceGuess(question, trace.agentAnswer, this.model, trace) : trace.agentAnswer;
    return { answer, trace };
  }

  /** One caption per frame content and captioner; concurrent questions share the call. */
  private caption(image: EpisodeFrameImage, trace: AgentTrace): Promise<string | null> {
    const key = `${this.captioner.name}\u0000${image.sha256}`;
    let caption = this.captions.get(key);
    if (!caption) {
      const instruction = loadPromptFile(CAPTION_PROMPT).text.trim();
      caption = tracedCall(trace, this.captioner, "caption", CAPTION_PROMPT, {
        messages: [{ role: "user", content: [{ type: "text", text: instruction }, imagePart(image)] }],
        ...CAPTION_PARAMS,
      }, [image.index]).then((r) => r.text);
      // a failed caption is not remembered: the next question asks again
      caption.catch(() => this.captions.delete(key));
      this.captions.set(key, caption);
    } else {
      trace.notes.push(`caption of frame ${image.index} reused`);
    }
    return caption;
  }
}
