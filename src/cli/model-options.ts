/*
 * The flags of the commands that call models, each written once: the calls' settings and cache
 * (`--concurrency`, `--max-retries`, `--timeout`, `--cache`), the runtime they open, each model
 * role's `--ROLE`, `--ROLE-base-url` and `--ROLE-option`, and how images are sent.
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import { ModelCallCache, defaultCachePath } from "../store/index.js";
import { MODEL_OPTION_KEYS, ModelRuntime, resolveModel, type ModelOptions, type ModelSpec } from "../models/index.js";
import { roleModelPhrase } from "../core/index.js";
import { framesPath, nonNegativeInteger, oneOf, positiveInteger, positiveSeconds } from "./options.js";

/** The flags every command that calls models shares. */
export interface ModelCallFlags {
  concurrency: number;
  maxRetries: number;
  timeout: number;
  /** A path, or false for --no-cache. */
  cache: string | boolean;
}

export interface OpenedRuntime {
  runtime: ModelRuntime;
  cachePath: string | null;
  cache?: ModelCallCache;
  close(): void;
}

export async function openModelRuntime(flags: ModelCallFlags): Promise<OpenedRuntime> {
  const cachePath = flags.cache === false ? null : typeof flags.cache === "string" ? flags.cache : defaultCachePath();
  const cache = cachePath ? await ModelCallCache.open(cachePath) : undefined;
  const runtime = new ModelRuntime({
    concurrency: flags.concurrency,
    maxRetries: flags.maxRetries,
    timeoutMs: flags.timeout * 1000,
    ...(cache ? { cache } : {}),
  });
  return { runtime, cachePath: cache?.path ?? null, ...(cache ? { cache } : {}), close: () => cache?.close() };
}

export function modelCallSettings(flags: ModelCallFlags, cachePath: string | null): Record<string, unknown> {
  return { maxRetries: flags.maxRetries, timeoutSeconds: flags.timeout, cache: cachePath };
}

export function addModelCallOptions(command: Command): Command {
  return command
    .option("--concurrency <n>", "items worked on at once (questions, episodes, judgements; an agent of your own runs one process per item in flight) and the most model calls in flight per endpoint", positiveInteger, 8)
    .option("--max-retries <n>", "retries of a call on 429, 5xx, timeouts and resets", nonNegativeInteger, 5)
    .option("--timeout <seconds>", "timeout of one call", positiveSeconds, 60)
    .option("--cache <path>", "the model-call cache file (default: $XDG_CACHE_HOME/eqakit/model-calls.sqlite)")
    .option("--no-cache", "call the models even for requests already answered");
}

/** `key=value` of `--ROLE-option`, added to those given before it (the flag repeats). */
function modelOption(value: string, previous: ModelOptions | undefined): ModelOptions {
  const equals = value.indexOf("=");
  const key = value.slice(0, equals);
  if (equals < 1 || !(MODEL_OPTION_KEYS as readonly string[]).includes(key)) {
    throw new InvalidArgumentError(`expected key=value with a key among ${MODEL_OPTION_KEYS.join(", ")}`);
  }
  return { ...previous, [key]: value.slice(equals + 1) };
}

/**
 * Gives every model role of `command` (each `--ROLE-base-url` flag) its `--ROLE-option
 * key=value` flag, and does the same for the commands below it: one place for every command.
 */
export function addModelOptionFlags(command: Command): void {
  // `--ROLE-base-url` names a model role; a bare `--base-url` (a download mirror) does not
  const roles = command.options.flatMap((o) => /^--([a-z][a-z-]*)-base-url$/.exec(o.long ?? "")?.slice(1, 2) ?? []);
  for (const role of roles) {
    command.option(`--${role}-option <key=value>`, `what ${roleModelPhrase(role)} is sent (repeatable): reasoning_effort, thinking_budget, family, … (docs/configuration.md)`, modelOption);
  }
  command.commands.forEach(addModelOptionFlags);
}

/** The model of `role` from a command's flags: `--ROLE`, `--ROLE-base-url` and `--ROLE-option` (or `name`, when the command picked it). */
export function resolveRoleModel(flags: object, role: string, name?: string): ModelSpec {
  const key = role.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
  const values = flags as Record<string, unknown>;
  const baseURL = values[`${key}BaseUrl`];
  const options = values[`${key}Option`] as ModelOptions | undefined;
  const given = name ?? values[key];
  return resolveModel(typeof given === "string" ? given : undefined, { flag: `--${role}`, ...(typeof baseURL === "string" && baseURL ? { baseURL } : {}), ...(options ? { options } : {}) });
}

/** Flags of the commands that show images to a model: how large and in which format. */
export interface ImageFlags {
  imageSize: number;
  imageFormat: "png" | "jpeg";
}

/** `--image-size` and `--image-format`; `what` names the images in the help ("keyframes"). */
export function addImageOptions(command: Command, what = "images"): Command {
  return command
    .option("--image-size <pixels>", `longest side of the ${what} sent`, positiveInteger, 512)
    .addOption(new Option("--image-format <format>", "png or jpeg").argParser(oneOf(["png", "jpeg"] as const)).default("png"));
}

/** Flags of the reward-model commands that show an episode's keyframes to a model. */
export interface FrameFlags extends ImageFlags {
  frames?: string;
}

export function addFrameOptions(command: Command): Command {
  command.option("--frames <dir>", "episode histories: a folder of <episode_history> folders or videos (instances with their own frames path need none)", framesPath);
  return addImageOptions(command, "keyframes");
}
