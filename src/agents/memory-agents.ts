import { UserError, renderPromptFile, type Question } from "../core/index.js";
import type { Episode } from "../episodes/index.js";
import { cosineSimilarity, type ChatModel } from "../models/index.js";
import { BLIND_PROMPT, OPENEQA_ANSWER_PARAMS } from "./blind.js";
import { newTrace, parseAnswerLine, promptHashes, tracedCall } from "./calls.js";
import { forceGuess, FORCE_GUESS_PROMPT } from "./force-guess.js";
import { MemorySource, POSITIONS_NOTE, describeInstance, type MemorySourceOptions } from "./memory-source.js";
import { DETECT_OBJECTS_PROMPT, OBJECT_CAPTION_PROMPT, type SceneGraph } from "./memory/index.js";
import type { Agent, AgentAnswer, AgentTrace } from "./types.js";

export const SVM_ANSWER_PROMPT = "svm-answer";
export const CONCEPTGRAPH_ANSWER_PROMPT = "conceptgraph-answer";
/** OpenEQA's SVM keeps the top N = 75 instances by similarity to the question (appendix VI). */
export const SVM_TOP_N = 75;

export interface MemoryAgentOptions extends MemorySourceOptions {
  forceGuess: boolean;
}

abstract class MemoryAgent implements Agent {
  abstract readonly name: string;
  /** False when the memories are read from a folder: no frames are opened. */
  readonly needsEpisode: boolean;
  protected readonly memory: MemorySource;

  constructor(protected readonly model: ChatModel, protected readonly options: MemoryAgentOptions) {
    this.memory = new MemorySource(options);
    this.needsEpisode = !this.memory.fromFolder;
  }

  abstract get configuration(): Record<string, unknown>;
  protected abstract prompt(question: Question, graph: SceneGraph, trace: AgentTrace): Promise<{ name: string; text: string }>;

  protected basePrompts(answer: string): string[] {
    return [answer, ...(this.options.captioner ? [OBJECT_CAPTION_PROMPT] : []), ...(this.options.captioner && this.options.vlmDetect ? [DETECT_OBJECTS_PROMPT] : []), ...(this.options.forceGuess ? [FORCE_GUESS_PROMPT, BLIND_PROMPT] : [])];
  }

  async answer(question: Question, episode: Episode | undefined): Promise<AgentAnswer> {
    if (!episode && !this.memory.fromFolder) throw new UserError(`the ${this.name} agent needs frames`, { id: question.questionId }, "pass --frames DIR, or --memory DIR");
    const trace = newTrace(this.name);
    const graph = await this.memory.graph(question.episodeHistory, episode, trace);
    const { name, text } = await this.prompt(question, graph, trace);
    const response = await tracedCall(trace, this.model, "answer", name, { messages: [{ role: "user", content: text }], ...OPENEQA_ANSWER_PARAMS });
    trace.agentAnswer = parseAnswerLine(response.text);
    const answer = this.options.forceGuess ? await forceGuess(question, trace.agentAnswer, this.model, trace) : trace.agentAnswer;
    return { answer, trace };
  }
}

export interface SvmOptions extends MemoryAgentOptions {
  /** Instances kept (default 75). */
  topN?: number;
  /** Give each instance's 3-D box centre and size (default true); false is Table XI's crop-only ablation. */
  boxes?: boolean;
}

/**
 * OpenEQA's Socratic LLM with Sparse Voxel Map captions (appendix VI): the top N instances
 * by similarity to the question, their captions with their 3-D box centres (or without: the
 * crop-only ablation of Table XI), then the LLM. Similarity is the sentence encoder's,
 * between the question and each instance's caption (the paper's is CLIP's, between the
 * question and the crop).
 */
export class SvmAgent extends MemoryAgent {
  readonly name = "svm";

  constructor(model: ChatModel, private readonly svm: SvmOptions) {
    super(model, svm);
  }

  get configuration(): Record<string, unknown> {
    return {
      agent: this.name,
      model: this.model.name,
      memory: this.memory.configuration,
      topN: this.svm.topN ?? SVM_TOP_N,
      boxes: this.svm.boxes ?? true,
      parameters: { answer: OPENEQA_ANSWER_PARAMS },
      forceGuess: this.options.forceGuess,
      prompts: promptHashes(this.basePrompts(SVM_ANSWER_PROMPT)),
    };
  }

  protected async prompt(question: Question, graph: SceneGraph, trace: AgentTrace): Promise<{ name: string; text: string }> {
    const encoder = await this.memory.encoder();
    const [q, ...captions] = await encoder.embed([question.question, ...graph.instances.map((i) => i.caption)]);
    const ranked = graph.instances.map((instance, i) => ({ instance, score: cosineSimilarity(q!, captions[i]!) })).sort((a, b) => b.score - a.score || a.instance.id - b.instance.id);
    const kept = ranked.slice(0, this.svm.topN ?? SVM_TOP_N);
    trace.notes.push(`svm: ${kept.length} of ${graph.instances.length} instances kept by similarity to the question`);
    const boxes = (this.svm.boxes ?? true) && graph.hasPositions;
    const objects = kept.length > 0 ? kept.map((k) => describeInstance(k.instance, boxes)).join("\n") : "(no objects were found)";
    const positions_note = !graph.hasPositions ? POSITIONS_NOTE.missing : boxes ? POSITIONS_NOTE.known : POSITIONS_NOTE.hidden;
    return { name: SVM_ANSWER_PROMPT, text: renderPromptFile(SVM_ANSWER_PROMPT, { objects, positions_note, question: question.question }) };
  }
}

/**
 * TAG-EQA's LLM + ConceptGraphs baseline on EM-EQA: every instance with its caption and box,
 * and the geometric relations between them, summarised as text for the LLM.
 */
export class ConceptGraphAgent extends MemoryAgent {
  readonly name = "conceptgraph";

  get configuration(): Record<string, unknown> {
    return {
      agent: this.name,
      model: this.model.name,
      memory: this.memory.configuration,
      parameters: { answer: OPENEQA_ANSWER_PARAMS },
      forceGuess: this.options.forceGuess,
      prompts: promptHashes(this.basePrompts(CONCEPTGRAPH_ANSWER_PROMPT)),
    };
  }

  protected async prompt(question: Question, graph: SceneGraph): Promise<{ name: string; text: string }> {
    const objects = graph.instances.length > 0 ? graph.instances.map((i) => describeInstance(i, graph.hasPositions)).join("\n") : "(no objects were found)";
    const name = (id: number): string => `[${id}] ${graph.instances[id]?.label ?? "object"}`;
    const relations = graph.relations.length > 0 ? graph.relations.map((r) => `- ${name(r.subject)} is ${r.relation} ${name(r.object)}`).join("\n") : graph.hasPositions ? "(none found)" : "(unknown: no 3-D positions)";
    const positions_note = graph.hasPositions ? POSITIONS_NOTE.known : POSITIONS_NOTE.missing;
    return { name: CONCEPTGRAPH_ANSWER_PROMPT, text: renderPromptFile(CONCEPTGRAPH_ANSWER_PROMPT, { objects, relations, positions_note, question: question.question }) };
  }
}
