/**
 * Judge replies that could not be read (no mark in an LLM-Match reply, no δ, σ in an EAC reply, no
 * structure in the TAG-EQA judge's JSON, no action in a force-a-guess verdict). They are failures
 * of the judge, not of the agent's answer: every run that judges counts them apart from the
 * answers it scored and from the calls that failed, and names each; a run whose judge could not be
 * read for more than a tenth of its questions exits 1 (a judge that does not follow its prompt
 * makes the scores meaningless, however many there are). Force-a-guess verdicts are counted and
 * named the same way; they change no exit code (the answers they could not classify are kept).
 */

/** One question whose judge reply could not be read. */
export interface UnreadableReply {
  questionId: string;
  /** Which judgement: "llm-match", "eac", "tag-structured" or "force-guess". */
  judge: string;
  /** Why the reply could not be read. */
  error: string;
  /** The judge's raw replies (the first and any re-asks). */
  replies: (string | null)[];
}

/** The unreadable judge replies of a run, as every summary that judges records them (`judgeUnreadable`). */
export interface JudgeUnreadable {
  /** Questions with an unreadable judge reply. */
  count: number;
  /** Questions judged (the denominator of the share). */
  of: number;
  /** More than a tenth of the questions judged: a judging command (score, score-tag, explore --judge, demo, run) exits 1. */
  overLimit: boolean;
  items: UnreadableReply[];
}

/** The share of unreadable judge replies above which a run exits 1. */
export const UNREADABLE_LIMIT = 0.1;

/** Counts `items` among `of` questions judged (each question once, whichever of its judges could not be read). */
export function judgeUnreadable(items: readonly UnreadableReply[], of: number): JudgeUnreadable {
  const count = new Set(items.map((i) => i.questionId)).size;
  return { count, of, overLimit: of > 0 && count > UNREADABLE_LIMIT * of, items: [...items] };
}

/**
 * "the judge's replies could not be read for 3 of 48 questions (first: q1, llm-match: …)", or ""
 * when none; with "more than 10%: exit 1" when over the limit and `exits` (the command exits 1 for it).
 */
export function formatJudgeUnreadable(unreadable: JudgeUnreadable | undefined, label = "the judge's replies", exits = true): string {
  if (!unreadable || unreadable.count === 0) return "";
  const first = unreadable.items[0]!;
  const limit = unreadable.overLimit && exits ? `, more than ${100 * UNREADABLE_LIMIT}%: exit 1` : "";
  return `${label} could not be read for ${unreadable.count} of ${unreadable.of} questions${limit} (first: ${first.questionId}, ${first.judge}: ${first.error})`;
}
