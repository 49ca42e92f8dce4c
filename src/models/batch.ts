import { UserError, forEachConcurrent } from "../core/index.js";
import { ModelCallError } from "./errors.js";
import { withCallContext } from "./ledger.js";
import type { ModelSpec } from "./names.js";

export interface ModelBatchOptions<T, R> {
  items: readonly T[];
  /** Items worked on at once; the endpoint's scheduler limits the calls in flight. */
  concurrency: number;
  work: (item: T) => Promise<R>;
  /** The record of an item whose model call failed for good (the others go on). */
  failed: (item: T, error: ModelCallError) => R;
  /** Called as each item finishes, successfully or not, to append its record at once. */
  finished: (item: T, result: R) => void;
  /** Named in the error when a call shows the configuration is wrong. */
  models: readonly ModelSpec[];
  /** The item's id (question, episode), recorded with each of its model calls in the run's ledger. */
  itemId?: (item: T) => string;
}

/**
 * Runs model-backed work over many items: a failed call fails its item alone, but an
 * unreachable endpoint, a refused key or an unknown model (every further call would fail
 * the same way) stops new items, lets those in flight finish, and throws a UserError.
 */
export async function runModelBatch<T, R>(options: ModelBatchOptions<T, R>): Promise<void> {
  let fatal: ModelCallError | undefined;
  await forEachConcurrent(
    options.items,
    options.concurrency,
    async (item) => {
      let result: R;
      try {
        const itemId = options.itemId;
        result = itemId ? await withCallContext({ item: itemId(item) }, () => options.work(item)) : await options.work(item);
      } catch (error) {
        if (!(error instanceof ModelCallError)) throw error;
        if (error.fatalForRun) {
          fatal ??= error;
          return;
        }
        result = options.failed(item, error);
      }
      options.finished(item, result);
    },
    () => fatal !== undefined,
  );
  if (fatal) throw unusableModelError(fatal, options.models);
}

function unusableModelError(error: ModelCallError, models: readonly ModelSpec[]): UserError {
  const spec = models.find((m) => m.baseURL === error.endpoint) ?? models[0];
  const name = spec?.name ?? error.endpoint;
  let hint = `is the server running at ${error.endpoint}? Set the --…-base-url flag or the provider's *_BASE_URL variable to reach another one`;
  if (error.kind === "auth") hint = `check the API key for ${spec?.provider ?? "the provider"} (it was refused by ${error.endpoint})`;
  if (error.kind === "not_found") hint = `check the model name "${spec?.model ?? name}" and the base URL ${error.endpoint}`;
  if (error.kind === "quota") hint = `the account behind ${error.endpoint} has no credits left: top it up (or raise its limit), then run the same command again: every finished item is kept`;
  return new UserError(`the model ${name} cannot be used: ${error.message}`, {}, hint);
}
