import { OutputError, UserError, judgeUnreadable, type JudgeUnreadable, isUserError, sha256Hex, canonicalJson, selectShard, type InputLocation, type Question, type Shard } from "../core/index.js";
import { z } from "zod";
import { openEpisode, resolveEpisodePath, type Episode } from "../episodes/index.js";
import { countReplyStatuses, failedReplyStatusSchema, replyStatusOf, sumUsage, runModelBatch, type FailedReplyStatus, type ModelSpec, type UsageLedger, type UsageTotals, JUDGE_ROLE, ledgerCost, mergeCallLedgers, readCallLedger, type CallEntry, type CallPlan, type RunCost } from "../models/index.js";
import { RunDirectory, mergeOutput, mergedRecords, openRun, questionItems, readShardSet, resultSettings, recordParser, resumeItems, shardContext, shardSetting, sumShardCounts, shardWallTime, writeMergeNote, writeRecords, writeShardManifest, type RunContract, RUN_KIND, summaryHead, type RunSummaryHead } from "../store/index.js";
import type { ResumeRule } from "../store/index.js";
import { createAgent, type AgentSetup } from "./create.js";
import { traceOfFailure } from "./calls.js";
import type { Agent, AgentTrace } from "./types.js";

export const TRACES_FILE = "traces.jsonl";
export const PREDICTIONS_FILE = "predictions.json";

/** One question's answer, as appended to `traces.jsonl`. */
export interface AnswerRecord {
  questionId: string;
  answer: string | null;
  agent: string;
  /** Identifies the agent's configuration and the question: a resumed run reuses only matching records. */
  inputKey: string;
  episode: string | null;
  trace: AgentTrace | null;
  /** Why the question could not be answered (its episode, a model call), or null. */
  error: string | null;
  /** Set when the model's reply was cut, filtered or refused: not an answer, asked again on resume. */
  status?: FailedReplyStatus;
  /** The text of such a reply, kept for the reader (never scored). */
  partialAnswer?: string | null;
  finishedAt: string;
}

/** One line of an answer run's traces.jsonl, as `answerQuestions` writes it (a record of an older version without `error` answered). */
export const answerRecordSchema = z.looseObject({
  questionId: z.string(),
  answer: z.string().nullable(),
  agent: z.string(),
  inputKey: z.string(),
  episode: z.string().nullable(),
  trace: z.custom<AgentTrace | null>((v) => v === null || ((v) => typeof v === "object" && v !== null && !Array.isArray(v))(v)),
  error: z.string().nullable().default(null),
  status: failedReplyStatusSchema.optional(),
  partialAnswer: z.string().nullable().optional(),
  finishedAt: z.string(),
}) satisfies z.ZodType<AnswerRecord>;

export interface AnswerProgress {
  done: number;
  total: number;
  failed: number;
  reused: number;
}

export interface AnswerOptions {
  questions: Question[];
  agent: Agent;
  /** Where episode histories are (a folder of episodes, one episode folder, or a video); not needed by the blind agent. */
  framesRoot?: string;
  /** The benchmark file the questions came from, named in errors about their records. */
  benchmarkFile?: string;
  outDir: string;
  /** Questions answered at once. */
  concurrency?: number;
  /** The models the agent calls, to name in errors that stop the run. */
  models: ModelSpec[];
  usage?: UsageLedger;
  /** Recorded in the summary as they are (benchmark path and hash, flags…). */
  settings?: Record<string, unknown>;
  /** The summary's file name in the run directory (`summary.json`). */
  summaryFile?: string;
  /** The run folder when an enclosing run (`eqa run`, `eqa demo`) has opened it; else `outDir` is opened as an answer run (`answerRunContract`). */
  run?: RunDirectory;
  /** Answer only this shard of the questions (`--shard`), and write `shard.json` for `eqa merge`. */
  shard?: Shard;
  onProgress?: (progress: AnswerProgress) => void;
}

