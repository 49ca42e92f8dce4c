/**
 * EXPRESS-Bench's metrics (seed `003_…`, section 2.2.1) for exploration-aware EQA.
 *
 * Per episode i: the EAC judge gives the grounding δᵢ ∈ {0, 0.5, 1} and the accuracy σᵢ (1-5);
 * pᵢ is the agent's path length in metres, lᵢ the record's geodesic start-to-goal distance
 * (`geodesic_distance`), and the goal distance is the geodesic distance from the agent's final
 * position to the goal position.
 *
 *   C      = 1/N Σ δᵢσᵢ/5 · 100 %                       (EAC: answers grounded in what was seen)
 *   C*     = 1/N Σ σᵢ/5 · 100 %                         (Eq. 1: C with δᵢ = 1)
 *   E_path = 1/N Σ δᵢσᵢ/5 · lᵢ/max(pᵢ, lᵢ) · 100 %
 *   d_T    = mean goal distance, in metres
 *
 * The seed prints only C* among these four; C, E_path and d_T are taken from the benchmark's own
 * scoring code (`evaluation.py`), which also fixes what is averaged:
 * - δᵢσᵢ and σᵢ are clipped to [0, 5] before dividing by 5.
 * - An episode whose path length is infinite (the planner found no path) is left out of C, C* and
 *   E_path; one whose goal distance is infinite (the goal is unreachable from the final
 *   position) is left out of d_T. The summary says how many episodes each figure averages.
 * eqakit's own additions, where the reference has no rule:
 * - An episode whose EAC reply could not be read (no judgement) is left out of C, C* and E_path
 *   and counted in `unjudged` (the reference would crash).
 * - C and C* need no path: an episode without a ground-truth length lᵢ still counts in them and
 *   is left out of E_path alone; one without a goal is left out of d_T alone (every EXPRESS-Bench
 *   record has both; eqakit's own episodes may lack them). `leftOut` says, per figure, how many
 *   episodes it leaves out and why, so that a figure over fewer episodes (or none) is explained.
 * - lᵢ/max(pᵢ, lᵢ) with pᵢ = lᵢ = 0 is 1 (numpy would give NaN).
 * - A figure over no episodes is null.
 *
 * Reliability figures (seed Eqs. 2-4), with ceᵢ the VLM's confidence for the image it answered
 * from, and lᵢ, pᵢ as above:
 *
 *   ACE = 1/N Σ ceᵢ      NPL = 1/N Σ lᵢ/max(pᵢ, lᵢ)      WCE = 1/N Σ ceᵢ · lᵢ/max(pᵢ, lᵢ)
 *
 * These are plain means (no ×100 %), in the unit of ceᵢ (a probability in [0, 1] for the
 * confidences eqakit records); the seed's ratio is unitless. Infinite pᵢ gives a ratio of 0 here
 * (an agent that never reached a path contributes no path credit), since the seed excludes nothing.
 */
import { UserError } from "../../core/index.js";
import { pathRatio } from "../openeqa/index.js";

/** The EAC judgement of one answer. */
export interface EacScores {
  /** δ, asked as 0, 0.5 or 1; kept as the judge gave it (the reference does not round it). */
  grounding: number;
  /** σ, asked 1-5; kept as given (fractions, out-of-range marks): C and C* clip, as the reference does. */
  accuracy: number;
}

export interface ExpressEpisodeResult {
  id: string;
  /** The EAC judgement; null when the judge's reply could not be read. */
  judgement: EacScores | null;
  /** pᵢ: the agent's path length in metres (Infinity when no path was found). */
  pathLength: number;
  /** lᵢ: the geodesic distance from start to goal in metres; null when unknown (left out of E_path). */
  geodesicDistance: number | null;
  /** Geodesic distance from the final position to the goal in metres (Infinity if unreachable); null when the episode has no goal. */
  goalDistance: number | null;
}

/** Episodes a figure leaves out, and why. */
export interface ExpressLeftOut {
  metric: "C" | "C*" | "E_path" | "d_T";
  episodes: number;
  reason: string;
}

export interface ExpressMetrics {
  /** C, percent. */
  c: number | null;
  /** C*, percent. */
  cStar: number | null;
  /** E_path, percent. */
  ePath: number | null;
  /** d_T, metres. */
  dT: number | null;
  /** Episodes averaged in C and C*. */
  nScored: number;
  /** Episodes averaged in E_path (those of C with a ground-truth length lᵢ). */
  nPath: number;
  /** Episodes averaged in d_T. */
  nGoal: number;
  /** Episodes left out of C, C*, E_path because their judge reply was unreadable. */
  unjudged: number;
  /** Episodes left out of C, C*, E_path because their path length is infinite. */
  noPath: number;
  /** Per figure, the episodes left out and why (empty when every figure averages every episode). */
  leftOut: ExpressLeftOut[];
}

