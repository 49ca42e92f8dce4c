import { Command, Option } from "commander";
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
  type MeanEstimate,
  type ScorePair,
  type SimilaritySource,
  type TagScoreSummary,
  type ValidationResult,
} from "../eval/index.js";
import { renderAnswer } from "../generate/index.js";
import { JUDGE_ROLE, ledgerCost, readCallLedger, type ModelSpec } from "../models/index.js";
import { formatRunCost, formatTable } from "../report/index.js";
import { checkRun, defaultRunPath } from "../store/index.js";
import { addModelCallOptions, type ModelCallFlags, modelCallSettings, nonNegativeInteger, oneOf, openModelRuntime, outputDirectory, positiveInteger, resolveRoleModel } from "./options.js";
import { createProgress, failureDetail } from "./progress.js";
import { addBatchOptions, runBatch, type BatchFlags } from "./batch.js";

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

export function scoreTagCommand(): Command {
  const command = new Command("score-tag")
    .description("score TAG-EQA answers with the structured grounded judge (resumable), or validate the judge with --validate")
    .requiredOption("--questions <file>", "TAG-EQA questions (questions.json)")
    .option("--predictions <file>", 'predictions [{"question_id", "answer"}], each answer free text or a structured answer')
    .option("--out <dir>", "run directory (default: runs/score-tag-DATE); an existing one resumes", outputDirectory)
    .addOption(new Option("--judge <provider/model>", "the LLM that extracts the structure of free-text answers, e.g. openai/gpt-4o").env("EQA_JUDGE"))
    .option("--judge-base-url <url>", "the judge's endpoint (overrides OPENAI_BASE_URL and the provider's default)")
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
  addModelCallOptions(command);
  addBatchOptions(command);
  return command.action(async (flags: ScoreTagFlags) => {
    process.exitCode = flags.validate ? await runValidation(flags) : await runScoreTag(flags);
  });
}

function judgeSpecOf(flags: ScoreTagFlags): ModelSpec | undefined {
  if (!flags.judge) return undefined;
  return resolveRoleModel(flags, "judge");
}

function similarityOf(flags: ScoreTagFlags): SimilaritySource | undefined {
  return flags.similarity === "exact" ? exactTextSimilarity() : undefined;
}

async function runScoreTag(flags: ScoreTagFlags): Promise<number> {
  if (!flags.predictions) throw new UserError("--predictions is required (or --validate to validate the judge)", { field: "--predictions" });
  const judgeSpec = judgeSpecOf(flags);
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
    outDir: flags.out ?? defaultRunPath("score-tag"),
    bootstrap: { seed: flags.bootstrapSeed },
  };
  // --batch: the judge's first asks of the free-text answers answered through the batch API, then
  // read from the cache; the folder is checked before the batch writes in it
  let batched: Awaited<ReturnType<typeof runBatch>> | undefined;
  if (flags.batch) {
    if (!judgeSpec) throw new UserError("--batch sends the judge's calls as one batch: give the judge", { field: "--judge" }, "give --judge PROVIDER/MODEL (openai/… or anthropic/…), or drop --batch for structured answers alone");
    checkRun(tagScoreRunContract(run, (similarity ?? (await defaultTextSimilarity())).name));
    batched = await runBatch(flags, judgeSpec, JUDGE_ROLE, run.outDir, (collector) => planTagScore(run, collector));
  }
  const opened = batched?.opened ?? (await openModelRuntime(flags));
  const progress = createProgress("scoring");
  try {
    const result = await scoreTagRun({
      ...run,
      judge: judgeSpec ? opened.runtime.model(judgeSpec, { role: JUDGE_ROLE }) : undefined,
      concurrency: flags.concurrency,
      settings: { ...modelCallSettings(flags, opened.cachePath), ...(batched ? { batch: batched.report } : {}) },
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
    console.log(`\nwrote ${result.runDir}/{judgements.jsonl,metrics.json,summary.json}`);
    return result.summary.counts.failed > 0 || result.summary.judgeUnreadable.overLimit ? 1 : 0;
  } finally {
    progress.stop();
    opened.close();
  }
}

async function runValidation(flags: ScoreTagFlags): Promise<number> {
  if (flags.batch) throw new UserError("--batch is for scoring predictions", { field: "--batch" }, "eqa score-tag --validate calls the judge live: drop --batch");
  const judgeSpec = judgeSpecOf(flags);
  if (!judgeSpec) throw new UserError("--validate needs a judge to read the rendered answers", { field: "--judge" }, "give --judge PROVIDER/MODEL (and --judge-base-url for a local server)");
  const questions = await loadTagQuestions(flags.questions);
  const similarity = similarityOf(flags);
  const opened = await openModelRuntime(flags);
  try {
    const outDir = flags.out ?? defaultRunPath("validate-tag");
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
    console.log(`\nwrote ${outDir}/{validation.jsonl,validation.json}`);
    return result.failed > 0 ? 1 : 0;
  } finally {
    opened.close();
  }
}

const fixed = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");
const estimate = (e: MeanEstimate): string => (e.n === 0 ? "n/a" : `${fixed(e.mean)} [${fixed(e.ci[0])}, ${fixed(e.ci[1])}]`);
const percent = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "n/a");

function categoryRows(label: string, categories: Record<string, ScorePair>): string[][] {
  return Object.entries(categories).map(([key, pair]) => [`${label} ${key}`, String(pair.grounded.n), estimate(pair.ungrounded), estimate(pair.grounded)]);
}

function formatTagSummary(summary: TagScoreSummary): string {
  const rows = [
    ["overall", String(summary.scores.grounded.n), estimate(summary.scores.ungrounded), estimate(summary.scores.grounded)],
    ...categoryRows("predicate", summary.categories.predicateType),
    ...categoryRows("query", summary.categories.queryType),
    ...categoryRows("conditions", summary.categories.conditions),
    ...categoryRows("", summary.categories.ambiguous).map((r) => [r[0]!.trim(), ...r.slice(1)]),
    ...categoryRows("", summary.categories.combined).map((r) => [r[0]!.trim(), ...r.slice(1)]),
  ];
  const scores = formatTable(["category", "n", "score (1-5)", "grounded score"], rows);
  const errors = formatTable(
    ["error", "answers with it", "per answer", "rate"],
    Object.entries(summary.errors).map(([kind, e]) => [kind, percent(e.answers), fixed(e.perAnswer), percent(e.rate)]),
  );
  const counted = `${summary.counts.scored} of ${summary.counts.questions} scored, ${summary.counts.failed} failed, ${summary.counts.judgeUnreadable} unreadable by the judge`;
  return `${scores}\n\n${counted}\nvalid answers: ${percent(summary.validAnswerRate)} of ${summary.counts.scored}\n\n${errors}`;
}

function formatValidation(result: ValidationResult): string {
  const c = result.correlation;
  return [
    `items: ${result.items.length} (${result.failed} failed)`,
    `mean score: direct ${fixed(result.meanHardScore)}, through the judge ${fixed(result.meanJudgeScore)}`,
    `grounded: Pearson r ${fixed(c.pearson, 3)}, Spearman ρ ${fixed(c.spearman, 3)} [${fixed(c.spearmanCi[0], 3)}, ${fixed(c.spearmanCi[1], 3)}]`,
    `ungrounded: Pearson r ${fixed(result.ungroundedCorrelation.pearson, 3)}, Spearman ρ ${fixed(result.ungroundedCorrelation.spearman, 3)}`,
  ].join("\n");
}
