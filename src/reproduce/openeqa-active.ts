/**
 * OpenEQA's A-EQA rows (seed 001): Table V (A-EQA by category) and the A-EQA columns of Tables II
 * (C, Eq. 1, and E, Eq. 2, on HM3D) and III (A-EQA with force-a-guess).
 *
 * The paper makes its A-EQA rows from its EM-EQA agents (Section III, "Agents for A-EQA"): a
 * task-agnostic frontier explorer gathers the episodic memory from the question's start state,
 * then the agent family answers from it as in EM-EQA, at the same settings except the
 * multi-frame VLM's K = 75 frames (Appendix V), with force-a-guess. Each row here is one
 * `eqa explore --agent frontier --em-agent <family> --judge J --no-eac` run in
 * `rows/a-eqa-<family>/` of the reproduce run (it resumes per episode and per judgement, as every
 * explore run does); this module says what each row runs and reads its cells back:
 * - C: LLM-Match (Eq. 1) over the row's judged episodes, overall and per category, with the
 *   bootstrap standard error as `eqa score` prints it;
 * - E: Eq. 2, σᵢ weighted by lᵢ / max(pᵢ, lᵢ), over the judged episodes with a ground-truth
 *   length, with its bootstrap standard error. The paper counts atomic actions; when every such
 *   episode gives `gt_path_steps` E is in steps, otherwise in metres (`gt_path_length`, as the
 *   3D-Mem authors' file for OpenEQA's HM3D questions gives it), and the notes say which.
 * - The blind LLM sees nothing, so its row does not explore (one step): the paper's blind A-EQA C
 *   is its HM3D EM-EQA score and it prints no E; neither does this row.
 *
 * Comparable with the published rows only when run in HM3D (`--env habitat`) on OpenEQA's own
 * A-EQA questions (recognised by the SHA-256 of their sorted ids, as the express tables do: the
 * 184 of `open-eqa-v0-184-questions.json`, on which the paper ran its GPT-4V row, or all 557 HM3D
 * questions, on which it ran the others; `eqa data convert a-eqa [--full]` writes either), with a
 * GPT-4 judge and compat scoring; the built-in homes never are. The notes say which set ran.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError, canonicalJson, sha256Hex, type Prediction, type Question } from "../core/index.js";
import { FRONTIER_MAX_STEPS, createAgent, planExploration, type ActiveEpisode, type AgentSetup } from "../agents/index.js";
import { aggregateLlmMatch, bootstrapMean, efficiencyPoints, judgeLlmMatch, prepareLlmMatchTask, scorePredictions, type LlmMatchAggregates, type LlmMatchMode, type MeanEstimate, type ScoreSummary } from "../eval/index.js";
import { JUDGE_ROLE, withCallContext, type CallPlan, type ChatModel, type ModelRuntime, type ModelSpec } from "../models/index.js";
import type { RunDirectory } from "../store/index.js";
import { OPENEQA_SECTIONS, categoryCells, estimateCell, isGpt4Judge, openEqaRowLabel, openEqaRowSetup, plainCell, type OpenEqaFamily, type ReproduceSummary } from "./openeqa.js";
import type { PublishedTable } from "./published.js";
import { A_EQA_FULL_IDS_SHA256, A_EQA_SUBSET_IDS_SHA256, questionIdsSha256 } from "./express.js";
import { REPRODUCED_TABLE_FORMAT, writeReproduction, type ReproducedTable, type UserCell, type UserRow } from "./table.js";

/** The OpenEQA tables made of A-EQA rows alone. */
export const OPENEQA_A_EQA_TABLES = ["openeqa-table-5"] as const;

/** Frames per question where A-EQA's settings differ from EM-EQA's (Appendix V: the multi-frame VLM's K = 75). */
const A_EQA_FRAMES: Partial<Record<OpenEqaFamily, number>> = { vlm: 75 };
/** The blind row's step budget: it answers without looking, so it does not explore. */
export const A_EQA_BLIND_STEPS = 1;

/**
 * An episode as the question LLM-Match judges and the table's columns group. Its category is
 * free text in an episodes file: one of OpenEQA's seven falls in that column, any other only in
 * the overall score (hence the cast); the scene stands for the episode history.
 */
function episodeQuestion(e: ActiveEpisode): Question {
  return { questionId: e.questionId, question: e.question, answer: e.answer ?? "", category: (e.category ?? "") as Question["category"], episodeHistory: e.scene };
}

