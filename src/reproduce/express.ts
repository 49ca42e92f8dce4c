/**
 * `eqa reproduce express-table-1|2|3`: EXPRESS-Bench's tables (seed 003, supplementary §2.2) with
 * the user's VLM driving Fine-EQA in its reference mode (`eqa explore --agent fine-eqa:reference`),
 * as the paper's Fine-EQA rows ran it. Each table's row is one explore run folder,
 * `rows/fine-eqa-reference/`, which resumes as every explore run does; this module turns that
 * run's `summary.json` into the table's row and says what the run differs in from the paper's.
 *
 * - Table 1, A-EQA (OpenEQA): C′ = 1/N Σ (σ′ᵢ − 1)/4 · 100 % and
 *   E′ = 1/N Σ (σ′ᵢ − 1)/4 · lᵢ/max(pᵢ, lᵢ) · 100 % (Eqs. 5, 6), σ′ᵢ LLM-Match's mark from
 *   OpenEQA's prompt, pᵢ the agent's path and lᵢ the ground-truth path, both in metres
 *   (`gt_path_length`): the explore run's `judged.llmMatch` and `judged.efficiency.metres`.
 *   E′ averages the episodes with a `gt_path_length`; when some have none the row says so.
 *   The paper does not name C′'s judge: a GPT-4 judge (OpenEQA's, which scored the GPT-4V row
 *   beside it) or GPT-4o-mini (EXPRESS-Bench's evaluation model) is taken as the paper's.
 *   The questions: Fine-EQA ran on A-EQA's full set, OpenEQA v0's 557 HM3D questions; GPT-4V on
 *   the 184 of `open-eqa-v0-184-questions.json`. A question set is recognised by the SHA-256 of
 *   its sorted question ids.
 * - Table 2, HM-EQA (explore-eqa's multiple-choice set): accuracy is the share of finished
 *   episodes whose reply's letter is the answer's (`metrics.multipleChoice`), path length the
 *   mean path in metres over the finished episodes (`metrics.pathLength`). No judge. The
 *   questions are recognised by the SHA-256 of HM-EQA's `questions.csv`.
 * - Table 3, EXPRESS-Bench: C, C*, E_path and d_T from the EAC judge (`judged.express`). The
 *   records are recognised by the git blob id `eqa data fetch express-bench` checks them by.
 *
 * Each cell's ± is the bootstrap standard error of the mean over the episodes (the paper does
 * not say how it computed its own), read back from the run's `episodes.jsonl` and
 * `judgements.jsonl` and given only when those are the summary's own episodes and mean.
 *
 * Every table: a run in the built-in homes is never comparable ("built-in homes, not HM3D");
 * nor is one with eqakit's prompts instead of EXPRESS-Bench's (`--prompts original`), with a
 * fixed step budget, or with observations other than the reference's 512×512.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { UserError, sha256Hex } from "../core/index.js";
import { KNOWN_DATASETS, gitBlobId } from "../data/index.js";
import { habitatSceneFile, type ActiveEpisode } from "../agents/index.js";
import { bootstrapMean, llmMatchPoints, pathRatio, type LlmMatchMode } from "../eval/index.js";
import { readJsonl } from "../store/index.js";
import type { PublishedTable } from "./published.js";
import { REPRODUCED_TABLE_FORMAT, writeReproduction, type ReproduceSummary, type ReproducedTable, type UserCell, type UserRow } from "./table.js";

export const EXPRESS_TABLES = ["express-table-1", "express-table-2", "express-table-3"] as const;
export type ExpressTableId = (typeof EXPRESS_TABLES)[number];
/** The row's explore run, relative to the reproduce run. */
export const EXPRESS_ROW_DIR = join("rows", "fine-eqa-reference");
/** The judge of the paper's EAC scores (EXPRESS-Bench's evaluation uses GPT-4o-mini). */
export const EXPRESS_PAPER_JUDGE = "gpt-4o-mini";
/** The reference's observations (EXPRESS-Bench's `fine_eqa.yaml`). */
const REFERENCE_OBSERVATION = { width: 512, height: 512 };

