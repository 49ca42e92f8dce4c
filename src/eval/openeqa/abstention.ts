import { llmMatchPoints } from "./aggregate.js";
import { bootstrapMean, type BootstrapOptions, type MeanEstimate } from "../stats.js";

/** What force-a-guess decided for one question, as an answer run's trace records it. */
export interface ForceGuessOutcome {
  questionId: string;
  /** guess: the answer abstained and the blind LLM's guess replaced it; keep / unreadable: the answer stayed. */
  action: "guess" | "keep" | "unreadable";
}

/** One agent's row of OpenEQA Table III. */
export interface AbstentionRow {
  /** Answers the force-a-guess classifier looked at. */
  checked: number;
  abstained: number;
  /** abstained / checked (null when nothing was checked). */
  rate: number | null;
  /** LLM-Match of the answers as submitted (abstentions replaced by the blind guess). */
  withGuess: MeanEstimate | null;
  /** LLM-Match of the agent's own answers (abstentions kept), when they were scored (`eqa score --without-guess`). */
  withoutGuess: MeanEstimate | null;
  /** withoutGuess − withGuess, in points. */
  difference: number | null;
}

/**
 * OpenEQA Table III from force-a-guess traces: the abstention rate, and LLM-Match with and
 * without forcing a guess, each over the questions both score sets have.
 */
export function abstentionAnalysis(
  outcomes: readonly ForceGuessOutcome[],
  withGuess: ReadonlyMap<string, number> | undefined,
  withoutGuess: ReadonlyMap<string, number> | undefined,
  bootstrap: BootstrapOptions = {},
): AbstentionRow {
  const checked = outcomes.length;
  const abstained = outcomes.filter((o) => o.action === "guess").length;
  const ids = [...(withGuess?.keys() ?? [])].filter((id) => withoutGuess === undefined || withoutGuess.has(id));
  const estimate = (scores: ReadonlyMap<string, number> | undefined): MeanEstimate | null =>
    scores && ids.length > 0 ? bootstrapMean(ids.map((id) => llmMatchPoints(scores.get(id)!)), bootstrap) : null;
  const withEstimate = estimate(withGuess);
  const withoutEstimate = estimate(withoutGuess);
  return {
    checked,
    abstained,
    rate: checked > 0 ? abstained / checked : null,
    withGuess: withEstimate,
    withoutGuess: withoutEstimate,
    difference: withEstimate && withoutEstimate ? withoutEstimate.mean - withEstimate.mean : null,
  };
}