/** A row's explore run, relative to the reproduce run. */
export function aEqaRowDir(family: OpenEqaFamily): string {
  return join("rows", `a-eqa-${family}`);
}

/** A row's answering agent: its family's EM-EQA agent at the paper's A-EQA settings. */
export function aEqaRowSetup(family: OpenEqaFamily, model: ModelSpec, captioner: ModelSpec | undefined): AgentSetup {
  const setup = openEqaRowSetup(family, model, captioner);
  const frames = A_EQA_FRAMES[family];
  return frames === undefined ? setup : { ...setup, numFrames: frames };
}

/**
 * Which of OpenEQA's A-EQA question sets the episodes are, by the SHA-256 of their sorted ids
 * (as the express tables recognise them): `subset`, the 184 questions of
 * `open-eqa-v0-184-questions.json` (the paper's GPT-4V row); `full`, all 557 HM3D questions
 * (the paper's other rows); undefined for any other set.
 */
export function aEqaQuestionSet(episodes: readonly ActiveEpisode[]): "subset" | "full" | undefined {
  const ids = questionIdsSha256(episodes.map((e) => e.questionId));
  return ids === A_EQA_SUBSET_IDS_SHA256 ? "subset" : ids === A_EQA_FULL_IDS_SHA256 ? "full" : undefined;
}

export interface AEqaSetup {
  /** The episodes file, as given. */
  episodesFile: string;
  episodes: ActiveEpisode[];
  env: "builtin" | "habitat";
  model: ModelSpec;
  captioner?: ModelSpec;
  judgeSpec: ModelSpec;
  mode: LlmMatchMode;
}

/** What an A-EQA row's setup differs in from the paper's; empty when none does. */
export function aEqaDifferences(setup: AEqaSetup): string[] {
  const differences: string[] = [];
  if (setup.env !== "habitat") differences.push("built-in homes, not HM3D");
  if (aEqaQuestionSet(setup.episodes) === undefined) differences.push(`${setup.episodes.length} episode(s) of ${setup.episodesFile}, not OpenEQA's A-EQA questions (the 184 of its subset, or all 557)`);
  if (!isGpt4Judge(setup.judgeSpec)) differences.push(`judge ${setup.judgeSpec.name}, the paper's was GPT-4`);
  if (setup.mode !== "compat") differences.push(`LLM-Match ${setup.mode} mode, the paper's scoring is the reference's (compat)`);
  return differences;
}

/** The A-EQA settings that decide a table's numbers (the reproduce run's manifest holds them beside the EM-EQA ones). */
export function aEqaSettings(setup: AEqaSetup, explore: Record<string, unknown>): Record<string, unknown> {
  return { episodes: sha256Hex(canonicalJson(setup.episodes)), env: setup.env, ...explore };
}

const exploreSummarySchema = z.object({
  counts: z.object({ episodes: z.number(), finished: z.number(), failed: z.number() }),
  judged: z.object({ failed: z.number(), judgeUnreadable: z.object({ count: z.number() }).optional(), scores: z.record(z.string(), z.number()).optional() }).optional(),
  cost: z.object({ total: z.object({ dollars: z.number().nullable() }) }).optional(),
});
const predictionsSchema = z.array(z.object({ question_id: z.string(), path_length_m: z.number().nullable().optional(), path_length_steps: z.number().nullable().optional() }));

function readRunFile<T>(path: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    throw new UserError(`is not an explore run's file as eqa reproduce reads it: ${error instanceof Error ? error.message : String(error)}`, { file: path }, "run the same eqa reproduce command again: the row's explore run resumes and writes it");
  }
}

/** What an A-EQA row measured, from its explore run. */
export interface AEqaMeasures {
  llmMatch: LlmMatchAggregates;
  /** E in percent with its unit, over the judged episodes with a ground-truth length; null without any. */
  efficiency: { estimate: MeanEstimate; unit: "steps" | "metres" } | null;
  explored: number;
  /** Episodes whose exploration, answer or judgement failed, or whose judge reply was unreadable. */
  failed: number;
  dollars: number | null;
}

