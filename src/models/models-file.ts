/**
 * The models file: per-model options for models the family table does not know, or that a
 * user wants sent differently (a custom reasoning model behind an OpenAI-compatible server,
 * a lower thinking budget). `EQA_MODELS_FILE`, else `$XDG_CONFIG_HOME/eqakit/models.json`
 * (`~/.config/eqakit/models.json`) when it exists:
 *
 *   { "models": { "openai/my-reasoner": { "family": "openai-reasoning", "reasoning_effort": "low" } } }
 *
 * Keys are the model as the user names it (`provider/model`); values are option strings.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { UserError, memoByFile } from "../core/index.js";
import { MODEL_OPTION_KEYS, type ModelOptions } from "./families.js";

const MAX_MODELS_FILE_BYTES = 1024 * 1024;

const optionValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const entrySchema = z.strictObject(Object.fromEntries(MODEL_OPTION_KEYS.map((key) => [key, optionValue.optional()])) as Record<(typeof MODEL_OPTION_KEYS)[number], z.ZodOptional<typeof optionValue>>);
const fileSchema = z.object({ models: z.record(z.string(), entrySchema) });

/** Where the models file is looked for. */
export function modelsFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.EQA_MODELS_FILE) return env.EQA_MODELS_FILE;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "eqakit", "models.json");
}

const modelsFile = memoByFile(readModelsFile);

/** The models file's options for `name`, or none; a file that is named but wrong is a UserError naming it. */
export function modelsFileEntry(name: string, env: NodeJS.ProcessEnv = process.env): ModelOptions {
  const path = modelsFilePath(env);
  if (!env.EQA_MODELS_FILE && !existsSync(path)) return {};
  return modelsFile(path)[name] ?? {};
}

function readModelsFile(path: string): Record<string, ModelOptions> {
  let text: string;
  try {
    if (statSync(path).size > MAX_MODELS_FILE_BYTES) throw new UserError(`larger than ${MAX_MODELS_FILE_BYTES} bytes`, { file: path });
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError("the models file cannot be read", { file: path }, "set EQA_MODELS_FILE to a JSON file, or unset it");
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    throw new UserError("the models file is not JSON", { file: path }, 'e.g. { "models": { "openai/my-reasoner": { "family": "openai-reasoning" } } }');
  }
  const result = fileSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new UserError(issue.message, { file: path, field: issue.path.join(".") }, `each model takes the options ${MODEL_OPTION_KEYS.join(", ")}`);
  }
  return result.data.models as Record<string, ModelOptions>;
}
