import { type Command, InvalidArgumentError, Option } from "commander";
import { defaultOpenEqaBenchmarkPath, isLaEqaBenchmark, loadPredictions, loadQuestionSelection } from "../data/index.js";
import { UserError } from "../core/index.js";
import { LLM_MATCH_VARIANTS, loadPredictionsWithoutGuess, parseLlmMatchVariant, planScore, scorePredictions, scoreRunContract, type LlmMatchJudgeOptions, type LlmMatchMode, type LlmMatchVariant } from "../eval/index.js";
import { JUDGE_ROLE, type ModelRef } from "../models/index.js";
import { formatScoreSummary } from "../report/index.js";
import { nonNegativeInteger, oneOf, shardFromFlags, type ShardFlags } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import type { DryRunFlags } from "./dry-run.js";
import { failureDetail } from "./progress.js";
import type { BatchFlags } from "./batch.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";
import { runLaEqaScore } from "./score-la-eqa.js";

interface ScoreFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ShardFlags {
  predictions: string;
  benchmark?: string;
  subset?: string;
  judge?: string;
  judgeBaseUrl?: string;
  mode: LlmMatchMode;
  allowMissing?: boolean;
  out?: string;
  bootstrapSeed: number;
  promptVariant?: LlmMatchVariant;
  temperature?: number;
  withoutGuess?: boolean;
  places?: string;
  prompts: string;
}

function variantArgument(value: string): LlmMatchVariant {
  const variant = parseLlmMatchVariant(value);
  if (!variant) throw new InvalidArgumentError(`expected role=${LLM_MATCH_VARIANTS.role.join("|")} or criterion=${LLM_MATCH_VARIANTS.criterion.join("|")}`);
  return variant;
}

function temperatureArgument(value: string): number {
  const t = Number(value);
  if (value.trim() === "" || !Number.isFinite(t) || t < 0 || t > 2) throw new InvalidArgumentError("expected a temperature from 0 to 2");
  return t;
}

/** The selection a dry run and a run of `eqa score` share: the questions, their predictions and the judge. */
type ScoreRun = Omit<Parameters<typeof scorePredictions>[0], "judge" | "usage" | "onProgress" | "concurrency" | "settings" | "bootstrap"> & { judge: ModelRef };

export function scoreCommand(): Command {
  return defineRunCommand<ScoreFlags, ScoreRun>({
    name: "score",
    description: "score predictions with LLM-Match, as OpenEQA does, or with LA-EQA's judge and SPL (resumable)",
    roles: [{ role: "judge", help: "the judge model, e.g. openai/gpt-4o", env: "EQA_JUDGE", baseUrlHelp: "the judge's endpoint (overrides OPENAI_BASE_URL and the provider's default)" }],
    dryRun: true,
    batch: true,
    shard: "questions",
    options: (command, place) => {
      command
        .requiredOption("--predictions <file>", 'predictions in OpenEQA\'s format [{"question_id", "answer"}]; for LA-EQA also "distance_traveled" (metres walked)')
        .option("--benchmark <file>", "the OpenEQA benchmark file (default: the one `eqa data fetch openeqa` wrote), or LA-EQA's questions: a file of them, or la-eqa for the one `eqa data fetch la-eqa` wrote")
        .option("--subset <file>", "a JSON list of question ids to score (e.g. open-eqa-v0-184-questions.json)");
      place.role("judge");
      command
        .addOption(new Option("--mode <mode>", "robust (default) or compat (the reference's exact behaviour)").argParser(oneOf(["robust", "compat"] as const)).default("robust"))
        .option("--allow-missing", "score questions without a prediction as a null answer (0 points)");
      place.out();
      command
        .option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0)
        .option("--prompt-variant <variant>", "robustness study (OpenEQA Tables VIII-IX): role=ai|score-master|professional or criterion=perfect|contains|person|professional", variantArgument)
        .option("--temperature <t>", "the judge's temperature (OpenEQA Table X; default 0.2, the reference's)", temperatureArgument)
        .option("--places <file>", 'LA-EQA: place positions of the world "now" by scene, for SPL: {"<scene_name>": [{"id", "position": [x, y, z]}, …]}')
        .option("--prompts <set>", "LA-EQA: the judge's prompt: eqakit (its own), original (the benchmark's, from eqa data fetch la-eqa) or the folder that command wrote it to", "eqakit")
        .option("--without-guess", "score the agent's own answers where force-a-guess replaced them (OpenEQA Table III, w/o guess)");
    },
    handOff: async (session) => (await isLaEqaBenchmark(session.flags.benchmark) ? runLaEqaScore(session) : undefined),
    prepare: prepareScore,
    plan: async (run, plan) => {
      const planned = await planScore(run, plan);
      return [`${planned.questions} question(s): ${planned.reused} already judged in ${run.outDir}, ${planned.pending} to judge`];
    },
    run: runScore,
  });
}

