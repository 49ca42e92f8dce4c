import { z } from "zod";
import { UserError, loadPromptFile, pythonFormat, pythonStrip, renderPromptFile, type Question } from "../core/index.js";
import type { Episode } from "../episodes/index.js";
import { cosineSimilarity, type ChatMessage, type ChatModel, type SentenceEncoder, type ToolCall, type ToolDefinition } from "../models/index.js";
import { BLIND_PROMPT, OPENEQA_ANSWER_PARAMS } from "./blind.js";
import { newTrace, parseAnswerLine, promptHashes, tracedCall } from "./calls.js";
import { forceGuess, FORCE_GUESS_PROMPT } from "./force-guess.js";
import { MemorySource, POSITIONS_NOTE, formatPoint, type MemorySourceOptions } from "./memory-source.js";
import { DETECT_OBJECTS_PROMPT, OBJECT_CAPTION_PROMPT, type SceneGraph } from "./memory/index.js";
import type { Agent, AgentAnswer, AgentTrace } from "./types.js";

export const RETRIEVAL_PROMPT = "retrieval-retrieve";
export const RETRIEVAL_TEXT_TOOLS_PROMPT = "retrieval-text-tools";
export const RETRIEVAL_ANSWER_PROMPT = "retrieval-answer";
/** TAG-EQA's position threshold: one step length. */
export const POSITION_THRESHOLD = 0.25;
export const SEMANTIC_THRESHOLD = 0.5;
/** Rounds of tool calls before the retrieval step stops. */
export const MAX_TOOL_ROUNDS = 6;
const RETRIEVE_PARAMS = { temperature: 0.2, maxTokens: 512, seed: 1234 } as const;

/** One observation of the memory, as the tools see and return it. */
export interface Observation {
  id: number;
  object_type: string;
  object_caption: string;
  object_position: { x: number; y: number; z: number } | null;
  agent_position: { x: number; y: number; z: number } | null;
  frames: number[];
}

/** TAG-EQA's retrieval API (Fig. 8), with `observations` as "all" or ids of earlier results. */
export const RETRIEVAL_TOOLS: ToolDefinition[] = [
  {
    name: "filter_by_semantic_similarity",
    description: "Filter observations by semantic similarity between the query and the observation's object caption or object type. Returns the observations at or above the threshold, most similar first, with their similarity.",
    parameters: {
      type: "object",
      properties: {
        observations: { description: 'The observations to filter: "all", or a list of observation ids', anyOf: [{ type: "string", enum: ["all"] }, { type: "array", items: { type: "integer" } }] },
        query: { type: "string", description: "Natural-language text to compare with" },
        type: { type: "string", enum: ["object_caption", "object_type"], description: "Which text of the observation to compare" },
        threshold: { type: "number", description: `Least cosine similarity kept, 0 to 1 (default ${SEMANTIC_THRESHOLD})` },
      },
      required: ["observations", "query", "type"],
    },
  },
  {
    name: "filter_by_position",
    description: "Filter observations by closeness to a position (x, y, z in metres, y up).",
    parameters: {
      type: "object",
      properties: {
        observations: { description: 'The observations to filter: "all", or a list of observation ids', anyOf: [{ type: "string", enum: ["all"] }, { type: "array", items: { type: "integer" } }] },
        object_type: { type: "string", description: "Keep only observations of this type of object (optional)" },
        position: { type: "object", properties: { x: { type: "number" }, y: { type: "number" }, z: { type: "number" } }, required: ["x", "y", "z"] },
        type: { type: "string", enum: ["object_position", "agent_position"], description: "Compare with the object's position or the agent's" },
        threshold: { type: "number", description: `Greatest distance in metres (default ${POSITION_THRESHOLD})` },
      },
      required: ["observations", "position", "type"],
    },
  },
  {
    name: "are_semantically_similar",
    description: "Semantic similarity of two texts, e.g. to check an object's utility from its type.",
    parameters: {
      type: "object",
      properties: { text1: { type: "string" }, text2: { type: "string" } },
      required: ["text1", "text2"],
    },
  },
];

