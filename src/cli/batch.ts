import { join } from "node:path";
import type { Command } from "commander";
import { BATCH_PROVIDERS, checkBatchSupport, fillCacheByBatch, type BatchCollector, type BatchRunReport, type ModelSpec } from "../models/index.js";
import { RunDirectory } from "../store/index.js";
import { openModelRuntime, positiveSeconds, type ModelCallFlags, type OpenedRuntime } from "./options.js";

/** `--batch` and `--batch-poll-seconds`, as every command that can send its calls as one batch takes them. */
export interface BatchFlags {
  batch?: boolean;
  batchPollSeconds: number;
}

/** The model-call cache of a `--batch` run under `--no-cache`: the batch's replies must be kept somewhere. */
export const RUN_BATCH_CACHE = "batch-cache.sqlite";

export function addBatchOptions(command: Command): Command {
  return command
    .option("--batch", `send the calls as one batch through the provider's batch API (${BATCH_PROVIDERS.join(", ")}; half the price, results within 24 h), wait for it, then record the run as usual; a stopped run picks its batch up again`)
    .option("--batch-poll-seconds <seconds>", "with --batch: seconds between polls of the batch at first (the wait grows to ten times that)", positiveSeconds, 30);
}

/**
 * The runtime of a `--batch` run, after its batch: the model-call cache (the run directory's
 * own under `--no-cache`) holds every reply the batch gave, so the run that follows reads
 * them as cache hits. `collect` runs the command's planning function with the collector.
 */
export async function runBatch(
  flags: ModelCallFlags & BatchFlags,
  spec: ModelSpec,
  outDir: string,
  collect: (collector: BatchCollector) => Promise<unknown>,
): Promise<{ opened: OpenedRuntime; report: BatchRunReport }> {
  checkBatchSupport(spec);
  const run = new RunDirectory(outDir);
  const opened = await openModelRuntime(flags.cache === false ? { ...flags, cache: join(run.path, RUN_BATCH_CACHE) } : flags);
  try {
    const report = await fillCacheByBatch({
      spec,
      cache: opened.cache!,
      runDir: run.path,
      collect,
      pollSeconds: flags.batchPollSeconds,
      log: (line) => console.error(line),
    });
    return { opened, report };
  } catch (error) {
    opened.close();
    throw error;
  }
}
