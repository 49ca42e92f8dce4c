/**
 * Reading a yes/no reply's log-probabilities (`GenerationParams.logprobs`) as the probability
 * the model gave "yes".
 */
import type { TokenLogprob } from "./types.js";

/** A token as a yes/no word: letters only, lower-cased ("Yes", " yes", "YES." all read as "yes"). */
function word(token: string): string {
  return token.toLowerCase().replace(/[^a-z]/g, "");
}

/**
 * P(yes) of a yes/no reply: at the first token that reads as "yes" or "no" (case, spaces and
 * punctuation aside), the probabilities of that position's alternatives reading as yes and as no
 * are summed (the chosen token counts when the alternatives do not list it), and
 * P(yes) = yes / (yes + no), as explore-eqa reads its VLM's yes/no logits. Undefined when no token
 * reads as yes or no.
 */
export function yesProbability(tokens: readonly TokenLogprob[]): number | undefined {
  for (const token of tokens) {
    const chosen = word(token.token);
    if (chosen !== "yes" && chosen !== "no") continue;
    const alternatives = token.top.some((t) => t.token === token.token) ? token.top : [{ token: token.token, logprob: token.logprob }, ...token.top];
    let yes = 0;
    let no = 0;
    for (const t of alternatives) {
      const w = word(t.token);
      if (w === "yes") yes += Math.exp(t.logprob);
      else if (w === "no") no += Math.exp(t.logprob);
    }
    return yes + no > 0 ? yes / (yes + no) : undefined;
  }
  return undefined;
}
