/**
 * Time to replay all ALFRED expert trajectories in `../shared/data/alfred/` (506 files) into
 * trajectory logs and validate them: reading and parsing the JSON, the symbolic replay, and
 * `parseTrajectoryLog`, each timed apart, best of `--rounds` passes.
 *
 *   node --import tsx bench/alfred.ts [--rounds 3] [--dir ../shared/data/alfred]
 *
 * It also checks the whole set, which the tests (a few trajectories in test/fixtures/alfred)
 * cannot: every file replays and validates, the heat/cool/clean events add up to the plans'
 * totals (76/75/73), and every object type is in the AI2-THOR catalogue.
 *
 * Run by `npm run bench -- alfred` (bench/run.ts), or alone. Prints one JSON line of figures.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { alfredTypesOutsideCatalogue, findAlfredFiles, loadAlfredTrajectories, parseTrajectoryLog, replayAlfredTrajectory } from "../src/data/index.js";
import { textFlag as flag } from "./flags.js";

const dir = flag("dir", fileURLToPath(new URL("../../shared/data/alfred", import.meta.url)));
const rounds = Number(flag("rounds", "3"));
const files = await findAlfredFiles(dir);

interface Pass {
  readMs: number;
  replayMs: number;
  validateMs: number;
  steps: number;
  events: number;
}

async function pass(): Promise<Pass> {
  const result: Pass = { readMs: 0, replayMs: 0, validateMs: 0, steps: 0, events: 0 };
  for (const file of files) {
    const t0 = performance.now();
    const raw: unknown = JSON.parse(await readFile(file, "utf8"));
    const t1 = performance.now();
    const log = replayAlfredTrajectory(raw, file);
    const t2 = performance.now();
    parseTrajectoryLog(log, file);
    const t3 = performance.now();
    result.readMs += t1 - t0;
    result.replayMs += t2 - t1;
    result.validateMs += t3 - t2;
    result.steps += log.steps.length;
    result.events += log.events.length;
  }
  return result;
}

await pass(); // warm-up: module compilation and the catalogue
const passes: Pass[] = [];
for (let i = 0; i < rounds; i++) passes.push(await pass());
const total = (p: Pass): number => p.readMs + p.replayMs + p.validateMs;
const best = passes.reduce((a, b) => (total(b) < total(a) ? b : a));
const round1 = (v: number): number => Math.round(v * 10) / 10;

/** Object types named by the files' poses or actions that the catalogue lacks (expected: none). */
async function typesMissingFromCatalogue(): Promise<string[]> {
  const missing = new Set<string>();
  for (const file of files) for (const type of alfredTypesOutsideCatalogue(JSON.parse(await readFile(file, "utf8")), file)) missing.add(type);
  return [...missing];
}

const { logs, skipped } = await loadAlfredTrajectories(dir);
const eventCount = (type: string): number => logs.reduce((n, l) => n + l.events.filter((e) => e.type === type).length, 0);
console.log(
  JSON.stringify({
    files: files.length,
    steps: best.steps,
    events: best.events,
    validLogs: logs.length,
    skipped: skipped.length,
    heatCoolCleanEvents: [eventCount("heat"), eventCount("cool"), eventCount("clean")],
    typesMissingFromCatalogue: await typesMissingFromCatalogue(),
    readMs: round1(best.readMs),
    replayMs: round1(best.replayMs),
    validateMs: round1(best.validateMs),
    totalMs: round1(total(best)),
    logsPerSecond: Math.round((files.length / total(best)) * 1000),
    replayAndValidateLogsPerSecond: Math.round((files.length / (best.replayMs + best.validateMs)) * 1000),
  }),
);
