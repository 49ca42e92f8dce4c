/**
 * TAG-EQA's LLM + ConceptGraphs baseline (seed 002, section 4 "Baselines", Table 2): a
 * ConceptGraph of the trajectory, then one LLM call.
 *
 * The graph is eqakit's object-centric memory (`buildMemory`, src/agents/memory/), built from
 * every frame of the recording with its instance masks (walls, floors and ceilings left out),
 * as `eqa memory build` builds it with masks: objects with ids, 3-D boxes and centres, and
 * geometric relations (on, inside, above, below, next to). As ConceptGraphs does and the paper
 * says ("we generate captions for objects with our VLM and then summarize them with the LLM"),
 * each object is captioned by the captioner from up to `CAPTIONED_VIEWS` of its views (its
 * largest masks, in distinct frames; `prompts/memory-object-caption.txt`) and the LLM
 * summarises those captions into one (`prompts/tag-conceptgraphs-caption-summary.txt`); an
 * object seen in one frame keeps its one caption (nothing to summarise). Positions are given in the
 * grounding frame the questions use (`TagAnswerContext.toGrounding`); a box is the axis-aligned
 * box, in that frame, around the memory's box.
 *
 * The prompt (`prompts/tag-conceptgraphs-answer.txt`, eqakit's own: the paper's was not
 * published) holds, as the paper describes it: the history of actions and observations, one line
 * per step, each observation the list of observed object ids; for manipulation actions a short
 * description of the target object (its id, last recorded 3-D box and centre); then the complete
 * object list with the relations. The object acted on is the memory's object of the action's
 * type nearest to where the action history says it was, within `ACTION_MATCH_DISTANCE` (as the
 * program agent's perceived log matches it); none when no such object is that near.
 *
 * Decisions where the paper is silent: the box of a manipulated object is its memory instance's
 * (the memory keeps one box per instance, not one per view: an object moved elsewhere is another
 * instance there); a step's action is worded as for the Socratic baselines (`describeActions`)
 * and the answer is asked and read as theirs (`TAG_ANSWER_PARAMS`, the "A:" line).
 */
import { z } from "zod";
import { forEachConcurrent, renderPromptFile } from "../../core/index.js";
import type { TagQuestion } from "../../data/index.js";
import { buildMemory, instanceCrop, newTrace, OBJECT_CAPTION_PROMPT, parseAnswerLine, RELATIONS, tracedCall, type AgentTrace, type MemoryInstance } from "../../agents/index.js";
import type { ChatModel } from "../../models/index.js";
import type { TagActionObject } from "../history.js";
import { ACTION_MATCH_DISTANCE } from "../perceived-log.js";
import { words } from "../phrases.js";
import { STRUCTURE_LABELS } from "../program-agent.js";
import { applyTransform, type Vec3 } from "../world.js";
import { describeActions, formatPosition } from "./observations.js";
import { TAG_ANSWER_PARAMS } from "./socratic.js";
import type { TagBaseline, TagBaselineAnswer, TagBaselineModels, TagBaselineTrajectory } from "./types.js";

export const CONCEPTGRAPHS_ANSWER_PROMPT = "tag-conceptgraphs-answer";
export const CONCEPTGRAPHS_SUMMARY_PROMPT = "tag-conceptgraphs-caption-summary";
/** Views of an object captioned by the VLM before the LLM summarises them (ConceptGraphs captions several). */
export const CAPTIONED_VIEWS = 3;
const CAPTION_PARAMS = { temperature: 0.2, maxTokens: 96, seed: 1234 } as const;
const SUMMARY_PARAMS = { temperature: 0, maxTokens: 96, seed: 1234 } as const;
/** Objects captioned at once. */
const CAPTION_CONCURRENCY = 4;
/** What decides a ConceptGraph besides its models and prompts: part of a run's settings. */
export const CONCEPTGRAPH_SETTINGS = { graph: "memory-masks/every-frame", captionedViews: CAPTIONED_VIEWS, caption: CAPTION_PARAMS, summary: SUMMARY_PARAMS, answer: TAG_ANSWER_PARAMS, actionMatch: ACTION_MATCH_DISTANCE } as const;

const vec3 = z.tuple([z.number(), z.number(), z.number()]);

/** An object of the trajectory's ConceptGraph; positions in the grounding frame, metres. */
const graphObjectSchema = z.object({
  id: z.number().int(),
  type: z.string(),
  /** The LLM's summary of the captioner's captions (or the one caption, or the type when none was usable). */
  caption: z.string(),
  centre: vec3.nullable(),
  /** The axis-aligned box in the grounding frame around the memory's box. */
  box: z.object({ min: vec3, max: vec3 }).nullable(),
  /** The frames it was observed in. */
  frames: z.array(z.number().int()),
});

