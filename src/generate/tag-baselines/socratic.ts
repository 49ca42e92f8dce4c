/**
 * TAG-EQA's Socratic LLM baselines (seed 002, section 4): "Socratic LLM + Image captions"
 * (after OpenEQA's Socratic LLM) and "+ Object recognition".
 *
 * Preparation, once per trajectory: every observation's objects from the ground-truth masks
 * (`observeTrajectory`), up to K = 50 observations kept by the minimum spanning tree of events
 * and objects (`selectObservations`), and a caption of each kept frame by the captioner.
 * - IC: the captioner is asked OpenEQA's Socratic caption (`prompts/socratic-caption.txt`).
 * - IC + OR: "We add the visible objects tags to the VLM prompt to obtain object-focused image
 *   captions" (`prompts/tag-socratic-caption-objects.txt`, the frame's visible types), "and add a
 *   list of objects with their estimated 3D positions to the observation description" (each
 *   visible object's type and its position from depth, in the grounding frame).
 * Answering, once per question: the LLM gets the history in step order, every action in words
 * with whether it succeeded and every kept observation with its caption and the agent's position
 * (`prompts/tag-socratic-answer.txt`), and answers in text, which `eqa score-tag` reads with its
 * judge's extraction. The paper used Gemma 2 9B and CogVLM 2; here they are the user's models.
 */
import { z } from "zod";
import { loadPromptFile, renderPromptFile } from "../../core/index.js";
import type { TagQuestion } from "../../data/index.js";
import { imagePart, newTrace, parseAnswerLine, tracedCall, type AgentTrace } from "../../agents/index.js";
import type { ChatModel } from "../../models/index.js";
import { words } from "../phrases.js";
import { describeActions, formatPosition, observeTrajectory, selectObservations, TAG_OBSERVATION_LIMIT, type TagActionDescription } from "./observations.js";
import type { TagBaseline, TagBaselineAnswer, TagBaselineModels, TagBaselineName, TagBaselineTrajectory } from "./types.js";

export const TAG_CAPTION_PROMPT = "socratic-caption";
export const TAG_OBJECT_CAPTION_PROMPT = "tag-socratic-caption-objects";
export const TAG_SOCRATIC_ANSWER_PROMPT = "tag-socratic-answer";
/** The captioner's parameters (as eqakit's OpenEQA Socratic agent) and the LLM's (a longer reply: answers list objects with positions). */
export const TAG_CAPTION_PARAMS = { temperature: 0.2, maxTokens: 256, seed: 1234 } as const;
export const TAG_ANSWER_PARAMS = { temperature: 0.2, maxTokens: 512, seed: 1234 } as const;

const vec3 = z.tuple([z.number(), z.number(), z.number()]);
const preparedSchema = z.object({
  observations: z.array(
    z.object({
      step: z.number().int(),
      frame: z.number().int(),
      position: vec3.nullable(),
      caption: z.string(),
      /** IC + OR: the visible objects with their estimated positions. */
      objects: z.array(z.object({ type: z.string(), position: vec3.nullable() })).optional(),
    }),
  ),
  actions: z.array(z.object({ step: z.number().int(), text: z.string(), success: z.boolean() })),
  /** Of the kept observations, how many the minimum spanning tree made essential. */
  essential: z.number().int(),
  /** Observations the trajectory has. */
  available: z.number().int(),
});
export type SocraticPrepared = z.infer<typeof preparedSchema>;

/** One observation line of the history: its step, the agent's position, the caption and (IC + OR) the objects with positions. */
function observationLine(o: SocraticPrepared["observations"][number]): string {
  const where = o.position ? ` at ${formatPosition(o.position)}` : "";
  const caption = o.caption.replace(/\s+/g, " ").trim();
  const objects = o.objects === undefined ? "" : ` Objects: ${o.objects.length === 0 ? "none recognised" : o.objects.map((x) => `${words(x.type)}${x.position ? ` ${formatPosition(x.position)}` : ""}`).join(", ")}.`;
  return `Step ${o.step}: observation${where}: ${caption}${objects}`;
}

function actionLine(a: TagActionDescription): string {
  return `Step ${a.step}: action: ${a.text} (${a.success ? "succeeded" : "failed"})`;
}

