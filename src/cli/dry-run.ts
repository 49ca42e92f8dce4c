import { existsSync } from "node:fs";
import type { Command } from "commander";
import { CallPlan, checkPriceFile } from "../models/index.js";
import { ModelCallCache, defaultCachePath } from "../store/index.js";
import type { ModelCallFlags } from "./model-options.js";

/** `--dry-run`, as every command that calls models for a whole run takes it. */
export interface DryRunFlags {
  dryRun?: boolean;
}

export function addDryRunOption(command: Command): Command {
  return command.option("--dry-run", "print per role the calls the run would make, their estimated tokens and dollars, how many the model-call cache holds and how many records the run directory has; call no model, write nothing");
}

/**
 * A call plan whose requests are looked up in the model-call cache the run would use. The
 * cache is opened only when its file exists, so that a dry run makes nothing. Under `--batch`
 * the calls are priced at the batch price.
 */
export async function openCallPlan(flags: ModelCallFlags & { batch?: boolean }): Promise<{ plan: CallPlan; close(): void }> {
  checkPriceFile();
  const path = flags.cache === false ? null : typeof flags.cache === "string" ? flags.cache : defaultCachePath();
  const cache = path && existsSync(path) ? await ModelCallCache.open(path) : undefined;
  return { plan: new CallPlan(cache, { batch: flags.batch === true }), close: () => cache?.close() };
}

/** What a dry run of the answers says beside its table: records to resume, questions that would fail. */
export function answerPlanNotes(planned: { questions: number; reused: number; pending: number; failures: { questionId: string; error: string }[] }, outDir: string): string[] {
  const notes = [`${planned.questions} question(s): ${planned.reused} already answered in ${outDir}, ${planned.pending} to answer`];
  if (planned.failures.length > 0) notes.push(`${planned.failures.length} would fail before any call, e.g. ${planned.failures[0]!.questionId}: ${planned.failures[0]!.error}`);
  notes.push("calls that depend on the replies (force-a-guess's blind guess, re-asks, tool rounds) are counted as when each reply is read at the first try");
  return notes;
}