export interface AnswerSummary extends RunSummaryHead<typeof RUN_KIND.answer> {
  /** forceGuessChecked: force-a-guess verdicts read (guess or keep); forceGuessUnreadable: verdicts that named neither (the answer kept). */
  counts: { questions: number; answered: number; failed: number; reused: number; nullAnswers: number; forceGuessChecked: number; abstained: number; forceGuessUnreadable: number };
  /** Share of the force-a-guess verdicts read that found the agent abstaining (OpenEQA Table III), or null when none was read. */
  abstentionRate: number | null;
  /** The force-a-guess verdicts that could not be read, out of the checks made (not counted as abstaining or not). */
  judgeUnreadable: JudgeUnreadable;
  /** Replies that were not answers, by status (truncated, filtered, refused). */
  replyStatuses: Partial<Record<FailedReplyStatus, number>>;
  failures: { questionId: string; error: string; status?: FailedReplyStatus }[];
  usage: { answers: UsageTotals; thisProcess: ReturnType<UsageLedger["snapshot"]> | null };
  /** Calls, tokens and dollars per role (agent, captioner…), from the run's ledger of model calls (calls.jsonl): every call of every process that worked in the folder, failed answers' included (their calls were paid for). */
  cost: RunCost;
}

export interface AnswerResult {
  summary: AnswerSummary;
  runDir: string;
  records: AnswerRecord[];
}

/**
 * `eqa answer`: runs an agent on every question, appending each answer with its trace as it
 * finishes, then writes predictions.json (OpenEQA's format) and the summary. A question whose
 * episode cannot be read fails alone; a file that cannot be written (a full disk) stops the run
 * with an OutputError naming it, every answer appended so far kept. Run again in the same
 * directory, only what is missing (or failed) is answered.
 */
export async function answerQuestions(options: AnswerOptions): Promise<AnswerResult> {
  const started = performance.now();
  const { questions, keyOf } = answerSelection(options.agent, options);
  const run = options.run ?? (await openRun(answerRunContract(options)));
  options.usage?.attach(run.path);
  const { reusable: earlier, pending } = resumeItems(run, answerResumeRule(questions, keyOf));
  const records = new Map(earlier);
  const progress: AnswerProgress = { done: earlier.size, total: questions.length, failed: 0, reused: earlier.size };
  options.onProgress?.({ ...progress });

  const episodes = new Map<string, Promise<Episode>>();
  const episodeFor = (question: Question): Promise<Episode> | undefined => {
    if (!options.agent.needsEpisode) return undefined;
    const path = episodePath(options.framesRoot, question);
    const known = episodes.get(path);
    if (known) return known;
    const opened = openEpisode(path, question.episodeHistory);
    episodes.set(path, opened);
    return opened;
  };
  const record = (question: Question, fields: Partial<AnswerRecord>): AnswerRecord => ({
    questionId: question.questionId,
    answer: null,
    agent: options.agent.name,
    inputKey: keyOf(question),
    episode: options.agent.needsEpisode ? question.episodeHistory : null,
    trace: null,
    error: null,
    finishedAt: new Date().toISOString(),
    ...fields,
  });

  const appender = run.appender(TRACES_FILE);
  try {
    await runModelBatch({
      items: pending,
      concurrency: options.concurrency ?? 8,
      work: async (question) => {
        try {
          const episode = episodeFor(question);
          const result = await options.agent.answer(question, episode ? await episode : undefined);
          return record(question, { answer: result.answer, trace: result.trace });
        } catch (error) {
          // a file that cannot be written stops the run (exit 3); it is not this question's failure
          if (isUserError(error) && !(error instanceof OutputError)) return record(question, { error: error.message, trace: traceOfFailure(error) });
          throw error;
        }
      },
      failed: (question, error) => record(question, { error: error.message, trace: traceOfFailure(error), ...replyStatusOf(error), ...(error.reply ? { partialAnswer: error.reply.text } : {}) }),
      finished: (question, result) => {
        appender.append(result);
        records.set(question.questionId, result);
        progress.done++;
        if (result.error !== null) progress.failed++;
        options.onProgress?.({ ...progress });
      },
      models: options.models,
      itemId: (question) => question.questionId,
    });
  } finally {
    appender.close();
    // an external agent's processes are shut down; it starts fresh ones if it is run again
    await options.agent.close?.();
  }

  const ordered = questions.map((q) => records.get(q.questionId)!);
  await run.writeJson(PREDICTIONS_FILE, ordered.filter((r) => r.error === null).map(toPrediction));
  const context = { agentModel: options.models[0]?.name ?? String(options.agent.configuration.model) };
  const summary = answerSummary(ordered, {
    config: { ...options.agent.configuration, framesRoot: options.framesRoot ?? null, concurrency: options.concurrency ?? 8, ...options.settings, ...shardSetting(options.shard) },
    reused: earlier.size,
    wallTimeMs: performance.now() - started,
    usage: options.usage?.snapshot() ?? null,
    calls: readCallLedger(run.path),
  });
  if (options.shard) {
    await writeShardManifest(run, { kind: RUN_KIND.answer, ...options.shard, items: options.questions.map((q) => q.questionId), keys: Object.fromEntries(questions.map((q) => [q.questionId, keyOf(q)])), context });
  }
  await run.writeJson(options.summaryFile ?? "summary.json", summary);
  return { summary, runDir: run.path, records: ordered };
}