/** The history the LLM reads: actions and kept observations in step order (a step's action before what was seen after it). */
export function socraticHistory(prepared: SocraticPrepared): string {
  const lines: { step: number; order: number; text: string }[] = [
    ...prepared.actions.map((a) => ({ step: a.step, order: 0, text: actionLine(a) })),
    ...prepared.observations.map((o) => ({ step: o.step, order: 1, text: observationLine(o) })),
  ];
  lines.sort((a, b) => a.step - b.step || a.order - b.order);
  return lines.map((l) => l.text).join("\n");
}

/** Captions one frame: with the visible objects' types for IC + OR. */
async function caption(trajectory: TagBaselineTrajectory, frame: number, types: string[] | null, captioner: ChatModel, trace: AgentTrace): Promise<string> {
  const [image] = await trajectory.episode.images([frame]);
  const prompt = types === null ? loadPromptFile(TAG_CAPTION_PROMPT).text.trim() : renderPromptFile(TAG_OBJECT_CAPTION_PROMPT, { objects: types.length === 0 ? "none recognised" : types.join(", ") });
  const response = await tracedCall(trace, captioner, "caption", types === null ? TAG_CAPTION_PROMPT : TAG_OBJECT_CAPTION_PROMPT, { messages: [{ role: "user", content: [{ type: "text", text: prompt }, imagePart(image!)] }], ...TAG_CAPTION_PARAMS }, [frame]);
  return response.text ?? "";
}

/** The two Socratic baselines: `objects` adds object recognition (IC + OR). */
export function socraticBaseline(name: Extract<TagBaselineName, "socratic-ic" | "socratic-ic-or">, objects: boolean, limit = TAG_OBSERVATION_LIMIT): TagBaseline<SocraticPrepared> {
  return {
    name,
    captions: true,
    prompts: [objects ? TAG_OBJECT_CAPTION_PROMPT : TAG_CAPTION_PROMPT, TAG_SOCRATIC_ANSWER_PROMPT],
    settings: { observations: limit, caption: TAG_CAPTION_PARAMS, answer: TAG_ANSWER_PARAMS, selection: "mst/1" },
    preparedSchema,
    async prepare(trajectory: TagBaselineTrajectory, models: TagBaselineModels, trace: AgentTrace): Promise<SocraticPrepared> {
      const all = await observeTrajectory(trajectory);
      const selection = selectObservations(all, trajectory.log.events, limit);
      const kept = selection.indices.map((i) => all[i]!);
      trace.frames = kept.map((o) => o.frame);
      const captions = await Promise.all(kept.map((o) => caption(trajectory, o.frame, objects ? [...new Set(o.objects.map((x) => words(x.type)))] : null, models.captioner, trace)));
      trace.captions = Object.fromEntries(kept.map((o, i) => [String(o.frame), captions[i]!]));
      trace.notes.push(kept.length === all.length ? `all ${all.length} observations kept (no more than ${limit})` : `${kept.length} of ${all.length} observations kept, ${selection.essential} of them by the minimum spanning tree of events and objects`);
      return {
        observations: kept.map((o, i) => ({
          step: o.step,
          frame: o.frame,
          position: o.position,
          caption: captions[i]!,
          ...(objects ? { objects: o.objects.map((x) => ({ type: x.type, position: x.position })) } : {}),
        })),
        actions: describeActions(trajectory.log),
        essential: selection.essential,
        available: all.length,
      };
    },
    async answer(question: TagQuestion, prepared: SocraticPrepared, _trajectory: TagBaselineTrajectory, models: TagBaselineModels): Promise<TagBaselineAnswer> {
      const trace = newTrace(name);
      trace.frames = prepared.observations.map((o) => o.frame);
      const prompt = renderPromptFile(TAG_SOCRATIC_ANSWER_PROMPT, { history: socraticHistory(prepared), question: question.question });
      const response = await tracedCall(trace, models.llm, "answer", TAG_SOCRATIC_ANSWER_PROMPT, { messages: [{ role: "user", content: prompt }], ...TAG_ANSWER_PARAMS });
      trace.agentAnswer = parseAnswerLine(response.text);
      return { answer: trace.agentAnswer, trace };
    },
  };
}
