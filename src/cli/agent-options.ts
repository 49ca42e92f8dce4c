import { Option, type Command } from "commander";
import { UserError } from "../core/index.js";
import { AGENT_NAMES, isExternalAgentValue, parseExternalAgent, type AgentName, type AgentSetup, type EnvironmentKind, type ExplorerName, type ExternalAgentSpec, type MemorySourceOptions, type MixedAgentName, type SceneOpenerOptions } from "../agents/index.js";
import type { LlmMatchMode } from "../eval/index.js";
import type { CommandLine } from "../sim/index.js";
import { parseSamplingSpec } from "../episodes/index.js";
import { resolveModel } from "../models/index.js";
import { argumentParser, commaList, framesPath, oneOf, outputDirectory, positiveInteger, positiveSeconds, type ShardFlags } from "./options.js";
import { resolveRoleModel, type ModelCallFlags, addImageOptions, type ImageFlags } from "./model-options.js";
import type { DryRunFlags } from "./dry-run.js";
import type { BatchFlags } from "./batch.js";

/** The flags `eqa answer` and `eqa run` share. */
export interface AgentFlags extends ImageFlags {
  benchmark?: string;
  subset?: string;
  frames?: string;
  agent: AgentName | ExternalAgentSpec;
  agentTimeout?: number;
  model?: string;
  modelBaseUrl?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  numFrames?: number;
  sampling?: string;
  forceGuess: boolean;
  out?: string;
  topN?: number;
  boxes: boolean;
  tools: "native" | "text";
  detector?: boolean;
  masks?: boolean;
  vlmDetect?: boolean;
  ignoreLabels?: string[];
  memory?: string;
}

/**
 * The options `eqa answer` and `eqa memory build` share about how a memory is made, with one
 * meaning on both: the detector's use (by default only on episodes without instance masks)
 * and the mask labels that are not objects.
 */
export function addMemorySourceOptions(command: Command, prefix = ""): Command {
  return command
    .option("--detector", `${prefix}run the embedded detector on every frame, also where the episode has instance masks`)
    .option("--no-detector", `${prefix}never run the embedded detector: use the episode's instance masks only (by default the detector runs on episodes without masks)`)
    .option("--no-masks", `${prefix}leave the episode's instance masks out: the embedded detector finds the objects on every frame, as in a video without masks`)
    .option("--ignore-labels <list>", `${prefix}instance-mask labels that are not objects, left out (e.g. wall,floor,ceiling for simulator recordings)`, commaList);
}

/** What the shared memory options ask for; both object sources turned off is refused. */
export function memorySourceOptions(flags: Pick<AgentFlags, "detector" | "masks" | "ignoreLabels">): Pick<MemorySourceOptions, "detector" | "masks" | "ignoreLabels"> {
  if (flags.masks === false && flags.detector === false) throw new UserError("--no-masks and --no-detector leave nothing to find the objects with", { field: "--no-masks" }, "keep one of them");
  return {
    ...(flags.detector !== undefined ? { detector: flags.detector } : {}),
    ...(flags.masks === false ? { masks: false } : {}),
    ...(flags.ignoreLabels ? { ignoreLabels: flags.ignoreLabels } : {}),
  };
}