/** SHA-256 of the sorted question ids, joined by newlines, of OpenEQA v0's 557 HM3D questions: A-EQA's full set, on which Table 1's Fine-EQA row ran. */
export const A_EQA_FULL_IDS_SHA256 = "5c9336b3d98152505fe5b5dab0be9618db9a38ecb65eaab8466910fc2284b054";
/** The same of the 184 question ids of `open-eqa-v0-184-questions.json`, the subset of Table 1's GPT-4V row. */
export const A_EQA_SUBSET_IDS_SHA256 = "9e13357dbdc5a901e24661d1c2f452f0e1f5e7cc09c4e3bad5efdf71ba60bd36";
/** SHA-256 of HM-EQA's `questions.csv` (Stanford-ILIAD/explore-eqa @ 18381da, `data/questions.csv`: 500 questions), as `eqa data fetch hm-eqa` checks it. */
export const HM_EQA_QUESTIONS_SHA256 = KNOWN_DATASETS["hm-eqa"]!.files.questions!.sha256!;
/** How to get HM-EQA's two files. */
export const HM_EQA_SOURCE = "eqa data fetch hm-eqa writes questions.csv and scene_init_poses.csv (explore-eqa's data/)";

const metricsSchema = z.object({
  c: z.number().nullable(),
  cStar: z.number().nullable(),
  ePath: z.number().nullable(),
  dT: z.number().nullable(),
  nScored: z.number(),
  nPath: z.number(),
  nGoal: z.number(),
});
const efficiencySchema = z.object({ efficiency: z.number(), n: z.number() });
const exploreSummarySchema = z.object({
  counts: z.object({ episodes: z.number(), finished: z.number(), failed: z.number() }),
  metrics: z
    .object({
      pathLength: z.object({ meanMetres: z.number().nullable() }),
      multipleChoice: z.object({ accuracy: z.number().nullable(), n: z.number() }),
    })
    .optional(),
  judged: z
    .object({
      judge: z.string(),
      failed: z.number(),
      llmMatch: z.object({ correctness: z.number().nullable(), n: z.number() }).optional(),
      efficiency: z.object({ metres: efficiencySchema.nullable() }).optional(),
      express: metricsSchema.nullable(),
    })
    .optional(),
  cost: z.object({ total: z.object({ dollars: z.number().nullable() }) }).optional(),
});
type ExploreSummaryRead = z.infer<typeof exploreSummarySchema>;

function readExploreSummary(runDir: string, table: string): ExploreSummaryRead {
  const path = join(runDir, "summary.json");
  try {
    return exploreSummarySchema.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    throw new UserError(`is not an explore summary: ${error instanceof Error ? error.message : String(error)}`, { file: path }, `run eqa reproduce ${table} again: the explore run resumes`);
  }
}

/** Whether a table's row needs a judge (Table 2's accuracy is read from the reply's letter). */
export function expressNeedsJudge(table: ExpressTableId): boolean {
  return table !== "express-table-2";
}

/** SHA-256 of the sorted question ids joined by newlines: how a question set is recognised. */
export function questionIdsSha256(ids: readonly string[]): string {
  return sha256Hex([...ids].sort().join("\n"));
}

/**
 * How the episodes differ from the benchmark's own question set the paper's row ran on; undefined
 * when they are that set. `data` is the episodes file's bytes.
 */
export function expressQuestionSetDifference(table: ExpressTableId, file: string, data: Uint8Array, episodes: readonly Pick<ActiveEpisode, "questionId">[]): string | undefined {
  const n = episodes.length;
  switch (table) {
    case "express-table-1": {
      const ids = questionIdsSha256(episodes.map((e) => e.questionId));
      if (ids === A_EQA_FULL_IDS_SHA256) return undefined;
      if (ids === A_EQA_SUBSET_IDS_SHA256) return "the 184 questions of A-EQA's subset (the GPT-4V row's), not the full 557 Fine-EQA's row ran on";
      return `${n} episode(s) of ${file}, not OpenEQA's 557 A-EQA questions`;
    }
    case "express-table-2":
      return sha256Hex(data) === HM_EQA_QUESTIONS_SHA256 ? undefined : `${n} episode(s) of ${file}, not HM-EQA's 500 questions`;
    case "express-table-3":
      return gitBlobId(data) === KNOWN_DATASETS["express-bench"]?.files.records?.gitBlob ? undefined : `episodes of ${file}, not EXPRESS-Bench's questions as the paper ran them`;
  }
}

