/**
 * LA-EQA's SPL, as its evaluation code computes it (mind-palace-laeqa/benchmark @ bc08362,
 * `src/contextual_long_term_reasoning/eqa_evaluation.py`, `EQAEvaluation.evaluate_SPL`, with the
 * path length from `belief_manager.py`, `WorldModel.move_robot`):
 *
 *   best_path empty:  SPL = 1 if d ≤ 0.01 else 0          (memory alone answers: any walk is waste)
 *   otherwise:        SPL = min(1, L / max(d, 0.01))
 *
 * d is the distance the agent walked in the world "now" (metres); L is the length of the walk from
 * `start_place` through each place of `best_path` in order, straight lines between the places'
 * positions in the scene graph of the world "now": Σ ‖p_{i+1} − p_i‖₂ over x, y and z. L is 0 when
 * the best path is the start place itself, and then SPL is 0 however little the agent walked (a
 * quirk of the reference, kept). Nothing is rounded.
 *
 * A place that the scene lacks is replaced, as `move_robot` replaces it, by the scene's place whose
 * id is nearest (|id − place| < 1000; the first in the scene's order on a tie); with none that near
 * the reference fails, and so does eqakit, naming the place.
 */
import { UserError, type InputLocation } from "../../core/index.js";
import type { LaEqaPlace, LaEqaQuestion } from "../../data/index.js";

/** The distance under which the reference counts the agent as not having moved, and the floor of d. */
export const LA_EQA_MIN_DISTANCE = 0.01;

/** The reference's window of the nearest-id search (`best_id_diff = 1000`). */
const NEAREST_ID_WINDOW = 1000;

/** SPL of one question from its best path's length L (null when the best path is empty) and the distance walked d. */
export function laEqaSpl(bestPathLength: number | null, distanceTraveled: number): number {
  if (bestPathLength === null) return distanceTraveled <= LA_EQA_MIN_DISTANCE ? 1 : 0;
  const spl = bestPathLength / Math.max(distanceTraveled, LA_EQA_MIN_DISTANCE);
  return spl > 1 ? 1 : spl;
}

/** The position of `place` in a scene, or of the place `move_robot` falls back to when the scene lacks it. */
function placePosition(places: readonly LaEqaPlace[], place: number, at: InputLocation): [number, number, number] {
  const exact = places.find((p) => p.id === place);
  if (exact) return exact.position;
  let closest: LaEqaPlace | undefined;
  let bestDiff = NEAREST_ID_WINDOW;
  for (const candidate of places) {
    const diff = Math.abs(candidate.id - place);
    if (diff < bestDiff) {
      bestDiff = diff;
      closest = candidate;
    }
  }
  if (!closest) throw new UserError(`the scene has no place within ${NEAREST_ID_WINDOW - 1} ids of place ${place}`, at, "give every place of the scene graph of the world \"now\" in --places");
  return closest.position;
}

/**
 * The length L of a question's best path (metres): from its start place through each place of
 * `best_path`, straight lines, summed in order as `move_robot` sums them; null when the path is empty.
 */
export function laEqaBestPathLength(question: LaEqaQuestion, places: readonly LaEqaPlace[], placesFile?: string): number | null {
  if (question.bestPath.length === 0) return null;
  const at: InputLocation = { ...(placesFile !== undefined ? { file: placesFile } : {}), id: question.questionId, field: question.sceneName };
  let current = placePosition(places, question.startPlace, at);
  let length = 0;
  for (const place of question.bestPath) {
    const next = placePosition(places, place, at);
    // Python's sum((a - b) ** 2 for i in range(3)) ** 0.5: left to right from 0; glibc's pow is
    // correctly rounded, so its square is d * d and its root is Math.sqrt's
    let squares = 0;
    for (let i = 0; i < 3; i++) {
      const d = next[i]! - current[i]!;
      squares += d * d;
    }
    length += Math.sqrt(squares);
    current = next;
  }
  return length;
}
