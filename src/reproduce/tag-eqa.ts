/**
 * `eqa reproduce tag-eqa-table-2`: TAG-EQA's baselines (seed 002, section 4, Table 2) run with
 * the user's LLM and captioner on a TAG set with observations (`eqa generate tag --source
 * sim:DIR`), each scored by the structured judge with the user's judge model.
 *
 * Rows, one per baseline in Table 2's order (those eqakit has, or the ones asked for): the
 * baseline answers the set in `rows/<name>/answers` (an `eqa answer-tag --agent <name>` run
 * folder) and `eqa score-tag` scores its answers in `rows/<name>/score`. The columns are the
 * paper's: Score (the structured score, positions ignored) and Grounded score (positions count
 * through possim), each the mean over the questions answered and judged (1-5); questions whose
 * answer or judgement failed are left out and counted. The paper prints no ±; the report shows
 * each mean's bootstrap interval.
 *
 * Never comparable: the paper's TAG-EQA set (made from ALFRED trajectories) is not published,
 * and it ran Gemma 2 9B with CogVLM 2 captions and a Code-Judge that wrote scoring programs with
 * Sentence-T5 similarities; each row says what differs.
 *
 * Resume: the run folder's manifest (kind `reproduce`) holds the settings that decide the
 * numbers (table, models, judge, the questions' hash); each row's two folders resume on their
 * own (answers, preparations and judgements already made are not made again). The table files
 * and `summary.json` are written at the end.
 */
