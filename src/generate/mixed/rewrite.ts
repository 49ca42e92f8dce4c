/**
 * `--rewrite MODEL` for Mixed EQA sets: the same LLM renderer as TAG-EQA sets (`rewriteJobs`:
 * the same prompts, examples from the training split per category, the same checks of a reply,
 * `rewrites.jsonl` reused by a later run), each question's program shown as its structured
 * question and its answer value as its structured answer. A rewritten answer joins the answer's
 * alternatives; the answer value and the program stay as generated.
 */
import type { MixedEpisode } from "../../data/index.js";
import { rewriteJobs, type RewriteJob, type RewriteOptions, type RewriteSummary } from "../rewrite.js";

export function mixedRewriteJob(episode: MixedEpisode): RewriteJob {
  return {
    id: episode.question_id,
    queryType: episode.category,
    structuredQuestion: JSON.stringify(episode.program),
    structuredAnswer: episode.answer_value,
    question: episode.question,
    answer: episode.answer,
    apply: (text) => {
      episode.question = text.question;
      episode.answer = text.answer;
      if (!episode.alternatives.includes(text.answer)) episode.alternatives.push(text.answer);
    },
  };
}

/** Rewrites the episodes' questions and answers in place. */
export async function rewriteMixedEpisodes(episodes: MixedEpisode[], options: RewriteOptions): Promise<RewriteSummary> {
  return rewriteJobs(episodes.map(mixedRewriteJob), new Set(episodes.filter((e) => e.split === "train").map((e) => e.question_id)), options);
}
