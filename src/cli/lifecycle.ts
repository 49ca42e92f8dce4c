import { Command, Option } from "commander";
import type { CallPlan } from "../models/index.js";
import { formatCallPlan } from "../report/index.js";
import { RUN_KINDS, runFolderOf } from "../store/index.js";
import { addShardOption, outputDirectory } from "./options.js";
import { addModelCallOptions, type ModelCallFlags } from "./model-options.js";
import { addDryRunOption, openCallPlan } from "./dry-run.js";
import { addBatchOptions, type BatchFlags } from "./batch.js";
import { RunSession } from "./run-session.js";

export { RunSession, type BatchedRuntime } from "./run-session.js";

/**
 * One command lifecycle for every command that writes a run: its model roles and their flags,
 * `--out` with the default of the run kind it writes (RUN_KINDS), `--dry-run` and `--batch`, the
 * model runtime opened and closed, progress bars, the "wrote …" lines and the exit code, each
 * declared once here. A command gives what is its own: its flags, `prepare` (loading and checking
 * its inputs and choosing its items, shared by the dry run and the run, so that the two price and
 * do the same items), `plan` (its dry run) and `run`.
 */

/** A model role's flags: `--ROLE <provider/model>` and `--ROLE-base-url <url>` (`--ROLE-option` is added for every role by program.ts). */
export interface RoleFlags {
  /** The role as its flag names it: `judge`, `model`, `captioner`. */
  readonly role: string;
  readonly help: string;
  readonly baseUrlHelp: string;
  /** The environment variable that gives the model when the flag is left out (`EQA_JUDGE`). */
  readonly env?: string;
  /** The flag's value as its help shows it, where the role takes more than a model (default `provider/model`). */
  readonly value?: string;
  /** The flag's default, where the role has one that names no model (`template` of `eqa generate tag --renderer`). */
  readonly default?: string;
}

/** The flags the lifecycle reads: the model calls', `--out`, `--dry-run` and `--batch`. */
export interface LifecycleFlags extends ModelCallFlags, Partial<BatchFlags> {
  out?: string;
  dryRun?: boolean;
}

/** Where a command's own flags go among those the lifecycle declares: roles and `--out` are placed where the command asks. */
export interface OptionPlacer {
  /** `--ROLE` and `--ROLE-base-url` of a role declared in `roles`. */
  role(role: string): void;
  /** `--out`, with the kind's default in its help (or `help`). */
  out(help?: string): void;
}

export interface RunCommandSpec<Flags extends LifecycleFlags, Prepared> {
  /** The command's name (`score`); under a parent, its own name (`score` of `eqa rm score`). */
  readonly name: string;
  /** The command as typed after `eqa`, for its run kind's `--out` default: `rm score` (default: `name`). */
  readonly path?: string;
  readonly description: string;
  /** Positional arguments, as commander declares them: `["<table>", "the table", parser]`. */
  readonly argument?: readonly [string, string, (value: string) => unknown];
  /** The model roles the command calls, by flag. */
  readonly roles?: readonly RoleFlags[];
  /** `--out`: optional with the kind's default (the default), required, or declared by the command itself. */
  readonly out?: "default" | "required" | "own";
  /** Whether `--concurrency`, `--max-retries`, `--timeout` and `--cache` are taken (default true). */
  readonly modelCalls?: boolean;
  readonly dryRun?: boolean;
  readonly batch?: boolean;
  /** `--shard`, naming what is split ("questions"). */
  readonly shard?: string;
  /** The command's own flags; `place` puts the declared roles and `--out` among them (else they follow). */
  readonly options?: (command: Command, place: OptionPlacer) => void;
  /** Inputs the command hands to another workflow (`eqa score` on LA-EQA's questions), given the same session: its exit code, or undefined to go on. */
  readonly handOff?: (session: RunSession<Flags>) => Promise<number | undefined>;
  /** Loads and checks the inputs and chooses the items: what both the dry run and the run work on. */
  readonly prepare: (session: RunSession<Flags>) => Promise<Prepared>;
  /** `--dry-run`: the calls `run` would make, recorded in `plan` as the run would make them; returns the notes printed under the table. */
  readonly plan?: (prepared: Prepared, plan: CallPlan, session: RunSession<Flags>) => Promise<readonly string[]>;
  /** Whether the dry run prices the calls at the batch price under `--batch` (default true; false where only some calls would go as a batch). */
  readonly planAtBatchPrice?: boolean;
  /** Whether the dry run's table adds the calls per table row (`eqa reproduce`). */
  readonly planRows?: boolean;
  /** Does the work; returns the exit code (0, or 1 when items failed). */
  readonly run: (prepared: Prepared, session: RunSession<Flags>) => Promise<number | void>;
}