const observationsArg = z.union([z.literal("all"), z.array(z.number().int())]).default("all");
const semanticArgs = z.object({ observations: observationsArg, query: z.string(), type: z.enum(["object_caption", "object_type"]).default("object_caption"), threshold: z.number().min(-1).max(1).default(SEMANTIC_THRESHOLD) });
const positionArgs = z.object({
  observations: observationsArg,
  object_type: z.string().optional(),
  position: z.object({ x: z.number(), y: z.number(), z: z.number() }),
  type: z.enum(["object_position", "agent_position"]).default("object_position"),
  threshold: z.number().positive().default(POSITION_THRESHOLD),
});
const similarArgs = z.object({ text1: z.string(), text2: z.string() });

/** The memory's observations: one per instance, with its best view's agent position. */
export function observationsOf(graph: SceneGraph): Observation[] {
  const agentAt = new Map(graph.agentPositions.map((a) => [a.frame, a.position]));
  const point = (p: readonly number[] | undefined): Observation["object_position"] => (p ? { x: round(p[0]!), y: round(p[1]!), z: round(p[2]!) } : null);
  return graph.instances.map((instance) => ({
    id: instance.id,
    object_type: instance.label,
    object_caption: instance.caption,
    object_position: point(instance.center),
    agent_position: point(agentAt.get(instance.views[instance.bestView]?.frame ?? -1)),
    frames: [...new Set(instance.views.map((v) => v.frame))],
  }));
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}

/** Runs the retrieval API over a memory's observations. */
export class RetrievalTools {
  /** Ids returned by the filters, in the order first returned. */
  readonly retrieved: number[] = [];

  constructor(readonly observations: Observation[], private readonly encoder: SentenceEncoder) {}

  /** The result of a call as JSON text (errors too: the model reads them and may try again). */
  async run(call: { name: string; arguments: Record<string, unknown> }): Promise<string> {
    try {
      return JSON.stringify(await this.dispatch(call));
    } catch (error) {
      const message = error instanceof z.ZodError ? error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ") : error instanceof Error ? error.message : String(error);
      return JSON.stringify({ error: message });
    }
  }

  private async dispatch(call: { name: string; arguments: Record<string, unknown> }): Promise<unknown> {
    switch (call.name) {
      case "filter_by_semantic_similarity": {
        const args = semanticArgs.parse(call.arguments);
        const pool = this.pool(args.observations);
        const [query, ...texts] = await this.encoder.embed([args.query, ...pool.map((o) => (args.type === "object_type" ? o.object_type : o.object_caption))]);
        const kept = pool
          .map((o, i) => ({ ...o, similarity: round(cosineSimilarity(query!, texts[i]!)) }))
          .filter((o) => o.similarity >= args.threshold)
          .sort((a, b) => b.similarity - a.similarity);
        this.remember(kept);
        return kept;
      }
      case "filter_by_position": {
        const args = positionArgs.parse(call.arguments);
        let pool = this.pool(args.observations);
        if (args.object_type !== undefined && args.object_type.trim() !== "") {
          const [wanted, ...types] = await this.encoder.embed([args.object_type, ...pool.map((o) => o.object_type)]);
          pool = pool.filter((o, i) => o.object_type === args.object_type || cosineSimilarity(wanted!, types[i]!) >= 0.7);
        }
        const { x, y, z } = args.position;
        const kept = pool
          .flatMap((o) => {
            const p = args.type === "agent_position" ? o.agent_position : o.object_position;
            if (!p) return [];
            const distance = Math.hypot(p.x - x, p.y - y, p.z - z);
            return distance <= args.threshold ? [{ ...o, distance: round(distance) }] : [];
          })
          .sort((a, b) => a.distance - b.distance);
        this.remember(kept);
        const missing = pool.length > 0 && pool.every((o) => (args.type === "agent_position" ? o.agent_position : o.object_position) === null);
        return missing ? { observations: kept, note: "positions are missing: the recording has no depth" } : kept;
      }
      case "are_semantically_similar": {
        const args = similarArgs.parse(call.arguments);
        const [a, b] = await this.encoder.embed([args.text1, args.text2]);
        const similarity = round(cosineSimilarity(a!, b!));
        return { similarity, similar: similarity >= SEMANTIC_THRESHOLD };
      }
      default:
        throw new Error(`no tool named ${call.name}; the tools are ${RETRIEVAL_TOOLS.map((t) => t.name).join(", ")}`);
    }
  }

