/**
 * HM-EQA's multiple-choice questions in active runs (`eqa explore --episodes questions.csv`).
 *
 * Episodes: each row of HM-EQA's `questions.csv` is an episode `hm-eqa-<row>` (explore-eqa names
 * its outputs by the row index too) in the HM3D scene folder of its `scene` column, starting at
 * the row's `scene_floor` pose of `scene_init_poses.csv` (read from the same folder): position
 * `init_x, init_y, init_z` and yaw `init_angle` (explore-eqa turns the agent by that angle about
 * +y, which is eqakit's yaw), pitch 0. The answer is the row's letter, the category its `label`.
 *
 * Asking (explore-eqa, Stanford-ILIAD/explore-eqa `run_vlm_exp.py`): the question, then one line
 * per choice, `A. text`, `B. text`, … (its `vlm_question`), then an instruction to answer with the
 * letter. The prediction is a letter; an episode is correct when it equals the answer letter, and
 * accuracy is the share of correct episodes among the finished multiple-choice ones.
 *
 * Differences from explore-eqa, which runs a local VLM (Prismatic) and reads its next-token
 * probabilities of A-D: eqakit asks a chat model for the letter as text and reads it from the
 * reply (`choiceLetter`); explore-eqa weighs each step's letter probabilities by that step's
 * relevance and takes the best over the episode, eqakit takes the answer its explorer gives
 * (Fine-EQA: from the view it stopped at; frontier: the EM-EQA agent on the recorded frames).
 * The instruction's wording is eqakit's own (`prompts/multiple-choice.txt`). explore-eqa tilts
 * its camera 30° down; an HM-EQA episode starts level, as every eqakit episode does.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { UserError, renderPromptFile } from "../../core/index.js";
import { findHmEqaInitPose, loadHmEqaInitPoses, loadHmEqaQuestions } from "../../data/index.js";
import type { ActiveEpisode } from "./explorer-types.js";

export const MULTIPLE_CHOICE_PROMPT = "multiple-choice";
export const HM_EQA_POSES_FILE = "scene_init_poses.csv";

/** The letter of choice k (0 → A). */
export function choiceLabel(k: number): string {
  return String.fromCharCode(65 + k);
}

/** The question as the explorer is asked it: with its lettered choices when it has any. */
export function askedQuestion(episode: Pick<ActiveEpisode, "question" | "choices">): string {
  if (!episode.choices || episode.choices.length === 0) return episode.question;
  const choices = episode.choices.map((c, k) => `${choiceLabel(k)}. ${c}`).join("\n");
  return renderPromptFile(MULTIPLE_CHOICE_PROMPT, { question: episode.question, choices });
}

/**
 * The letter a reply chose among `choices`, or null: a reply that starts with a letter of the
 * choices (`B`, `B.`, `(B)`, `B) Yes`), else one that says `answer: B` / `answer is B`, else one
 * that is exactly one choice's text (any case, final period ignored). A lone article ("A kettle")
 * is not read as choice A: the letter must not be followed by a letter.
 */
export function choiceLetter(reply: string | null, choices: readonly string[]): string | null {
  if (reply === null) return null;
  const text = reply.trim();
  const valid = (letter: string | undefined): string | null => {
    if (letter === undefined) return null;
    const k = letter.toUpperCase().charCodeAt(0) - 65;
    return k >= 0 && k < choices.length ? choiceLabel(k) : null;
  };
  const leading = /^\(?\s*([A-Z])(?![A-Za-z])/.exec(text);
  if (leading && !(leading[1] === "A" && /^A\s+[a-z]/.test(text))) {
    const letter = valid(leading[1]);
    if (letter) return letter;
  }
  const said = /\banswer(?:\s+is)?\s*[:\-]?\s*\(?([A-Za-z])(?![A-Za-z])/i.exec(text);
  if (said) {
    const letter = valid(said[1]);
    if (letter) return letter;
  }
  const bare = text.replace(/\.$/, "").toLowerCase();
  const k = choices.findIndex((c) => c.trim().toLowerCase() === bare);
  return k >= 0 ? choiceLabel(k) : null;
}

/** The chosen letter and whether it is right, for a multiple-choice episode with an answer letter; nothing for others. */
export function multipleChoiceOutcome(episode: Pick<ActiveEpisode, "choices" | "answer">, reply: string | null): { choice: string | null; correct: boolean } | Record<string, never> {
  if (!episode.choices || episode.choices.length === 0 || episode.answer === undefined) return {};
  const choice = choiceLetter(reply, episode.choices);
  return { choice, correct: choice !== null && choice === episode.answer.trim().toUpperCase() };
}

/** Multiple-choice accuracy over finished records: percent correct (null when none is multiple-choice), with the counts. */
export interface MultipleChoiceAccuracy {
  accuracy: number | null;
  correct: number;
  n: number;
  /** Replies in which no choice letter could be read (counted wrong). */
  unread: number;
}

export function multipleChoiceAccuracy(records: readonly { error: string | null; choice?: string | null; correct?: boolean | null }[]): MultipleChoiceAccuracy {
  const scored = records.filter((r) => r.error === null && typeof r.correct === "boolean");
  const correct = scored.filter((r) => r.correct === true).length;
  return { accuracy: scored.length === 0 ? null : (100 * correct) / scored.length, correct, n: scored.length, unread: scored.filter((r) => r.choice === null).length };
}

/** Reads HM-EQA's `questions.csv` (and `scene_init_poses.csv` beside it) as active episodes (see the module comment). */
export async function readHmEqaEpisodes(file: string): Promise<ActiveEpisode[]> {
  const questions = await loadHmEqaQuestions(file);
  const posesFile = join(dirname(file), HM_EQA_POSES_FILE);
  if (!existsSync(posesFile)) {
    throw new UserError("HM-EQA's start poses are missing", { file: posesFile }, `put HM-EQA's ${HM_EQA_POSES_FILE} beside ${file}`);
  }
  const poses = await loadHmEqaInitPoses(posesFile);
  return questions.map((q, index) => {
    const pose = findHmEqaInitPose(poses, q);
    if (!pose) throw new UserError(`no start pose for ${q.scene}_${q.floor}`, { file: posesFile, index, field: "scene_floor" }, `every scene and floor of ${file} needs a row in ${HM_EQA_POSES_FILE}`);
    return {
      questionId: `hm-eqa-${index}`,
      question: q.question,
      answer: q.answer,
      choices: q.choices,
      category: q.label,
      scene: q.scene,
      start: { position: pose.position, yaw: pose.angle, pitch: 0 },
    };
  });
}