import { join } from "node:path";
import { z } from "zod";
import { sha256Hex } from "../core/index.js";
import type { TagQuestion } from "../data/index.js";
import { JUDGE_ROLE, withCallContext, type CallPlan, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { extractStructuredAnswer, planTagScore, scoreTagRun, structuredPrediction, type MeanEstimate, type TagScoreSetup, type TagScoreSummary } from "../eval/index.js";
import {
  availableTagBaselines,
  runTagBaseline,
  type TagAnswerRun,
  tagBaseline,
  tagBaselineAgent,
  answerTagQuestions,
  keptTagAnswers,
  tagBaselineConfiguration,
  type TagAgentEpisode,
  type TagBaselineName,
} from "../generate/index.js";
import { RUN_KIND, openRun, readJsonl, type RunDirectory } from "../store/index.js";
import type { PublishedTable } from "./published.js";
import type { ReproduceResult, ReproduceSummary } from "./openeqa.js";
import { REPRODUCED_TABLE_FORMAT, writeReproduction, type ReproducedTable, type UserCell, type UserRow } from "./table.js";

export const TAG_TABLES = ["tag-eqa-table-2"] as const;

/** Each baseline's row in the paper's table, and its label. */
const PAPER_ROWS: Record<TagBaselineName, string> = {
  "socratic-ic": "Socratic LLM + Image captions",
  "socratic-ic-or": "Socratic LLM + Image captions + OR",
  conceptgraphs: "LLM + ConceptGraphs",
  "llm-api": "LLM + API",
};

/** A row's two run folders, relative to the reproduce run. */
export function tagRowDirs(name: TagBaselineName): { row: string; answers: string; score: string } {
  const row = join("rows", name);
  return { row, answers: join(row, "answers"), score: join(row, "score") };
}

export interface ReproduceTagOptions {
  table: PublishedTable;
  questions: TagQuestion[];
  questionsPath: string;
  /** The set's recordings (`tagSetEpisodes`). */
  episodes: ReadonlyMap<string, TagAgentEpisode>;
  /** The baselines to run (default: every one eqakit has, in Table 2's order). */
  baselines?: readonly TagBaselineName[];
  model: ModelSpec;
  captioner: ModelSpec;
  judgeSpec: ModelSpec;
  outDir: string;
  concurrency?: number;
  /** How the process calls models (retries, timeouts, cache), recorded with each scoring run. */
  callSettings?: Record<string, unknown>;
  onRow?: (name: TagBaselineName, index: number, total: number) => void;
  onProgress?: (stage: "answering" | "judging", done: number, total: number, failed: number) => void;
}

/** What differs between this run and the paper's rows: always something, the paper's set being unpublished. */
export function tagDifferences(options: Pick<ReproduceTagOptions, "questions" | "questionsPath" | "model" | "captioner" | "judgeSpec">, name: TagBaselineName): string[] {
  const differences = [`${options.questions.length} question(s) of ${options.questionsPath}, not the paper's TAG-EQA set (made from ALFRED trajectories, not published)`];
  if (!/gemma-?2-9b/i.test(options.model.name)) differences.push(`LLM ${options.model.name}, the paper's was Gemma 2 9B`);
  if (tagBaseline(name).captions && !/cogvlm-?2/i.test(options.captioner.name)) differences.push(`captioner ${options.captioner.name}, the paper's was CogVLM 2`);
  differences.push(`eqakit's structured judge (structure read by ${options.judgeSpec.name}, matched by eqakit with the embedded sentence encoder), the paper's Code-Judge wrote scoring programs and used Sentence-T5`);
  differences.push(...BASELINE_DIFFERENCES[name]);
  return differences;
}

/** What each baseline does otherwise than the paper's (docs/fidelity.md has the whole list). */
const BASELINE_DIFFERENCES: Record<TagBaselineName, string[]> = {
  "socratic-ic": ["eqakit's prompts (the paper's were not published)"],
  "socratic-ic-or": ["eqakit's prompts (the paper's were not published)"],
  conceptgraphs: ["a ConceptGraph from eqakit's memory builder on the ground-truth masks with geometric relations, not ConceptGraphs' open-vocabulary segmentation and LLM relations"],
  "llm-api": ["a ConceptGraph from eqakit's memory builder on the ground-truth masks", "retrieval similarity by the embedded Universal Sentence Encoder lite, the paper's Sentence-T5 large", "retrieval calls given as JSON and run by eqakit, the paper's LLM wrote code"],
};

function cellOf(estimate: MeanEstimate): UserCell | undefined {
  if (estimate.n === 0 || !Number.isFinite(estimate.mean)) return undefined;
  return { value: estimate.mean, n: estimate.n, ...(estimate.ci.every(Number.isFinite) ? { interval: estimate.ci } : {}) };
}

function rowCells(summary: TagScoreSummary): Record<string, UserCell> {
  const cells: Record<string, UserCell | undefined> = { score: cellOf(summary.scores.ungrounded), "grounded-score": cellOf(summary.scores.grounded) };
  return Object.fromEntries(Object.entries(cells).filter((e): e is [string, UserCell] => e[1] !== undefined));
}

function reproduceSettings(options: ReproduceTagOptions, baselines: readonly TagBaselineName[]): Record<string, unknown> {
  return {
    table: options.table.id,
    model: options.model.name,
    captioner: options.captioner.name,
    judge: options.judgeSpec.name,
    baselines: [...baselines],
    questions: { count: options.questions.length, sha256: sha256Hex(JSON.stringify(options.questions.map((q) => [q.question_id, q.question]))) },
  };
}

const NOTES = [
  "This run's rows: eqakit's TAG-EQA baselines with the row's LLM and captioner (eqa answer-tag --agent <row>), scored by eqa score-tag: Score is the structured score with positions ignored, Grounded score with positions (possim, σ = 1.65 m), both 1-5, means over the questions answered and judged.",
  "Socratic LLM + IC + OR: the objects' tags and their 3-D positions come from the recordings' ground-truth instance masks and depth, as in the paper (its simulator's masks, object matching and depth).",
];

/**
 * Runs the table's rows (each an answer-tag run and a score-tag run under `rows/<name>`), then
 * writes the table. A row's failed questions are left out of its numbers and counted in the notes.
 */
/** The reproduce run's folder (a folder of other settings refused) and the baselines its rows run. */
async function openTagRun(options: ReproduceTagOptions): Promise<{ run: RunDirectory; baselines: readonly TagBaselineName[]; settings: Record<string, unknown> }> {
  const baselines = options.baselines ?? availableTagBaselines();
  for (const name of baselines) tagBaseline(name);
  const settings = reproduceSettings(options, baselines);
  const run = await openRun({ dir: options.outDir, kind: RUN_KIND.reproduce, settings, parts: baselines.flatMap((name) => [tagRowDirs(name).answers, tagRowDirs(name).score]), inputs: [{ name: "questions", path: options.questionsPath, copy: true }] });
  return { run, baselines, settings };
}

/** A row's answers: the baseline's answer-tag run in `rows/<name>/answers`, which resumes. */
async function answerTagRow(options: ReproduceTagOptions, runPath: string, name: TagBaselineName, runtime: ModelRuntime): Promise<TagAnswerRun> {
  const models = { llm: runtime.model(options.model, { role: "agent" }), captioner: runtime.model(options.captioner, { role: "captioner" }) };
  let answerFailures = 0;
  return runTagBaseline(tagBaseline(name), models, options.questions, options.episodes, join(runPath, tagRowDirs(name).answers), {
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    questionsPath: options.questionsPath,
    usage: runtime.usage,
    onAnswer: (prediction, done, total) => {
      if (prediction.error !== undefined) answerFailures++;
      options.onProgress?.("answering", done, total, answerFailures);
    },
  });
}

/** The score-tag run of a row's answered questions in `rows/<name>/score`, as `reproduceTagTable` runs it and `--batch` plans it. */
function rowScoreOptions(options: ReproduceTagOptions, runPath: string, name: TagBaselineName, answered: TagAnswerRun): TagScoreSetup {
  const ok = new Set(answered.predictions.filter((p) => p.error === undefined).map((p) => p.question_id));
  return {
    questions: options.questions.filter((q) => ok.has(q.question_id)),
    questionsPath: options.questionsPath,
    predictions: answered.predictions.filter((p) => ok.has(p.question_id)).map((p) => ({ question_id: p.question_id, answer: p.answer })),
    predictionsPath: join(runPath, tagRowDirs(name).answers, "predictions.json"),
    judge: { spec: options.judgeSpec },
    outDir: join(runPath, tagRowDirs(name).score),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.callSettings ? { settings: options.callSettings } : {}),
  };
}