/** Why a figure leaves episodes out, as the summary words it. */
export const EXPRESS_LEFT_OUT_REASONS = {
  unjudged: "the EAC judge's reply could not be read",
  noPath: "the agent's path length is infinite (no path was found), as evaluation.py leaves it out",
  noGroundTruth: "no ground-truth path length: the episode has no gt_path_length (EXPRESS-Bench's geodesic_distance) and no goal_position the environment could measure it to",
  noGoal: "the episode has no goal_position",
  unreachable: "the goal is unreachable from the final position (infinite geodesic distance), as evaluation.py leaves it out",
} as const;

const clip05 = (x: number): number => Math.min(5, Math.max(0, x));

/** C, C*, E_path and d_T over episode results, as EXPRESS-Bench computes them. */
export function expressMetrics(results: readonly ExpressEpisodeResult[]): ExpressMetrics {
  let c = 0;
  let cStar = 0;
  let ePath = 0;
  let nScored = 0;
  let nPath = 0;
  let unjudged = 0;
  let noPath = 0;
  let noGroundTruth = 0;
  let dT = 0;
  let nGoal = 0;
  let noGoal = 0;
  let unreachable = 0;
  for (const r of results) {
    if (Number.isNaN(r.pathLength) || r.pathLength < 0) throw new UserError(`path length ${r.pathLength} is not ≥ 0`, { id: r.id, field: "pathLength" });
    if (r.geodesicDistance !== null && (!Number.isFinite(r.geodesicDistance) || r.geodesicDistance < 0)) {
      throw new UserError(`geodesic distance ${r.geodesicDistance} is not a finite distance ≥ 0`, { id: r.id, field: "geodesicDistance" });
    }
    if (r.goalDistance !== null && (Number.isNaN(r.goalDistance) || r.goalDistance < 0)) throw new UserError(`goal distance ${r.goalDistance} is not ≥ 0`, { id: r.id, field: "goalDistance" });
    if (r.goalDistance === null) noGoal++;
    else if (!Number.isFinite(r.goalDistance)) unreachable++;
    else {
      dT += r.goalDistance;
      nGoal++;
    }
    if (!Number.isFinite(r.pathLength)) {
      noPath++;
      continue;
    }
    if (r.judgement === null) {
      unjudged++;
      continue;
    }
    const grounded = (100 * clip05(r.judgement.grounding * r.judgement.accuracy)) / 5;
    c += grounded;
    cStar += (100 * clip05(r.judgement.accuracy)) / 5;
    nScored++;
    if (r.geodesicDistance === null) {
      noGroundTruth++;
      continue;
    }
    ePath += grounded * pathRatio(r.pathLength, r.geodesicDistance);
    nPath++;
  }
  const why = EXPRESS_LEFT_OUT_REASONS;
  const leftOut: ExpressLeftOut[] = [
    ...(["C", "C*", "E_path"] as const).flatMap((metric) => [
      { metric, episodes: unjudged, reason: why.unjudged },
      { metric, episodes: noPath, reason: why.noPath },
    ]),
    { metric: "E_path" as const, episodes: noGroundTruth, reason: why.noGroundTruth },
    { metric: "d_T" as const, episodes: noGoal, reason: why.noGoal },
    { metric: "d_T" as const, episodes: unreachable, reason: why.unreachable },
  ].filter((x) => x.episodes > 0);
  return {
    c: nScored > 0 ? c / nScored : null,
    cStar: nScored > 0 ? cStar / nScored : null,
    ePath: nPath > 0 ? ePath / nPath : null,
    dT: nGoal > 0 ? dT / nGoal : null,
    nScored,
    nPath,
    nGoal,
    unjudged,
    noPath,
    leftOut,
  };
}

export interface ReliabilityItem {
  id: string;
  /** ceᵢ: the VLM's confidence for the image it answered from. */
  confidence: number;
  /** pᵢ, metres. */
  pathLength: number;
  /** lᵢ, metres. */
  groundTruthLength: number;
}

export interface ReliabilityMetrics {
  ace: number | null;
  npl: number | null;
  wce: number | null;
  n: number;
}

/** ACE, NPL and WCE (seed Eqs. 2-4). */
export function reliabilityMetrics(items: readonly ReliabilityItem[]): ReliabilityMetrics {
  let ace = 0;
  let npl = 0;
  let wce = 0;
  for (const item of items) {
    if (!Number.isFinite(item.confidence)) throw new UserError(`confidence ${item.confidence} is not a number`, { id: item.id, field: "confidence" });
    if (Number.isNaN(item.pathLength) || item.pathLength < 0) throw new UserError(`path length ${item.pathLength} is not ≥ 0`, { id: item.id, field: "pathLength" });
    if (!Number.isFinite(item.groundTruthLength) || item.groundTruthLength < 0) {
      throw new UserError(`ground-truth length ${item.groundTruthLength} is not a finite length ≥ 0`, { id: item.id, field: "groundTruthLength" });
    }
    const ratio = Number.isFinite(item.pathLength) ? pathRatio(item.pathLength, item.groundTruthLength) : 0;
    ace += item.confidence;
    npl += ratio;
    wce += item.confidence * ratio;
  }
  const n = items.length;
  return n === 0 ? { ace: null, npl: null, wce: null, n } : { ace: ace / n, npl: npl / n, wce: wce / n, n };
}
