import { UserError } from "../core/index.js";
import type { ImageOptions, SamplingSpec } from "../episodes/index.js";
import { resolveModel, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { BlindAgent } from "./blind.js";
import { ExternalAgent, type ExternalAgentSpec } from "./external/index.js";
import { ConceptGraphAgent, SvmAgent } from "./memory-agents.js";
import { MemorySource, type MemorySourceOptions } from "./memory-source.js";
import { RetrievalAgent } from "./retrieval.js";
import { SocraticAgent } from "./socratic.js";
import type { Agent } from "./types.js";
import { VlmAgent } from "./vlm.js";

export const AGENT_NAMES = ["blind", "vlm", "socratic", "svm", "conceptgraph", "retrieval"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

export interface AgentSetup {
  /** A built-in agent, or one of the user's own (`--agent exec:…` or a module). */
  agent: AgentName | ExternalAgentSpec;
  /** The agent's language or vision-language model (an external agent reaches it through model/complete; it may have none). */
  model?: ModelSpec;
  /** The socratic agent's captioning model (a vision-language model); defaults to `model`. */
  captioner?: ModelSpec;
  /** Uniform sampling of this many frames (the agent's default when absent). */
  numFrames?: number;
  /** Any other sampling; overrides numFrames. */
  sampling?: SamplingSpec;
  image?: ImageOptions;
  /** OpenEQA's force-a-guess (on by default, as in the paper). */
  forceGuess?: boolean;
  /** The memory agents' (svm, conceptgraph, retrieval) settings. */
  memory?: MemoryAgentSetup;
  /** An external agent: milliseconds to wait for each of its replies (default 120 000). */
  agentTimeoutMs?: number;
  /** An external agent: whether its questions come with their episodes (the run has --frames). */
  episodes?: boolean;
}

export interface MemoryAgentSetup {
  /** svm: instances given to the LLM (default 75). */
  topN?: number;
  /** svm: false for the crop-only ablation (no 3-D boxes in the prompt). */
  boxes?: boolean;
  /** retrieval: native tool calling or the text protocol. */
  tools?: "native" | "text";
  /** The embedded detector: true on every frame, false never; by default only on episodes without instance masks. */
  detector?: boolean;
  /** Instance-mask labels that are not objects (walls, floors), left out. */
  ignoreLabels?: readonly string[];
  /** A folder that `eqa memory build --benchmark` wrote: memories are read from it, never built. */
  memoryDir?: string;
  /** The captioner also detects each frame's objects (open-vocabulary); needs a captioner. */
  vlmDetect?: boolean;
}

/** Builds an agent from its setup, with the models it calls (for error messages that name them). */
export function createAgent(setup: AgentSetup, runtime: ModelRuntime): { agent: Agent; models: ModelSpec[] } {
  const sampling = setup.sampling ?? (setup.numFrames !== undefined ? { kind: "uniform" as const, count: setup.numFrames } : undefined);
  const frameOptions = { ...(sampling ? { sampling } : {}), ...(setup.image ? { image: setup.image } : {}), forceGuess: setup.forceGuess ?? true };
  if (typeof setup.agent === "object") {
    const external = new ExternalAgent(setup.agent, {
      ...(setup.model ? { model: runtime.model(setup.model, { role: "agent" }) } : {}),
      ...(setup.agentTimeoutMs !== undefined ? { timeoutMs: setup.agentTimeoutMs } : {}),
      episodes: setup.episodes ?? false,
      ...(setup.image ? { image: setup.image } : {}),
      ...(setup.memory?.memoryDir !== undefined ? { memory: externalMemory(setup, sampling, runtime) } : {}),
    });
    return { agent: external, models: setup.model ? [setup.model] : [] };
  }
  const modelSpec = setup.model ?? resolveModel(undefined, { flag: "--model" });
  const model = runtime.model(modelSpec, { role: "agent" });
  switch (setup.agent) {
    case "blind":
      if (setup.captioner) throw new UserError("the blind agent uses no captioner", { field: "--captioner" });
      return { agent: new BlindAgent(model), models: [modelSpec] };
    case "vlm":
      return { agent: new VlmAgent(model, frameOptions), models: [modelSpec] };
    case "socratic": {
      const captioner = setup.captioner ?? modelSpec;
      return { agent: new SocraticAgent(model, runtime.model(captioner, { role: "captioner" }), frameOptions), models: [modelSpec, captioner] };
    }
    case "svm":
    case "conceptgraph":
    case "retrieval": {
      // captions come from the captioner when one is named, from detector labels otherwise
      const memory = setup.memory ?? {};
      if (memory.vlmDetect && !setup.captioner) throw new UserError("open-vocabulary detection asks the captioner, and no captioner is set", { field: "--vlm-detect" }, "name a vision-language model with --captioner");
      const options = { forceGuess: setup.forceGuess ?? true, ...memorySourceOptions(setup, sampling, runtime) };
      const models = [modelSpec, ...(setup.captioner ? [setup.captioner] : [])];
      if (setup.agent === "svm") return { agent: new SvmAgent(model, { ...options, ...(memory.topN !== undefined ? { topN: memory.topN } : {}), ...(memory.boxes !== undefined ? { boxes: memory.boxes } : {}) }), models };
      if (setup.agent === "conceptgraph") return { agent: new ConceptGraphAgent(model, options), models };
      return { agent: new RetrievalAgent(model, { ...options, ...(memory.tools ? { tools: memory.tools } : {}) }), models };
    }
  }
}

/** --memory DIR for an agent of the user's own: the folder, opened with the settings its memories were built with (those of the memory agents' flags). */
function externalMemory(setup: AgentSetup, sampling: SamplingSpec | undefined, runtime: ModelRuntime): MemorySource {
  return new MemorySource(memorySourceOptions(setup, sampling, runtime));
}

/** How the memory agents and an agent of the user's own build or read their memories: the memory flags of the setup. */
function memorySourceOptions(setup: AgentSetup, sampling: SamplingSpec | undefined, runtime: ModelRuntime): MemorySourceOptions {
  const memory = setup.memory ?? {};
  return {
    ...(sampling ? { sampling } : {}),
    ...(setup.captioner ? { captioner: runtime.model(setup.captioner, { role: "captioner" }) } : {}),
    ...(memory.detector !== undefined ? { detector: memory.detector } : {}),
    ...(memory.vlmDetect ? { vlmDetect: true } : {}),
    ...(memory.ignoreLabels ? { ignoreLabels: memory.ignoreLabels } : {}),
    ...(memory.memoryDir !== undefined ? { memoryDir: memory.memoryDir } : {}),
  };
}