export interface ExpressRowSetup {
  table: ExpressTableId;
  /** The VLM the row ran with (`openai/gpt-4o-mini`). */
  model: string;
  /** The judge, as the explore run names it (`openai/gpt-4o-mini`); null for Table 2, which needs none. */
  judge: string | null;
  /** `builtin` or `habitat`. */
  env: string;
  /** How the episodes differ from the paper's question set (`expressQuestionSetDifference`); undefined when they are it. */
  questionSet: string | undefined;
  /** `eqakit`, `original` or a folder of the original prompts (`--prompts`). */
  promptSet: string;
  /** LLM-Match's mode (Table 1). */
  mode: LlmMatchMode;
  /** `--max-steps`, when given. */
  maxSteps: number | null;
  /** The observations' size in pixels. */
  observation: { width: number; height: number };
}

/** The judge's model without its provider (`openai/gpt-4o-mini` → `gpt-4o-mini`). */
function judgeModel(judge: string): string {
  return judge.split("/").slice(1).join("/").toLowerCase() || judge.toLowerCase();
}

/** What a row's setup differs in from the paper's (empty when it ran as the paper did). */
export function expressDifferences(setup: ExpressRowSetup): string[] {
  const differences: string[] = [];
  if (setup.env !== "habitat") differences.push("built-in homes, not HM3D");
  if (setup.questionSet !== undefined) differences.push(setup.questionSet);
  if (setup.table === "express-table-1" && setup.judge !== null) {
    const model = judgeModel(setup.judge);
    if (!/^gpt-4(-|$)/.test(model) && !model.includes(EXPRESS_PAPER_JUDGE)) differences.push(`judge ${setup.judge}, the paper's was GPT-4 or GPT-4o-mini`);
    if (setup.mode !== "compat") differences.push(`LLM-Match ${setup.mode} mode, the paper's scoring is OpenEQA's (compat)`);
  }
  if (setup.table === "express-table-3" && setup.judge !== null && !judgeModel(setup.judge).includes(EXPRESS_PAPER_JUDGE)) differences.push(`judge ${setup.judge}, the paper's was GPT-4o-mini`);
  if (setup.promptSet === "eqakit") differences.push(`eqakit's prompts for Fine-EQA${setup.table === "express-table-3" ? " and the EAC judge" : ""}, not EXPRESS-Bench's (--prompts original)`);
  if (setup.maxSteps !== null) differences.push(`a fixed budget of ${setup.maxSteps} steps, the reference's grows with the scene's area`);
  if (setup.observation.width !== REFERENCE_OBSERVATION.width || setup.observation.height !== REFERENCE_OBSERVATION.height) {
    differences.push(`observations of ${setup.observation.width}×${setup.observation.height}, the reference's are ${REFERENCE_OBSERVATION.width}×${REFERENCE_OBSERVATION.height}`);
  }
  return differences;
}

const recordLine = z.object({
  questionId: z.string(),
  error: z.string().nullable(),
  pathLengthM: z.number().nullable(),
  correct: z.boolean().optional(),
  gtPathLengthM: z.number().nullable().optional(),
  goalDistanceM: z.number().nullable().optional(),
});
const judgementLine = z.object({
  questionId: z.string(),
  error: z.string().nullable(),
  llmMatch: z.number().nullable(),
  eac: z.object({ status: z.string(), grounding: z.number().optional(), accuracy: z.number().optional() }).nullable().optional(),
});
const clip05 = (x: number): number => Math.min(5, Math.max(0, x));

/** The last line of each question id in a JSONL file of the run (a resumed run appends what it did again). */
function lastLines<T extends { questionId: string }>(path: string, schema: z.ZodType<T>): Map<string, T> {
  const last = new Map<string, T>();
  for (const line of readJsonl(path, (value) => schema.safeParse(value).data, false).records) last.set(line.questionId, line);
  return last;
}

