// An agent of your own as a JavaScript module, loaded by eqakit in-process:
//
//   eqa answer --agent ./examples/agents/module-agent.mjs --frames … --model openai/gpt-4o …
//
// It implements the methods of docs/agent-protocol.md as functions taking the params and a
// context: context.complete(params) calls the run's model through eqakit (frames asked for by
// index), context.log(message) keeps a line in the answer's trace.

const FRAMES = 4;

export default {
  initialize() {
    return { name: "module-example", version: "1.0", supports: ["em-eqa"] };
  },

  async answer({ question, episode }, context) {
    const count = episode ? Math.min(FRAMES, episode.frameCount) : 0;
    const indices = Array.from({ length: count }, (_, i) => Math.round((i * (episode.frameCount - 1)) / Math.max(count - 1, 1)));
    context.log(`looking at frames ${indices.join(", ")} of ${episode?.frameCount ?? 0}`);
    const reply = await context.complete({
      messages: [
        {
          role: "user",
          content: [
            ...indices.map((index) => ({ type: "frame", index })),
            { type: "text", text: `These are frames of a video of an indoor space. Answer in a few words: ${question.text}` },
          ],
        },
      ],
      temperature: 0,
      maxTokens: 64,
    });
    return { answer: reply.text?.trim() ?? null, confidence: 0.5 };
  },

  shutdown() {
    return null;
  },
};
