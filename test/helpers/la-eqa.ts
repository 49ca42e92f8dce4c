/**
 * A synthetic question file in LA-EQA's shape (`la_eqa_benchmark/eqa-questions.json`, whose
 * repository has no licence: its questions are never copied here), with place positions and
 * predictions for it. Every category, answers with " OR " alternatives, empty and non-empty best
 * paths, a best path through a place the scene lacks (the reference's nearest-id fallback) and
 * one that is its own start place.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface SyntheticLaEqaRecord {
  question: string;
  category: string;
  question_id: string;
  scene_name: string;
  answer: string;
  best_path: number[];
  start_place: number;
}

export const HOME = "001-synthetic-home";
export const YARD = "synthetic_yard";

export const LA_EQA_RECORDS: SyntheticLaEqaRecord[] = [
  { question: "Where did I put the blue mug yesterday morning?", category: "past", question_id: "syn_1", scene_name: HOME, answer: "On the shelf OR on the kitchen shelf", best_path: [], start_place: 0 },
  { question: "What colour was the rug in the hall two days ago?", category: "past", question_id: "syn_2", scene_name: HOME, answer: "Red", best_path: [], start_place: 0 },
  { question: "Is the window in the study open now?", category: "present", question_id: "syn_3", scene_name: HOME, answer: "Yes OR Yes, it is open", best_path: [1, 2], start_place: 0 },
  { question: "What is on the dining table now?", category: "present", question_id: "syn_4", scene_name: HOME, answer: "A vase", best_path: [7], start_place: 0 },
  { question: "Where were the keys each evening this week?", category: "multi_past", question_id: "syn_5", scene_name: HOME, answer: "By the door OR at or near the key bowl", best_path: [], start_place: 3 },
  { question: "Is the book still where I left it yesterday?", category: "past_present", question_id: "syn_6", scene_name: HOME, answer: "No", best_path: [3], start_place: 3 },
  { question: "Will the milk on the counter spoil if I leave it until tonight?", category: "past_present_future", question_id: "syn_7", scene_name: HOME, answer: "Yes OR It might spoil", best_path: [4], start_place: 0 },
  { question: "Which aisle had a forklift on Monday?", category: "past", question_id: "syn_8", scene_name: YARD, answer: "Aisle 4 OR Aisle 5", best_path: [], start_place: 0 },
  { question: "How many barrels are by the gate now?", category: "present", question_id: "syn_9", scene_name: YARD, answer: "Three", best_path: [10, 20, 12], start_place: 0 },
  { question: "Were there more boxes in aisle 1 yesterday than now?", category: "past_present", question_id: "syn_10", scene_name: YARD, answer: "Yes OR Yes, two more", best_path: [20], start_place: 0 },
];

/** Place positions of the world "now", in the scenes' order (place 7 of the home is missing: 6 is nearest, before 8). */
export const LA_EQA_PLACES = {
  [HOME]: [
    { id: 0, position: [0, 0, 0] },
    { id: 1, position: [3, 0, 4] },
    { id: 2, position: [3, 0, 10] },
    { id: 3, position: [1, 0.5, 1] },
    { id: 4, position: [-2, 0, 0] },
    { id: 6, position: [0, 0, 6] },
    { id: 8, position: [8, 0, 0] },
  ],
  [YARD]: [
    { id: 0, position: [0, 0, 0] },
    { id: 10, position: [0, 0, 5] },
    { id: 12, position: [12, 0, 0] },
    { id: 20, position: [0, 2, 5] },
  ],
};

/** L of each question with a best path, by hand: straight lines from the start place through the path. */
export const LA_EQA_BEST_PATH_LENGTHS: Record<string, number> = {
  syn_3: 5 + 6,
  syn_4: 6,
  syn_6: 0,
  syn_7: 2,
  syn_9: 5 + 2 + Math.sqrt(12 * 12 + 4 + 25),
  syn_10: Math.sqrt(4 + 25),
};

/** Distances walked: still on memory questions (SPL 1) but one, shorter and longer than L elsewhere. */
export const LA_EQA_DISTANCES: Record<string, number> = { syn_1: 0, syn_2: 0.5, syn_3: 22, syn_4: 6, syn_5: 0.01, syn_6: 0.004, syn_7: 1, syn_8: 0, syn_9: 40, syn_10: 10 };

/** SPL by LA-EQA's rule: 1 or 0 on an empty best path (moved ≤ 0.01 or not), else min(1, L / max(d, 0.01)). */
export function expectedSpl(id: string): number {
  const length = LA_EQA_BEST_PATH_LENGTHS[id];
  const d = LA_EQA_DISTANCES[id]!;
  if (length === undefined) return d <= 0.01 ? 1 : 0;
  return Math.min(1, length / Math.max(d, 0.01));
}

/** Writes the questions, the places and predictions (answers "answer to syn_N", with the distances) into `dir`. */
export function writeLaEqaFiles(dir: string, records: readonly SyntheticLaEqaRecord[] = LA_EQA_RECORDS): { questions: string; places: string; predictions: string } {
  const questions = join(dir, "eqa-questions.json");
  const places = join(dir, "places.json");
  const predictions = join(dir, "predictions.json");
  // indented as the benchmark's file is
  writeFileSync(questions, JSON.stringify(records, null, 4));
  writeFileSync(places, JSON.stringify(LA_EQA_PLACES));
  writeFileSync(predictions, JSON.stringify(records.map((r) => ({ question_id: r.question_id, answer: `answer to ${r.question_id}`, distance_traveled: LA_EQA_DISTANCES[r.question_id] }))));
  return { questions, places, predictions };
}