/** An object the agent acted on at a step (the object, or where it was put or taken from), by graph id (null when the graph has none near). */
const manipulatedSchema = z.object({ type: z.string(), object: z.number().int().nullable() });

/** One step of the trajectory: the action, where the agent was and the objects it observed. */
const graphStepSchema = z.object({
  step: z.number().int(),
  frame: z.number().int().nullable(),
  /** The action in words (`describeActions`: "put the bread in the fridge"); null at the first observation. */
  action: z.string().nullable(),
  success: z.boolean(),
  /** The objects this step's actions were done to (and their receptacles), in the action history's order. */
  manipulated: z.array(manipulatedSchema),
  /** The camera's position in the grounding frame, when the frame has a pose. */
  agent: vec3.nullable(),
  /** Graph ids of the objects observed at this step. */
  objects: z.array(z.number().int()),
});

/** A trajectory's ConceptGraph, what LLM + ConceptGraphs and LLM + API read (kept in a run's `prepared.jsonl`). */
export const tagConceptGraphSchema = z.object({
  objects: z.array(graphObjectSchema),
  relations: z.array(z.object({ subject: z.number().int(), relation: z.enum(RELATIONS), object: z.number().int() })),
  steps: z.array(graphStepSchema),
  /** The memory's notes (frames skipped, views without depth). */
  notes: z.array(z.string()),
});
export type TagConceptGraph = z.infer<typeof tagConceptGraphSchema>;
export type TagGraphObject = z.infer<typeof graphObjectSchema>;
export type TagGraphStep = z.infer<typeof graphStepSchema>;

/**
 * Builds the ConceptGraph of a trajectory: the memory from every frame's instance masks, each
 * object captioned from its views by the captioner and the captions summarised by the LLM, the
 * steps with their observed objects and manipulated objects. The calls go into `trace`; a call
 * that fails for good throws its `ModelCallError` (the trajectory's questions fail).
 */
export async function buildTagConceptGraph(trajectory: TagBaselineTrajectory, models: TagBaselineModels, trace: AgentTrace): Promise<TagConceptGraph> {
  const { episode, log, tag } = trajectory;
  const { graph } = await buildMemory(episode, { sampling: { kind: "every", step: 1 }, detector: null, ignoredMaskLabels: STRUCTURE_LABELS });
  trace.frames = graph.frames;
  const captions = new Map<number, string>();
  await forEachConcurrent(graph.instances, CAPTION_CONCURRENCY, async (instance) => {
    captions.set(instance.id, await captionObject(trajectory, instance, models, trace));
  });
  const toGrounding = tag.toGrounding;
  const objects: TagGraphObject[] = graph.instances.map((instance) => ({
    id: instance.id,
    type: instance.label,
    caption: captions.get(instance.id) ?? instance.label,
    centre: instance.center ? roundVec(applyTransform(toGrounding, instance.center)) : null,
    box: instance.box ? groundedBox(toGrounding, instance.box) : null,
    frames: [...new Set(instance.views.map((v) => v.frame))].sort((a, b) => a - b),
  }));
  const seenAt = new Map<number, number[]>();
  for (const o of objects) for (const f of o.frames) seenAt.set(f, [...(seenAt.get(f) ?? []), o.id]);
  const manipulated = new Map<number, TagGraphStep["manipulated"]>();
  for (const a of tag.actions) {
    const named = [a.object, ...(a.target ? [a.target] : a.action === "pickup" && a.from ? [a.from] : [])];
    const list = manipulated.get(a.step) ?? [];
    for (const n of named) {
      const object = nearestObject(n, objects);
      if (!list.some((m) => m.type === n.type && m.object === object)) list.push({ type: n.type, object });
    }
    manipulated.set(a.step, list);
  }
  const actions = new Map(describeActions(log).map((a) => [a.step, a]));
  const looked = new Set(graph.frames);
  const steps: TagGraphStep[] = log.steps.map((s) => {
    const frame = typeof s.frame === "number" ? s.frame : null;
    const pose = frame !== null ? tag.poses[frame] : null;
    return {
      step: s.step,
      frame,
      action: actions.get(s.step)?.text ?? null,
      success: s.success,
      manipulated: manipulated.get(s.step) ?? [],
      agent: pose ? roundVec([pose[3]!, pose[7]!, pose[11]!]) : null,
      objects: frame !== null && looked.has(frame) ? [...(seenAt.get(frame) ?? [])].sort((a, b) => a - b) : [],
    };
  });
  trace.notes.push(`conceptgraph: ${objects.length} objects, ${graph.relations.length} relations from ${graph.frames.length} frames`);
  for (const note of graph.notes) trace.notes.push(`memory: ${note}`);
  return { objects, relations: graph.relations, steps, notes: graph.notes };
}

