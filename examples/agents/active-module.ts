// An active agent of your own as a TypeScript module, loaded by eqakit in-process:
//
//   eqa explore --episodes episodes.json --env builtin --agent ./examples/agents/active-module.ts --model openai/gpt-4o …
//
// It turns around on the spot (twelve turns of 30°), then shows the run's model four of the
// frames it saw and answers. context.complete(params) calls the run's model through eqakit
// (frames asked for by index), context.log(message) keeps a line in the episode's trace.

/** What eqakit sends with reset and step (docs/agent-protocol.md gives every field). */
interface Observation {
  step: number;
  frame: { index: number; path: string; depthPath: string };
  lastAction: { action: string; success: boolean } | null;
  budget: { stepsLeft: number; timeLeftMs: number | null };
}

interface Context {
  complete(params: unknown): Promise<{ text: string | null }>;
  log(message: string, level?: string): void;
}

type Decision = { action: string } | { answer: string | null; confidence?: number } | { stop: true };

const TURNS = 12;
let model: string | null = null;
/** Per episode (eqakit may run several at once with one module): the question and the frames seen. */
const episodes = new Map<string, { question: string; seen: number[] }>();

export default {
  initialize(params: { settings: { model?: string | null } }) {
    model = params.settings.model ?? null;
    return { name: "look-around", version: "1.0", supports: ["active"] };
  },

  reset(params: { episode: { id: string; question: { text: string } }; observation: Observation }, context: Context): Promise<Decision> {
    episodes.set(params.episode.id, { question: params.episode.question.text, seen: [] });
    context.log(`looking around for: ${params.episode.question.text}`);
    return decide(params.episode.id, params.observation, context);
  },

  step(params: { episode: string; observation: Observation }, context: Context): Promise<Decision> {
    return decide(params.episode, params.observation, context);
  },
};

async function decide(id: string, observation: Observation, context: Context): Promise<Decision> {
  const { question, seen } = episodes.get(id)!;
  if (!seen.includes(observation.frame.index)) seen.push(observation.frame.index);
  if (observation.step < TURNS && observation.budget.stepsLeft > 0) return { action: "turn_left" };
  episodes.delete(id);
  if (model === null) return { stop: true };
  const frames = [0, 1, 2, 3].map((i) => seen[Math.round((i * (seen.length - 1)) / 3)]!);
  const reply = await context.complete({
    messages: [{ role: "user", content: [...frames.map((index) => ({ type: "frame", index })), { type: "text", text: `These are views all around one spot in a home. Answer in a few words: ${question}` }] }],
    temperature: 0,
    maxTokens: 64,
  });
  return { answer: reply.text?.trim() || null, confidence: 0.5 };
}
