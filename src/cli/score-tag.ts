import { Option } from "commander";
import { UserError, formatJudgeUnreadable } from "../core/index.js";
import { loadTagQuestions } from "../data/index.js";
import {
  DEFAULT_MAX_ANSWER_CHARS,
  defaultTextSimilarity,
  exactTextSimilarity,
  loadTagPredictions,
  planTagScore,
  scoreTagRun,
  tagScoreRunContract,
  validateStructuredJudge,
  type SimilaritySource,
} from "../eval/index.js";
import { renderAnswer } from "../generate/index.js";
import { JUDGE_ROLE, ledgerCost, readCallLedger } from "../models/index.js";
import { formatRunCost, formatTagSummary, formatValidation } from "../report/index.js";
import { checkRun } from "../store/index.js";
import { nonNegativeInteger, oneOf, positiveInteger } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { failureDetail } from "./progress.js";
import type { BatchFlags } from "./batch.js";
import { defineRunCommand, wroteLine, type BatchedRuntime, type RunSession } from "./lifecycle.js";

interface ScoreTagFlags extends ModelCallFlags, BatchFlags {
  questions: string;
  predictions?: string;
  out?: string;
  judge?: string;
  judgeBaseUrl?: string;
  grounded?: boolean;
  allowMissing?: boolean;
  allowUnknown?: boolean;
  maxAnswerChars: number;
  similarity: "encoder" | "exact";
  bootstrapSeed: number;
  validate?: boolean;
  samples?: number;
  seed: number;
  disruptions: number;
}

export function scoreTagCommand() {
  return defineRunCommand<ScoreTagFlags, ScoreTagFlags>({
    name: "score-tag",
    description: "score TAG-EQA answers with the structured grounded judge (resumable), or validate the judge with --validate",
    roles: [{ role: "judge", help: "the LLM that extracts the structure of free-text answers, e.g. openai/gpt-4o", env: "EQA_JUDGE", baseUrlHelp: "the judge's endpoint (overrides OPENAI_BASE_URL and the provider's default)" }],
    batch: true,
    options: (command, place) => {
      command
        .requiredOption("--questions <file>", "TAG-EQA questions (questions.json)")
        .option("--predictions <file>", 'predictions [{"question_id", "answer"}], each answer free text or a structured answer');
      place.out();
      place.role("judge");
      command
        .option("--grounded", "the predictions answer the grounded form of the questions: score against their grounded answers")
        .option("--allow-missing", "score questions without a prediction as empty answers")
        .option("--allow-unknown", "leave out (and report) predictions whose question id is not in the questions file, instead of refusing them")
        .option("--max-answer-chars <n>", "refuse answers longer than this many characters (a structured answer's JSON)", positiveInteger, DEFAULT_MAX_ANSWER_CHARS)
        .addOption(new Option("--similarity <kind>", "text similarity: encoder (the embedded sentence encoder) or exact (equal texts only)").argParser(oneOf(["encoder", "exact"] as const)).default("encoder"))
        .option("--bootstrap-seed <n>", "seed of the bootstrap intervals", nonNegativeInteger, 0)
        .option("--validate", "validate the judge instead: perturb the true answers, render them as text, and correlate the judge's scores with the direct ones")
        .option("--samples <n>", "with --validate: questions to sample (default: all)", positiveInteger)
        .option("--seed <n>", "with --validate: seed of the sample and the perturbations", nonNegativeInteger, 0)
        .option("--disruptions <n>", "with --validate: disruptions per answer", positiveInteger, 3);
    },
    prepare: async ({ flags }) => flags,
    run: (flags, session) => (flags.validate ? runValidation(session) : runScoreTag(session)),
  });
}

function similarityOf(flags: ScoreTagFlags): SimilaritySource | undefined {
  return flags.similarity === "exact" ? exactTextSimilarity() : undefined;
}

