import { join } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { BATCH_LIMITS, BATCH_PROVIDERS, checkBatchSupport, fillCacheByBatch, type BatchCollector, type BatchRunReport, type ModelSpec } from "../models/index.js";
import { RunDirectory } from "../store/index.js";
import { finiteNumber, positiveInteger, positiveSeconds } from "./options.js";
import { openModelRuntime, type ModelCallFlags, type OpenedRuntime } from "./model-options.js";

/** `--batch`, `--batch-poll-seconds` and the limits of one batch, as every command that can send its calls as one batch takes them. */
export interface BatchFlags {
  batch?: boolean;
  batchPollSeconds: number;
  batchMaxRequests?: number;
  batchMaxMb?: number;
}

function positiveMegabytes(value: string): number {
  const n = finiteNumber(value);
  if (n <= 0) throw new InvalidArgumentError("expected a number of megabytes above 0");
  return n;
}

/** The model-call cache of a `--batch` run under `--no-cache`: the batch's replies must be kept somewhere. */
export const RUN_BATCH_CACHE = "batch-cache.sqlite";

export function addBatchOptions(command: Command): Command {
  return command
    .option("--batch", `send the calls as one batch through the provider's batch API (${BATCH_PROVIDERS.join(", ")}; half the price, results within 24 h; split into parts beyond the provider's limits), wait for it, then record the run as usual; a stopped run picks its batches up again`)
    .option("--batch-poll-seconds <seconds>", "with --batch: seconds between polls of the batch at first (the wait grows to ten times that)", positiveSeconds, 30)
    .option("--batch-max-requests <n>", `with --batch: most requests in one batch; more are split into parts (default the provider's limit: OpenAI ${BATCH_LIMITS.openai.maxRequests.toLocaleString("en-US")}, Anthropic ${BATCH_LIMITS.anthropic.maxRequests.toLocaleString("en-US")})`, positiveInteger)
    .option("--batch-max-mb <mb>", `with --batch: most megabytes (10^6 bytes) of requests in one batch; more are split into parts (default the provider's limit: OpenAI ${BATCH_LIMITS.openai.maxBytes / 1e6}, Anthropic ${BATCH_LIMITS.anthropic.maxBytes / 1e6})`, positiveMegabytes);
}

/**
 * The runtime of a `--batch` run, after its batch: the model-call cache (the run directory's
 * own under `--no-cache`) holds every reply the batch gave, so the run that follows reads
 * them as cache hits. Each reply of the batch is a call of `role` in the run's ledger, billed
 * at the batch price. `collect` runs the command's planning function with the collector.
 */
export async function runBatch(
  flags: ModelCallFlags & BatchFlags,
  spec: ModelSpec,
  role: string,
  outDir: string,
  collect: (collector: BatchCollector) => Promise<unknown>,
): Promise<{ opened: OpenedRuntime; report: BatchRunReport }> {
  checkBatchSupport(spec);
  const run = new RunDirectory(outDir);
  const opened = await openModelRuntime(flags.cache === false ? { ...flags, cache: join(run.path, RUN_BATCH_CACHE) } : flags);
  opened.runtime.usage.attach(run.path);
  try {
    const report = await fillCacheByBatch({
      spec,
      cache: opened.cache!,
      runDir: run.path,
      collect,
      pollSeconds: flags.batchPollSeconds,
      limits: {
        ...(flags.batchMaxRequests !== undefined ? { maxRequests: flags.batchMaxRequests } : {}),
        ...(flags.batchMaxMb !== undefined ? { maxBytes: Math.floor(flags.batchMaxMb * 1e6) } : {}),
      },
      log: (line) => console.error(line),
      onCall: (call) => opened.runtime.usage.record({ ...call, role }),
    });
    return { opened, report };
  } catch (error) {
    opened.close();
    throw error;
  }
}
