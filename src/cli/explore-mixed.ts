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
import { ExternalActiveAgent, MIXED_MAX_STEPS, describeExternalAgent, isMixedAgentName, MIXED_AGENT_NAMES, probeAgent, type ExternalAgentSpec, type MixedAgentName, type OwnMixedAgent } from "../agents/index.js";
import { exploreMixedSet, type LlmMatchMode } from "../eval/index.js";
import { loadMixedHistory, recallMixedDay } from "../generate/index.js";
import { JUDGE_ROLE } from "../models/index.js";
import { formatMixedRun } from "../report/index.js";
import type { ModelCallFlags } from "./model-options.js";
import { failureDetail } from "./progress.js";
import type { RunSession } from "./run-session.js";

/** The flags of `eqa explore` a Mixed EQA run reads, and those it refuses when given. */
export interface MixedExploreFlags extends ModelCallFlags {
  episodes: string;
  env: string;
  agent: string | ExternalAgentSpec;
  agentTimeout?: number;
  episodeTime?: number;
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

function checkFlags(flags: MixedExploreFlags, own: boolean): void {
  const refused: [keyof MixedExploreFlags, string][] = [["emAgent", "--em-agent"], ["batch", "--batch"], ["dryRun", "--dry-run"]];
  for (const [key, flag] of refused) {
    if (flags[key] !== undefined && flags[key] !== false) throw new UserError(`${flag} does not apply to a Mixed EQA set`, { field: flag });
  }
  if (flags.env !== "builtin") throw new UserError("a Mixed EQA set runs in the built-in simulator, on each home's present.json", { field: "--env" });
  if (!own && (flags.agentTimeout !== undefined || flags.episodeTime !== undefined)) throw new UserError(`${flags.agentTimeout !== undefined ? "--agent-timeout" : "--episode-time"} is for an agent of your own`, { field: flags.agentTimeout !== undefined ? "--agent-timeout" : "--episode-time" });
  if (own) return;
  if (flags.judge !== undefined && flags.model === undefined) throw new UserError("--judge does not apply to a Mixed EQA set without --model: its built-in agents then answer by executing each question's program and are scored exactly", { field: "--judge" });
  if (flags.model !== undefined && flags.judge === undefined) throw new UserError("with --model the agents answer in words, which LLM-Match scores: give the judge", { field: "--judge" }, "add --judge PROVIDER/MODEL");
}

/** Refuses, before the run, an agent of the user's own that does not say it supports mixed. */
async function checkOwnAgent(spec: ExternalAgentSpec, timeoutMs: number | undefined): Promise<void> {
  const identity = await probeAgent(spec, timeoutMs !== undefined ? { timeoutMs } : {});
  if (typeof identity === "string") throw new UserError(`${describeExternalAgent(spec)} did not start: ${identity}`, { field: "--agent" }, "run eqa agent check with it");
  const supports = identity.supports ?? ["em-eqa"];
  if (!supports.includes("mixed")) throw new UserError(`${describeExternalAgent(spec)} supports ${supports.join(", ") || "no task"}, not mixed: a Mixed EQA set's agent says "supports": ["mixed"] in its initialize reply and reads the history in reset (docs/agent-protocol.md, Mixed EQA agents)`, { field: "--agent" });
}

export async function exploreMixed(session: RunSession<MixedExploreFlags>, shard: Shard | undefined): Promise<number> {
  const { flags } = session;
  const spec = typeof flags.agent === "object" ? flags.agent : undefined;
  const named = typeof flags.agent === "string" ? flags.agent : undefined;
  if (!spec && (named === undefined || !isMixedAgentName(named))) {
    throw new UserError(`${flags.episodes} is a Mixed EQA set: its agents are ${MIXED_AGENT_NAMES.join(", ")}, or your own (exec:"python3 my_agent.py" or a module) supporting the protocol's mixed kind`, { field: "--agent" });
  }
  checkFlags(flags, spec !== undefined);
  const timeoutMs = flags.agentTimeout !== undefined ? flags.agentTimeout * 1000 : undefined;
  if (spec) await checkOwnAgent(spec, timeoutMs);
  const modelSpec = session.optionalRole("model");
  const judgeSpec = session.optionalRole("judge");
  const opened = modelSpec || judgeSpec ? await session.runtime() : undefined;
  const progress = session.stageProgress();
  const runtime = opened?.runtime;
  const image = { maxSide: flags.imageSize, format: flags.imageFormat };
  let own: OwnMixedAgent | undefined;
  if (spec) {
    const settings = { maxSteps: flags.maxSteps ?? MIXED_MAX_STEPS, episodeTimeMs: flags.episodeTime !== undefined ? flags.episodeTime * 1000 : null };
    own = { own: session.closing(new ExternalActiveAgent(spec, { task: "mixed", image, settings, ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(runtime && modelSpec ? { model: runtime.model(modelSpec, { role: "agent" }) } : {}) })), ...(flags.episodeTime !== undefined ? { timeMs: flags.episodeTime * 1000 } : {}) };
  }
  const run = await exploreMixedSet(
    {
      setFile: resolve(flags.episodes),
      agent: own ?? (named as MixedAgentName),
      outDir: session.outDir,
      ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
      observation: { width: flags.width, height: flags.height },
      ...(shard ? { shard } : {}),
      ...(runtime && modelSpec && !own ? { model: { chat: runtime.model(modelSpec, { role: "agent" }), image } } : {}),
      ...(opened ? { usage: opened.runtime.usage, settings: session.callSettings(opened) } : {}),
      ...(runtime && judgeSpec ? { judge: { chat: runtime.model(judgeSpec, { role: JUDGE_ROLE }), mode: flags.mode } } : {}),
      onProgress: (done, total, failed) => progress.update("exploring", done, total, failureDetail(failed, 0)),
    },
    { history: loadMixedHistory, recall: recallMixedDay },
  );
  progress.stop();
  const agentName = spec ? describeExternalAgent(spec) : String(named);
  console.log(formatMixedRun(run, modelSpec ? `${agentName}, ${modelSpec.name}` : agentName));
  return run.summary.counts.failed > 0 ? 1 : 0;
}
