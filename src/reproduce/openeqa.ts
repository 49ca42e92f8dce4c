/**
 * `eqa reproduce openeqa-table-4` (and the EM-EQA columns of Tables II and III, beside which
 * `aEqa` lays the A-EQA rows of openeqa-active.ts): OpenEQA's agent
 * families (seed 001, Section III) run with the user's model, each at the paper's settings,
 * answered and scored with LLM-Match in a run folder of its own, then laid out beside the
 * paper's rows.
 *
 * Rows, one per family, each `answerAndScore` (`eqa run`) in `rows/<family>/` of the run folder:
 * - `blind`: the blind LLM.
 * - `socratic`: the LLM answering from frame captions by `--captioner` (default `--model`),
 *   15 frames (the paper does not give its K; eqakit's default).
 * - `conceptgraph`, `svm`: the LLM answering from a ConceptGraphs-style scene graph and from a
 *   Sparse-Voxel-Map instance list, built from 60 frames (captions by the captioner when one is
 *   named, labels of the episode's instance masks or the embedded detector otherwise).
 * - `vlm`: the multi-frame VLM on K = 50 frames (Appendix V: K = 50 for EM-EQA).
 * Force-a-guess is on, as in the paper (Section III). The ± of a user row is the bootstrap
 * standard error of the mean (`eqa score`'s, src/eval/stats.ts).
 *
 * A row is comparable with the published ones only when it ran on OpenEQA v0's 1,636 questions,
 * with a GPT-4 judge in the reference's scoring (`compat`); otherwise the row says what differs.
 *
 * Resume: the run folder's manifest (kind `reproduce`) holds the settings that decide results
 * (model, captioner, judge, mode, questions); each row's folder is an `eqa run` folder that
 * resumes on its own, so a killed run repeats no finished answer or judgement. The table files
 * (`table.json`, `table.md`, `table.csv`, `table.tex`) and `summary.json` are written at the end.
 */
