/**
 * Where trajectory logs come from: `sim:DIR` (simulator recordings: every `trajectory.json`
 * below DIR, its frames beside it) and `alfred:DIR` (ALFRED trajectories replayed by src/data).
 * A file that does not parse or contradicts itself is reported with its path and step, and
 * the others go on.
 */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { describeError, isUserError, resolveInside, UserError } from "../core/index.js";
import { loadAlfredTrajectories, loadTrajectoryLog, type TrajectoryLog } from "../data/index.js";
import type { SkippedTrajectory, TrajectoryInput } from "./dataset.js";
import { maskSightings } from "./sightings.js";

export interface LoadedTrajectories {
  inputs: TrajectoryInput[];
  skipped: SkippedTrajectory[];
}

export const RECORDING_FILE = "trajectory.json";

/** Parses `alfred:DIR` or `sim:DIR`; frame folders are named relative to `outDir`; a recording's instance masks tell what the agent saw. */
export async function loadTrajectorySource(source: string, outDir: string): Promise<LoadedTrajectories> {
  const match = /^(alfred|sim):(.+)$/.exec(source);
  if (!match) throw new UserError(`unknown source "${source}"`, { field: "--source" }, "use alfred:DIR (ALFRED trajectories) or sim:DIR (simulator recordings)");
  const dir = match[2]!;
  const loaded = match[1] === "sim" ? await loadSimRecordings(dir, outDir, { sightings: true }) : await loadAlfredSource(dir);
  return withoutDuplicateIds(loaded);
}

async function loadAlfredSource(dir: string): Promise<LoadedTrajectories> {
  const { logs, skipped } = await loadAlfredTrajectories(dir);
  return { inputs: logs.map((log) => ({ log, episodeHistory: null })), skipped: skipped.map((s) => ({ file: s.file, ...(s.step !== undefined ? { step: s.step } : {}), error: s.error })) };
}

/**
 * Every `trajectory.json` below `dir`, in path order; with `sightings`, what the agent saw in
 * each recording's frames (`maskSightings`; frames that cannot be read skip the recording, a
 * missing frame folder leaves the geometric test).
 */
export async function loadSimRecordings(dir: string, outDir: string, options: { sightings?: boolean } = {}): Promise<LoadedTrajectories> {
  const files = await findRecordings(dir);
  const inputs: TrajectoryInput[] = [];
  const skipped: SkippedTrajectory[] = [];
  for (const file of files) {
    try {
      const log = await loadTrajectoryLog(file);
      // a log names its frame folder beside it: one that leads elsewhere is refused, the log skipped
      const frames = log.frames ? resolveInside(dirname(file), log.frames, { file, field: "frames" }, "a recording's frames folder is relative to its trajectory.json and stays inside its folder") : undefined;
      // a log whose frames are not there is judged by the geometric test
      const sightings = options.sightings && frames && existsSync(frames) ? await maskSightings(log, frames) : null;
      inputs.push({ log, file, episodeHistory: frames ? relative(resolve(outDir), frames) : null, sightings });
    } catch (error) {
      if (!isUserError(error)) throw error;
      skipped.push(skippedFile(file, error));
    }
  }
  return { inputs, skipped };
}

async function findRecordings(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (error) {
    throw new UserError(`cannot read the recordings directory: ${describeError(error)}`, { file: dir });
  }
  const files = entries.filter((e) => e.isFile() && e.name === RECORDING_FILE).map((e) => join(e.parentPath, e.name));
  if (files.length === 0) throw new UserError(`no ${RECORDING_FILE} below this directory`, { file: dir }, "record trajectories with the simulator first, or use alfred:DIR");
  return files.sort();
}

/** The skipped file with the step its error names (a field `steps.N…`, or "step N" in the message). */
export function skippedFile(file: string, error: UserError): SkippedTrajectory {
  const field = error.location.field ?? "";
  const fromField = /^steps\.(\d+)/.exec(field)?.[1];
  const fromMessage = /\bstep (\d+)/.exec(error.message)?.[1];
  const step = fromField ?? fromMessage;
  return { file, ...(step !== undefined ? { step: Number(step) } : {}), error: error.message };
}

function withoutDuplicateIds(loaded: LoadedTrajectories): LoadedTrajectories {
  const seen = new Map<string, TrajectoryLog>();
  const inputs: TrajectoryInput[] = [];
  const skipped = [...loaded.skipped];
  for (const input of loaded.inputs) {
    if (seen.has(input.log.id)) {
      skipped.push({ file: input.file ?? input.log.id, error: `trajectory id ${input.log.id} appears twice; the first one is kept` });
      continue;
    }
    seen.set(input.log.id, input.log);
    inputs.push(input);
  }
  return { inputs, skipped };
}
