/**
 * `eqa explore --episodes SET/episodes.json` on a Mixed EQA set: the built-in agents
 * (`--agent memory-only | explore-only | recall-explore`) on the built-in simulator, each home's
 * present world. Without a model they execute each question's program and are scored exactly;
 * with `--model` the user's VLM answers and `--judge` scores it with LLM-Match. The flags of
 * other explorers are refused, naming the flag.
 */
import { resolve } from "node:path";
import { UserError, type Shard } from "../core/index.js";
import { looksLikeMixedSet, readJsonFile } from "../data/index.js";
import { isMixedAgentName, MIXED_AGENT_NAMES, type ExternalAgentSpec } from "../agents/index.js";
import { exploreMixedSet, type LlmMatchMode } from "../eval/index.js";
import { loadMixedHistory, recallMixedDay } from "../generate/index.js";
import { JUDGE_ROLE, checkPriceFile } from "../models/index.js";
import { formatMixedRun } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { modelCallSettings, openModelRuntime, resolveRoleModel, type ModelCallFlags } from "./options.js";
import { createStageProgress, failureDetail } from "./progress.js";

/** The flags of `eqa explore` a Mixed EQA run reads, and those it refuses when given. */
export interface MixedExploreFlags extends ModelCallFlags {
  episodes: string;
  env: string;
  agent: string | ExternalAgentSpec;
  maxSteps?: number;
  width: number;
  height: number;
  out?: string;
  model?: string;
  modelBaseUrl?: string;
  judge?: string;
  judgeBaseUrl?: string;
  mode: LlmMatchMode;
  imageSize: number;
  imageFormat: "png" | "jpeg";
  emAgent?: string;
  batch?: boolean;
  dryRun?: boolean;
}

/** Whether `--episodes` names a Mixed EQA set (a CSV file never does). */
export async function isMixedSetFile(file: string): Promise<boolean> {
  return !/\.csv$/i.test(file) && looksLikeMixedSet(await readJsonFile(file));
}

function checkFlags(flags: MixedExploreFlags): void {
  const refused: [keyof MixedExploreFlags, string][] = [["emAgent", "--em-agent"], ["batch", "--batch"], ["dryRun", "--dry-run"]];
  for (const [key, flag] of refused) {
    if (flags[key] !== undefined && flags[key] !== false) throw new UserError(`${flag} does not apply to a Mixed EQA set`, { field: flag });
  }
  if (flags.env !== "builtin") throw new UserError("a Mixed EQA set runs in the built-in simulator, on each home's present.json", { field: "--env" });
  if (flags.judge !== undefined && flags.model === undefined) throw new UserError("--judge does not apply to a Mixed EQA set without --model: its built-in agents then answer by executing each question's program and are scored exactly", { field: "--judge" });
  if (flags.model !== undefined && flags.judge === undefined) throw new UserError("with --model the agents answer in words, which LLM-Match scores: give the judge", { field: "--judge" }, "add --judge PROVIDER/MODEL");
}

export async function exploreMixed(flags: MixedExploreFlags, shard: Shard | undefined): Promise<number> {
  const agent = typeof flags.agent === "string" ? flags.agent : undefined;
  if (agent === undefined || !isMixedAgentName(agent)) {
    throw new UserError(`${flags.episodes} is a Mixed EQA set: its agents are ${MIXED_AGENT_NAMES.join(", ")}`, { field: "--agent" });
  }
  checkFlags(flags);
  const modelSpec = flags.model !== undefined ? resolveRoleModel(flags, "model") : undefined;
  const judgeSpec = flags.judge !== undefined ? resolveRoleModel(flags, "judge") : undefined;
  if (modelSpec) checkPriceFile();
  const opened = modelSpec ? await openModelRuntime(flags) : undefined;
  const progress = createStageProgress();
  try {
    const runtime = opened?.runtime;
    const run = await exploreMixedSet(
      {
        setFile: resolve(flags.episodes),
        agent,
        outDir: flags.out ?? defaultRunPath("explore"),
        ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
        observation: { width: flags.width, height: flags.height },
        ...(shard ? { shard } : {}),
        ...(runtime && modelSpec ? { model: { chat: runtime.model(modelSpec, { role: "agent" }), image: { maxSide: flags.imageSize, format: flags.imageFormat } }, usage: runtime.usage, settings: modelCallSettings(flags, opened.cachePath) } : {}),
        ...(runtime && judgeSpec ? { judge: { chat: runtime.model(judgeSpec, { role: JUDGE_ROLE }), mode: flags.mode } } : {}),
        onProgress: (done, total, failed) => progress.update("exploring", done, total, failureDetail(failed, 0)),
      },
      { history: loadMixedHistory, recall: recallMixedDay },
    );
    progress.stop();
    console.log(formatMixedRun(run, modelSpec ? `${agent}, ${modelSpec.name}` : agent));
    return run.summary.counts.failed > 0 ? 1 : 0;
  } finally {
    progress.stop();
    opened?.close();
  }
}