import { join } from "node:path";
import { OPENEQA_CATEGORIES, UserError, sha256Hex, type Question } from "../core/index.js";
import { loadPredictions, type QuestionSelection } from "../data/index.js";
import { PREDICTIONS_FILE, answerQuestions, answerRunContract, createAgent, planAnswers, type AgentName, type AgentSetup } from "../agents/index.js";
import { answerAndScore, loadPredictionsWithoutGuess, planScore, scorePredictions, scoreRunContract, type LlmMatchAggregates, type LlmMatchMode, type RunSummary, type ScoreSummary } from "../eval/index.js";
import { JUDGE_ROLE, type CallPlan, type ChatModel, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { RUN_KIND, openRun, type RunDirectory } from "../store/index.js";
import type { PublishedTable } from "./published.js";
import { REPRODUCED_TABLE_FORMAT, writeReproduction, type ReproducedTable, type UserCell, type UserRow, type ReproduceSummary } from "./table.js";
export type { ReproduceSummary };

/** OpenEQA's agent families, as `eqa answer --agent` names them, in the paper's row order. */
export const OPENEQA_FAMILIES = ["blind", "socratic", "conceptgraph", "svm", "vlm"] as const satisfies readonly AgentName[];
export type OpenEqaFamily = (typeof OPENEQA_FAMILIES)[number];

/** The EM-EQA tables `reproduceOpenEqaTable` fills (the A-EQA columns of Tables II and III, with `--episodes`, come from openeqa-active.ts's explore runs: `aEqa`). */
export const OPENEQA_EM_TABLES = ["openeqa-table-2", "openeqa-table-3", "openeqa-table-4"] as const;

/** SHA-256 of OpenEQA v0's `open-eqa-v0.json` (1,636 questions; md5 c0bd01fdce18206112a29fc3eab50cbb). */
export const OPENEQA_V0_SHA256 = "a64dd101133213fa3b5ca31e5af8216662471aa34894b443d803f497757557ee";
const OPENEQA_V0_QUESTIONS = 1636;

export const OPENEQA_SECTIONS: Record<OpenEqaFamily, string> = {
  blind: "Blind LLMs",
  socratic: "Socratic LLMs w/ Frame Captions",
  conceptgraph: "Socratic LLMs w/ Scene-Graph Captions",
  svm: "Socratic LLMs w/ Scene-Graph Captions",
  vlm: "Multi-Frame VLMs",
};

const A_EQA_NOTE = "This run's rows have no A-EQA numbers: give --episodes (active episodes, --env builtin or --env habitat --scenes DIR) to run the A-EQA columns.";
const TABLE_3_NOTE = "EM-EQA (w/o guess): each agent's own answers where force-a-guess replaced them, judged in rows/<row>-without-guess (eqa score --without-guess); the blind row does not abstain, as in the paper.";

/** Frames per question at the paper's settings, where the paper gives them (Appendix V: the multi-frame VLM's K = 50 for EM-EQA). */
const PAPER_FRAMES: Partial<Record<OpenEqaFamily, number>> = { vlm: 50 };

export interface ReproduceOpenEqaOptions {
  table: PublishedTable;
  selection: QuestionSelection;
  /** OpenEQA's episode histories (`frames/<episode_history>`); every family but `blind` needs them. */
  framesRoot?: string;
  /** The families to run (default all, in the paper's order). */
  families?: readonly OpenEqaFamily[];
  model: ModelSpec;
  /** The socratic agent's captioner and the memory agents' (default: the model for socratic, instance labels for the memory agents). */
  captioner?: ModelSpec;
  judgeSpec: ModelSpec;
  /** LLM-Match mode (default `compat`, the reference's scoring). */
  mode?: LlmMatchMode;
  outDir: string;
  concurrency?: number;
  /** How the process calls models (retries, timeouts, cache), recorded with each row. */
  callSettings?: Record<string, unknown>;
  onRow?: (family: OpenEqaFamily, index: number, total: number) => void;
  onProgress?: (stage: "answering" | "judging", done: number, total: number, failed: number) => void;
  /** Tables II and III with `--episodes`: the A-EQA columns' settings (in the manifest), row folders, and, once run, rows and notes (openeqa-active.ts). */
  aEqa?: { settings: Record<string, unknown>; parts: string[]; rows?: UserRow[]; notes?: string[]; runs?: ReproduceSummary["runs"] };
}


export interface ReproduceResult {
  runDir: string;
  table: ReproducedTable;
  summary: ReproduceSummary;
  markdown: string;
}

function checkTable(table: PublishedTable): void {
  if (!(OPENEQA_EM_TABLES as readonly string[]).includes(table.id)) throw new Error(`reproduceOpenEqaTable runs ${OPENEQA_EM_TABLES.join(", ")}, not ${table.id}`);
}

/** What a row's agent is, at the paper's settings for its family. */
export function openEqaRowSetup(family: OpenEqaFamily, model: ModelSpec, captioner: ModelSpec | undefined): AgentSetup {
  const frames = PAPER_FRAMES[family];
  return {
    agent: family,
    model,
    ...(captioner && family !== "blind" && family !== "vlm" ? { captioner } : {}),
    ...(frames !== undefined ? { numFrames: frames } : {}),
    forceGuess: true,
  };
}

export function openEqaRowLabel(family: OpenEqaFamily, model: ModelSpec, captioner: ModelSpec | undefined): string {
  switch (family) {
    case "blind":
    case "vlm":
      return model.name;
    case "socratic":
      return `${model.name} w/ ${(captioner ?? model).name}`;
    case "conceptgraph":
      return `${model.name} w/ ConceptGraphs-style scene graph`;
    case "svm":
      return `${model.name} w/ Sparse Voxel Map`;
  }
}

/** The GPT-4 family the paper judged with (gpt-4, gpt-4-0613, gpt-4-turbo …; not gpt-4o or gpt-4.1). */
export function isGpt4Judge(spec: ModelSpec): boolean {
  return /^gpt-4(-|$)/.test(spec.model);
}

/** What differs between a row's run and the published rows' setup; empty when none does. */
export function openEqaDifferences(options: { selection: QuestionSelection; judgeSpec: ModelSpec; mode: LlmMatchMode }): string[] {
  const differences: string[] = [];
  const { selection } = options;
  if (selection.benchmark.sha256 !== OPENEQA_V0_SHA256) differences.push(`${selection.questions.length} question(s) of ${selection.benchmark.path}, not the 1,636 of OpenEQA v0`);
  else if (selection.questions.length !== OPENEQA_V0_QUESTIONS) differences.push(`${selection.questions.length} of OpenEQA v0's 1,636 questions${selection.subsetPath ? ` (subset ${selection.subsetPath})` : ""}`);
  if (!isGpt4Judge(options.judgeSpec)) differences.push(`judge ${options.judgeSpec.name}, the paper's was GPT-4`);
  if (options.mode !== "compat") differences.push(`LLM-Match ${options.mode} mode, the paper's scoring is the reference's (compat)`);
  return differences;
}

/** A table cell from a mean estimate: the value, its ± (the bootstrap standard error) and 95 % interval; undefined without items. */
export function estimateCell(estimate: { mean: number; stderr: number; n: number; ci: [number, number] } | undefined): UserCell | undefined {
  return estimate === undefined || estimate.n === 0
    ? undefined
    : { value: estimate.mean, ...(Number.isFinite(estimate.stderr) ? { ci: estimate.stderr } : {}), ...(estimate.ci.every(Number.isFinite) ? { interval: estimate.ci } : {}), n: estimate.n };
}

/** Tables IV and V's cells: LLM-Match per category (column ids as the published tables spell them) and overall. */
export function categoryCells(llmMatch: LlmMatchAggregates): Record<string, UserCell | undefined> {
  return { ...Object.fromEntries(OPENEQA_CATEGORIES.map((c) => [c.replace(/ /g, "-"), estimateCell(llmMatch.byCategory[c])])), "llm-match": estimateCell(llmMatch.overall) };
}

/** Table III prints no ±: the value, its interval and count. */
export function plainCell(c: UserCell | undefined): UserCell | undefined {
  return c === undefined ? undefined : { value: c.value, n: c.n, ...(c.interval ? { interval: c.interval } : {}) };
}

/** A row's cells from its LLM-Match aggregates, in the table's columns. */
function rowCells(tableId: string, llmMatch: LlmMatchAggregates, withoutGuess?: LlmMatchAggregates): Record<string, UserCell> {
  const cell = estimateCell;
  const cells: Record<string, UserCell | undefined> =
    tableId === "openeqa-table-4"
      ? categoryCells(llmMatch)
      : tableId === "openeqa-table-3"
        ? tableThreeCells(cell(llmMatch.overall), cell(withoutGuess?.overall))
        : { "em-scannet": cell(llmMatch.bySource["scannet-v0"]), "em-hm3d": cell(llmMatch.bySource["hm3d-v0"]), "em-all": cell(llmMatch.overall) };
  return Object.fromEntries(Object.entries(cells).filter((e): e is [string, UserCell] => e[1] !== undefined));
}

/** Table III prints no ±, and the w/o-guess score with its change from the score with force-a-guess. */
function tableThreeCells(guessed: UserCell | undefined, own: UserCell | undefined): Record<string, UserCell | undefined> {
  const plain = plainCell;
  return { em: plain(guessed), "em-without-guess": own === undefined ? undefined : { ...plain(own)!, ...(guessed ? { change: own.value - guessed.value } : {}) } };
}

function checkFrames(families: readonly OpenEqaFamily[], framesRoot: string | undefined): void {
  const needing = families.filter((f) => f !== "blind");
  if (needing.length > 0 && framesRoot === undefined) {
    throw new UserError(
      `the ${needing.join(", ")} row(s) need OpenEQA's episode histories`,
      { field: "--frames" },
      "pass --frames DIR (OpenEQA's frames/<episode_history> folders, from OpenEQA's data download: ScanNet and HM3D frames need their own licences), or run only the blind row with --rows blind",
    );
  }
}

/** The settings that decide the table's numbers: the run folder's manifest holds them. */
function reproduceSettings(options: ReproduceOpenEqaOptions, mode: LlmMatchMode): Record<string, unknown> {
  return {
    table: options.table.id,
    model: options.model.name,
    captioner: options.captioner?.name ?? null,
    judge: options.judgeSpec.name,
    mode,
    benchmark: options.selection.benchmark.sha256,
    questions: { count: options.selection.questions.length, sha256: sha256Hex(options.selection.questions.map((q) => q.questionId).join("\n")) },
    ...(options.aEqa ? { aEqa: options.aEqa.settings } : {}),
  };
}

/** The settings each row's run records (the same for its answers and its judgements). */
function rowSettings(options: ReproduceOpenEqaOptions): Record<string, unknown> {
  return { benchmark: { path: options.selection.benchmark.path, sha256: options.selection.benchmark.sha256 }, subset: options.selection.subsetPath ?? null, ...(options.callSettings ?? {}) };
}

/** Opens the reproduce run folder (kind `reproduce`), refusing one of another table, model, judge, mode or question set before anything is written. */
async function openReproduceRun(options: ReproduceOpenEqaOptions, families: readonly OpenEqaFamily[], mode: LlmMatchMode): Promise<RunDirectory> {
  return openRun({ dir: options.outDir, kind: RUN_KIND.reproduce, settings: reproduceSettings(options, mode), parts: [...families.flatMap((f) => [join("rows", f), ...(options.table.id === "openeqa-table-3" && f !== "blind" ? [join("rows", `${f}-without-guess`)] : [])]), ...(options.aEqa?.parts ?? [])] });
}

/** Opens (or resumes) the run folder `reproduceOpenEqaTable` writes, refusing one of other settings: before the A-EQA rows write into it. */
export async function openOpenEqaRun(options: ReproduceOpenEqaOptions): Promise<RunDirectory> {
  checkTable(options.table);
  const families = options.families ?? OPENEQA_FAMILIES;
  checkFrames(families, options.framesRoot);
  return openReproduceRun(options, families, options.mode ?? "compat");
}

/**
 * Merges A-EQA rows' cells into the EM-EQA rows of the same family (Tables II and III): one row
 * per family, comparable only when both parts are, each A-EQA difference not already named
 * prefixed with "A-EQA:". A family with only one part keeps that part's row.
 */
export function mergeAEqaRows(emRows: readonly UserRow[], aEqaRows: readonly UserRow[]): UserRow[] {
  const active = new Map(aEqaRows.map((r) => [r.id, r]));
  const merged = emRows.map((em) => {
    const a = active.get(em.id);
    if (!a) return em;
    active.delete(em.id);
    const differences = [...em.differences, ...a.differences.filter((d) => !em.differences.includes(d)).map((d) => `A-EQA: ${d}`)];
    return { ...em, cells: { ...em.cells, ...a.cells }, comparable: em.comparable && a.comparable, differences, failed: em.failed + a.failed };
  });
  return [...merged, ...active.values()];
}

/** What answering a row needs: its family's agent with the user's models, its folder, frames and settings. */
function rowAnswerOptions(options: ReproduceOpenEqaOptions, family: OpenEqaFamily, rowDir: string, runtime: ModelRuntime) {
  const { agent, models } = createAgent(openEqaRowSetup(family, options.model, options.captioner), runtime);
  return {
    agent,
    ...(options.framesRoot && family !== "blind" ? { framesRoot: options.framesRoot } : {}),
    benchmarkFile: options.selection.benchmark.path,
    outDir: rowDir,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    models: [...models, options.judgeSpec],
    usage: runtime.usage,
    settings: rowSettings(options),
  };
}

/**
 * `--batch`, first stage: answers every row's questions (live: an agent's calls depend on each
 * other's replies), each row's folder opened as `answerAndScore` opens it, so that the run
 * that follows reuses the answers. Returns a function that records, in a batch collector,
 * the judge's request for every answer (and, for Table III, every answer before force-a-guess)
 * not judged yet, as `reproduceOpenEqaTable` will make them.
 */
export async function answerOpenEqaRows(options: ReproduceOpenEqaOptions, runtime: ModelRuntime): Promise<(plan: CallPlan) => Promise<void>> {
  checkTable(options.table);
  const families = options.families ?? OPENEQA_FAMILIES;
  checkFrames(families, options.framesRoot);
  const mode = options.mode ?? "compat";
  await openReproduceRun(options, families, mode);
  const answeredRows: { family: OpenEqaFamily; rowDir: string; ok: Set<string> }[] = [];
  for (const [index, family] of families.entries()) {
    options.onRow?.(family, index, families.length);
    const rowDir = join(options.outDir, "rows", family);
    const answerOptions = rowAnswerOptions(options, family, rowDir, runtime);
    // the contract answerAndScore opens the row's folder with
    const answerContract = answerRunContract({ ...answerOptions, questions: options.selection.questions });
    const scoreContract = scoreRunContract({ benchmark: options.selection.benchmark, questions: options.selection.questions, predictions: [], predictionsPath: join(rowDir, PREDICTIONS_FILE), judge: { spec: options.judgeSpec }, mode, outDir: rowDir, settings: rowSettings(options) });
    const run = await openRun({ dir: rowDir, kind: RUN_KIND.run, settings: { answer: answerContract.settings, score: scoreContract.settings }, inputs: answerContract.inputs ?? [], ...(answerContract.items ? { items: answerContract.items } : {}) });
    const answered = await answerQuestions({
      ...answerOptions,
      questions: options.selection.questions,
      summaryFile: "summary.answer.json",
      run,
      ...(options.onProgress ? { onProgress: (p: { done: number; total: number; failed: number }) => options.onProgress!("answering", p.done, p.total, p.failed) } : {}),
    });
    answeredRows.push({ family, rowDir, ok: new Set(answered.records.filter((r) => r.error === null).map((r) => r.questionId)) });
  }
  return async (plan) => {
    for (const { family, rowDir, ok } of answeredRows) {
      const predictionsPath = join(rowDir, PREDICTIONS_FILE);
      const sets = [{ outDir: rowDir, predictions: (await loadPredictions(predictionsPath)).filter((p) => ok.has(p.questionId)) }];
      if (options.table.id === "openeqa-table-3" && family !== "blind") sets.push({ outDir: `${rowDir}-without-guess`, predictions: (await loadPredictionsWithoutGuess(predictionsPath)).predictions.filter((p) => ok.has(p.questionId)) });
      for (const set of sets) {
        const ids = new Set(set.predictions.map((p) => p.questionId));
        await planScore(
          {
            benchmark: options.selection.benchmark,
            questions: options.selection.questions.filter((q) => ids.has(q.questionId)),
            ...(options.selection.subsetPath ? { subsetPath: options.selection.subsetPath } : {}),
            predictions: set.predictions,
            predictionsPath,
            judge: { spec: options.judgeSpec },
            mode,
            outDir: set.outDir,
          },
          plan,
        );
      }
    }
  };
}

/**
 * Runs the table's rows (each an `eqa run` in `rows/<family>`), then writes the table. A row's
 * failed questions are left out of its numbers and counted in the notes; a row whose run stops
 * (a model that cannot be reached, an episode that cannot be read) stops the command.
 */
export async function reproduceOpenEqaTable(options: ReproduceOpenEqaOptions, runtime: ModelRuntime): Promise<ReproduceResult> {
  checkTable(options.table);
  const families = options.families ?? OPENEQA_FAMILIES;
  checkFrames(families, options.framesRoot);
  const mode = options.mode ?? "compat";
  const settings = reproduceSettings(options, mode);
  const run = await openReproduceRun(options, families, mode);
  const differences = openEqaDifferences({ selection: options.selection, judgeSpec: options.judgeSpec, mode });
  const rows: UserRow[] = [];
  const runs: ReproduceSummary["runs"] = {};
  const judge = runtime.model(options.judgeSpec, { role: JUDGE_ROLE });
  for (const [index, family] of families.entries()) {
    options.onRow?.(family, index, families.length);
    const rowDir = join(run.path, "rows", family);
    const summary: RunSummary = await answerAndScore({
      selection: options.selection,
      ...rowAnswerOptions(options, family, rowDir, runtime),
      judge,
      mode,
      ...(options.onProgress ? { onProgress: (p: { done: number; total: number; failed: number }) => options.onProgress!("answering", p.done, p.total, p.failed) } : {}),
      ...(options.onProgress ? { onScoreProgress: (done: number, total: number, failed: number) => options.onProgress!("judging", done, total, failed) } : {}),
    });
    let failed = summary.answer.counts.failed + summary.score.counts.failed + summary.score.counts.judgeUnreadable;
    let withoutGuess: LlmMatchAggregates | undefined;
    if (options.table.id === "openeqa-table-3" && family !== "blind") {
      const scored = await scoreWithoutGuess(options, rowDir, judge, runtime, mode);
      withoutGuess = scored.llmMatch;
      failed += scored.counts.failed + scored.counts.judgeUnreadable;
    }
    rows.push({
      id: family,
      label: openEqaRowLabel(family, options.model, options.captioner),
      section: OPENEQA_SECTIONS[family],
      runDir: join("rows", family),
      cells: rowCells(options.table.id, summary.score.llmMatch, withoutGuess),
      comparable: differences.length === 0,
      differences,
      failed,
    });
    runs[family] = { answered: summary.answer.counts.answered, failed, scored: summary.score.counts.scored, dollars: summary.cost.total.dollars };
  }
  const aEqaNotes = options.aEqa?.rows ? (options.aEqa.notes ?? []) : [A_EQA_NOTE];
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: options.table.id, rows: options.aEqa?.rows ? mergeAEqaRows(rows, options.aEqa.rows) : rows, notes: [...(options.table.id === "openeqa-table-3" ? [TABLE_3_NOTE] : []), ...(options.table.id !== "openeqa-table-4" ? aEqaNotes : [])] };
  Object.assign(runs, options.aEqa?.runs ?? {});
  const { markdown, summary } = await writeReproduction(run.path, options.table, table, settings, runs);
  return { runDir: run.path, table, summary, markdown };
}