/**
 * `--batch`'s first pass: every row answered (live), then a function that records in a plan
 * (the batch's collector) the judge's requests of every row's answers not scored yet.
 * `reproduceTagTable` run afterwards reuses the answers and reads the judge's replies from the cache.
 */
export async function answerTagRows(options: ReproduceTagOptions, runtime: ModelRuntime): Promise<(plan: CallPlan) => Promise<void>> {
  const { run, baselines } = await openTagRun(options);
  const answered: { name: TagBaselineName; answers: TagAnswerRun }[] = [];
  for (const [index, name] of baselines.entries()) {
    options.onRow?.(name, index, baselines.length);
    answered.push({ name, answers: await answerTagRow(options, run.path, name, runtime) });
  }
  return async (plan) => {
    for (const { name, answers } of answered) await planTagScore(rowScoreOptions(options, run.path, name, answers), plan);
  };
}

export async function reproduceTagTable(options: ReproduceTagOptions, runtime: ModelRuntime): Promise<ReproduceResult> {
  const { run, baselines, settings } = await openTagRun(options);
  const judge = runtime.model(options.judgeSpec, { role: JUDGE_ROLE });
  const rows: UserRow[] = [];
  const runs: ReproduceSummary["runs"] = {};
  for (const [index, name] of baselines.entries()) {
    options.onRow?.(name, index, baselines.length);
    const dirs = tagRowDirs(name);
    const answered = await answerTagRow(options, run.path, name, runtime);
    const scoring = rowScoreOptions(options, run.path, name, answered);
    const ok = new Set(scoring.questions.map((q) => q.question_id));
    const scored = await scoreTagRun({
      ...scoring,
      judge,
      usage: runtime.usage,
      onProgress: (p) => options.onProgress?.("judging", p.done, p.total, p.failed + p.unreadable),
    });
    const summary = scored.summary;
    const failed = answered.failures.length + summary.counts.failed + summary.counts.judgeUnreadable;
    const differences = tagDifferences(options, name);
    rows.push({
      id: name,
      label: `${PAPER_ROWS[name]} (${options.model.name}${tagBaseline(name).captions ? ` w/ ${options.captioner.name}` : ""})`,
      section: "TAG-EQA baselines",
      runDir: dirs.row,
      cells: rowCells(summary),
      comparable: false,
      differences,
      failed,
    });
    const [answering, judging] = [answered.cost.total.dollars, summary.cost.total.dollars];
    runs[name] = { answered: ok.size, failed, scored: summary.counts.scored, dollars: answering === null || judging === null ? null : answering + judging };
  }
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: options.table.id, rows, notes: NOTES };
  const { markdown, summary } = await writeReproduction(run.path, options.table, table, settings, runs);
  return { runDir: run.path, table, summary, markdown };
}

