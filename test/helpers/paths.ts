import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The real reference data beside the project. */
export const sharedData = resolve(projectRoot, "..", "shared", "data");
export const openEqaBenchmarkFile = join(sharedData, "openeqa", "open-eqa-v0.json");
export const openEqaSubsetFile = join(sharedData, "openeqa", "open-eqa-v0-184-questions.json");
export const pr15Dir = join(sharedData, "openeqa", "third_party", "open-eqa-pr15");

export function temporaryDir(prefix = "eqakit-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A record of `open-eqa-v0.json` as the file spells it. */
export interface RawOpenEqaQuestion {
  question_id: string;
  question: string;
  answer: string;
  category: string;
  episode_history: string;
  extra_answers?: string[];
}

export function readRawBenchmark(): RawOpenEqaQuestion[] {
  return JSON.parse(readFileSync(openEqaBenchmarkFile, "utf8")) as RawOpenEqaQuestion[];
}
