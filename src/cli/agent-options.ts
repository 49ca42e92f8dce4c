import { Option, type Command } from "commander";
import { AGENT_NAMES, type AgentName, type AgentSetup } from "../agents/index.js";
import { parseSamplingSpec } from "../episodes/index.js";
import { resolveModel } from "../models/index.js";
import { oneOf, positiveInteger } from "./options.js";

/** The flags `eqa answer` and `eqa run` share. */
export interface AgentFlags {
  benchmark?: string;
  subset?: string;
  frames?: string;
  agent: AgentName;
  model?: string;
  modelBaseUrl?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  numFrames?: number;
  sampling?: string;
  imageSize: number;
  imageFormat: "png" | "jpeg";
  forceGuess: boolean;
  out?: string;
}

export function addAgentOptions(command: Command): Command {
  return command
    .option("--benchmark <file>", "the benchmark file (default: the one `eqa data fetch openeqa` wrote)")
    .option("--subset <file>", "a JSON list of question ids to answer")
    .option("--frames <dir>", "episode histories: a folder of OpenEQA frames/<episode_history> folders or videos, one episode folder, or one video")
    .addOption(new Option("--agent <agent>", "blind, vlm (multi-frame) or socratic (frame captions)").argParser(oneOf(AGENT_NAMES)).makeOptionMandatory())
    .addOption(new Option("--model <provider/model>", "the agent's model, e.g. openai/gpt-4o").env("EQA_MODEL"))
    .option("--model-base-url <url>", "the model's endpoint")
    .option("--captioner <provider/model>", "socratic: the captioning vision-language model (default: --model)")
    .option("--captioner-base-url <url>", "the captioner's endpoint")
    .option("--num-frames <k>", "frames per question (default: 50 OpenAI, 20 Anthropic, 15 Gemini, 15 socratic)", positiveInteger)
    .option("--sampling <spec>", "frame sampling: uniform:K, every:N or seconds:T (overrides --num-frames)")
    .option("--image-size <pixels>", "longest side of the images sent", positiveInteger, 512)
    .addOption(new Option("--image-format <format>", "png or jpeg").argParser(oneOf(["png", "jpeg"] as const)).default("png"))
    .option("--no-force-guess", "keep answers that abstain (OpenEQA replaces them with the blind LLM's guess)")
    .option("--out <dir>", "run directory; an existing one resumes");
}

export function agentSetupFromFlags(flags: AgentFlags): AgentSetup {
  const model = resolveModel(flags.model, { flag: "--model", ...(flags.modelBaseUrl ? { baseURL: flags.modelBaseUrl } : {}) });
  const captioner = flags.captioner ? resolveModel(flags.captioner, { flag: "--captioner", ...(flags.captionerBaseUrl ? { baseURL: flags.captionerBaseUrl } : {}) }) : undefined;
  return {
    agent: flags.agent,
    model,
    ...(captioner ? { captioner } : {}),
    ...(flags.numFrames !== undefined ? { numFrames: flags.numFrames } : {}),
    ...(flags.sampling ? { sampling: parseSamplingSpec(flags.sampling) } : {}),
    image: { maxSide: flags.imageSize, format: flags.imageFormat },
    forceGuess: flags.forceGuess,
  };
}