/** `wrote DIR/{a,b,c}` (`files` more than one), `wrote DIR/a`, or `wrote DIR`; after a blank line when `blank`. */
export function wroteLine(dir: string, files: readonly string[] = [], options: { blank?: boolean; tail?: string } = {}): string {
  const where = files.length === 0 ? dir : files.length === 1 ? `${dir}/${files[0]}` : `${dir}/{${files.join(",")}}`;
  return `${options.blank ? "\n" : ""}wrote ${where}${options.tail ?? ""}`;
}

/** The `--out` help of a command writing a run kind: its default folder, from RUN_KINDS. */
function outHelp(path: string): string {
  const defaultOut = RUN_KINDS.flatMap((k) => k.commands as readonly { command: string; defaultOut?: string; flag?: string }[]).find((c) => c.command === path && c.flag === undefined)?.defaultOut;
  return defaultOut ? `run directory (default: runs/${defaultOut}-DATE); an existing one resumes` : "run directory; an existing one resumes";
}

function addRoleFlags(command: Command, flags: RoleFlags): void {
  const option = new Option(`--${flags.role} <${flags.value ?? "provider/model"}>`, flags.help);
  if (flags.env) option.env(flags.env);
  if (flags.default !== undefined) option.default(flags.default);
  command.addOption(option);
  command.option(`--${flags.role}-base-url <url>`, flags.baseUrlHelp);
}

/** A command that writes a run, with the lifecycle of {@link RunCommandSpec}. */
export function defineRunCommand<Flags extends LifecycleFlags, Prepared>(spec: RunCommandSpec<Flags, Prepared>): Command {
  const command = new Command(spec.name).description(spec.description);
  if (spec.argument) command.argument(spec.argument[0], spec.argument[1], spec.argument[2]);
  const path = spec.path ?? spec.name;
  const placed = new Set<string>();
  const place: OptionPlacer = {
    role: (role) => {
      const declared = spec.roles?.find((r) => r.role === role);
      if (!declared) throw new Error(`${path} declares no role ${role}`);
      addRoleFlags(command, declared);
      placed.add(`role:${role}`);
    },
    out: (help) => {
      command.option("--out <dir>", help ?? outHelp(path), outputDirectory);
      placed.add("out");
    },
  };
  spec.options?.(command, place);
  for (const role of spec.roles ?? []) if (!placed.has(`role:${role.role}`)) place.role(role.role);
  if (spec.out === "required" && !placed.has("out")) command.requiredOption("--out <dir>", outHelp(path), outputDirectory);
  else if ((spec.out ?? "default") === "default" && !placed.has("out")) place.out();
  if (spec.modelCalls !== false) addModelCallOptions(command);
  if (spec.dryRun) addDryRunOption(command);
  if (spec.batch) addBatchOptions(command);
  if (spec.shard) addShardOption(command, spec.shard);
  return command.action(async (...args: unknown[]) => {
    // commander passes the positional arguments, then the flags, then the command
    const flags = args[args.length - 2] as Flags;
    process.exitCode = await runLifecycle(spec, flags, args.slice(0, -2), path, command);
  });
}

async function runLifecycle<Flags extends LifecycleFlags, Prepared>(spec: RunCommandSpec<Flags, Prepared>, flags: Flags, args: readonly unknown[], path: string, command: Command): Promise<number> {
  const outDir = runFolderOf(path, flags as unknown as Record<string, unknown>) ?? flags.out ?? "";
  const session = new RunSession(flags, args, outDir, command);
  try {
    const handed = await spec.handOff?.(session);
    if (handed !== undefined) return handed;
    const prepared = await spec.prepare(session);
    if (flags.dryRun && spec.plan) {
      const opened = session.closing(await openCallPlan(spec.planAtBatchPrice === false ? { ...flags, batch: false } : flags));
      const notes = await spec.plan(prepared, opened.plan, session);
      console.log(formatCallPlan(opened.plan.roles(), notes, spec.planRows ? opened.plan.rows() : []));
      return 0;
    }
    return (await spec.run(prepared, session)) ?? 0;
  } finally {
    await session.end();
  }
}