/** Reads a row's explore run in `rowDir` (its `summary.json` after `--judge`, its `predictions.json`). */
export function aEqaMeasures(rowDir: string, episodes: readonly ActiveEpisode[]): AEqaMeasures {
  const summary = readRunFile(join(rowDir, "summary.json"), exploreSummarySchema);
  if (!summary.judged?.scores) throw new UserError("holds no judged scores", { file: join(rowDir, "summary.json") }, "run the same eqa reproduce command again: the row's explore run is judged on resume");
  const scores = summary.judged.scores;
  const paths = new Map(readRunFile(join(rowDir, "predictions.json"), predictionsSchema).map((p) => [p.question_id, p]));
  const scored = episodes.filter((e) => scores[e.questionId] !== undefined);
  const llmMatch = aggregateLlmMatch(scored.map((e) => ({ question: episodeQuestion(e), score: scores[e.questionId]! })));
  const unit = scored.some((e) => e.gtPathSteps !== undefined) ? "steps" : "metres";
  const points = scored.flatMap((e) => {
    const gt = unit === "steps" ? e.gtPathSteps : e.gtPathLengthM;
    const path = paths.get(e.questionId);
    const agent = unit === "steps" ? path?.path_length_steps : path?.path_length_m;
    return gt !== undefined && agent !== undefined && agent !== null ? [efficiencyPoints({ score: scores[e.questionId]!, agentLength: agent, groundTruthLength: gt })] : [];
  });
  return {
    llmMatch,
    efficiency: points.length > 0 ? { estimate: bootstrapMean(points), unit } : null,
    explored: summary.counts.finished,
    failed: summary.counts.failed + summary.judged.failed + (summary.judged.judgeUnreadable?.count ?? 0),
    dollars: summary.cost?.total.dollars ?? null,
  };
}

/** A row's A-EQA cells in a table's columns (Table V: per category and C; II: C and E, none for the blind row; III: C without ±). */
export function aEqaCells(tableId: string, family: OpenEqaFamily, measures: AEqaMeasures): Record<string, UserCell> {
  const overall = estimateCell(measures.llmMatch.overall);
  const cells: Record<string, UserCell | undefined> =
    tableId === "openeqa-table-5"
      ? categoryCells(measures.llmMatch)
      : tableId === "openeqa-table-2"
        ? { "a-eqa-c": overall, "a-eqa-e": family === "blind" || !measures.efficiency ? undefined : estimateCell(measures.efficiency.estimate) }
        : { "a-eqa": plainCell(overall) };
  return Object.fromEntries(Object.entries(cells).filter((e): e is [string, UserCell] => e[1] !== undefined));
}

/** A table's A-EQA row for `family`, from its explore run in `rowDir`. */
export function aEqaRow(tableId: string, family: OpenEqaFamily, rowDir: string, setup: AEqaSetup): { row: UserRow; measures: AEqaMeasures } {
  const measures = aEqaMeasures(rowDir, setup.episodes);
  const differences = aEqaDifferences(setup);
  return {
    measures,
    row: {
      id: family,
      label: openEqaRowLabel(family, setup.model, setup.captioner),
      section: OPENEQA_SECTIONS[family],
      runDir: aEqaRowDir(family),
      cells: aEqaCells(tableId, family, measures),
      comparable: differences.length === 0,
      differences,
      failed: measures.failed,
    },
  };
}

/** The notes an A-EQA table (or the A-EQA columns of one) carries: how the rows were made and E's unit. */
export function aEqaNotes(tableId: string, measures: readonly AEqaMeasures[], questionSet?: "subset" | "full"): string[] {
  const notes = [
    ...(questionSet === "subset" ? ["This run's A-EQA rows ran on the 184 questions of OpenEQA's A-EQA subset, as the paper's GPT-4V row; its other rows ran on all 557 HM3D questions."] : []),
    "This run's A-EQA rows: frontier exploration from each episode's start (eqa explore --agent frontier), then the row's EM-EQA agent answers from the frames it recorded (the multi-frame VLM from K = 75, Appendix V), with force-a-guess; the blind row answers without exploring (one step) and has no E, as in the paper; judged with LLM-Match alone (eqa explore --judge --no-eac).",
  ];
  if (tableId === "openeqa-table-2") {
    const units = new Set(measures.flatMap((m) => (m.efficiency ? [m.efficiency.unit] : [])));
    if (units.size === 0) notes.push("This run's A-EQA E: no judged episode has a ground-truth path length (gt_path_steps or gt_path_length), so no E.");
    else notes.push(`This run's A-EQA E (Eq. 2): path lengths in ${[...units].join(" and ")}${units.has("metres") ? ", the episodes' gt_path_length (the paper counts atomic actions, gt_path_steps)" : ", atomic actions as the paper counts them"}; episodes without a ground-truth length are left out of E.`);
  }
  if (tableId === "openeqa-table-3") notes.push("This run's A-EQA (w/o guess): each agent's own answers where force-a-guess replaced them, judged in rows/a-eqa-<row>-without-guess; the blind row does not abstain, as in the paper.");
  return notes;
}

