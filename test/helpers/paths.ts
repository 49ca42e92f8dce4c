import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Small copies of public files and synthetic files of the same formats, each folder with its SOURCE.md. */
export const fixturesDir = join(projectRoot, "test", "fixtures");
/** OpenEQA's files (MIT): the benchmark, the A-EQA subset, the demo episode, prompts, third-party results. */
export const openEqaDir = join(fixturesDir, "openeqa");
export const openEqaBenchmarkFile = join(openEqaDir, "open-eqa-v0.json");
export const openEqaSubsetFile = join(openEqaDir, "open-eqa-v0-184-questions.json");
export const openEqaPromptsDir = join(openEqaDir, "prompts");
export const pr15Dir = join(openEqaDir, "third_party", "open-eqa-pr15");
export const alfredDir = join(fixturesDir, "alfred");
export const expressBenchDir = join(fixturesDir, "express-bench");
export const hmEqaDir = join(fixturesDir, "hm-eqa");

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
