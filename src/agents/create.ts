import { UserError } from "../core/index.js";
import type { ImageOptions, SamplingSpec } from "../episodes/index.js";
import type { ModelRuntime, ModelSpec } from "../models/index.js";
import { BlindAgent } from "./blind.js";
import { SocraticAgent } from "./socratic.js";
import type { Agent } from "./types.js";
import { VlmAgent } from "./vlm.js";

export const AGENT_NAMES = ["blind", "vlm", "socratic"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

export interface AgentSetup {
  agent: AgentName;
  /** The agent's language or vision-language model. */
  model: ModelSpec;
  /** The socratic agent's captioning model (a vision-language model); defaults to `model`. */
  captioner?: ModelSpec;
  /** Uniform sampling of this many frames (the agent's default when absent). */
  numFrames?: number;
  /** Any other sampling; overrides numFrames. */
  sampling?: SamplingSpec;
  image?: ImageOptions;
  /** OpenEQA's force-a-guess (on by default, as in the paper). */
  forceGuess?: boolean;
}

/** Builds an agent from its setup, with the models it calls (for error messages that name them). */
export function createAgent(setup: AgentSetup, runtime: ModelRuntime): { agent: Agent; models: ModelSpec[] } {
  const sampling = setup.sampling ?? (setup.numFrames !== undefined ? { kind: "uniform" as const, count: setup.numFrames } : undefined);
  const frameOptions = { ...(sampling ? { sampling } : {}), ...(setup.image ? { image: setup.image } : {}), forceGuess: setup.forceGuess ?? true };
  const model = runtime.model(setup.model);
  switch (setup.agent) {
    case "blind":
      if (setup.captioner) throw new UserError("the blind agent uses no captioner", { field: "--captioner" });
      return { agent: new BlindAgent(model), models: [setup.model] };
    case "vlm":
      return { agent: new VlmAgent(model, setup.model, frameOptions), models: [setup.model] };
    case "socratic": {
      const captioner = setup.captioner ?? setup.model;
      return { agent: new SocraticAgent(model, runtime.model(captioner), frameOptions), models: [setup.model, captioner] };
    }
  }
}