/** A row's folder of judgements without force-a-guess (Table III), relative to the reproduce run. */
export function aEqaWithoutGuessDir(family: OpenEqaFamily): string {
  return `${aEqaRowDir(family)}-without-guess`;
}

const exploreRecordSchema = z.object({
  questionId: z.string(),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  details: z.object({ trace: z.object({ agentAnswer: z.string().nullable().optional(), forceGuess: z.object({ action: z.string() }).optional() }).optional() }).optional(),
});

/**
 * An A-EQA row's answers before force-a-guess (Table III, w/o guess): each finished episode's
 * answer, or the agent's own where the blind guess replaced it (its trace says so), read from
 * the explore run's `episodes.jsonl` (the last record of each episode, as a resumed run reads it).
 */
export function aEqaAnswersWithoutGuess(rowDir: string): { predictions: Prediction[]; replaced: number } {
  const path = join(rowDir, "episodes.jsonl");
  const last = new Map<string, z.infer<typeof exploreRecordSchema>>();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    let parsed: ReturnType<typeof exploreRecordSchema.safeParse>;
    try {
      parsed = exploreRecordSchema.safeParse(JSON.parse(line));
    } catch {
      continue; // a line cut by a killed run, as the run itself skips it
    }
    if (parsed.success) last.set(parsed.data.questionId, parsed.data);
  }
  let replaced = 0;
  const predictions = [...last.values()]
    .filter((r) => r.error === null)
    .map((r) => {
      const trace = r.details?.trace;
      if (trace?.forceGuess?.action !== "guess") return { questionId: r.questionId, answer: r.answer };
      replaced++;
      return { questionId: r.questionId, answer: trace.agentAnswer ?? null };
    });
  return { predictions, replaced };
}

/**
 * Judges an A-EQA row's answers before force-a-guess (`aEqaAnswersWithoutGuess`) with LLM-Match
 * in `<rowDir>-without-guess` (an `eqa score` run folder: judgements reused on resume), over the
 * episodes with a reference answer; the episodes file stands for the benchmark.
 */
export async function scoreAEqaWithoutGuess(
  setup: AEqaSetup,
  rowDir: string,
  judge: ChatModel,
  runtime: ModelRuntime,
  options: { concurrency?: number; callSettings?: Record<string, unknown>; onProgress?: (done: number, total: number, failed: number) => void } = {},
): Promise<ScoreSummary> {
  const questions = setup.episodes.flatMap((e) => (e.answer === undefined ? [] : [episodeQuestion(e)]));
  const byId = new Map(questions.map((q) => [q.questionId, q]));
  const { predictions } = aEqaAnswersWithoutGuess(rowDir);
  const judged = predictions.filter((p) => byId.has(p.questionId));
  const answered = new Set(judged.map((p) => p.questionId));
  const result = await scorePredictions({
    benchmark: { path: setup.episodesFile, sha256: sha256Hex(readFileSync(setup.episodesFile)), questions, byId },
    questions: questions.filter((q) => answered.has(q.questionId)),
    predictions: judged,
    predictionsPath: join(rowDir, "predictions.json"),
    judge,
    usage: runtime.usage,
    mode: setup.mode,
    outDir: `${rowDir}-without-guess`,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    settings: { withoutGuess: true, ...(options.callSettings ?? {}) },
    ...(options.onProgress ? { onProgress: (p: { done: number; total: number; failed: number }) => options.onProgress!(p.done, p.total, p.failed) } : {}),
  });
  return result.summary;
}

/** Table III's A-EQA (w/o guess) cell beside the row's A-EQA cell: the score without force-a-guess and its change. */
export function withoutGuessCells(row: UserRow, withoutGuess: ScoreSummary): UserRow {
  const own = plainCell(estimateCell(withoutGuess.llmMatch.overall));
  const guessed = row.cells["a-eqa"];
  if (own === undefined) return row;
  return {
    ...row,
    cells: { ...row.cells, "a-eqa-without-guess": { ...own, ...(guessed ? { change: own.value - guessed.value } : {}) } },
    failed: row.failed + withoutGuess.counts.failed + withoutGuess.counts.judgeUnreadable,
  };
}

