/**
 * TAG-EQA's LLM + API baseline (seed 002, section 4 "Baselines", Fig. 8, Table 2):
 * retrieval-augmented answering over the trajectory's ConceptGraph, in two LLM calls.
 *
 * 1. Retrieval. The LLM is given the retrieval API and the question
 *    (`prompts/tag-api-retrieve.txt`) and replies with the calls it wants, as a JSON list:
 *    `[{"function": "filter_by_position", "args": {"observations": "all", "position": {"x", "y",
 *    "z"}, "type": "object_position", "threshold": 0.25}}, …]`. The paper's LLM wrote Python that
 *    called the API; eqakit never runs model-written code: the reply is DATA, validated by a zod
 *    schema (`retrievalCallsSchema`: three functions, each with its typed arguments, unknown keys
 *    refused), bounded (`RETRIEVAL_LIMITS`: reply length, nesting depth, number of calls, text
 *    length), read in time linear in its length, and eqakit runs the calls itself:
 *    - `filter_by_semantic_similarity(observations, query, type, threshold)`: observations whose
 *      action (`action`), or one of whose objects' captions (`object_caption`) or types
 *      (`object_type`), has a cosine similarity to the query of at least `threshold` (default 0.5);
 *      with an object field, each observation keeps only its matching objects.
 *    - `filter_by_position(observations, position, type, threshold, object_type)`: observations
 *      with an object (`object_position`, each keeping only those objects) or whose agent
 *      (`agent_position`) lies within `threshold` metres of the position (default 0.25 m, one
 *      step, as the paper sets it); `object_type` keeps only objects of that type.
 *    - `are_semantically_similar(text1, text2)`: the cosine similarity of the two texts; it
 *      filters nothing, and its result goes to the answer step as a checked fact.
 *    `observations` is `"all"` or `{"result": N}`, what the N-th call of the list returned (an
 *    earlier filter only, so the calls form a forest, run once each in order).
 * 2. Answer. The observations returned by the filters whose result no later call narrows (the
 *    leaves), merged by step in time order, go with the question to the LLM
 *    (`prompts/tag-api-answer.txt`). A list without any filter narrows nothing: the whole memory
 *    goes.
 *
 * An observation is one step of the ConceptGraph (`TagConceptGraph.steps`): its action (with the
 * manipulated object's graph id), whether it succeeded, the agent's position, and the objects it
 * observed with id, type, caption (the LLM's summary of the captioner's captions) and centre, all
 * in the grounding frame.
 *
 * Similarity is eqakit's embedded sentence encoder (Universal Sentence Encoder lite, the one
 * `eqa score-tag` uses) with cosine similarity; the paper used Sentence-T5 large.
 *
 * An unreadable retrieval reply (no JSON list, too long or too deep, an unknown function, a bad
 * argument, a reference to a later or non-filter call) is refused whole, none of its calls run:
 * the answer step then gets the whole memory, as with no filter (the model still answers; the
 * refusal and its reason are in the trace's notes). The calls run are the trace's `toolCalls`
 * (each with the steps it returned, or its similarity), the steps given to the answer step its
 * `retrieved`. There is one retrieval reply per question, not a second ask. A failed model call
 * fails the question.
 */
import { z } from "zod";
import { renderPromptFile } from "../../core/index.js";
import type { TagQuestion } from "../../data/index.js";
import { newTrace, OBJECT_CAPTION_PROMPT, tracedCall } from "../../agents/index.js";
import { cosineSimilarity, loadSentenceEncoder, type SentenceEncoder } from "../../models/index.js";
import {
  buildTagConceptGraph,
  CONCEPTGRAPH_SETTINGS,
  CONCEPTGRAPHS_SUMMARY_PROMPT,
  describeStep,
  tagAnswerCall,
  tagConceptGraphSchema,
  type TagConceptGraph,
  type TagGraphObject,
} from "./conceptgraphs.js";
import { formatPosition } from "./observations.js";
import type { TagBaseline, TagBaselineAnswer, TagBaselineModels, TagBaselineTrajectory } from "./types.js";

export const API_RETRIEVE_PROMPT = "tag-api-retrieve";
export const API_ANSWER_PROMPT = "tag-api-answer";
/** TAG-EQA's position threshold: one step length, metres. */
export const API_POSITION_THRESHOLD = 0.25;
/** The least cosine similarity a semantic filter keeps unless the call says otherwise. */
export const API_SEMANTIC_THRESHOLD = 0.5;
const RETRIEVE_PARAMS = { temperature: 0.2, maxTokens: 1024, seed: 1234 } as const;