export function addAgentOptions(command: Command): Command {
  command
    .option("--benchmark <file>", "the benchmark file (default: the one `eqa data fetch openeqa` wrote)")
    .option("--subset <file>", "a JSON list of question ids to answer")
    .option("--frames <dir>", "episode histories: a folder of OpenEQA frames/<episode_history> folders or videos, one episode folder, or one video", framesPath)
    .addOption(new Option("--agent <agent>", 'blind, vlm (multi-frame), socratic (frame captions), svm (Sparse Voxel Map captions), conceptgraph (scene graph), retrieval (LLM + retrieval API), or your own: exec:"python3 my_agent.py --flag x" (a process speaking docs/agent-protocol.md) or ./my-agent.mjs (a module)').argParser(agentArgument).makeOptionMandatory())
    .option("--agent-timeout <seconds>", "your own agent: seconds to wait for each of its replies (default 120)", positiveSeconds)
    .addOption(new Option("--model <provider/model>", "the agent's model, e.g. openai/gpt-4o").env("EQA_MODEL"))
    .option("--model-base-url <url>", "the model's endpoint")
    .option("--captioner <provider/model>", "socratic: the captioning vision-language model (default: --model)")
    .option("--captioner-base-url <url>", "the captioner's endpoint")
    .option("--num-frames <k>", "frames per question (default: 50 OpenAI, 20 Anthropic, 15 Gemini, 15 socratic; svm, conceptgraph, retrieval: 60 frames build the memory)", positiveInteger)
    .option("--sampling <spec>", "frame sampling: uniform:K, every:N or seconds:T (overrides --num-frames)");
  addImageOptions(command)
    .option("--no-force-guess", "keep answers that abstain (OpenEQA replaces them with the blind LLM's guess)")
    .option("--out <dir>", "run directory; an existing one resumes", outputDirectory)
    .option("--top-n <n>", "svm: instances given to the LLM (default 75)", positiveInteger)
    .option("--no-boxes", "svm: leave out the 3-D box centres (OpenEQA's crop-only ablation, Table XI)")
    .addOption(new Option("--tools <protocol>", "retrieval: native tool calling or the text protocol").argParser(oneOf(["native", "text"] as const)).default("native"))
    .option("--vlm-detect", "svm, conceptgraph, retrieval: the captioner also lists each frame's objects (open-vocabulary detection)")
    .option("--memory <dir>", "svm, conceptgraph, retrieval, and your own agent (memory/query): read each episode's memory from a folder that eqa memory build --benchmark wrote (no frames needed; refused when built with other settings)");
  return addMemorySourceOptions(command, "svm, conceptgraph, retrieval: ");
}

/** `--agent` of an agent of the user's own: exec:COMMAND or a module's path. */
export const externalAgentArgument: (value: string) => ExternalAgentSpec = argumentParser((value: string) => parseExternalAgent(value), "--agent");

/** `--agent`: one of the built-in `names`, or an agent of the user's own (exec:COMMAND, a module's path). */
export function builtinOrExternalAgent<T extends string>(names: readonly T[]): (value: string) => T | ExternalAgentSpec {
  return (value) => (isExternalAgentValue(value) ? externalAgentArgument(value) : oneOf(names)(value));
}

const agentArgument = builtinOrExternalAgent(AGENT_NAMES);

export function agentSetupFromFlags(flags: AgentFlags): AgentSetup {
  const external = typeof flags.agent === "object";
  const model = external && !flags.model ? undefined : resolveRoleModel(flags, "model");
  const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
  return {
    agent: flags.agent,
    ...(model ? { model } : {}),
    ...(external ? { episodes: flags.frames !== undefined, ...(flags.agentTimeout !== undefined ? { agentTimeoutMs: flags.agentTimeout * 1000 } : {}) } : {}),
    ...(captioner ? { captioner } : {}),
    ...(flags.numFrames !== undefined ? { numFrames: flags.numFrames } : {}),
    ...(flags.sampling ? { sampling: parseSamplingSpec(flags.sampling) } : {}),
    image: { maxSide: flags.imageSize, format: flags.imageFormat },
    forceGuess: flags.forceGuess,
    memory: { ...(flags.topN !== undefined ? { topN: flags.topN } : {}), boxes: flags.boxes, tools: flags.tools, ...memorySourceOptions(flags), ...(flags.vlmDetect ? { vlmDetect: true } : {}), ...(flags.memory !== undefined ? { memoryDir: flags.memory } : {}) },
  };
}

/** The flags of `eqa explore`. */
export interface ExploreFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ShardFlags {
  episodes: string;
  env: EnvironmentKind;
  agent: ExplorerName | MixedAgentName | ExternalAgentSpec;
  agentTimeout?: number;
  episodeTime?: number;
  model?: string;
  modelBaseUrl?: string;
  emAgent?: AgentName;
  captioner?: string;
  captionerBaseUrl?: string;
  numFrames?: number;
  forceGuess: boolean;
  maxSteps?: number;
  imageSize: number;
  imageFormat: "png" | "jpeg";
  width: number;
  height: number;
  bridgePython: string;
  scenes?: string;
  envCommand?: CommandLine;
  envTimeout: number;
  out?: string;
  judge?: string;
  judgeBaseUrl?: string;
  mode: LlmMatchMode;
  eac: boolean;
  prompts: string;
}

export function openerOptions(flags: ExploreFlags): SceneOpenerOptions {
  return { env: flags.env, width: flags.width, height: flags.height, timeoutMs: flags.envTimeout * 1000, scenes: flags.scenes, bridgePython: flags.bridgePython, envCommand: flags.envCommand };
}
