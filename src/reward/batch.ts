import { existsSync } from "node:fs";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallPlan } from "../models/index.js";
import { EVALUATIONS_FILE, sampleRewardModel, type RmScoreOptions } from "./score-run.js";

/**
 * `eqa rm score --batch`: records, in `plan`, the reward model's request for every sample the
 * run directory has not evaluated yet, built by sampleRewardModel itself. It runs in a
 * throwaway copy of the run directory's evaluations (removed afterwards), so that the
 * recording model's replies are never written where the run keeps its records. Calls no model.
 */
export async function planRewardScores(options: Omit<RmScoreOptions, "model" | "usage" | "onProgress">, plan: CallPlan): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "eqakit-rm-plan-"));
  try {
    const earlier = join(options.outDir, EVALUATIONS_FILE);
    if (existsSync(earlier)) await copyFile(earlier, join(scratch, EVALUATIONS_FILE));
    await sampleRewardModel({ ...options, model: plan.model(options.spec, "reward model"), outDir: scratch });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