/** A row's answers before force-a-guess replaced them (Table III, w/o guess), judged in `rows/<family>-without-guess`. */
async function scoreWithoutGuess(options: ReproduceOpenEqaOptions, rowDir: string, judge: ChatModel, runtime: ModelRuntime, mode: LlmMatchMode): Promise<ScoreSummary> {
  const predictionsPath = join(rowDir, PREDICTIONS_FILE);
  const { predictions } = await loadPredictionsWithoutGuess(predictionsPath);
  const answered = new Set(predictions.map((p) => p.questionId));
  const result = await scorePredictions({
    benchmark: options.selection.benchmark,
    questions: options.selection.questions.filter((q) => answered.has(q.questionId)),
    ...(options.selection.subsetPath ? { subsetPath: options.selection.subsetPath } : {}),
    predictions,
    predictionsPath,
    judge,
    usage: runtime.usage,
    mode,
    outDir: `${rowDir}-without-guess`,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    settings: { withoutGuess: true, ...(options.callSettings ?? {}) },
    ...(options.onProgress ? { onProgress: (p: { done: number; total: number; failed: number }) => options.onProgress!("judging", p.done, p.total, p.failed) } : {}),
  });
  return result.summary;
}

/** What `reproduceOpenEqaTable` would call, recorded in `plan` row by row (each reply read at the first try); calls no model, writes nothing. */
export async function planOpenEqaTable(options: Omit<ReproduceOpenEqaOptions, "onRow" | "onProgress">, plan: CallPlan): Promise<string[]> {
  checkTable(options.table);
  const families = options.families ?? OPENEQA_FAMILIES;
  checkFrames(families, options.framesRoot);
  const notes: string[] = [];
  for (const family of families) {
    await plan.forRow(family, async () => {
      const rowDir = join(options.outDir, "rows", family);
      const answers = await planAnswers(
        {
          setup: openEqaRowSetup(family, options.model, options.captioner),
          questions: options.selection.questions,
          ...(options.framesRoot && family !== "blind" ? { framesRoot: options.framesRoot } : {}),
          benchmarkFile: options.selection.benchmark.path,
          outDir: rowDir,
        },
        plan,
      );
      const answered: Question[] = options.selection.questions.filter((q) => answers.answers.has(q.questionId));
      const scored = await planScore(
        {
          benchmark: options.selection.benchmark,
          questions: answered,
          ...(options.selection.subsetPath ? { subsetPath: options.selection.subsetPath } : {}),
          predictions: answered.map((q) => ({ questionId: q.questionId, answer: answers.answers.get(q.questionId) ?? null })),
          predictionsPath: join(rowDir, PREDICTIONS_FILE),
          judge: { spec: options.judgeSpec },
          mode: options.mode ?? "compat",
          outDir: rowDir,
        },
        plan,
      );
      notes.push(`row ${family}: ${answers.questions} question(s), ${answers.reused} already answered, ${answers.pending} to answer; ${scored.reused} already judged, ${scored.pending} to judge`);
      if (options.table.id === "openeqa-table-3" && family !== "blind") {
        // the answers before force-a-guess are not known before the run: counted as the answers given
        const unguessed = await planScore(
          {
            benchmark: options.selection.benchmark,
            questions: answered,
            predictions: answered.map((q) => ({ questionId: q.questionId, answer: answers.answers.get(q.questionId) ?? null })),
            predictionsPath: join(rowDir, PREDICTIONS_FILE),
            judge: { spec: options.judgeSpec },
            mode: options.mode ?? "compat",
            outDir: `${rowDir}-without-guess`,
          },
          plan,
        );
        notes.push(`row ${family} w/o guess: ${unguessed.reused} already judged, ${unguessed.pending} to judge`);
      }
      if (answers.failures.length > 0) notes.push(`row ${family}: ${answers.failures.length} question(s) would fail before any call, e.g. ${answers.failures[0]!.questionId}: ${answers.failures[0]!.error}`);
    });
  }
  notes.push("calls that depend on the replies (force-a-guess's blind guess, re-asks) are counted as when each reply is read at the first try");
  return notes;
}
