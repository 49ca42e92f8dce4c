/**
 * The inputs of the LLM-Match tests that are checked against Python running OpenEQA's own code
 * (test/fixtures/llm-match-reference/): shared by the tests and by the script that computes the
 * stored reference outputs, so both see the same strings.
 */
import { createHash } from "node:crypto";
import type { Question } from "../../src/core/index.js";

/** Strings and their `repr` as CPython 3.11 prints it (computed with python3 and copied here). */
export const REPR_CASES: [string, string][] = [
  ["plain", "'plain'"],
  ["", "''"],
  ["it's", "\"it's\""],
  ['say "hi"', "'say \"hi\"'"],
  ["it's \"both\"", "'it\\'s \"both\"'"],
  ["back\\slash", "'back\\\\slash'"],
  ["back\\slash and it's", "\"back\\\\slash and it's\""],
  ["tab\there\nnew\rret", "'tab\\there\\nnew\\rret'"],
  ["café naïve 日本語", "'café naïve 日本語'"],
  ["bell\u0007 nul\u0000 esc\u001b del\u007f", "'bell\\x07 nul\\x00 esc\\x1b del\\x7f'"],
  ["nbsp\u00a0here", "'nbsp\\xa0here'"],
  ["line\u2028sep\u2029para", "'line\\u2028sep\\u2029para'"],
  ["emoji \u{1F642} family \u{1F468}\u200d\u{1F469}\u200d\u{1F467}", "'emoji \u{1F642} family \u{1F468}\\u200d\u{1F469}\\u200d\u{1F467}'"],
  ["zero\u200bwidth", "'zero\\u200bwidth'"],
  ["soft\u00adhyphen", "'soft\\xadhyphen'"],
  ["c1\u0085\u009f", "'c1\\x85\\x9f'"],
  ["bom\ufeff", "'bom\\ufeff'"],
  ["thin\u2009space\u3000ideo", "'thin\\u2009space\\u3000ideo'"],
  ["priv\ue000ate", "'priv\\ue000ate'"],
  ["\u{1D7CE} math", "'\u{1D7CE} math'"],
  ["'", "\"'\""],
  ['"', "'\"'"],
  ["'\"", "'\\'\"'"],
  ["\\'", "\"\\\\'\""],
];

export const TRICKY_PREDICTIONS: (string | null)[] = [
  "a clock",
  "{question}",
  "{answer} and {prediction} and {extra_answers}",
  "{{literal}} braces }{ {",
  "{0} {} {!r} {:>10} {question!s}",
  'it\'s a "red" mug',
  "multi\nline\r\nanswer\rwith returns",
  "tab\tseparated\vvertical\fform feed",
  "café, naïve, 日本語, Ελληνικά",
  "emoji \u{1F642} \u{1F468}\u200d\u{1F469}\u200d\u{1F467} and zero\u200bwidth",
  "nbsp\u00a0and\u2028line\u2029para\u0085next",
  "backslash \\ and \\n escaped \\u0041",
  "$& $1 $$ $' $`",
  "3.5 m",
  "It is about 3.5 m away. Probably",
  "Yes.",
  "a.b",
  "",
  "   ",
  "Your mark: 5",
  "\u0000\u0007\u001b\u007f control",
  "lone \ud800 surrogate",
  "None",
  "...",
  ". leading period",
  "\ufeffbyte order mark",
  null,
];

export function trickyPrediction(q: Question, index: number): string | null {
  const base = TRICKY_PREDICTIONS[index % TRICKY_PREDICTIONS.length]!;
  if (base === null) return null;
  // mix in the question's own words, with a sentence after a period for the reference's cut
  return index % 3 === 1 ? `${q.answer}. ${base}` : base;
}

export const PARSE_CASES: [string | null, number | undefined][] = [
  ["4", 4],
  ["1", 1],
  ["Your mark: 4", 4],
  ["Your mark: 4\nbecause the colours match", 4],
  ["  Your mark:  3 ", 3],
  ["Your mark:5", 5],
  ["Your mark: 4\r\n", 4],
  ["The response names the right object.\nYour mark: 2", 2],
  ["Your mark: 4/5", undefined],
  ["Your mark: 4.5", undefined],
  ["Your mark: four", undefined],
  ["Your mark: ", undefined],
  ["Your mark: 3 Your mark: 3", undefined],
  ["4\n", undefined],
  [" 4", undefined],
  ["Mark: 4", undefined],
  ["your mark: 4", undefined],
  ["", undefined],
  [null, undefined],
  ["Your mark: 7", 7],
  ["Your mark: 0", 0],
  ["Your mark: -1", -1],
  ["Your mark: +2", 2],
  ["Your mark: 1_0", 10],
  ["12", 12],
  // int() reads any Unicode decimal digit, and str.isdigit() is true for them
  ["\u0664", 4],
  ["Your mark: \uff14", 4],
  // superscript two is a digit to isdigit() but not to int(): the reference raises
  ["\u00b2", undefined],
  // int() strips Python white space, which U+FEFF is not
  ["Your mark: 4\ufeff", undefined],
  ["Your mark: 4\u3000", 4],
];

/** The lists whose `str(list)` Python printed. */
export function reprLists(): string[][] {
  return [...REPR_CASES.map(([text]) => [text]), REPR_CASES.map(([text]) => text), [], ["{question}", "{{}}", "%s"]];
}

/** Judge replies whose reading by the reference's parse_score is stored. */
export function parseReplies(): string[] {
  const replies = PARSE_CASES.map(([reply]) => reply).filter((reply): reply is string => reply !== null);
  replies.push("Your mark: 5 (perfect)", "5 - perfect match", "Your mark:\n5", "Your mark: 3\nYour mark: 4", "Your mark: \u0661\u0660", "Your mark: 0004");
  return replies;
}

/** OpenEQA-format records whose extra answers hold quotes, escapes and unicode. */
export function syntheticRecords(): { question_id: string; question: string; answer: string; category: string; episode_history: string; extra_answers?: string[] }[] {
  const texts = REPR_CASES.map(([text]) => text);
  return [
    ...texts.map((text, i) => ({
      question_id: `s${i}`,
      question: `Where is it? ${text}`,
      answer: `${text} {answer}`,
      category: "object localization",
      episode_history: "scannet-v0/002-scannet-scene0709_00",
      extra_answers: [text, `${text}'s`, `"${text}"`],
    })),
    { question_id: "all", question: "q", answer: "a", category: "object localization", episode_history: "hm3d-v0/x", extra_answers: texts },
    { question_id: "empty", question: "q", answer: "a", category: "object localization", episode_history: "hm3d-v0/x", extra_answers: [] },
    { question_id: "none", question: "{question} {{", answer: "}} {answer}", category: "world knowledge", episode_history: "hm3d-v0/x" },
  ];
}

/** The synthetic records' predictions: each record gets one of the tricky strings. */
export function syntheticPredictions(): Record<string, string> {
  const texts = REPR_CASES.map(([text]) => text);
  return Object.fromEntries(syntheticRecords().map((r, i) => [r.question_id, texts[i % texts.length]!]));
}

/** A digest of a string's UTF-16 code units (a lone surrogate included), as the generator computes it in Python. */
export function utf16Digest(text: string): string {
  return createHash("sha256").update(Buffer.from(text, "utf16le")).digest("hex");
}
