import type { Command } from "commander";
import { checkPriceFile, type BatchCollector, type BatchRunReport, type ModelSpec } from "../models/index.js";
import { checkRun, type RunContract } from "../store/index.js";
import { modelCallSettings, openModelRuntime, resolveRoleModel, type OpenedRuntime } from "./model-options.js";
import { createProgress, createStageProgress, type ProgressReporter } from "./progress.js";
import { runBatch, type BatchFlags } from "./batch.js";
import type { LifecycleFlags } from "./lifecycle.js";

/** A runtime opened by `--batch`: its replies fill the cache the run then reads. */
export interface BatchedRuntime extends OpenedRuntime {
  report: BatchRunReport;
}

/**
 * What a command's `prepare`, `plan` and `run` are given: the flags, the run folder, the roles'
 * models, and runtimes and progress bars that the lifecycle closes and stops when the command ends,
 * however it ends.
 */
export class RunSession<Flags extends LifecycleFlags> {
  private readonly closers: { resource: unknown; close: () => void | Promise<void> }[] = [];

  constructor(
    readonly flags: Flags,
    /** The positional arguments, parsed. */
    readonly args: readonly unknown[],
    /** The run folder: `--out`, else the kind's default (`runs/score-DATE`). */
    readonly outDir: string,
    readonly command: Command,
  ) {}

  /** The model of `role` from its flags (`--ROLE`, `--ROLE-base-url`, `--ROLE-option`), or `name` when the command picked it. */
  role(role: string, name?: string): ModelSpec {
    return resolveRoleModel(this.flags, role, name);
  }

  /** The model of `role`, or undefined when its flag was not given. */
  optionalRole(role: string): ModelSpec | undefined {
    const key = role.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    return (this.flags as Record<string, unknown>)[key] ? this.role(role) : undefined;
  }

  /** A model runtime with the command's call flags and cache (the price file checked first), closed when the command ends. */
  async runtime(): Promise<OpenedRuntime> {
    checkPriceFile();
    return this.closing(await openModelRuntime(this.flags));
  }

  /**
   * `--batch`: `role`'s requests that `collect` makes, answered through the provider's batch API
   * into the cache, and the runtime that reads them (closed when the command ends).
   */
  async batch(spec: ModelSpec, role: string, outDir: string, collect: (collector: BatchCollector) => Promise<unknown>): Promise<BatchedRuntime> {
    checkPriceFile();
    const batched = await runBatch(this.flags as Flags & BatchFlags, spec, role, outDir, collect);
    return this.closing({ ...batched.opened, report: batched.report });
  }

  /**
   * The runtime a run's calls go through. Under `--batch`, `role`'s requests that `collect` makes
   * are answered through the batch API first (the run folder checked against `contract` before
   * the batch writes in it) and the runtime reads them from the cache; else the command's runtime.
   */
  async runtimeOrBatch(spec: ModelSpec, role: string, outDir: string, contract: () => RunContract, collect: (collector: BatchCollector) => Promise<unknown>): Promise<{ opened: OpenedRuntime; batched?: BatchedRuntime }> {
    if (!this.flags.batch) return { opened: await this.runtime() };
    checkRun(contract());
    const batched = await this.batch(spec, role, outDir, collect);
    return { opened: batched, batched };
  }

  /** The call settings a run records beside its results (retries, timeout, cache). */
  callSettings(opened: OpenedRuntime): Record<string, unknown> {
    return modelCallSettings(this.flags, opened.cachePath);
  }

  /** A progress bar labelled `label`, stopped when the command ends. */
  progress(label: string): ProgressReporter {
    const progress = createProgress(label);
    this.closers.push({ resource: progress, close: () => progress.stop() });
    return progress;
  }

  /** A progress bar per stage, stopped when the command ends. */
  stageProgress(): ReturnType<typeof createStageProgress> {
    const progress = createStageProgress();
    this.closers.push({ resource: progress, close: () => progress.stop() });
    return progress;
  }

  /** Closes `resource` when the command ends. */
  closing<T extends { close(): void | Promise<void> }>(resource: T): T {
    this.closers.push({ resource, close: () => resource.close() });
    return resource;
  }

  /** Closes (or stops) `resource` now, before the command ends: a runtime whose part of the run is done. */
  async release(resource: unknown): Promise<void> {
    const at = this.closers.findIndex((c) => c.resource === resource);
    if (at >= 0) await this.closers.splice(at, 1)[0]!.close();
  }

  /** Closes what was opened, the last first. */
  async end(): Promise<void> {
    for (const { close } of this.closers.splice(0).reverse()) await close();
  }
}