/**
 * `--dry-run` of the A-EQA rows: each row's exploration planned as `eqa explore --dry-run` plans
 * it (the frontier explorer calls no model; the answering agent on a stand-in recording, see
 * `planExploration`), and one LLM-Match request per episode to explore, built as the judge would
 * receive it with the planned answer. Calls no model, starts no environment, writes nothing.
 */
export async function planAEqaRows(
  setup: AEqaSetup,
  families: readonly OpenEqaFamily[],
  options: { outDir: string; maxSteps?: number; observation: { width: number; height: number }; image: { maxSide: number; format: "png" | "jpeg" }; withoutGuess?: boolean },
  plan: CallPlan,
): Promise<string[]> {
  const notes: string[] = [];
  for (const family of families) {
    await plan.forRow(aEqaRunId(family), async () => {
      const build = () => createAgent({ ...aEqaRowSetup(family, setup.model, setup.captioner), image: options.image }, plan.runtime((_spec, nth) => ({ role: nth === 0 ? "agent" : "captioner" })));
      const { agent, models } = build();
      const maxSteps = family === "blind" ? A_EQA_BLIND_STEPS : options.maxSteps;
      const planned = await planExploration(
        { episodes: setup.episodes, explorer: "frontier", outDir: join(options.outDir, aEqaRowDir(family)), answerer: { agent, models, fresh: () => build().agent }, ...(maxSteps !== undefined ? { maxSteps } : {}), image: options.image, observation: options.observation },
        plan,
      );
      const judge = plan.model(setup.judgeSpec, JUDGE_ROLE, "Your mark: 3");
      // Table III: the answers before force-a-guess are judged again in their own folder (counted as the answers given)
      const judgings = options.withoutGuess && family !== "blind" ? 2 : 1;
      for (const e of setup.episodes.filter((e) => e.answer !== undefined).slice(0, planned.pending)) {
        for (let k = 0; k < judgings; k++) await withCallContext({ item: e.questionId }, () => judgeLlmMatch(prepareLlmMatchTask(episodeQuestion(e), "The answer an agent gives.", setup.mode, setup.judgeSpec.name), judge, setup.mode));
      }
      notes.push(`row a-eqa-${family}: ${planned.episodes} episode(s), ${planned.reused} already explored, ${planned.pending} to explore${family === "blind" ? " (one step: the blind LLM does not look)" : ""} and judge${judgings === 2 ? " with and without force-a-guess" : ""}`);
    });
  }
  notes.push(`A-EQA rows: the frontier explorer calls no model; the blind, socratic and vlm rows' answers are estimated on a stand-in recording of ${(options.maxSteps ?? FRONTIER_MAX_STEPS) + 1} blank ${options.observation.width}×${options.observation.height} frames (one per step of the budget, the agent sampling its K from them); the scene-graph rows' answers are counted, their tokens unknown before their graph is built; the judge's LLM-Match request is built with a stand-in answer`);
  return notes;
}

/**
 * Table V: writes the table with the paper's rows and `rows` into the reproduce run in the four
 * files, and its `summary.json` (the rows, each row's explore run's counts and dollars, and the
 * cost of every row's calls).
 */
export async function writeAEqaTable(
  published: PublishedTable,
  run: RunDirectory,
  rows: { family: OpenEqaFamily; row: UserRow; measures: AEqaMeasures }[],
  setup: AEqaSetup,
  settings: Record<string, unknown>,
): Promise<{ table: ReproducedTable; markdown: string; summary: ReproduceSummary }> {
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: published.id, rows: rows.map((r) => r.row), notes: aEqaNotes(published.id, rows.map((r) => r.measures), aEqaQuestionSet(setup.episodes)) };
  const { markdown, summary } = await writeReproduction(run.path, published, table, settings, Object.fromEntries(rows.map((r) => [aEqaRunId(r.family), aEqaRun(r)])));
  return { table, markdown, summary };
}

/** An A-EQA row's id among a reproduce run's `runs` (`a-eqa-vlm`). */
export function aEqaRunId(family: OpenEqaFamily): string {
  return `a-eqa-${family}`;
}

/** An A-EQA row's entry in a reproduce summary's `runs`. */
export function aEqaRun(r: { row: UserRow; measures: AEqaMeasures }): ReproduceSummary["runs"][string] {
  return { answered: r.measures.explored, failed: r.row.failed, scored: r.measures.llmMatch.overall.n, dollars: r.measures.dollars };
}