/** What a retrieval reply may be: longer, deeper or larger replies are refused unread. */
export const RETRIEVAL_LIMITS = {
  /** Characters of the whole reply. */
  replyChars: 20_000,
  /** Nesting of JSON arrays and objects (a call list is 4 deep: list, call, args, position). */
  depth: 5,
  calls: 16,
  /** Characters of a query, type or text argument. */
  textChars: 500,
  /** Largest position threshold, metres. */
  maxDistance: 50,
} as const;

const text = z.string().min(1).max(RETRIEVAL_LIMITS.textChars);
const source = z.union([z.literal("all"), z.strictObject({ result: z.number().int().min(0).max(RETRIEVAL_LIMITS.calls - 1) })]).default("all");
const coordinate = z.number().finite().min(-1e4).max(1e4);

/** One call of the retrieval API, as the LLM writes it. */
const retrievalCallSchema = z.discriminatedUnion("function", [
  z.strictObject({
    function: z.literal("filter_by_semantic_similarity"),
    args: z.strictObject({
      observations: source,
      query: text,
      type: z.enum(["object_caption", "object_type", "action"]).default("object_caption"),
      threshold: z.number().min(0).max(1).default(API_SEMANTIC_THRESHOLD),
    }),
  }),
  z.strictObject({
    function: z.literal("filter_by_position"),
    args: z.strictObject({
      observations: source,
      position: z.strictObject({ x: coordinate, y: coordinate, z: coordinate }),
      type: z.enum(["object_position", "agent_position"]).default("object_position"),
      threshold: z.number().positive().max(RETRIEVAL_LIMITS.maxDistance).default(API_POSITION_THRESHOLD),
      object_type: text.optional(),
    }),
  }),
  z.strictObject({
    function: z.literal("are_semantically_similar"),
    args: z.strictObject({ text1: text, text2: text }),
  }),
]);

/** The retrieval reply's format: a list of calls. */
export const retrievalCallsSchema = z.array(retrievalCallSchema).max(RETRIEVAL_LIMITS.calls);
export type RetrievalCall = z.infer<typeof retrievalCallSchema>;

/** A retrieval reply read: its calls, or why it was refused. */
export type ParsedRetrieval = { ok: true; calls: RetrievalCall[] } | { ok: false; reason: string };

/**
 * Reads a retrieval reply as data: the JSON list in it (a fenced block, else from its first "["
 * to its last "]"), checked against `RETRIEVAL_LIMITS` before it is parsed, then validated. Each
 * step is linear in the reply's length; nothing in it is run.
 */
export function parseRetrievalCalls(reply: string | null): ParsedRetrieval {
  if (reply === null || reply.trim() === "") return { ok: false, reason: "the reply is empty" };
  if (reply.length > RETRIEVAL_LIMITS.replyChars) return { ok: false, reason: `the reply has ${reply.length} characters, over ${RETRIEVAL_LIMITS.replyChars}` };
  const candidate = jsonListIn(reply);
  if (candidate === undefined) return { ok: false, reason: "the reply holds no JSON list" };
  const depth = nestingDepth(candidate);
  if (depth > RETRIEVAL_LIMITS.depth) return { ok: false, reason: `the list is nested ${depth} deep, over ${RETRIEVAL_LIMITS.depth}` };
  let value: unknown;
  try {
    value = JSON.parse(candidate);
  } catch (error) {
    return { ok: false, reason: `the list is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const parsed = retrievalCallsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}` };
  }
  for (const [index, call] of parsed.data.entries()) {
    if (call.function === "are_semantically_similar" || call.args.observations === "all") continue;
    const from = call.args.observations.result;
    if (from >= index) return { ok: false, reason: `call ${index} narrows the result of call ${from}, which does not come before it` };
    if (parsed.data[from]!.function === "are_semantically_similar") return { ok: false, reason: `call ${index} narrows the result of call ${from}, which is not a filter` };
  }
  return { ok: true, calls: parsed.data };
}

/** The text of the JSON list in a reply: a fenced block's content, else from the first "[" to the last "]". */
function jsonListIn(reply: string): string | undefined {
  const open = reply.indexOf("```");
  if (open !== -1) {
    const bodyStart = reply.indexOf("\n", open);
    const close = bodyStart === -1 ? -1 : reply.indexOf("```", bodyStart);
    if (close !== -1) return reply.slice(bodyStart + 1, close).trim();
  }
  const first = reply.indexOf("[");
  const last = reply.lastIndexOf("]");
  return first !== -1 && last > first ? reply.slice(first, last + 1) : undefined;
}

/** The deepest nesting of arrays and objects in a JSON text (outside strings), in one pass. */
function nestingDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") deepest = Math.max(deepest, ++depth);
    else if (c === "]" || c === "}") depth--;
  }
  return deepest;
}

/** An object of an observation, as the API sees it. */
export interface ApiObject {
  id: number;
  type: string;
  caption: string;
  position: { x: number; y: number; z: number } | null;
}