async function prepareScore(session: RunSession<ScoreFlags>): Promise<ScoreRun> {
  const { flags, outDir } = session;
  for (const [flag, set] of [["--places", flags.places !== undefined], ["--prompts", flags.prompts !== "eqakit"]] as const) {
    if (set) throw new UserError("applies to LA-EQA questions only", { field: flag }, "pass LA-EQA's questions with --benchmark, or leave the option out");
  }
  const judgeSpec = session.role("judge");
  const { benchmark, questions } = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
  const predictions = flags.withoutGuess ? (await loadPredictionsWithoutGuess(flags.predictions)).predictions : await loadPredictions(flags.predictions);
  const judgeOptions: LlmMatchJudgeOptions = {
    ...(flags.promptVariant ? { variant: flags.promptVariant } : {}),
    ...(flags.temperature !== undefined ? { temperature: flags.temperature } : {}),
  };
  const shard = shardFromFlags(flags);
  return {
    benchmark,
    questions,
    ...(flags.subset ? { subsetPath: flags.subset } : {}),
    predictions,
    predictionsPath: flags.predictions,
    judge: { spec: judgeSpec },
    mode: flags.mode,
    ...(Object.keys(judgeOptions).length > 0 ? { judgeOptions } : {}),
    allowMissing: flags.allowMissing ?? false,
    outDir,
    ...(shard ? { shard } : {}),
  };
}

async function runScore(run: ScoreRun, session: RunSession<ScoreFlags>): Promise<number> {
  const { flags } = session;
  // --batch: the judge's requests answered through the batch API first, then read from the cache;
  // the folder is checked before the batch writes in it, with the settings the run records
  const contract = () => scoreRunContract({ ...run, bootstrap: { seed: flags.bootstrapSeed }, ...(flags.withoutGuess ? { settings: { withoutGuess: true } } : {}) });
  const { opened, batched } = await session.runtimeOrBatch(run.judge.spec, JUDGE_ROLE, run.outDir, contract, (collector) => planScore(run, collector));
  const progress = session.progress("judging");
  const result = await scorePredictions({
    ...run,
    judge: opened.runtime.model(run.judge.spec, { role: JUDGE_ROLE }),
    usage: opened.runtime.usage,
    concurrency: flags.concurrency,
    bootstrap: { seed: flags.bootstrapSeed },
    settings: { ...session.callSettings(opened), ...(flags.withoutGuess ? { withoutGuess: true } : {}), ...(batched ? { batch: batched.report } : {}) },
    onProgress: (p) => progress.update(p.done, p.total, failureDetail(p.failed, p.unreadable)),
  });
  progress.stop();
  console.log(formatScoreSummary(result.summary));
  console.log(wroteLine(result.runDir, ["judgements.jsonl", "metrics.json", "summary.json"], { blank: true }));
  return result.summary.counts.failed > 0 || result.summary.judgeUnreadable.overLimit ? 1 : 0;
}