/**
 * The run folder of `eqa answer` as its manifest declares it: kind answer; the settings that
 * decide the answers (the agent's configuration: its models, prompts, frames, parameters, and
 * the command's own settings less how the process ran); the benchmark, the question subset
 * (copied in) and the frames as inputs.
 */
export function answerRunContract(options: Pick<AnswerOptions, "outDir" | "agent" | "settings" | "framesRoot" | "benchmarkFile" | "questions">): RunContract {
  const subset = options.settings?.subset;
  return {
    dir: options.outDir,
    kind: RUN_KIND.answer,
    settings: resultSettings({ ...options.agent.configuration, ...options.settings }),
    items: questionItems(options.questions, options.benchmarkFile),
    inputs: [
      ...(options.benchmarkFile ? [{ name: "benchmark", path: options.benchmarkFile }] : []),
      ...(typeof subset === "string" ? [{ name: "subset", path: subset, copy: true }] : []),
      ...(options.framesRoot ? [{ name: "frames", path: options.framesRoot }] : []),
    ],
  };
}

/**
 * `eqa merge` of `eqa answer --shard` runs: traces.jsonl holds every shard's standing answers in
 * the benchmark's order, predictions.json and summary.json are written as one unsharded run
 * writes them (counts of reused answers and wall times summed over the shards).
 */
export async function mergeAnswerRuns(dirs: readonly string[], outDir: string): Promise<AnswerResult> {
  const set = await readShardSet(dirs, RUN_KIND.answer);
  // the shards' context is checked, though the merged summary needs nothing of it
  shardContext(set.shards[0]!, set.kind, z.object({ agentModel: z.string() }));
  const records = mergedRecords(set, TRACES_FILE, recordParser(answerRecordSchema));
  const run = mergeOutput(outDir, set);
  await writeRecords(run, TRACES_FILE, records);
  await run.writeJson(PREDICTIONS_FILE, records.filter((r) => r.error === null).map(toPrediction));
  const summary = answerSummary(records, {
    config: set.config,
    reused: sumShardCounts(set, "reused"),
    wallTimeMs: shardWallTime(set),
    usage: null,
    calls: await mergeCallLedgers(dirs, run.path),
  });
  await writeMergeNote(run, set);
  await run.writeJson("summary.json", summary);
  return { summary, runDir: run.path, records };
}

/**
 * The questions a run of `agent` answers (its shard's), their episode histories checked, each with
 * the input key a resumed run matches: what `answerQuestions` answers and `planAnswers` prices,
 * chosen once for both.
 */