async function runScoreTag(session: RunSession<ScoreTagFlags>): Promise<number> {
  const { flags } = session;
  if (!flags.predictions) throw new UserError("--predictions is required (or --validate to validate the judge)", { field: "--predictions" });
  const judgeSpec = session.optionalRole("judge");
  const questions = await loadTagQuestions(flags.questions);
  const predictions = await loadTagPredictions(flags.predictions, { maxAnswerChars: flags.maxAnswerChars });
  const similarity = similarityOf(flags);
  const run = {
    questions,
    questionsPath: flags.questions,
    predictions,
    predictionsPath: flags.predictions,
    ...(judgeSpec ? { judge: { spec: judgeSpec } } : {}),
    grounded: flags.grounded ?? false,
    allowMissing: flags.allowMissing ?? false,
    allowUnknown: flags.allowUnknown ?? false,
    ...(similarity ? { match: { similarity } } : {}),
    outDir: session.outDir,
    bootstrap: { seed: flags.bootstrapSeed },
  };
  // --batch: the judge's first asks of the free-text answers answered through the batch API, then
  // read from the cache; the folder is checked before the batch writes in it
  let batched: BatchedRuntime | undefined;
  if (flags.batch) {
    if (!judgeSpec) throw new UserError("--batch sends the judge's calls as one batch: give the judge", { field: "--judge" }, "give --judge PROVIDER/MODEL (openai/… or anthropic/…), or drop --batch for structured answers alone");
    checkRun(tagScoreRunContract(run, (similarity ?? (await defaultTextSimilarity())).name));
    batched = await session.batch(judgeSpec, JUDGE_ROLE, run.outDir, (collector) => planTagScore(run, collector));
  }
  const opened = batched ?? (await session.runtime());
  const progress = session.progress("scoring");
  const result = await scoreTagRun({
    ...run,
    judge: judgeSpec ? opened.runtime.model(judgeSpec, { role: JUDGE_ROLE }) : undefined,
    concurrency: flags.concurrency,
    settings: { ...session.callSettings(opened), ...(batched ? { batch: batched.report } : {}) },
    usage: opened.runtime.usage,
    onProgress: (p) => progress.update(p.done, p.total, failureDetail(p.failed, p.unreadable)),
  });
  progress.stop();
  console.log(formatTagSummary(result.summary));
  const unknown = result.summary.unknownPredictionIds;
  if (unknown.length > 0) console.log(`\n${unknown.length} prediction(s) answer no question and were left out (first: ${unknown[0]})`);
  if (result.summary.failures.length > 0) {
    console.log(`\n${result.summary.failures.length} failed (first: ${result.summary.failures[0]!.questionId}: ${result.summary.failures[0]!.error})`);
  }
  const unreadable = formatJudgeUnreadable(result.summary.judgeUnreadable);
  if (unreadable) console.log(`\n${unreadable}; left out of the scores`);
  if (result.summary.cost.roles.length > 0) console.log(`\n${formatRunCost(result.summary.cost)}`);
  console.log(wroteLine(result.runDir, ["judgements.jsonl", "metrics.json", "summary.json"], { blank: true }));
  return result.summary.counts.failed > 0 || result.summary.judgeUnreadable.overLimit ? 1 : 0;
}

async function runValidation(session: RunSession<ScoreTagFlags>): Promise<number> {
  const { flags, outDir } = session;
  if (flags.batch) throw new UserError("--batch is for scoring predictions", { field: "--batch" }, "eqa score-tag --validate calls the judge live: drop --batch");
  const judgeSpec = session.optionalRole("judge");
  if (!judgeSpec) throw new UserError("--validate needs a judge to read the rendered answers", { field: "--judge" }, "give --judge PROVIDER/MODEL (and --judge-base-url for a local server)");
  const questions = await loadTagQuestions(flags.questions);
  const similarity = similarityOf(flags);
  const opened = await session.runtime();
  // the judge's calls go to the folder's ledger of model calls
  opened.runtime.usage.attach(outDir);
  const result = await validateStructuredJudge({
    questions,
    judge: opened.runtime.model(judgeSpec, { role: JUDGE_ROLE }),
    ...(flags.samples !== undefined ? { samples: flags.samples } : {}),
    seed: flags.seed,
    disruptions: flags.disruptions,
    renderer: { name: "generator-template", render: (question, answer) => renderAnswer(question.program, answer) },
    ...(similarity ? { match: { similarity } } : {}),
    outDir,
    concurrency: flags.concurrency,
  });
  console.log(formatValidation(result));
  console.log(`\n${formatRunCost(ledgerCost(readCallLedger(outDir)))}`);
  console.log(wroteLine(outDir, ["validation.jsonl", "validation.json"], { blank: true }));
  return result.failed > 0 ? 1 : 0;
}