/** The questions a score-tag folder has scored (their latest judgement), read without touching it. */
function scoredQuestions(dir: string): Set<string> {
  const line = z.object({ questionId: z.string(), status: z.string() });
  const parse = (value: unknown): z.infer<typeof line> | undefined => line.safeParse(value).data;
  const scored = new Set<string>();
  for (const r of readJsonl(join(dir, "judgements.jsonl"), parse, false).records) {
    if (r.status === "scored") scored.add(r.questionId);
    else scored.delete(r.questionId);
  }
  return scored;
}

/**
 * What `reproduceTagTable` would call, recorded in `plan`: each baseline prepares the
 * trajectories its folder has no preparation of and answers the questions it has no answer to,
 * against models that record the request and reply `A: …`, and the judge is asked to read each
 * answer not scored yet. Calls no model, writes nothing.
 */
export async function planTagTable(options: Omit<ReproduceTagOptions, "onRow" | "onProgress">, plan: CallPlan): Promise<string[]> {
  const baselines = options.baselines ?? availableTagBaselines();
  const notes: string[] = [];
  const judge = plan.model(options.judgeSpec, JUDGE_ROLE, "[]");
  const byId = new Map(options.questions.map((q) => [q.question_id, q]));
  for (const name of baselines) {
    await plan.forRow(name, async () => {
      const baseline = tagBaseline(name);
      const models = { llm: plan.model(options.model, "agent", "A: an answer"), captioner: plan.model(options.captioner, "captioner", "A caption.") };
      const dirs = tagRowDirs(name);
      const answersDir = join(options.outDir, dirs.answers);
      const kept = keptTagAnswers(answersDir, options.questions, tagBaselineConfiguration(baseline, models));
      const scored = scoredQuestions(join(options.outDir, dirs.score));
      const toAsk = options.questions.filter((q) => !kept.has(q.question_id));
      let prepared = 0;
      let reusedPreparations = 0;
      const agent = tagBaselineAgent(baseline, models, options.questions, options.episodes, { preparedFrom: answersDir, onPrepared: (_, reused) => (reused ? reusedPreparations++ : prepared++) });
      const predictions = await answerTagQuestions(toAsk, options.episodes, agent, { concurrency: 1 });
      agent.close();
      const answers = new Map<string, string | null>(kept);
      for (const p of predictions) if (p.error === undefined) answers.set(p.question_id, p.answer);
      let toJudge = 0;
      for (const [id, answer] of answers) {
        if ((kept.has(id) && scored.has(id)) || answer === null || answer.trim() === "" || structuredPrediction(answer) !== undefined) continue;
        await withCallContext({ item: id }, () => extractStructuredAnswer(judge, byId.get(id)!.question, answer));
        toJudge++;
      }
      const failures = predictions.filter((p) => p.error !== undefined);
      notes.push(
        `row ${name}: ${prepared} ${prepared === 1 ? "trajectory" : "trajectories"} to prepare${reusedPreparations > 0 ? ` (${reusedPreparations} prepared already)` : ""}, ` +
          `${toAsk.length} of ${options.questions.length} question(s) to answer, ${toJudge} answer(s) to judge` +
          (failures.length > 0 ? `; ${failures.length} would fail before any call, e.g. ${failures[0]!.question_id}: ${failures[0]!.error}` : ""),
      );
    });
  }
  notes.push("calls that depend on the replies (a judge's second ask, the retrieval of LLM + API) are counted as when each reply is read at the first try");
  return notes;
}
