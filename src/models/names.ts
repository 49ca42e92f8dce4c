import { UserError } from "../core/index.js";
import { checkBaseURL } from "./base-url.js";
import { modelProfile, type ModelOptions, type ModelProfile } from "./families.js";
import { modelsFileEntry } from "./models-file.js";

/** The wire protocol a model name maps to. */
export type Protocol = "openai" | "anthropic" | "google";

/** A model name resolved to where and how to call it. */
export interface ModelSpec {
  /** As the user wrote it: `openai/gpt-4o`, `vllm/Qwen/Qwen2.5-VL-7B-Instruct`. */
  name: string;
  /** The prefix before the first slash: openai, vllm, ollama, anthropic, google. */
  provider: string;
  protocol: Protocol;
  /** The model id sent to the endpoint (everything after the first slash). */
  model: string;
  baseURL: string;
  apiKey: string;
  /** What the model accepts (its family with the user's options), applied to every request. */
  profile: ModelProfile;
  /** The options the user set (models file, then --model-option), as given. */
  options: ModelOptions;
}

interface ProviderDefaults {
  protocol: Protocol;
  baseURL: (env: NodeJS.ProcessEnv) => string;
  /** The environment variable that overrides the default base URL, named when its value is unusable. */
  baseURLVariable: string;
  apiKey: (env: NodeJS.ProcessEnv) => string | undefined;
  /** A key is required when talking to the provider's own hosted API. */
  hostedBaseURL?: string;
  keyVariable?: string;
}

const OPENAI_URL = "https://api.openai.com/v1";
const ANTHROPIC_URL = "https://api.anthropic.com";
const GEMINI_URL = "https://generativelanguage.googleapis.com";

/** A provider's own hosted API, overridden by `PREFIX_BASE_URL`, its key in `PREFIX_API_KEY` (else in `fallbackKey`). */
function hostedProvider(protocol: Protocol, prefix: string, url: string, fallbackKey?: string): ProviderDefaults {
  const baseURLVariable = `${prefix}_BASE_URL`;
  const keyVariable = `${prefix}_API_KEY`;
  return {
    protocol,
    baseURL: (env) => env[baseURLVariable] || url,
    baseURLVariable,
    apiKey: (env) => (fallbackKey === undefined ? env[keyVariable] : env[keyVariable] || env[fallbackKey]),
    hostedBaseURL: url,
    keyVariable,
  };
}

const PROVIDERS: Record<string, ProviderDefaults> = {
  openai: hostedProvider("openai", "OPENAI", OPENAI_URL),
  vllm: {
    protocol: "openai",
    baseURL: (env) => env.VLLM_BASE_URL || "http://localhost:8000/v1",
    baseURLVariable: "VLLM_BASE_URL",
    apiKey: (env) => env.VLLM_API_KEY || "EMPTY",
  },
  ollama: {
    protocol: "openai",
    baseURL: (env) => `${ollamaHost(env)}/v1`,
    baseURLVariable: "OLLAMA_HOST",
    apiKey: () => "ollama",
  },
  anthropic: hostedProvider("anthropic", "ANTHROPIC", ANTHROPIC_URL),
  google: hostedProvider("google", "GEMINI", GEMINI_URL, "GOOGLE_API_KEY"),
};

function ollamaHost(env: NodeJS.ProcessEnv): string {
  const host = env.OLLAMA_HOST || "http://localhost:11434";
  return /^https?:\/\//.test(host) ? host.replace(/\/+$/, "") : `http://${host}`;
}

export const KNOWN_PROVIDERS = Object.keys(PROVIDERS);

/** How to configure a model, for messages that say none is. */
export function modelSetupHelp(flag: string): string {
  return [
    `pass ${flag} PROVIDER/MODEL, for example:`,
    `    ${flag} openai/gpt-4o                      (hosted: set OPENAI_API_KEY)`,
    `    ${flag} anthropic/claude-sonnet-4-5        (hosted: set ANTHROPIC_API_KEY)`,
    `    ${flag} google/gemini-2.5-flash            (hosted: set GEMINI_API_KEY)`,
    `    ${flag} vllm/Qwen/Qwen2.5-7B-Instruct      (local: vllm serve … on http://localhost:8000/v1)`,
    `    ${flag} ollama/qwen2.5                     (local: ollama serve on http://localhost:11434)`,
    `  any OpenAI-compatible server: ${flag} openai/MODEL with OPENAI_BASE_URL or ${flag}-base-url URL`,
  ].join("\n");
}

export interface ResolveOptions {
  /** Overrides the provider's default or environment base URL (the `--…-base-url` flags, named in messages as `<flag>-base-url`). */
  baseURL?: string;
  env?: NodeJS.ProcessEnv;
  /** The flag the name came from, for error messages. */
  flag?: string;
  /** Per-model options (`--model-option key=value`): they win over the models file's entry. */
  options?: ModelOptions;
}

/** Resolves `provider/model` into an endpoint and credentials, or says how to fix it. */
export function resolveModel(name: string | undefined, options: ResolveOptions = {}): ModelSpec {
  const flag = options.flag ?? "--model";
  const env = options.env ?? process.env;
  if (!name) throw new UserError(`no model configured for ${flag}`, {}, modelSetupHelp(flag));
  const slash = name.indexOf("/");
  const provider = slash === -1 ? "" : name.slice(0, slash);
  const model = slash === -1 ? "" : name.slice(slash + 1);
  const defaults = PROVIDERS[provider];
  if (!defaults || model === "") {
    throw new UserError(
      `"${name}" is not a PROVIDER/MODEL name (providers: ${KNOWN_PROVIDERS.join(", ")})`,
      { field: flag },
      modelSetupHelp(flag),
    );
  }
  // checked here, where flags and environment variables become endpoints, so that a bad URL stops the run before any call
  const given = options.baseURL ? checkBaseURL(options.baseURL, `${flag}-base-url`) : checkBaseURL(defaults.baseURL(env), defaults.baseURLVariable);
  const baseURL = given.replace(/\/+$/, "");
  let apiKey = defaults.apiKey(env);
  if (!apiKey) {
    if (baseURL === defaults.hostedBaseURL) {
      throw new UserError(`${defaults.keyVariable} is not set, and ${name} is served by ${baseURL}`, { field: flag }, modelSetupHelp(flag));
    }
    apiKey = "EMPTY"; // self-hosted servers usually accept any key
  }
  const modelOptions: ModelOptions = { ...modelsFileEntry(name, env), ...options.options };
  const profile = modelProfile(defaults.protocol, model, modelOptions, `${flag}-option`);
  return { name, provider, protocol: defaults.protocol, model, baseURL, apiKey, profile, options: modelOptions };
}

/** A model as summaries record it: everything that identifies it (its family and the options set), never its key. */
export function describeModel(spec: ModelSpec): { name: string; provider: string; model: string; baseURL: string; family: string; options?: ModelOptions } {
  const options = Object.keys(spec.options).length > 0 ? { options: spec.options } : {};
  return { name: spec.name, provider: spec.provider, model: spec.model, baseURL: spec.baseURL, family: spec.profile.id, ...options };
}