/** One observation of the memory: a step of the trajectory. */
export interface ApiObservation {
  step: number;
  /** What the agent did, with whether it succeeded ("opened the fridge [12] (succeeded)"). */
  action: string;
  agent_position: { x: number; y: number; z: number } | null;
  objects: ApiObject[];
}

/** The observations of a ConceptGraph, one per step. */
export function apiObservations(graph: TagConceptGraph): ApiObservation[] {
  const objects = new Map<number, TagGraphObject>(graph.objects.map((o) => [o.id, o]));
  const point = (p: readonly number[] | null): ApiObservation["agent_position"] => (p ? { x: p[0]!, y: p[1]!, z: p[2]! } : null);
  return graph.steps.map((s) => ({
    step: s.step,
    action: describeStep(s, objects, false),
    agent_position: point(s.agent),
    objects: s.objects.flatMap((id) => {
      const o = objects.get(id);
      return o ? [{ id: o.id, type: o.type, caption: o.caption, position: point(o.centre) }] : [];
    }),
  }));
}

/** A call as run, for the trace: what it asked and what it returned. */
export interface RetrievalCallRecord {
  call: RetrievalCall;
  /** The steps a filter returned, or the similarity `are_semantically_similar` computed. */
  steps?: number[];
  similarity?: number;
}

/** What the retrieval step gives the answer step. */
export interface RetrievalResult {
  /** The observations for the answer, in step order. */
  observations: ApiObservation[];
  /** `are_semantically_similar`'s results, as lines for the answer prompt. */
  checks: string[];
  records: RetrievalCallRecord[];
}

/**
 * Runs a validated list of calls over the observations, in order; each filter reads "all" or an
 * earlier filter's result. The answer gets the leaves' observations merged by step (the objects
 * of a step that two leaves kept, both sets), or every observation when no call filtered.
 */
export async function runRetrievalCalls(calls: readonly RetrievalCall[], observations: readonly ApiObservation[], encoder: SentenceEncoder): Promise<RetrievalResult> {
  const results: (ApiObservation[] | undefined)[] = [];
  const narrowed = new Set<number>();
  const records: RetrievalCallRecord[] = [];
  const checks: string[] = [];
  for (const call of calls) {
    if (call.function === "are_semantically_similar") {
      const [a, b] = await encoder.embed([call.args.text1, call.args.text2]);
      const similarity = round(cosineSimilarity(a!, b!));
      checks.push(`are_semantically_similar(${JSON.stringify(call.args.text1)}, ${JSON.stringify(call.args.text2)}) = ${similarity.toFixed(2)}`);
      records.push({ call, similarity });
      results.push(undefined);
      continue;
    }
    const from = call.args.observations;
    const pool = from === "all" ? observations : results[from.result]!;
    if (from !== "all") narrowed.add(from.result);
    const kept = call.function === "filter_by_semantic_similarity" ? await semanticFilter(call.args, pool, encoder) : positionFilter(call.args, pool);
    records.push({ call, steps: kept.map((o) => o.step) });
    results.push(kept);
  }
  const leaves = results.filter((r, i): r is ApiObservation[] => r !== undefined && !narrowed.has(i));
  if (leaves.length === 0) return { observations: [...observations], checks, records };
  const byStep = new Map<number, ApiObservation>();
  for (const leaf of leaves) {
    for (const o of leaf) {
      const seen = byStep.get(o.step);
      if (!seen) byStep.set(o.step, o);
      else {
        const ids = new Set(seen.objects.map((x) => x.id));
        byStep.set(o.step, { ...seen, objects: [...seen.objects, ...o.objects.filter((x) => !ids.has(x.id))].sort((a, b) => a.id - b.id) });
      }
    }
  }
  return { observations: [...byStep.values()].sort((a, b) => a.step - b.step), checks, records };
}

type SemanticArgs = Extract<RetrievalCall, { function: "filter_by_semantic_similarity" }>["args"];
type PositionArgs = Extract<RetrievalCall, { function: "filter_by_position" }>["args"];

async function semanticFilter(args: SemanticArgs, pool: readonly ApiObservation[], encoder: SentenceEncoder): Promise<ApiObservation[]> {
  const textOf = (o: ApiObject): string => (args.type === "object_type" ? o.type : o.caption);
  const texts = args.type === "action" ? pool.map((o) => o.action) : pool.flatMap((o) => o.objects.map(textOf));
  const unique = [...new Set(texts)];
  const [query, ...vectors] = await encoder.embed([args.query, ...unique]);
  const similarity = new Map(unique.map((t, i) => [t, cosineSimilarity(query!, vectors[i]!)]));
  const close = (t: string): boolean => (similarity.get(t) ?? 0) >= args.threshold;
  if (args.type === "action") return pool.filter((o) => close(o.action));
  return pool.flatMap((o) => {
    const objects = o.objects.filter((x) => close(textOf(x)));
    return objects.length > 0 ? [{ ...o, objects }] : [];
  });
}

