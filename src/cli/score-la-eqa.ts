import { UserError, withPromptFiles } from "../core/index.js";
import { LA_EQA_BENCHMARK_NAME, defaultLaEqaBenchmarkPath, loadLaEqaPlaces, loadLaEqaPredictions, loadLaEqaSelection } from "../data/index.js";
import { laEqaScoreRunContract, planLaEqaScore, readLaEqaOriginalPrompt, scoreLaEqaPredictions, type LaEqaScoreSetup } from "../eval/index.js";
import { JUDGE_ROLE } from "../models/index.js";
import { formatCallPlan, formatLaEqaSummary } from "../report/index.js";
import type { ShardFlags } from "./options.js";
import type { ModelCallFlags } from "./model-options.js";
import { openCallPlan, type DryRunFlags } from "./dry-run.js";
import { failureDetail } from "./progress.js";
import type { BatchFlags } from "./batch.js";
import { wroteLine, type RunSession } from "./lifecycle.js";

/** The flags of `eqa score` that LA-EQA's scoring reads. */
export interface LaEqaScoreFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ShardFlags {
  predictions: string;
  /** LA-EQA's questions (`la-eqa` or a file): `eqa score` hands them here. */
  benchmark?: string;
  subset?: string;
  places?: string;
  prompts: string;
  judge?: string;
  judgeBaseUrl?: string;
  mode: string;
  allowMissing?: boolean;
  out?: string;
  bootstrapSeed: number;
  promptVariant?: unknown;
  temperature?: number;
  withoutGuess?: boolean;
}

/** Flags of OpenEQA's LLM-Match that LA-EQA's judge has no use for, refused rather than ignored. */
function refuseOpenEqaFlags(flags: LaEqaScoreFlags): void {
  const given: [string, boolean][] = [
    ["--mode", flags.mode !== "robust"],
    ["--prompt-variant", flags.promptVariant !== undefined],
    ["--temperature", flags.temperature !== undefined],
    ["--without-guess", flags.withoutGuess === true],
    ["--shard", flags.shard !== undefined && flags.shard !== false],
  ];
  for (const [flag, set] of given) {
    if (set) throw new UserError("does not apply to LA-EQA questions", { field: flag }, "LA-EQA's judge runs as its evaluation code runs it: leave the option out");
  }
}

/** `eqa score --benchmark la-eqa|FILE`: LA-EQA's judge and SPL over predictions with distances; the exit code. */
export async function runLaEqaScore(session: RunSession<LaEqaScoreFlags>): Promise<number> {
  const { flags } = session;
  refuseOpenEqaFlags(flags);
  const judgeSpec = session.role("judge");
  const { benchmark, questions } = await loadLaEqaSelection({ benchmark: flags.benchmark ?? LA_EQA_BENCHMARK_NAME, ...(flags.subset ? { subset: flags.subset } : {}), defaultBenchmark: defaultLaEqaBenchmarkPath() });
  const prompts = flags.prompts === "eqakit" ? [] : [readLaEqaOriginalPrompt(flags.prompts === "original" ? undefined : flags.prompts)];
  const run: LaEqaScoreSetup = {
    benchmark,
    questions,
    ...(flags.subset ? { subsetPath: flags.subset } : {}),
    predictions: await loadLaEqaPredictions(flags.predictions),
    predictionsPath: flags.predictions,
    ...(flags.places ? { places: await loadLaEqaPlaces(flags.places), placesPath: flags.places } : {}),
    judge: { spec: judgeSpec },
    allowMissing: flags.allowMissing ?? false,
    outDir: session.outDir,
    concurrency: flags.concurrency,
    bootstrap: { seed: flags.bootstrapSeed },
  };
  return withPromptFiles(prompts, async () => {
    if (flags.dryRun) return planRun(session, run);
    const { opened, batched } = await session.runtimeOrBatch(judgeSpec, JUDGE_ROLE, run.outDir, () => laEqaScoreRunContract(run), (collector) => planLaEqaScore(run, collector));
    const progress = session.progress("judging");
    const result = await scoreLaEqaPredictions({
      ...run,
      judge: opened.runtime.model(judgeSpec, { role: JUDGE_ROLE }),
      usage: opened.runtime.usage,
      settings: { ...session.callSettings(opened), ...(batched ? { batch: batched.report } : {}) },
      onProgress: (p) => progress.update(p.done, p.total, failureDetail(p.failed, p.unreadable)),
    });
    progress.stop();
    console.log(formatLaEqaSummary(result.summary));
    console.log(wroteLine(result.runDir, ["judgements.jsonl", "results.json", "summary.json"], { blank: true }));
    return result.summary.counts.failed > 0 || result.summary.judgeUnreadable.overLimit ? 1 : 0;
  });
}

/** `--dry-run`: the judge's calls, tokens and dollars, without calling it or writing anything. */
async function planRun(session: RunSession<LaEqaScoreFlags>, run: LaEqaScoreSetup): Promise<number> {
  const opened = session.closing(await openCallPlan(session.flags));
  const planned = await planLaEqaScore(run, opened.plan);
  console.log(formatCallPlan(opened.plan.roles(), [`${planned.questions} question(s): ${planned.reused} already judged in ${run.outDir}, ${planned.pending} to judge`]));
  return 0;
}