/**
 * Each column's per-episode values, read back from the explore run's `episodes.jsonl` and
 * `judgements.jsonl`, for each cell's ± (bootstrap standard error) and 95 % interval: C′
 * (σ′ − 1)/4 · 100, E′ that times lᵢ/max(pᵢ, lᵢ); accuracy 100 or 0, path length in metres;
 * C δσ/5 · 100 and C* σ/5 · 100 (clipped into [0, 5] as `expressMetrics` does), E_path C's times
 * lᵢ/max(pᵢ, lᵢ), d_T the goal distance in metres.
 */
function episodeValues(table: ExpressTableId, runDir: string, episodes: readonly Pick<ActiveEpisode, "questionId" | "gtPathLengthM" | "goalPosition">[]): Record<string, number[]> {
  const records = [...lastLines(join(runDir, "episodes.jsonl"), recordLine).values()].filter((r) => r.error === null);
  const byId = new Map(episodes.map((e) => [e.questionId, e]));
  if (table === "express-table-2") {
    return {
      accuracy: records.flatMap((r) => (typeof r.correct === "boolean" ? [r.correct ? 100 : 0] : [])),
      "path-length": records.flatMap((r) => (r.pathLengthM !== null ? [r.pathLengthM] : [])),
    };
  }
  const judgements = lastLines(join(runDir, "judgements.jsonl"), judgementLine);
  if (table === "express-table-3") {
    const values: Record<string, number[]> = { c: [], "c-star": [], "e-path": [], "d-t": [] };
    for (const r of records) {
      const j = judgements.get(r.questionId);
      const episode = byId.get(r.questionId);
      // as scoreExploration: an episode without a path length is in none of the four figures
      if (!episode || !j || j.error !== null || r.pathLengthM === null) continue;
      if (episode.goalPosition !== undefined && typeof r.goalDistanceM === "number" && Number.isFinite(r.goalDistanceM)) values["d-t"]!.push(r.goalDistanceM);
      const eac = j.eac;
      if (!Number.isFinite(r.pathLengthM) || eac?.status !== "ok" || eac.grounding === undefined || eac.accuracy === undefined) continue;
      const grounded = (100 * clip05(eac.grounding * eac.accuracy)) / 5;
      values.c!.push(grounded);
      values["c-star"]!.push((100 * clip05(eac.accuracy)) / 5);
      const l = episode.gtPathLengthM ?? r.gtPathLengthM ?? null;
      if (l !== null) values["e-path"]!.push(grounded * pathRatio(r.pathLengthM, l));
    }
    return values;
  }
  const values: Record<string, number[]> = { "c-prime": [], "e-prime": [] };
  for (const r of records) {
    const j = judgements.get(r.questionId);
    const episode = byId.get(r.questionId);
    if (!episode || !j || j.error !== null || j.llmMatch === null) continue;
    const points = llmMatchPoints(j.llmMatch);
    values["c-prime"]!.push(points);
    if (episode.gtPathLengthM !== undefined && r.pathLengthM !== null) values["e-prime"]!.push(points * pathRatio(r.pathLengthM, episode.gtPathLengthM));
  }
  return values;
}

