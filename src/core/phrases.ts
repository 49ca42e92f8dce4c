/**
 * Phrases that messages build from a name: "an explore run", "a tag-structured run", "the judge
 * model", "the model". One place, so that no message says "a explore run" or "the model model".
 */

/**
 * `noun` with its indefinite article, as it is read aloud: "an explore", "an llm-match" (an
 * initialism read letter by letter: "el"), "an rm-score", "a tag-structured", "a memory".
 */
export function indefinite(noun: string): string {
  return `${startsWithVowelSound(noun) ? "an" : "a"} ${noun}`;
}

/** Letters whose names start with a vowel sound: "an L", "an R", "an S". */
const VOWEL_SOUNDING_LETTERS = "aefhilmnorsx";

function startsWithVowelSound(noun: string): boolean {
  const word = noun.trim().toLowerCase();
  const head = /^[a-z0-9]+/.exec(word)?.[0] ?? "";
  if (head === "") return false;
  // numbers read aloud: "an 8×3 matrix", "an 11", "an 18,000"
  if (/^\d/.test(head)) return /^8/.test(head) || /^1[18](\d{3})*$/.test(head);
  // an initialism (no vowel: llm, rm, hm, vlm) is read letter by letter
  if (!/[aeiouy]/.test(head) && /^[a-z]/.test(head)) return VOWEL_SOUNDING_LETTERS.includes(head[0]!);
  // "a user", "a unit", "a one-off": a vowel letter read as a consonant
  if (/^(u[bcfhjkst][aeiou]|uni|use|usu|ure|one\b|once)/.test(head)) return false;
  return /^[aeiou]/.test(head);
}

/** A model role's model as a sentence names it: "the judge model", and for the role named `model` itself "the model". */
export function roleModelPhrase(role: string): string {
  return role === "model" ? "the model" : `the ${role} model`;
}

/** "a run of kind explore" as messages say it: "an explore run". */
export function runOfKind(kind: string): string {
  return `${indefinite(kind)} run`;
}