  private pool(selection: "all" | number[]): Observation[] {
    if (selection === "all") return this.observations;
    const wanted = new Set(selection);
    return this.observations.filter((o) => wanted.has(o.id));
  }

  private remember(observations: readonly Observation[]): void {
    for (const o of observations) if (!this.retrieved.includes(o.id)) this.retrieved.push(o.id);
  }
}

/**
 * The text protocol for models without native tool calling: the tools are described in the
 * prompt (`prompts/retrieval-text-tools.txt`), and the model writes one line per call,
 * `CALL <tool name> <JSON object>`; eqakit answers in a user message with one line per
 * result, `RESULT <tool name>: <JSON>`. A reply without CALL lines (or with DONE) ends
 * retrieval.
 */
export function parseTextToolCalls(reply: string | null): ToolCall[] {
  if (!reply) return [];
  const calls: ToolCall[] = [];
  for (const line of reply.split(/\r?\n/)) {
    const match = /^\s*CALL\s+([A-Za-z_][\w]*)\s*(\{.*\})?\s*$/.exec(line);
    if (!match) continue;
    let args: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(match[2] ?? "{}");
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      args = { _raw: match[2] ?? "" };
    }
    calls.push({ id: `text_${calls.length}`, name: match[1]!, arguments: args });
  }
  return calls;
}

export function textToolsDescription(): string {
  return RETRIEVAL_TOOLS.map((t) => `${t.name}: ${t.description}\n  arguments (JSON Schema): ${JSON.stringify(t.parameters)}`).join("\n\n");
}

export interface RetrievalOptions extends MemorySourceOptions {
  forceGuess: boolean;
  /** Native tool calling (default), or the text protocol for models without it. */
  tools?: "native" | "text";
  maxRounds?: number;
}

/** A tool call as the trace keeps it. */
export interface TracedToolCall {
  round: number;
  name: string;
  arguments: Record<string, unknown>;
  result: string;
}

/**
 * TAG-EQA's LLM + API baseline (section 4, Fig. 8) on eqakit's memory: first the LLM
 * retrieves with the tools `filter_by_semantic_similarity`, `filter_by_position` (0.25 m by
 * default) and `are_semantically_similar` over the memory's observations, then it answers
 * from what it retrieved, in a second call. Similarity is the embedded sentence encoder's
 * (TAG-EQA used Sentence-T5).
 */
export class RetrievalAgent implements Agent {
  readonly name = "retrieval";
  /** False when the memories are read from a folder: no frames are opened. */
  readonly needsEpisode: boolean;
  private readonly memory: MemorySource;

  constructor(private readonly model: ChatModel, private readonly options: RetrievalOptions) {
    this.memory = new MemorySource(options);
    this.needsEpisode = !this.memory.fromFolder;
  }

  get configuration(): Record<string, unknown> {
    const text = this.options.tools === "text";
    return {
      agent: this.name,
      model: this.model.name,
      memory: this.memory.configuration,
      tools: this.options.tools ?? "native",
      maxRounds: this.options.maxRounds ?? MAX_TOOL_ROUNDS,
      parameters: { retrieve: RETRIEVE_PARAMS, answer: OPENEQA_ANSWER_PARAMS },
      forceGuess: this.options.forceGuess,
      prompts: promptHashes([
        RETRIEVAL_PROMPT,
        ...(text ? [RETRIEVAL_TEXT_TOOLS_PROMPT] : []),
        RETRIEVAL_ANSWER_PROMPT,
        ...(this.options.captioner ? [OBJECT_CAPTION_PROMPT] : []),
        ...(this.options.captioner && this.options.vlmDetect ? [DETECT_OBJECTS_PROMPT] : []),
        ...(this.options.forceGuess ? [FORCE_GUESS_PROMPT, BLIND_PROMPT] : []),
      ]),
    };
  }