/** The row's cells in the table's columns, the summary's count of scored episodes, and what the data leaves out. */
function expressCells(table: ExpressTableId, parsed: ExploreSummaryRead, values: Record<string, number[]> = {}): { cells: Record<string, UserCell>; scored: number; leftOut: string[] } {
  const cells: Record<string, UserCell> = {};
  const put = (id: string, value: number | null | undefined, n: number): void => {
    if (value === null || value === undefined || !Number.isFinite(value) || n <= 0) return;
    cells[id] = { value, n };
    // the ± only when the episodes read back are the summary's own: as many, with its mean
    const list = values[id];
    if (!list || list.length !== n) return;
    const estimate = bootstrapMean(list);
    if (Math.abs(estimate.mean - value) > 1e-9 * Math.max(1, Math.abs(value))) return;
    if (Number.isFinite(estimate.stderr)) cells[id] = { ...cells[id]!, ci: estimate.stderr, ...(estimate.ci.every(Number.isFinite) ? { interval: estimate.ci } : {}) };
  };
  const leftOut: string[] = [];
  switch (table) {
    case "express-table-1": {
      const llmMatch = parsed.judged?.llmMatch;
      const efficiency = parsed.judged?.efficiency?.metres ?? null;
      put("c-prime", llmMatch?.correctness, llmMatch?.n ?? 0);
      put("e-prime", efficiency?.efficiency, efficiency?.n ?? 0);
      const scored = llmMatch?.n ?? 0;
      if (scored > 0 && (efficiency?.n ?? 0) < scored) leftOut.push(`E′ over ${efficiency?.n ?? 0} of ${scored} judged episodes (the others have no gt_path_length)`);
      return { cells, scored, leftOut };
    }
    case "express-table-2": {
      const metrics = parsed.metrics;
      put("accuracy", metrics?.multipleChoice.accuracy, metrics?.multipleChoice.n ?? 0);
      put("path-length", metrics?.pathLength.meanMetres, parsed.counts.finished);
      return { cells, scored: metrics?.multipleChoice.n ?? 0, leftOut };
    }
    case "express-table-3": {
      const express = parsed.judged?.express;
      if (express) {
        put("c", express.c, express.nScored);
        put("c-star", express.cStar, express.nScored);
        put("e-path", express.ePath, express.nPath);
        put("d-t", express.dT, express.nGoal);
      }
      return { cells, scored: express?.nScored ?? 0, leftOut };
    }
  }
}

/**
 * The table's row from the explore run in `runDir` (its `summary.json`, judged for Tables 1 and
 * 3); each cell gets its ± and interval from the run's episodes (`episodes`: their ground-truth
 * lengths and goals).
 */
export function expressRow(runDir: string, setup: ExpressRowSetup, episodes: readonly Pick<ActiveEpisode, "questionId" | "gtPathLengthM" | "goalPosition">[]): UserRow {
  const parsed = readExploreSummary(runDir, setup.table);
  const { cells, leftOut } = expressCells(setup.table, parsed, episodeValues(setup.table, runDir, episodes));
  const differences = [...expressDifferences(setup), ...leftOut];
  return {
    id: "fine-eqa-reference",
    label: setup.model,
    section: "Fine-EQA (reference mode)",
    runDir: EXPRESS_ROW_DIR,
    cells,
    comparable: differences.length === 0,
    differences,
    failed: parsed.counts.failed + (parsed.judged?.failed ?? 0),
  };
}

/** What the table's notes say about how this run's row was made. */
function expressNotes(setup: ExpressRowSetup): string[] {
  const prompts = setup.promptSet === "eqakit" ? "eqakit's own prompts" : "EXPRESS-Bench's prompts";
  const row = `This run's row: eqakit's Fine-EQA reference mode (eqa explore --agent fine-eqa:reference) with the row's VLM for every question to it, sent ${prompts}`;
  switch (setup.table) {
    case "express-table-1":
      return [
        `${row}; C′ is LLM-Match (OpenEQA's prompt, ${setup.mode} mode) by ${setup.judge ?? "the judge"}, E′ weights it by lᵢ/max(pᵢ, lᵢ) with the paths in metres (Eqs. 5, 6).`,
        "The paper does not name C′'s judge: a GPT-4 judge (OpenEQA's) or GPT-4o-mini (EXPRESS-Bench's evaluation model) counts as the paper's.",
      ];
    case "express-table-2":
      return [`${row}; accuracy is the share of finished episodes whose reply names the answer's letter (a reply without a letter counts as wrong), path length the mean path in metres.`];
    case "express-table-3":
      return [`${row}; C and C* from the EAC judge (${prompts}), E_path and d_T in metres.`];
  }
}

/**
 * Writes the table with the paper's rows and `row` into the reproduce run `dir` in the four
 * files, and its `summary.json` (the row and its explore run's counts and dollars, read from
 * `rowDir`, and the cost of its calls); returns the table, the Markdown and the summary.
 */
