import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { collect, runCli, startCli, type CliResult } from "./cli.js";

/**
 * Starts `eqa ARGS`, waits until `ready()` holds (polled; e.g. the loopback server has received
 * half the requests the run makes, or a records file has N lines), kills the process with
 * SIGKILL and waits for it to end. Fails when the command ends on its own before it is killed.
 */
export async function killMidway(args: string[], env: NodeJS.ProcessEnv, ready: () => boolean, cwd?: string): Promise<CliResult> {
  const child = startCli(args, env, cwd);
  const finished = collect(child);
  let ended = false;
  void finished.then(() => (ended = true));
  while (!ready()) {
    if (ended) assert.fail(`eqa ${args[0]} ended before it could be killed: ${(await finished).stderr}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill("SIGKILL");
  const killed = await finished;
  assert.equal(killed.signal, "SIGKILL", `eqa ${args[0]} was not killed`);
  return killed;
}

/** Kills `eqa ARGS` midway (see killMidway), then runs the same command to its end; the resumed run must exit `code` (0). */
export async function killAndResume(args: string[], env: NodeJS.ProcessEnv, ready: () => boolean, code = 0): Promise<{ killed: CliResult; resumed: CliResult }> {
  const killed = await killMidway(args, env, ready);
  const resumed = await runCli(args, env);
  assert.equal(resumed.code, code, `resumed eqa ${args[0]}: ${resumed.stderr}`);
  return { killed, resumed };
}

/** The lines of a JSONL file (none when it does not exist). */
export function jsonLines(path: string): unknown[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as unknown);
}

/**
 * Fields that say when or how fast something ran, or how a run got there (reused from an
 * earlier run, served from the cache), never what it found: left out when runs are compared.
 */
export const TIMING_FIELDS = new Set(["seconds", "reused", "cwd", "thisProcess"]);
/** Times and durations: `finishedAt`, `wallTimeMs`, `explorerMsPerStep`. */
const TIMING_NAME = /(?:At|Ms|MsPerStep)$/;

/** `value` without the timing fields, at any depth. */
export function withoutTiming(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTiming);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([k]) => !TIMING_FIELDS.has(k) && !TIMING_NAME.test(k)).map(([k, v]) => [k, withoutTiming(v)]));
}

/**
 * A records file as a run leaves it for its readers: the last record of each id (a resumed run
 * appends what it did again after the records of the killed one), sorted by id, timing left out.
 */
export function standingRecords(path: string, id: (record: Record<string, unknown>) => string = (r) => String(r.questionId)): [string, unknown][] {
  const last = new Map<string, unknown>();
  for (const record of jsonLines(path)) last.set(id(record as Record<string, unknown>), withoutTiming(record));
  return [...last].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A JSON file without its timing fields. */
export function figures(path: string): unknown {
  return withoutTiming(JSON.parse(readFileSync(path, "utf8")) as unknown);
}

/** A file of figures to compare, whole or only the part `pick` takes (a summary's metrics, not its paths). */
export type FigureFile = string | { file: string; pick: (json: Record<string, unknown>) => unknown };

/**
 * Asserts that two run folders hold the same records (each records file compared by
 * standingRecords) and the same figures (each JSON file, or its picked part, without timing).
 */
export function assertSameRun(whole: string, resumed: string, files: { records?: { file: string; id?: (record: Record<string, unknown>) => string }[]; figures?: FigureFile[] }): void {
  for (const { file, id } of files.records ?? []) {
    const a = standingRecords(join(whole, file), id);
    assert.ok(a.length > 0, `${file} holds records`);
    assert.deepEqual(standingRecords(join(resumed, file), id), a, `${file}: the resumed run's records differ from the uninterrupted run's`);
  }
  for (const entry of files.figures ?? []) {
    const { file, pick } = typeof entry === "string" ? { file: entry, pick: (json: Record<string, unknown>) => json } : entry;
    const read = (dir: string): unknown => withoutTiming(pick(figures(join(dir, file)) as Record<string, unknown>));
    assert.deepEqual(read(resumed), read(whole), `${file}: the resumed run's figures differ from the uninterrupted run's`);
  }
}
