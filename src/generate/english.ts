/**
 * The English checker of generated question sets: flags the classes of error a template or a
 * rewriting model makes, so that a whole set can be measured (`eqa generate tag` reports the
 * counts in stats.json; bench/alfred.ts over the ALFRED set).
 *
 * - `plural`: a plural no English noun has ("kknives", "tomatos", "knifes", "shelfs").
 * - `doubled-word`: the same word twice in a row ("a soap soap bar"); numbers aside.
 * - `food-material`: "food" used as a material or colour-like adjective ("a food egg", "made of
 *   food", "What food objects"), not as the object of a use ("used for holding food").
 * - `tense`: a question about the past (a moment, "did you") that describes its objects in the
 *   present ("that is open", "are there"), or one in the present that refers to a moment.
 * - `answer-tense`: an answer whose tense is not its question's ("How many laptops were there …
 *   right after you picked up the basketball?" → "There is 1: …").
 * - `split-compound`: a type name cut where English writes one word ("basket ball", "arm chair",
 *   "counter top"), or an initialism in lower case ("cds", "tv").
 */

export const ENGLISH_ISSUES = ["plural", "doubled-word", "food-material", "tense", "answer-tense", "split-compound"] as const;
export type EnglishIssue = (typeof ENGLISH_ISSUES)[number];

const BAD_PLURALS = [
  /\b(\w)\1\w*ves\b/i, // "kknives"
  /\b\w*(?:tomato|potato|echo|hero)s\b/i,
  /\b\w*(?:knife|shelf|leaf|loaf|wife|wolf)s\b/i,
  /\b\w*(?:ss|sh|ch|x)s\b/i, // "glasss", "boxs"
];

/** Words before "food" that make it the object of a use or an action, not a material. */
const FOOD_OBJECT_OF = new Set(["holding", "serving", "heating", "seasoning", "turning", "keeping", "cooking", "as", "of", "storing", "frying", "eating", "the", "some", "for", "with", "cutting", "warming", "cold"]);

const MOMENT = /\b(?:before|after|between the moment|right before|right after) you\b/i;
const PAST_FRAME = /\bdid you\b|^(?:was|were)\b|\b(?:was|were) (?:there|the)\b/i;
const PRESENT = /\b(?:that|which) (?:is|are)\b|\b(?:is|are) there\b|^(?:is|are)\b|\b(?:what|where|how) (?:is|are)\b|\bwhat colour (?:is|are)\b/i;

const SPLIT_COMPOUND = /\b(?:basket ball|arm chair|counter top)s?\b|\b(?:cds?|tvs?)\b/;

function isPastQuestion(question: string): boolean {
  return MOMENT.test(question) || PAST_FRAME.test(question);
}

/**
 * The issues of one text (a question or an answer); `question` enables the tense check of a
 * question, `answerTo` (the question it answers) that of an answer.
 */
export function checkEnglish(text: string, options: { question?: boolean; answerTo?: string } = {}): EnglishIssue[] {
  const issues: EnglishIssue[] = [];
  if (BAD_PLURALS.some((r) => r.test(text))) issues.push("plural");
  if (/\b([a-z]+)\s+\1\b/i.test(text.replace(/\([^)]*\)/g, " "))) issues.push("doubled-word");
  if (foodAsMaterial(text)) issues.push("food-material");
  if (options.question && isPastQuestion(text) && PRESENT.test(text)) issues.push("tense");
  if (options.answerTo !== undefined && (isPastQuestion(options.answerTo) ? /\bthere (?:is|are)\b/i : /\bthere (?:was|were)\b/i).test(text)) issues.push("answer-tense");
  if (SPLIT_COMPOUND.test(text)) issues.push("split-compound");
  return issues;
}

function foodAsMaterial(text: string): boolean {
  // "made of food", or "food" given alone as a value ("Food (the egg …)." or "… made of? Food.")
  if (/\bmade of food\b/i.test(text) || /(?:^|[.?!:;]\s*)food\s*(?:[.(;]|$)/i.test(text)) return true;
  for (const m of text.matchAll(/(\w+)\s+food\b(?!\s+(?:with|in|cold|and)\b)/gi)) {
    if (!FOOD_OBJECT_OF.has(m[1]!.toLowerCase())) return true;
  }
  return false;
}

export interface EnglishReport {
  /** Texts checked (questions and answers, grounded forms included). */
  texts: number;
  /** Texts with each issue. */
  counts: Record<EnglishIssue, number>;
  /** Up to five examples of each issue. */
  examples: Record<EnglishIssue, string[]>;
}

/** Checks every question and answer text of a set (grounded forms included). */
export function checkEnglishSet(items: readonly { question: string; answer: string; grounded: { question: string; answer: string } | null }[]): EnglishReport {
  const counts = Object.fromEntries(ENGLISH_ISSUES.map((k) => [k, 0])) as Record<EnglishIssue, number>;
  const examples = Object.fromEntries(ENGLISH_ISSUES.map((k) => [k, [] as string[]])) as Record<EnglishIssue, string[]>;
  let texts = 0;
  const check = (text: string, question: boolean, answerTo?: string): void => {
    texts++;
    for (const issue of checkEnglish(text, { question, ...(answerTo !== undefined ? { answerTo } : {}) })) {
      counts[issue]++;
      if (examples[issue].length < 5) examples[issue].push(text);
    }
  };
  for (const item of items) {
    check(item.question, true);
    check(item.answer, false, item.question);
    if (item.grounded) {
      check(item.grounded.question, true);
      check(item.grounded.answer, false, item.grounded.question);
    }
  }
  return { texts, counts, examples };
}