export async function writeExpressTable(published: PublishedTable, row: UserRow, setup: ExpressRowSetup, dir: string, rowDir: string, settings: Record<string, unknown>): Promise<{ table: ReproducedTable; markdown: string; summary: ReproduceSummary }> {
  const table: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: published.id, rows: [row], notes: expressNotes(setup) };
  const explored = readExploreSummary(rowDir, setup.table);
  const { markdown, summary } = await writeReproduction(dir, published, table, settings, { [row.id]: { answered: explored.counts.finished, failed: row.failed, scored: expressCells(setup.table, explored).scored, dollars: explored.cost?.total.dollars ?? null } });
  return { table, markdown, summary };
}

/** What stops an HM3D run before it starts: each a problem with the hint that fixes it. */
export interface HabitatProblem {
  problem: string;
  hint: string;
}

/**
 * Checks, before any model is called, what `--env habitat` needs: the HM3D folder, each episode's
 * scene file in it (found as `bridges/habitat/scenes.py` finds it: the scene folder under its
 * split, under the root, or under any split), and a Python that imports habitat-sim.
 */
export async function habitatProblems(options: { scenes: string | undefined; bridgePython: string; episodes: readonly Pick<ActiveEpisode, "scene">[] }): Promise<HabitatProblem[]> {
  const getHm3d = "HM3D comes from Matterport (free for academic use) through habitat-sim's datasets_download (bridges/habitat/README.md, Get HM3D)";
  const problems: HabitatProblem[] = [];
  if (options.scenes === undefined) problems.push({ problem: "--env habitat needs --scenes DIR, your HM3D folder (holding train/, val/ …)", hint: getHm3d });
  else if (!existsSync(options.scenes)) problems.push({ problem: `the HM3D folder ${options.scenes} does not exist`, hint: getHm3d });
  else {
    const scenes = [...new Set(options.episodes.map((e) => e.scene))];
    const missing = scenes.filter((scene) => !habitatSceneExists(options.scenes as string, habitatSceneFile(scene)));
    if (missing.length > 0) {
      problems.push({
        problem: `${missing.length} of the episodes' ${scenes.length} HM3D scene(s) are not in ${options.scenes}: ${missing.slice(0, 3).map(habitatSceneFile).join(", ")}${missing.length > 3 ? ", …" : ""}`,
        hint: `${getHm3d}; HM-EQA's scenes are in HM3D's train split, A-EQA's and EXPRESS-Bench's in val and train`,
      });
    }
  }
  const imported = await pythonImports(options.bridgePython, "habitat_sim");
  if (imported !== true) {
    problems.push({ problem: `${options.bridgePython} cannot import habitat_sim: ${imported}`, hint: "install habitat-sim (bridges/habitat/README.md, Install habitat-sim) and pass its Python with --bridge-python" });
  }
  return problems;
}

const SPLITS = ["train", "val", "minival", "test", "example"];

/** Whether a scene path resolves to a file under `root`, with `bridges/habitat/scenes.py`'s candidates. */
function habitatSceneExists(root: string, scenePath: string): boolean {
  const parts = scenePath.split(/[\\/]+/).filter((p) => p.length > 0);
  const k = parts.findIndex((p) => /^\d{5}-[A-Za-z0-9]+$/.test(p));
  if (k < 0) return existsSync(isAbsolute(scenePath) ? scenePath : resolve(scenePath));
  const tail = parts.slice(k);
  const candidates = [join(root, ...tail), ...SPLITS.map((split) => join(root, split, ...tail))];
  return candidates.some((c) => existsSync(c));
}

/** True when `python -c "import module"` succeeds, else why not. */
function pythonImports(python: string, module: string): Promise<true | string> {
  return new Promise((done) => {
    execFile(python, ["-c", `import ${module}`], { timeout: 120_000 }, (error, _stdout, stderr) => {
      if (!error) return done(true);
      const last = stderr.trim().split("\n").pop();
      done(last && last.length > 0 ? last : error.message);
    });
  });
}
