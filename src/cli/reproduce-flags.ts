/** The flags of `eqa reproduce`, which every table's runner reads. */
import type { LlmMatchMode } from "../eval/index.js";
import type { OpenEqaFamily } from "../reproduce/index.js";
import type { TagBaselineName } from "../generate/index.js";
import type { ImageFlags, ModelCallFlags } from "./options.js";
import type { DryRunFlags } from "./dry-run.js";
import type { BatchFlags } from "./batch.js";

export interface ReproduceFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ImageFlags {
  instances?: string;
  maxK: number;
  model?: string;
  modelBaseUrl?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  judge?: string;
  judgeBaseUrl?: string;
  benchmark?: string;
  subset?: string;
  frames?: string;
  rows?: OpenEqaFamily[];
  mode: LlmMatchMode;
  published?: boolean;
  out?: string;
  episodes?: string;
  env: "builtin" | "habitat";
  scenes?: string;
  bridgePython: string;
  prompts: string;
  maxSteps?: number;
  width?: number;
  height?: number;
  questions?: string;
  baselines?: TagBaselineName[];
}