function positionFilter(args: PositionArgs, pool: readonly ApiObservation[]): ApiObservation[] {
  const { x, y, z } = args.position;
  const near = (p: ApiObject["position"]): boolean => p !== null && Math.hypot(p.x - x, p.y - y, p.z - z) <= args.threshold;
  const wanted = args.object_type?.trim().toLowerCase();
  return pool.flatMap((o) => {
    const objects = wanted ? o.objects.filter((x) => x.type.toLowerCase() === wanted) : o.objects;
    if (args.type === "agent_position") return near(o.agent_position) && (!wanted || objects.length > 0) ? [{ ...o, objects }] : [];
    const kept = objects.filter((x) => near(x.position));
    return kept.length > 0 ? [{ ...o, objects: kept }] : [];
  });
}

/** The retrieved observations as the answer prompt lists them, one line per step. */
export function renderApiObservations(observations: readonly ApiObservation[]): string {
  if (observations.length === 0) return "(nothing was retrieved)";
  const at = (p: ApiObject["position"]): string => (p ? formatPosition([p.x, p.y, p.z]) : "unknown");
  return observations
    .map((o) => {
      const seen = o.objects.length > 0 ? o.objects.map((x) => `[${x.id}] ${x.type}: ${x.caption}, at ${at(x.position)}`).join("; ") : "nothing";
      return `- step ${o.step}, you at ${at(o.agent_position)}: ${o.action}; observed ${seen}`;
    })
    .join("\n");
}

/** TAG-EQA's LLM + API: the LLM retrieves from the ConceptGraph's observations with the API, then answers from what it retrieved. */
export const llmApiBaseline: TagBaseline<TagConceptGraph> = {
  name: "llm-api",
  captions: true,
  prompts: [OBJECT_CAPTION_PROMPT, CONCEPTGRAPHS_SUMMARY_PROMPT, API_RETRIEVE_PROMPT, API_ANSWER_PROMPT],
  settings: { ...CONCEPTGRAPH_SETTINGS, retrieve: RETRIEVE_PARAMS, limits: RETRIEVAL_LIMITS, positionThreshold: API_POSITION_THRESHOLD, semanticThreshold: API_SEMANTIC_THRESHOLD, encoder: "use-lite-en" },
  preparedSchema: tagConceptGraphSchema,
  prepare: (trajectory, models, trace) => buildTagConceptGraph(trajectory, models, trace),
  async answer(question: TagQuestion, graph: TagConceptGraph, _trajectory: TagBaselineTrajectory, models: TagBaselineModels): Promise<TagBaselineAnswer> {
    const trace = newTrace("llm-api");
    const observations = apiObservations(graph);
    const instruction = renderPromptFile(API_RETRIEVE_PROMPT, {
      count: String(observations.length),
      semantic_threshold: String(API_SEMANTIC_THRESHOLD),
      position_threshold: String(API_POSITION_THRESHOLD),
      max_calls: String(RETRIEVAL_LIMITS.calls),
      question: question.question,
    });
    const reply = await tracedCall(trace, models.llm, "retrieve", API_RETRIEVE_PROMPT, { messages: [{ role: "user", content: instruction }], ...RETRIEVE_PARAMS });
    const parsed = parseRetrievalCalls(reply.text);
    let retrieved: RetrievalResult;
    if (parsed.ok) {
      retrieved = await runRetrievalCalls(parsed.calls, observations, await loadSentenceEncoder());
      trace.toolCalls = retrieved.records.map((r) => ({ round: 0, name: r.call.function, arguments: r.call.args, result: JSON.stringify(r.steps !== undefined ? { steps: r.steps } : { similarity: r.similarity }) }));
      trace.notes.push(`retrieval: ${parsed.calls.length} calls run, ${retrieved.observations.length} of ${observations.length} observations retrieved`);
    } else {
      retrieved = { observations, checks: [], records: [] };
      trace.notes.push(`retrieval reply refused (${parsed.reason}): the answer is given every observation`);
    }
    trace.retrieved = retrieved.observations.map((o) => o.step);
    const checks = retrieved.checks.length > 0 ? `\nChecks:\n${retrieved.checks.map((c) => `- ${c}`).join("\n")}\n` : "";
    const prompt = renderPromptFile(API_ANSWER_PROMPT, { observations: renderApiObservations(retrieved.observations), checks, question: question.question });
    return { answer: await tagAnswerCall(trace, models.llm, API_ANSWER_PROMPT, prompt), trace };
  },
};

function round(v: number): number {
  return Math.round(v * 100) / 100;
}