/** The captioner's captions of up to `CAPTIONED_VIEWS` views, summarised by the LLM when there are several. */
async function captionObject(trajectory: TagBaselineTrajectory, instance: MemoryInstance, models: TagBaselineModels, trace: AgentTrace): Promise<string> {
  const captions: string[] = [];
  for (const view of captionedViews(instance)) {
    const crop = await instanceCrop(trajectory.episode, { ...instance, bestView: view });
    const text = renderPromptFile(OBJECT_CAPTION_PROMPT, { label: instance.label });
    const response = await tracedCall(trace, models.captioner, "caption", OBJECT_CAPTION_PROMPT, { messages: [{ role: "user", content: [{ type: "text", text }, { type: "image", data: crop.data, mediaType: "image/png" }] }], ...CAPTION_PARAMS }, [crop.frame]);
    const caption = oneLine(response.text);
    // alike captions are summarised too: which calls are made depends on the views, not on the replies (so --dry-run counts them)
    if (caption.length > 0) captions.push(caption);
  }
  if (captions.length === 0) return instance.label;
  if (captions.length === 1) return captions[0]!;
  const prompt = renderPromptFile(CONCEPTGRAPHS_SUMMARY_PROMPT, { label: instance.label, captions: captions.map((c, i) => `${i + 1}. ${c}`).join("\n") });
  const summary = oneLine((await tracedCall(trace, models.llm, "caption-summary", CONCEPTGRAPHS_SUMMARY_PROMPT, { messages: [{ role: "user", content: prompt }], ...SUMMARY_PARAMS })).text);
  return summary.length > 0 ? summary : captions[0]!;
}

/** Indices of an object's views to caption: the largest masks, one per frame, largest first. */
export function captionedViews(instance: MemoryInstance, count = CAPTIONED_VIEWS): number[] {
  const order = instance.views.map((v, i) => ({ v, i })).sort((a, b) => b.v.area - a.v.area || a.v.frame - b.v.frame);
  const frames = new Set<number>();
  const chosen: number[] = [];
  for (const { v, i } of order) {
    if (chosen.length >= count) break;
    if (frames.has(v.frame)) continue;
    frames.add(v.frame);
    chosen.push(i);
  }
  return chosen;
}

/** The graph's object of this type nearest to where the action history places it, within `ACTION_MATCH_DISTANCE`. */
function nearestObject(named: TagActionObject, objects: readonly TagGraphObject[]): number | null {
  if (!named.position) return null;
  let best: number | null = null;
  let bestDistance = ACTION_MATCH_DISTANCE;
  for (const o of objects) {
    if (o.type !== named.type || !o.centre) continue;
    const d = Math.hypot(o.centre[0] - named.position[0], o.centre[1] - named.position[1], o.centre[2] - named.position[2]);
    if (d <= bestDistance) [best, bestDistance] = [o.id, d];
  }
  return best;
}

/** An object as a history line names it: "the bread [7]", with its centre and box when wanted and known. */
function nameObject(type: string, id: number | null, objects: ReadonlyMap<number, TagGraphObject>, withBoxes: boolean): string {
  const o = id === null ? undefined : objects.get(id);
  if (!o) return `the ${words(type)} (not in the graph)`;
  if (!withBoxes) return `the ${words(type)} [${o.id}]`;
  const where = [o.centre ? `centre ${formatPosition(o.centre)}` : undefined, o.box ? `box ${formatBox(o.box)}` : undefined].filter((x) => x !== undefined);
  return `the ${words(type)} [${o.id}${where.length > 0 ? `: ${where.join(", ")}` : ""}]`;
}

/**
 * What the agent did at a step, in words, with whether it succeeded and, for a manipulation,
 * the objects acted on by graph id (with the last recorded box and centre when `withBoxes`).
 */
export function describeStep(step: TagGraphStep, objects: ReadonlyMap<number, TagGraphObject>, withBoxes: boolean): string {
  if (step.action === null) return "first observation";
  const acted = step.manipulated.length > 0 ? ` (${step.manipulated.map((m) => nameObject(m.type, m.object, objects, withBoxes)).join("; ")})` : "";
  return `${step.action}${acted}, ${step.success ? "succeeded" : "failed"}`;
}