function answerSelection(agent: Agent, options: Pick<AnswerOptions, "questions" | "shard" | "framesRoot" | "benchmarkFile">): { questions: Question[]; keyOf: (q: Question) => string } {
  const questions = selectShard(options.questions, (q) => q.questionId, options.shard);
  if (agent.needsEpisode && !options.framesRoot) {
    throw new UserError(`the ${agent.name} agent needs episode histories`, { field: "--frames" }, "pass --frames DIR (a folder of OpenEQA frames/<episode_history> folders or videos, one episode folder, or one video)");
  }
  if (agent.needsEpisode && options.framesRoot) checkEpisodePaths(options.framesRoot, questions, options.benchmarkFile);
  return { questions, keyOf: answerKey(agent) };
}

/** A question's input key for `agent`: a resumed run reuses only answers made with the same configuration. */
function answerKey(agent: Agent): (q: Question) => string {
  const configKey = canonicalJson(agent.configuration);
  return (q) => sha256Hex(`${configKey}\u0000${q.questionId}\u0000${q.question}`);
}

/** What `eqa answer --dry-run` counts. */
export interface AnswerPlan {
  questions: number;
  /** Answers the run directory already holds. */
  reused: number;
  pending: number;
  /** Questions that would fail before any call (an episode that cannot be read). */
  failures: { questionId: string; error: string }[];
  /** Each question's answer: the recorded one, or the planning model's (what a judge would be shown). */
  answers: Map<string, string | null>;
}

/** What the planning models reply: an answer line the agents read at the first try. */
const PLANNED_REPLY = "A: (dry run)";

/**
 * `eqa answer --dry-run`: builds the agent of `setup` on a runtime whose models record their
 * requests in `plan` (the first model asked for is the agent's, any other the captioner's),
 * and runs it on every question the run directory has not answered, so that the requests are
 * those the real run would build (frames sampled and prepared alike). Calls no model and
 * writes nothing.
 */
export async function planAnswers(options: Omit<AnswerOptions, "agent" | "models" | "usage" | "onProgress"> & { setup: AgentSetup }, plan: CallPlan): Promise<AnswerPlan> {
  const { agent } = createAgent(options.setup, plan.runtime((_spec, nth) => ({ role: nth === 0 ? "agent" : "captioner", reply: PLANNED_REPLY })));
  const { questions, keyOf } = answerSelection(agent, options);
  const { reusable: earlier, pending } = resumeItems(options.outDir, answerResumeRule(questions, keyOf));
  const answers = new Map<string, string | null>([...earlier].map(([id, r]) => [id, r.answer]));
  const failures: AnswerPlan["failures"] = [];
  const episodes = new Map<string, Promise<Episode>>();
  for (const question of pending) {
    try {
      let episode: Episode | undefined;
      if (agent.needsEpisode) {
        const path = episodePath(options.framesRoot, question);
        if (!episodes.has(path)) episodes.set(path, openEpisode(path, question.episodeHistory));
        episode = await episodes.get(path);
      }
      answers.set(question.questionId, (await agent.answer(question, episode)).answer);
    } catch (error) {
      if (!isUserError(error)) throw error;
      failures.push({ questionId: question.questionId, error: error.message });
    }
  }
  await agent.close?.();
  return { questions: questions.length, reused: earlier.size, pending: pending.length, failures, answers };
}

function episodePath(framesRoot: string | undefined, question: Question): string {
  if (!framesRoot) throw new UserError("no episode histories given", { id: question.questionId }, "pass --frames DIR (a folder of episode folders, one episode folder, or a video)");
  const path = resolveEpisodePath(framesRoot, question.episodeHistory, episodeLocation(question));
  if (!path) {
    throw new UserError(`episode history "${question.episodeHistory}" not found under ${framesRoot}`, { id: question.questionId, field: "episode_history" }, "check --frames: it should hold OpenEQA's frames/<episode_history> folders, or videos named after them");
  }
  return path;
}

/**
 * Refuses, before any work, a selection in which an episode_history is absolute or leads out
 * of the frames folder: such a benchmark would have frames read from anywhere. A history that
 * is merely missing fails its question alone, later.
 */
