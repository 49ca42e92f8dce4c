/**
 * The model-driven form of the Mixed EQA agents: the same loop (what to retrieve from the
 * history, whether and where to walk, when to stop), then the user's VLM answers in words from
 * the frames retrieved from the history and those seen now, each labelled with when it was seen
 * (`prompts/mixed-answer.txt`). The answer is scored with LLM-Match against the episode's answer
 * and alternatives.
 */
import { loadPromptFile, pythonFormat, pythonStrip } from "../../core/index.js";
import { loadSharp, openEpisode, prepareImage, type ImageOptions } from "../../episodes/index.js";
import type { ChatModel, ChatRequest, ContentPart } from "../../models/index.js";
import { imagePart, newTrace, parseAnswerLine, promptHashes, tracedCall } from "../calls.js";
import type { AgentTrace } from "../types.js";
import type { MixedHistory } from "./types.js";

export const MIXED_ANSWER_PROMPT = "mixed-answer";
/** At most this many frames seen now are shown, spread from first to last (the last always among them). */
export const MIXED_NOW_FRAMES = 6;
/** At most this many history frames are shown. */
export const MIXED_HISTORY_FRAMES = 8;

/** The model of a model-driven agent and how its images are prepared. */
export interface MixedModel {
  chat: ChatModel;
  image?: ImageOptions;
}

export function mixedModelConfiguration(model: MixedModel): Record<string, unknown> {
  return { model: model.chat.name, image: model.image ?? {}, prompts: promptHashes([MIXED_ANSWER_PROMPT]), nowFrames: MIXED_NOW_FRAMES, historyFrames: MIXED_HISTORY_FRAMES };
}

function spread(count: number, most: number): number[] {
  if (count <= 0) return [];
  if (count <= most) return Array.from({ length: count }, (_, i) => i);
  return [...new Set(Array.from({ length: most }, (_, i) => Math.round((i * (count - 1)) / (most - 1))))];
}

/** The retrieved history frames, each labelled with when it was seen, at most `MIXED_HISTORY_FRAMES` a day. */
async function historyParts(model: MixedModel, history: MixedHistory, retrieved: readonly { day: number; frame: number }[]): Promise<ContentPart[]> {
  const content: ContentPart[] = [];
  for (const day of history.days) {
    const wanted = retrieved.filter((f) => f.day === day.day).slice(0, MIXED_HISTORY_FRAMES).map((f) => f.frame);
    if (wanted.length === 0) continue;
    const episode = await openEpisode(day.frames, `${history.scene}-day-${day.day}`);
    for (const image of await episode.images(wanted.filter((i) => i < episode.frameCount), model.image)) {
      content.push({ type: "text", text: `${day.when} (day ${day.day}), frame ${image.index}:` }, imagePart(image));
    }
  }
  return content;
}

/** The one request of a model-driven agent: the prompt's instructions, the frames, then its question. */
function answerRequest(question: string, history: MixedHistory, frames: readonly ContentPart[]): ChatRequest {
  const days = history.days.map((d) => `${d.when} (day ${d.day})`).join('", "');
  const text = pythonFormat(pythonStrip(loadPromptFile(MIXED_ANSWER_PROMPT).text), { question, days });
  const [intro, ask] = splitAtQuestion(text);
  return { messages: [{ role: "user", content: [{ type: "text", text: intro }, ...frames, { type: "text", text: ask }] }], temperature: 0, maxTokens: 64 };
}

/** The model's answer from the retrieved history frames and up to `MIXED_NOW_FRAMES` of the frames seen now. */
export async function answerWithModel(model: MixedModel, question: string, history: MixedHistory, retrieved: readonly { day: number; frame: number }[], now: { framesDir: string; frames: number }): Promise<{ answer: string | null; trace: AgentTrace }> {
  const trace = newTrace("mixed-model");
  const content = await historyParts(model, history, retrieved);
  if (now.frames > 0) {
    const episode = await openEpisode(now.framesDir, "now");
    const indices = spread(Math.min(now.frames, episode.frameCount), MIXED_NOW_FRAMES);
    for (const image of await episode.images(indices, model.image)) {
      content.push({ type: "text", text: `now, frame ${image.index}:` }, imagePart(image));
      trace.frames.push(image.index);
    }
  }
  const response = await tracedCall(trace, model.chat, "agent", MIXED_ANSWER_PROMPT, answerRequest(question, history, content), trace.frames);
  const answer = parseAnswerLine(response.text);
  trace.agentAnswer = answer;
  return { answer: answer === null || answer.trim() === "" ? null : answer.trim(), trace };
}

/**
 * `--dry-run`'s stand-in of `answerWithModel`'s request, at its most: the first
 * `MIXED_HISTORY_FRAMES` frames of every day (the most it retrieves) and `MIXED_NOW_FRAMES` blank
 * frames of the observation's size (the most it shows of what it sees now), asked of `model.chat`
 * (a planning model that records the request).
 */
export async function planModelAnswer(model: MixedModel, question: string, history: MixedHistory, observation: { width: number; height: number }): Promise<void> {
  const retrieved = history.days.flatMap((d) => Array.from({ length: Math.min(d.frameCount, MIXED_HISTORY_FRAMES) }, (_, frame) => ({ day: d.day, frame })));
  const content = await historyParts(model, history, retrieved);
  const sharp = await loadSharp();
  const blank = await prepareImage(await sharp({ create: { ...observation, channels: 3, background: "#808080" } }).png().toBuffer(), model.image);
  for (let k = 0; k < MIXED_NOW_FRAMES; k++) content.push({ type: "text", text: `now, frame ${k}:` }, { type: "image", data: blank.data, mediaType: blank.mediaType });
  await model.chat.complete(answerRequest(question, history, content));
}

/** The prompt's instructions, then (after the images) its question. */
function splitAtQuestion(text: string): [string, string] {
  const at = text.lastIndexOf("\nQ:");
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}