/** The history of actions and observations, one line per step: what the agent did, where it was, the ids it observed. */
export function renderGraphHistory(graph: TagConceptGraph): string {
  const objects = new Map(graph.objects.map((o) => [o.id, o]));
  return graph.steps
    .map((s) => {
      const at = s.agent ? `, you at ${formatPosition(s.agent)}` : "";
      return `- step ${s.step}${at}: ${describeStep(s, objects, true)}; observed ${s.objects.length > 0 ? s.objects.join(", ") : "nothing"}`;
    })
    .join("\n");
}

/** The object list: id, type, caption, centre and box. */
export function renderGraphObjects(graph: TagConceptGraph): string {
  if (graph.objects.length === 0) return "(no objects)";
  return graph.objects
    .map((o) => {
      const where = [o.centre ? `centre ${formatPosition(o.centre)}` : "position unknown", ...(o.box ? [`box ${formatBox(o.box)}`] : [])];
      return `- [${o.id}] ${words(o.type)}: ${o.caption}; ${where.join(", ")}`;
    })
    .join("\n");
}

/** The relations: "[3] cup on [1] countertop". */
export function renderGraphRelations(graph: TagConceptGraph): string {
  if (graph.relations.length === 0) return "(no relations)";
  const type = new Map(graph.objects.map((o) => [o.id, words(o.type)]));
  return graph.relations.map((r) => `- [${r.subject}] ${type.get(r.subject) ?? "object"} ${r.relation} [${r.object}] ${type.get(r.object) ?? "object"}`).join("\n");
}

/** TAG-EQA's LLM + ConceptGraphs: the whole graph and history in one prompt. */
export const conceptGraphsBaseline: TagBaseline<TagConceptGraph> = {
  name: "conceptgraphs",
  captions: true,
  prompts: [OBJECT_CAPTION_PROMPT, CONCEPTGRAPHS_SUMMARY_PROMPT, CONCEPTGRAPHS_ANSWER_PROMPT],
  settings: CONCEPTGRAPH_SETTINGS,
  preparedSchema: tagConceptGraphSchema,
  prepare: (trajectory, models, trace) => buildTagConceptGraph(trajectory, models, trace),
  async answer(question: TagQuestion, graph: TagConceptGraph, _trajectory: TagBaselineTrajectory, models: TagBaselineModels): Promise<TagBaselineAnswer> {
    const trace = newTrace("conceptgraphs");
    const prompt = renderPromptFile(CONCEPTGRAPHS_ANSWER_PROMPT, { history: renderGraphHistory(graph), objects: renderGraphObjects(graph), relations: renderGraphRelations(graph), question: question.question });
    return { answer: await tagAnswerCall(trace, models.llm, CONCEPTGRAPHS_ANSWER_PROMPT, prompt), trace };
  },
};

/** The answer call of a rendered prompt: its answer (the "A:" line, as the Socratic baselines read it), also set as the trace's. */
export async function tagAnswerCall(trace: AgentTrace, llm: ChatModel, prompt: string, text: string): Promise<string | null> {
  const response = await tracedCall(trace, llm, "answer", prompt, { messages: [{ role: "user", content: text }], ...TAG_ANSWER_PARAMS });
  trace.agentAnswer = parseAnswerLine(response.text);
  return trace.agentAnswer;
}

function oneLine(text: string | null): string {
  return (text ?? "").replace(/\s+/g, " ").trim();
}

function round(v: number): number {
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? 0 : r;
}

function roundVec(p: readonly number[]): Vec3 {
  return [round(p[0]!), round(p[1]!), round(p[2]!)];
}

/** The axis-aligned box, in the grounding frame, around a world box (its eight corners moved). */
function groundedBox(toGrounding: readonly number[], box: { min: readonly number[]; max: readonly number[] }): { min: Vec3; max: Vec3 } {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  for (let c = 0; c < 8; c++) {
    const corner = [c & 1 ? box.max[0]! : box.min[0]!, c & 2 ? box.max[1]! : box.min[1]!, c & 4 ? box.max[2]! : box.min[2]!];
    const p = applyTransform(toGrounding, corner);
    for (let a = 0; a < 3; a++) {
      min[a] = Math.min(min[a]!, p[a]!);
      max[a] = Math.max(max[a]!, p[a]!);
    }
  }
  return { min: roundVec(min), max: roundVec(max) };
}

function formatBox(box: { min: Vec3; max: Vec3 }): string {
  return `[${formatPosition(box.min)}, ${formatPosition(box.max)}]`;
}
