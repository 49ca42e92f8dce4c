import { renderPromptFile, type Question } from "../core/index.js";
import { FORCE_GUESS_ROLE, inRole, type ChatModel } from "../models/index.js";
import { blindAnswer } from "./blind.js";
import { tracedCall } from "./calls.js";
import type { AgentTrace, ForceGuessTrace } from "./types.js";

export const FORCE_GUESS_PROMPT = "openeqa-force-guess";
const CLASSIFY_PARAMS = { temperature: 0.2, maxTokens: 32, seed: 1234 } as const;

/** Reads the classifier's action: "Action: guess", "``keep``", or a lone guess/keep. */
export function parseForceGuessAction(reply: string | null): "guess" | "keep" | undefined {
  if (reply === null) return undefined;
  const labelled = /action\s*:\s*[`'"*]*\s*(guess|keep)\b/i.exec(reply);
  if (labelled) return labelled[1]!.toLowerCase() as "guess" | "keep";
  const words = new Set([...reply.matchAll(/\b(guess|keep)\b/gi)].map((m) => m[1]!.toLowerCase()));
  return words.size === 1 ? ([...words][0] as "guess" | "keep") : undefined;
}

/**
 * OpenEQA's force-a-guess (appendix VII): the agent's language model is asked whether the
 * answer abstains; if it does, the blind LLM's answer replaces it. An unreadable verdict
 * keeps the answer, and says so in the trace with the reply; the run's summary counts it apart
 * (neither abstaining nor not). Both calls are recorded in the run's ledger under the role
 * `force-guess`, so that their cost shows apart from the agent's answers.
 */
export async function forceGuess(question: Question, answer: string | null, agentModel: ChatModel, trace: AgentTrace): Promise<string | null> {
  const model = inRole(agentModel, FORCE_GUESS_ROLE);
  const prompt = renderPromptFile(FORCE_GUESS_PROMPT, { question: question.question, old_answer: answer ?? "" });
  const response = await tracedCall(trace, model, "force-guess", FORCE_GUESS_PROMPT, { messages: [{ role: "user", content: prompt }], ...CLASSIFY_PARAMS });
  const action = parseForceGuessAction(response.text);
  const verdict: ForceGuessTrace = action ? { action } : { action: "unreadable", reply: response.text };
  trace.forceGuess = verdict;
  if (action !== "guess") return answer;
  verdict.blindAnswer = await blindAnswer(question, model, trace, "blind-guess");
  return verdict.blindAnswer;
}
