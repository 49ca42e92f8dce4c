/**
 * `eqa explore --episodes SET/episodes.json` on a Mixed EQA set: the built-in agents
 * (`--agent memory-only | explore-only | recall-explore`) on the built-in simulator, each home's
 * present world, scored exactly. The flags of other explorers are refused, naming the flag.
 */
import { resolve } from "node:path";
import { UserError, type Shard } from "../core/index.js";
import { looksLikeMixedSet, readJsonFile } from "../data/index.js";
import { isMixedAgentName, MIXED_AGENT_NAMES, type ExternalAgentSpec } from "../agents/index.js";
import { exploreMixedSet } from "../eval/index.js";
import { loadMixedHistory, recallMixedDay } from "../generate/index.js";
import { formatMixedRun } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { createStageProgress, failureDetail } from "./progress.js";

/** The flags of `eqa explore` a Mixed EQA run reads, and those it refuses when given. */
export interface MixedExploreFlags {
  episodes: string;
  env: string;
  agent: string | ExternalAgentSpec;
  maxSteps?: number;
  width: number;
  height: number;
  out?: string;
  model?: string;
  emAgent?: string;
  judge?: string;
  batch?: boolean;
  dryRun?: boolean;
}

/** Whether `--episodes` names a Mixed EQA set (a CSV file never does). */
export async function isMixedSetFile(file: string): Promise<boolean> {
  return !/\.csv$/i.test(file) && looksLikeMixedSet(await readJsonFile(file));
}

function refuseOtherFlags(flags: MixedExploreFlags): void {
  const refused: [keyof MixedExploreFlags, string][] = [["emAgent", "--em-agent"], ["judge", "--judge"], ["batch", "--batch"], ["dryRun", "--dry-run"], ["model", "--model"]];
  for (const [key, flag] of refused) {
    if (flags[key] !== undefined && flags[key] !== false) throw new UserError(`${flag} does not apply to a Mixed EQA set: its built-in agents execute each question's program over what they perceived, call no model, and are scored exactly`, { field: flag });
  }
  if (flags.env !== "builtin") throw new UserError("a Mixed EQA set runs in the built-in simulator, on each home's present.json", { field: "--env" });
}

export async function exploreMixed(flags: MixedExploreFlags, shard: Shard | undefined): Promise<number> {
  const agent = typeof flags.agent === "string" ? flags.agent : undefined;
  if (agent === undefined || !isMixedAgentName(agent)) {
    throw new UserError(`${flags.episodes} is a Mixed EQA set: its agents are ${MIXED_AGENT_NAMES.join(", ")}`, { field: "--agent" });
  }
  refuseOtherFlags(flags);
  const progress = createStageProgress();
  try {
    const run = await exploreMixedSet(
      {
        setFile: resolve(flags.episodes),
        agent,
        outDir: flags.out ?? defaultRunPath("explore"),
        ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
        observation: { width: flags.width, height: flags.height },
        ...(shard ? { shard } : {}),
        onProgress: (done, total, failed) => progress.update("exploring", done, total, failureDetail(failed, 0)),
      },
      { history: loadMixedHistory, recall: recallMixedDay },
    );
    progress.stop();
    console.log(formatMixedRun(run, agent));
    return run.summary.counts.failed > 0 ? 1 : 0;
  } finally {
    progress.stop();
  }
}
