/**
 * LA-EQA's own judge prompt, sent instead of eqakit's (`eqa score --prompts original` on an LA-EQA
 * question file). The reference writes it inline in `eqa_evaluation.py`
 * (`evaluate_answer_accuracy`: string literals and the question's fields joined with `+`) and the
 * repository has no licence, so eqakit ships a prompt of its own for the same job
 * (`prompts/la-eqa-judge.txt`) and reads the original from the file `eqa data fetch la-eqa`
 * downloads, checked by its SHA-256.
 *
 * The literals become a `str.format` template whose fields are eqakit's prompt's: `self.question`
 * → `{question}`, `self.GT_A_answer` → `{answer}`, `answer` → `{response}`; the extra answers are
 * the sentence `__init__` sets when none are given (the reference's script gives none), written in.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError, promptFileFrom, type PromptFile } from "../../core/index.js";
import { KNOWN_DATASETS, checkKnownFile, defaultDatasetDir } from "../../data/index.js";
import { LA_EQA_JUDGE_PROMPT } from "./judge.js";

const FIELDS: Record<string, string | undefined> = { "self.question": "question", "self.GT_A_answer": "answer", answer: "response" };
const EXTRA_ANSWERS = "self.GT_A_additional_answers";

/**
 * LA-EQA's judge prompt from `dir` (where `eqa data fetch la-eqa` put `eqa_evaluation.py`; its
 * default folder when absent), as the prompt eqakit's judge sends in place of its own.
 */
export function readLaEqaOriginalPrompt(dir: string = defaultDatasetDir("la-eqa")): PromptFile {
  const known = KNOWN_DATASETS["la-eqa"]!.files.evaluation!;
  const path = join(dir, known.name);
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    throw new UserError("LA-EQA's evaluation code is missing", { file: path }, "run eqa data fetch la-eqa (with --out DIR, pass --prompts DIR)");
  }
  const check = checkKnownFile(known, data);
  if (!check.ok) throw new UserError(check.problem, { file: path }, "this is not the benchmark's file: run eqa data fetch la-eqa again");
  return promptFileFrom(LA_EQA_JUDGE_PROMPT, laEqaPromptTemplate(data.toString("utf8"), path), path);
}

/** The judge prompt of `eqa_evaluation.py`'s source as a `str.format` template (literal braces doubled). */
export function laEqaPromptTemplate(source: string, path: string): string {
  const block = /def evaluate_answer_accuracy\b[\s\S]*?\bprompt\s*=\s*\(([\s\S]*?)\n\s*\)\s*\n/.exec(source)?.[1];
  const noExtra = /if GT_A_additional_answers is None:\s*\n\s*self\.GT_A_additional_answers\s*=\s*("(?:[^"\\\n]|\\.)*")/.exec(source)?.[1];
  if (block === undefined || noExtra === undefined) throw new UserError("the judge prompt was not found in the evaluation code", { file: path }, "run eqa data fetch la-eqa again");
  const escape = (text: string): string => text.replace(/[{}]/g, (b) => b + b);
  let template = "";
  const token = /\s*(?:("(?:[^"\\\n]|\\.)*")|(\+)|([A-Za-z_][\w.]*))/y;
  let at = 0;
  while (at < block.trimEnd().length) {
    token.lastIndex = at;
    const match = token.exec(block);
    if (!match) throw new UserError(`unexpected text in the judge prompt: ${JSON.stringify(block.slice(at, at + 30))}`, { file: path });
    at = token.lastIndex;
    const [, literal, , name] = match;
    if (literal !== undefined) template += escape(pythonStringLiteral(literal));
    else if (name === EXTRA_ANSWERS) template += escape(pythonStringLiteral(noExtra));
    else if (name !== undefined) {
      const field = FIELDS[name];
      if (!field) throw new UserError(`unexpected name in the judge prompt: ${name}`, { file: path });
      template += `{${field}}`;
    }
  }
  return template;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'", "\n": "" };

/** The value of a double-quoted Python string literal (no prefix): its escapes, and an unknown one kept as written. */
function pythonStringLiteral(literal: string): string {
  return literal.slice(1, -1).replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[\s\S])/g, (whole, escape: string) => {
    if (escape.length > 1) return String.fromCharCode(parseInt(escape.slice(1), 16));
    return ESCAPES[escape] ?? whole;
  });
}
