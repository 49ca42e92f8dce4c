/**
 * OpenEQA's A-EQA efficiency E (seed `001_…`, section II-E, Eq. 2):
 *
 *   E = 1/N · Σᵢ (σᵢ − 1)/4 · lᵢ / max(pᵢ, lᵢ) · 100 %
 *
 * where σᵢ is the LLM-Match score (1-5), pᵢ the agent's path length and lᵢ the length of a
 * ground-truth path sufficient to answer question i. The paper counts both in atomic actions
 * (steps); the ground truth published for the 557 HM3D questions (`gt_path_length.json`, from
 * the 3D-Mem A-EQA evaluation) is in metres. eqakit therefore takes both in one unit, named by
 * the caller, and reports that unit with the figure: mixing steps and metres is the caller's bug.
 *
 * EXPRESS-Bench's C′ and E′ on OpenEQA's A-EQA subset (seed `003_…`, Eqs. 5-6) are these same two
 * formulas: `correctness` and `efficiency` below.
 *
 * Decisions (the paper leaves these open):
 * - σᵢ goes through the same per-question points as LLM-Match (`llmMatchPoints`: clipped to
 *   [1, 5]; a missing answer scored 0 counts as 1, i.e. 0 points), so E ≤ C always.
 * - When pᵢ = lᵢ = 0 (the answer was visible from the start and the agent did not move), the
 *   ratio is 1, not 0/0.
 * - Lengths must be finite and ≥ 0; a negative or non-finite length is a UserError naming the
 *   question.
 * - N = 0 gives E = 0 with n = 0 (nothing to average).
 */
import { UserError } from "../../core/index.js";
import { readJsonFile } from "../../data/index.js";
import { llmMatchPoints } from "./aggregate.js";

export type PathUnit = "steps" | "metres";

export interface EfficiencyItem {
  questionId: string;
  /** LLM-Match score σᵢ (1-5). */
  score: number;
  /** pᵢ: the agent's path length, in the summary's unit. */
  agentLength: number;
  /** lᵢ: the ground-truth path length, in the summary's unit. */
  groundTruthLength: number;
}

export interface EfficiencySummary {
  /** E in percent (0-100). */
  efficiency: number;
  /** LLM-Match correctness C over the same questions, in percent (Eq. 1). */
  correctness: number;
  /** The mean of lᵢ / max(pᵢ, lᵢ) (0-1). */
  meanPathRatio: number;
  n: number;
  unit: PathUnit;
}

/** lᵢ / max(pᵢ, lᵢ), with 0/0 taken as 1. */
export function pathRatio(agentLength: number, groundTruthLength: number): number {
  const denominator = Math.max(agentLength, groundTruthLength);
  return denominator === 0 ? 1 : groundTruthLength / denominator;
}

/** A question's contribution to E, in percent points: 100·(σ−1)/4 · l/max(p, l). */
export function efficiencyPoints(item: Omit<EfficiencyItem, "questionId">): number {
  return llmMatchPoints(item.score) * pathRatio(item.agentLength, item.groundTruthLength);
}

/** OpenEQA's efficiency E (Eq. 2) over `items`, whose lengths are all in `unit`. */
export function openEqaEfficiency(items: readonly EfficiencyItem[], unit: PathUnit): EfficiencySummary {
  for (const item of items) {
    for (const [field, value] of [["agentLength", item.agentLength], ["groundTruthLength", item.groundTruthLength]] as const) {
      if (!Number.isFinite(value) || value < 0) {
        throw new UserError(`path length ${value} is not a finite length ≥ 0 (${unit})`, { id: item.questionId, field });
      }
    }
    if (!Number.isFinite(item.score)) throw new UserError(`score ${item.score} is not a number`, { id: item.questionId, field: "score" });
  }
  const n = items.length;
  if (n === 0) return { efficiency: 0, correctness: 0, meanPathRatio: 0, n: 0, unit };
  let e = 0;
  let c = 0;
  let r = 0;
  for (const item of items) {
    e += efficiencyPoints(item);
    c += llmMatchPoints(item.score);
    r += pathRatio(item.agentLength, item.groundTruthLength);
  }
  return { efficiency: e / n, correctness: c / n, meanPathRatio: r / n, n, unit };
}

/**
 * Reads a ground-truth path-length file: a JSON object `{question_id: length}` (the 3D-Mem
 * `gt_path_length.json` gives metres for OpenEQA's 557 HM3D questions). Every value must be a
 * finite number ≥ 0; the error names the file and the question id.
 */
export async function loadGroundTruthPathLengths(file: string): Promise<Map<string, number>> {
  return parseGroundTruthPathLengths(await readJsonFile(file), file);
}

export function parseGroundTruthPathLengths(value: unknown, file: string): Map<string, number> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UserError("expected a JSON object {question_id: path length}", { file });
  }
  const lengths = new Map<string, number>();
  for (const [id, length] of Object.entries(value as Record<string, unknown>)) {
    if (typeof length !== "number" || !Number.isFinite(length) || length < 0) {
      throw new UserError(`expected a path length ≥ 0, found ${JSON.stringify(length)}`, { file, id });
    }
    lengths.set(id, length);
  }
  return lengths;
}
