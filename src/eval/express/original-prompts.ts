/**
 * EXPRESS-Bench's own prompt files, sent instead of eqakit's (`eqa explore --prompts original`).
 *
 * The benchmark publishes its prompts without a licence, so eqakit ships prompts of its own for
 * the same jobs (`prompts/fine-eqa-*.txt`, `prompts/eac-judge.txt`: the same inputs, the same
 * reply format, read by the same parsers). `eqa data fetch express-bench` downloads the
 * originals into the data folder; `readExpressOriginalPrompts` checks each against its known
 * SHA-256, and a run sends them in place of eqakit's prompts within `withPromptFiles` (`exploreAndJudge`'s `prompts`):
 *
 *   prompt/region.txt        → fine-eqa-regions       (the question's regions)
 *   prompt/explore.txt       → fine-eqa-stop-check    (is the view enough?)
 *   prompt/answer.txt        → fine-eqa-answer        (the answer from the view)
 *   prompt/random_answer.txt → fine-eqa-blind-answer  (the blind answer)
 *   prompt/evaluation.txt    → eac-judge              (the EAC judge)
 *
 * The view-region question has no file of the benchmark's (its `main.py` writes it inline for a
 * local VLM's letter likelihoods): `fine-eqa-view-region` stays eqakit's own in both modes.
 * Both Fine-EQA modes (`fine-eqa`, `fine-eqa:reference`) and the judge take the originals; the
 * run's prompt hashes (summary, resume keys) are theirs, so a run never mixes the two sets.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError, promptFileFrom, type PromptFile } from "../../core/index.js";
import { FINE_EQA_PROMPTS } from "../../agents/index.js";
import { KNOWN_DATASETS, checkKnownFile, defaultDatasetDir } from "../../data/index.js";
import { EAC_PROMPT } from "./eac.js";

/** eqakit's prompt each original replaces, by the file's key in `KNOWN_DATASETS["express-bench"]`. */
export const EXPRESS_ORIGINAL_PROMPTS = {
  region: FINE_EQA_PROMPTS.region,
  explore: FINE_EQA_PROMPTS.explore,
  answer: FINE_EQA_PROMPTS.answer,
  randomAnswer: FINE_EQA_PROMPTS.blind,
  evaluation: EAC_PROMPT,
} as const;

/**
 * EXPRESS-Bench's own prompt files, from `dir` (where `eqa data fetch express-bench` put them;
 * its default folder when absent), each named after the eqakit prompt it replaces. A missing or
 * changed file is a UserError naming it and `eqa data fetch express-bench`.
 */
export function readExpressOriginalPrompts(dir: string = defaultDatasetDir("express-bench")): PromptFile[] {
  const files = KNOWN_DATASETS["express-bench"]!.files;
  const read = Object.entries(EXPRESS_ORIGINAL_PROMPTS).map(([key, name]) => {
    const known = files[key]!;
    const path = join(dir, known.name);
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch {
      throw new UserError("EXPRESS-Bench's prompt file is missing", { file: path }, "run eqa data fetch express-bench (with --out DIR, pass --prompts DIR)");
    }
    const check = checkKnownFile(known, data);
    if (!check.ok) throw new UserError(check.problem, { file: path }, "this is not the benchmark's file: run eqa data fetch express-bench again");
    return { name, text: data.toString("utf8"), path };
  });
  return read.map((r) => promptFileFrom(r.name, r.text, r.path));
}