/** Refuses (UserError naming the record) an episode_history that leaves `framesRoot`: checked before a run folder is made. */
export function checkEpisodePaths(framesRoot: string, questions: readonly Question[], benchmarkFile: string | undefined): void {
  const checked = new Set<string>();
  for (const question of questions) {
    if (checked.has(question.episodeHistory)) continue;
    checked.add(question.episodeHistory);
    resolveEpisodePath(framesRoot, question.episodeHistory, episodeLocation(question, benchmarkFile));
  }
}

function episodeLocation(question: Question, file?: string): InputLocation {
  return { ...(file !== undefined ? { file } : {}), id: question.questionId, field: "episode_history" };
}

/** OpenEQA's results format, with eqakit's fields beside (the reference tools read only the first two). */
function toPrediction(record: AnswerRecord): Record<string, unknown> {
  const forced = record.trace?.forceGuess?.action === "guess";
  return {
    question_id: record.questionId,
    answer: record.answer,
    agent: record.agent,
    ...(forced ? { forced_guess: true, agent_answer: record.trace?.agentAnswer ?? null } : {}),
  };
}

/** How an answer run resumes: a question's record stands when it was answered, from the same agent configuration and question. */
function answerResumeRule(questions: readonly Question[], keyOf: (question: Question) => string): ResumeRule<Question, AnswerRecord> {
  return { file: TRACES_FILE, schema: answerRecordSchema, items: questions, id: (q) => q.questionId, inputKey: keyOf, succeeded: (r) => r.error === null };
}

/** What an answer run's summary is built from beside its records. */
interface AnswerSummaryInputs {
  config: Record<string, unknown>;
  reused: number;
  wallTimeMs: number;
  usage: ReturnType<UsageLedger["snapshot"]> | null;
  /** The run's ledger of model calls. */
  calls: readonly CallEntry[];
}

/** An answer run's summary from its records (those of one run, or of merged shards). */
function answerSummary(records: AnswerRecord[], inputs: AnswerSummaryInputs): AnswerSummary {
  const answered = records.filter((r) => r.error === null);
  const checks = answered.filter((r) => r.trace?.forceGuess);
  // an unreadable verdict says nothing about abstaining: it is counted apart, not as "kept"
  const unreadable = checks.filter((r) => r.trace?.forceGuess?.action === "unreadable");
  const checked = checks.filter((r) => r.trace?.forceGuess?.action !== "unreadable");
  const abstained = checked.filter((r) => r.trace?.forceGuess?.action === "guess").length;
  // failed answers count too: their calls were made and paid for (each question's latest attempt)
  const traces = records.flatMap((r) => (r.trace ? [r.trace] : []));
  const usage = sumUsage(traces.map((t) => t.usage));
  return {
    ...summaryHead(RUN_KIND.answer, inputs.wallTimeMs, inputs.config),
    counts: {
      questions: records.length,
      answered: answered.length,
      failed: records.length - answered.length,
      reused: inputs.reused,
      nullAnswers: answered.filter((r) => r.answer === null).length,
      forceGuessChecked: checked.length,
      abstained,
      forceGuessUnreadable: unreadable.length,
    },
    abstentionRate: checked.length > 0 ? abstained / checked.length : null,
    judgeUnreadable: judgeUnreadable(
      unreadable.map((r) => ({ questionId: r.questionId, judge: "force-guess", error: "the verdict named neither guess nor keep: the answer was kept", replies: [r.trace?.forceGuess?.reply ?? null] })),
      checks.length,
    ),
    replyStatuses: countReplyStatuses(records),
    failures: records.filter((r) => r.error !== null).map((r) => ({ questionId: r.questionId, error: r.error ?? "", ...(r.status ? { status: r.status } : {}) })),
    usage: { answers: usage, thisProcess: inputs.usage },
    // every role's calls but a judge's (in `eqa run`'s folder the judge's are its scores' cost)
    cost: ledgerCost(inputs.calls.filter((call) => call.role !== JUDGE_ROLE)),
  };
}
