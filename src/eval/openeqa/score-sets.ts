import { existsSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { z } from "zod";
import { UserError, type Prediction } from "../../core/index.js";
import { parseJsonText, readTextFile, validateRecords } from "../../data/index.js";
import { METRICS_FILE, SUMMARY_FILE } from "./score-run.js";

/**
 * A set of scores by item, as `eqa judge-agreement` compares them: an `eqa score` (or
 * `eqa run`) directory, OpenEQA's metrics file `{question_id: score}`, a JSON array of
 * `{question_id, score, annotator?}` records, or a CSV with the columns `question_id`
 * (or `item`), `score` and optionally `annotator`.
 */
export interface ScoreSet {
  label: string;
  path: string;
  scores: Map<string, number>;
  /** Scores by annotator, when the records name annotators (human studies). */
  annotators?: Map<string, Map<string, number>>;
}

const metricsSchema = z.record(z.string(), z.number());
const scoreRecord = z.object({
  question_id: z.string().optional(),
  item: z.string().optional(),
  score: z.number(),
  annotator: z.union([z.string(), z.number()]).optional(),
});
const summaryLabelSchema = z.looseObject({
  config: z.looseObject({
    judge: z.looseObject({ name: z.string().optional() }).optional(),
    promptVariant: z.string().optional(),
    parameters: z.looseObject({ temperature: z.number().optional() }).optional(),
  }).optional(),
  score: z.unknown().optional(),
});

export async function loadScoreSet(path: string, label?: string): Promise<ScoreSet> {
  if (!existsSync(path)) throw new UserError("no such file or run directory", { file: path }, "pass an `eqa score` or `eqa run` directory, a metrics.json, or a JSON/CSV file of scores");
  if (statSync(path).isDirectory()) return loadRunScores(path, label);
  const text = await readTextFile(path);
  if (path.toLowerCase().endsWith(".csv")) return fromRecords(parseCsvScores(text, path), path, label);
  const value = parseJsonText(text, path);
  if (Array.isArray(value)) {
    const records = validateRecords(value, scoreRecord, path, "score records");
    return fromRecords(
      records.map((r, index) => {
        const item = r.question_id ?? r.item;
        if (item === undefined) throw new UserError("a score record needs question_id (or item)", { file: path, index });
        return { item, score: r.score, ...(r.annotator !== undefined ? { annotator: String(r.annotator) } : {}) };
      }),
      path,
      label,
    );
  }
  const parsed = metricsSchema.safeParse(value);
  if (!parsed.success) throw new UserError("expected {question_id: score} or an array of {question_id, score, annotator?}", { file: path });
  return { label: label ?? basename(path).replace(/\.json$/i, ""), path, scores: new Map(Object.entries(parsed.data)) };
}

async function loadRunScores(dir: string, label?: string): Promise<ScoreSet> {
  const metricsPath = join(dir, METRICS_FILE);
  if (!existsSync(metricsPath)) throw new UserError(`no ${METRICS_FILE} in this run directory`, { file: dir }, "score it first with `eqa score --predictions … --out DIR`");
  const parsed = metricsSchema.safeParse(parseJsonText(await readTextFile(metricsPath), metricsPath));
  if (!parsed.success) throw new UserError("expected {question_id: score}", { file: metricsPath });
  return { label: label ?? (await runLabel(dir)), path: dir, scores: new Map(Object.entries(parsed.data)) };
}

/** A score run's label: its directory's name, with the judge, prompt variant and temperature when they are not the defaults. */
async function runLabel(dir: string): Promise<string> {
  const name = basename(dir);
  const summaryPath = join(dir, SUMMARY_FILE);
  if (!existsSync(summaryPath)) return name;
  const raw = parseJsonText(await readTextFile(summaryPath), summaryPath);
  const nested = z.looseObject({ score: summaryLabelSchema }).safeParse(raw);
  const parsed = nested.success ? nested.data.score : summaryLabelSchema.safeParse(raw).data;
  const config = parsed?.config;
  const details: string[] = [];
  if (config?.promptVariant) details.push(config.promptVariant);
  const temperature = config?.parameters?.temperature;
  if (temperature !== undefined && temperature !== 0.2) details.push(`T=${temperature}`);
  return details.length > 0 ? `${name} (${details.join(", ")})` : name;
}

interface ScoreRow {
  item: string;
  score: number;
  annotator?: string;
}

function fromRecords(rows: ScoreRow[], path: string, label?: string): ScoreSet {
  const annotated = rows.some((r) => r.annotator !== undefined);
  const annotators = new Map<string, Map<string, number>>();
  const scores = new Map<string, number>();
  if (!annotated) {
    rows.forEach((r, index) => {
      if (scores.has(r.item)) throw new UserError("the same item is scored twice (name the annotator to hold several scores per item)", { file: path, index, id: r.item });
      scores.set(r.item, r.score);
    });
  } else {
    rows.forEach((r, index) => {
      if (r.annotator === undefined) throw new UserError("some records name an annotator and this one does not", { file: path, index, id: r.item });
      const own = annotators.get(r.annotator) ?? new Map<string, number>();
      if (own.has(r.item)) throw new UserError(`annotator ${r.annotator} scores this item twice`, { file: path, index, id: r.item });
      own.set(r.item, r.score);
      annotators.set(r.annotator, own);
    });
    // the set's own scores: each item's mean over annotators
    const sums = new Map<string, number[]>();
    for (const own of annotators.values()) for (const [item, value] of own) sums.set(item, [...(sums.get(item) ?? []), value]);
    for (const [item, values] of sums) scores.set(item, values.reduce((a, b) => a + b, 0) / values.length);
  }
  return { label: label ?? basename(path).replace(/\.(json|csv)$/i, ""), path, scores, ...(annotated ? { annotators } : {}) };
}

/** A simple CSV (comma-separated, optional double quotes, a header row). */
function parseCsvScores(text: string, path: string): ScoreRow[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  const header = splitCsvLine(lines[0] ?? "").map((h) => h.trim().toLowerCase());
  const itemColumn = header.indexOf("question_id") >= 0 ? header.indexOf("question_id") : header.indexOf("item");
  const scoreColumn = header.indexOf("score");
  const annotatorColumn = header.indexOf("annotator");
  if (itemColumn < 0 || scoreColumn < 0) throw new UserError("the CSV needs a header with question_id (or item) and score columns", { file: path, line: 1 });
  return lines.slice(1).map((line, i) => {
    const cells = splitCsvLine(line);
    const score = Number(cells[scoreColumn]);
    const item = cells[itemColumn]?.trim() ?? "";
    if (item === "" || cells[scoreColumn] === undefined || cells[scoreColumn]!.trim() === "" || !Number.isFinite(score)) {
      throw new UserError(`expected an item and a numeric score, found "${line}"`, { file: path, line: i + 2 });
    }
    const annotator = annotatorColumn >= 0 ? cells[annotatorColumn]?.trim() : undefined;
    return { item, score, ...(annotator ? { annotator } : {}) };
  });
}

function splitCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      cells.push(cell);
      cell = "";
    } else cell += char;
  }
  cells.push(cell);
  return cells;
}

const predictionWithGuess = z.object({
  question_id: z.string(),
  answer: z.string().nullable(),
  forced_guess: z.boolean().optional(),
  agent_answer: z.string().nullable().optional(),
});

/**
 * The predictions of an `eqa answer` run as they were before force-a-guess: where the
 * blind LLM's guess replaced an abstaining answer, the agent's own answer (OpenEQA Table
 * III, "w/o guess").
 */
export async function loadPredictionsWithoutGuess(path: string): Promise<{ predictions: Prediction[]; replaced: number }> {
  const records = validateRecords(parseJsonText(await readTextFile(path), path), predictionWithGuess, path, "predictions");
  let replaced = 0;
  const seen = new Set<string>();
  const predictions = records.map((r, index) => {
    if (seen.has(r.question_id)) throw new UserError("duplicate prediction for this question id", { file: path, index, id: r.question_id, field: "question_id" });
    seen.add(r.question_id);
    if (r.forced_guess === true) {
      replaced++;
      return { questionId: r.question_id, answer: r.agent_answer ?? null };
    }
    return { questionId: r.question_id, answer: r.answer };
  });
  return { predictions, replaced };
}