  async answer(question: Question, episode: Episode | undefined): Promise<AgentAnswer> {
    if (!episode && !this.memory.fromFolder) throw new UserError("the retrieval agent needs frames", { id: question.questionId }, "pass --frames DIR, or --memory DIR");
    const trace = newTrace(this.name);
    const graph = await this.memory.graph(question.episodeHistory, episode, trace);
    const tools = new RetrievalTools(observationsOf(graph), await this.memory.encoder());
    const toolTrace: TracedToolCall[] = [];
    const positions_note = graph.hasPositions ? "" : " (both null here: the recording has no depth, so positions are missing)";
    await this.retrieve(question, graph, tools, toolTrace, positions_note, trace);
    trace.toolCalls = toolTrace;
    trace.retrieved = [...tools.retrieved];
    if (toolTrace.length === 0) trace.notes.push("retrieval: the model called no tool; it answers from no observations");
    const byId = new Map(tools.observations.map((o) => [o.id, o]));
    const retrieved = tools.retrieved.flatMap((id) => byId.get(id) ?? []);
    const observations = retrieved.length > 0 ? retrieved.map((o) => describeObservation(o)).join("\n") : "(nothing was retrieved)";
    const answerNote = graph.hasPositions ? " and the object's position and the agent's position when it saw it (x, y, z in metres, y up)." : POSITIONS_NOTE.missing;
    const prompt = renderPromptFile(RETRIEVAL_ANSWER_PROMPT, { observations, positions_note: answerNote, question: question.question });
    const response = await tracedCall(trace, this.model, "answer", RETRIEVAL_ANSWER_PROMPT, { messages: [{ role: "user", content: prompt }], ...OPENEQA_ANSWER_PARAMS });
    trace.agentAnswer = parseAnswerLine(response.text);
    const answer = this.options.forceGuess ? await forceGuess(question, trace.agentAnswer, this.model, trace) : trace.agentAnswer;
    return { answer, trace };
  }

  private async retrieve(question: Question, graph: SceneGraph, tools: RetrievalTools, toolTrace: TracedToolCall[], positionsNote: string, trace: AgentTrace): Promise<void> {
    const text = this.options.tools === "text";
    let instruction = renderPromptFile(RETRIEVAL_PROMPT, { count: String(graph.instances.length), positions_note: positionsNote, question: question.question });
    if (text) instruction += `\n\n${pythonFormat(pythonStrip(loadPromptFile(RETRIEVAL_TEXT_TOOLS_PROMPT).text), { tools: textToolsDescription() })}`;
    const messages: ChatMessage[] = [{ role: "user", content: instruction }];
    const rounds = this.options.maxRounds ?? MAX_TOOL_ROUNDS;
    for (let round = 0; round < rounds; round++) {
      const request = { messages: [...messages], ...RETRIEVE_PARAMS, ...(text ? {} : { tools: RETRIEVAL_TOOLS, toolChoice: "auto" as const }) };
      const response = await tracedCall(trace, this.model, "retrieve", text ? `${RETRIEVAL_PROMPT}+${RETRIEVAL_TEXT_TOOLS_PROMPT}` : RETRIEVAL_PROMPT, request);
      const calls = text ? parseTextToolCalls(response.text) : (response.toolCalls ?? []);
      if (calls.length === 0) return;
      const results: string[] = [];
      for (const call of calls) {
        const result = await tools.run(call);
        toolTrace.push({ round, name: call.name, arguments: call.arguments, result });
        results.push(result);
      }
      if (text) {
        messages.push({ role: "assistant", content: response.text ?? "" });
        messages.push({ role: "user", content: calls.map((c, i) => `RESULT ${c.name}: ${results[i]}`).join("\n") });
        if (/^\s*DONE\s*$/m.test(response.text ?? "")) return;
      } else {
        messages.push({ role: "assistant", content: response.text ?? "", toolCalls: calls });
        calls.forEach((c, i) => messages.push({ role: "tool", content: results[i]!, toolCallId: c.id, toolName: c.name }));
      }
    }
    trace.notes.push(`retrieval: stopped after ${rounds} rounds of tool calls`);
  }
}

function describeObservation(o: Observation): string {
  const caption = o.object_caption === o.object_type ? o.object_type : `${o.object_caption} (${o.object_type})`;
  const at = (p: Observation["object_position"]): string => (p ? formatPoint([p.x, p.y, p.z]) : "unknown");
  return `- [${o.id}] ${caption}; object at ${at(o.object_position)}, seen by the agent from ${at(o.agent_position)}; frames ${o.frames.join(", ")}`;
}
