import { renderPromptFile, type Question } from "../core/index.js";
import type { ChatModel } from "../models/index.js";
import { newTrace, parseAnswerLine, promptHashes, tracedCall } from "./calls.js";
import type { Agent, AgentAnswer, AgentTrace } from "./types.js";

/** The parameters of OpenEQA's baselines (gpt4.py, gpt4v.py): temperature 0.2, 128 tokens, seed 1234. */
export const OPENEQA_ANSWER_PARAMS = { temperature: 0.2, maxTokens: 128, seed: 1234 } as const;

export const BLIND_PROMPT = "openeqa-blind-llm";

/** Asks the blind-LLM prompt and returns the parsed answer; the call goes into `trace`. */
export async function blindAnswer(question: Question, model: ChatModel, trace: AgentTrace, role = "answer"): Promise<string | null> {
  const prompt = renderPromptFile(BLIND_PROMPT, { question: question.question });
  const response = await tracedCall(trace, model, role, BLIND_PROMPT, { messages: [{ role: "user", content: prompt }], ...OPENEQA_ANSWER_PARAMS });
  return parseAnswerLine(response.text);
}

/** OpenEQA's blind LLM: the question alone, no frames. */
export class BlindAgent implements Agent {
  readonly name = "blind";
  readonly needsEpisode = false;
  readonly configuration: Record<string, unknown>;

  constructor(private readonly model: ChatModel) {
    this.configuration = { agent: this.name, model: model.name, parameters: OPENEQA_ANSWER_PARAMS, prompts: promptHashes([BLIND_PROMPT]) };
  }

  async answer(question: Question): Promise<AgentAnswer> {
    const trace = newTrace(this.name);
    const answer = await blindAnswer(question, this.model, trace);
    trace.agentAnswer = answer;
    return { answer, trace };
  }
}
