// `npm test`: node's test runner over every test file, two at a time, the longest files first.
//
// `node --test` sorts the files it is given by path, so a long file that sorts last runs alone on
// one core while the other is idle. `run()` of `node:test` keeps the order it is given: the files
// known to be long start first and the short ones fill in around them. Each file still runs in a
// process of its own, with this process's flags (`--import tsx`), and the output is node's own
// reporter with its summary (`# tests`, `# fail`, …): TAP when piped, as `node --test` prints it.
//
//   npm test                              every file
//   npm test -- test/cli/resume.test.ts   the files named
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { run } from "node:test";
import { spec, tap } from "node:test/reporters";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Two files at a time: this project's machines have 2 cores, and several tests wait on servers with timeouts. */
const CONCURRENCY = 2;

/**
 * The longest files, longest first, from node's durations of a whole run (BENCHMARKS.md, "The test
 * suite from a clean clone"). A file missing here only starts later; a name no longer present is skipped.
 */
const LONGEST_FIRST = [
  "test/cli/resume.test.ts",
  "test/cli/run-contract.test.ts",
  "test/reproduce/reproduce-mixed.test.ts",
  "test/cli/explore-mixed.test.ts",
  "test/cli/bad-input-flags.test.ts",
  "test/cli/merge.test.ts",
  "test/cli/cost-ledger.test.ts",
  "test/cli/demo.test.ts",
  "test/agents/external-active.test.ts",
  "test/agents/mixed-agents.test.ts",
  "test/docs/run-kind-example.test.ts",
  "test/cli/model-families.test.ts",
  "test/agents/external-mixed.test.ts",
  "test/cli/score.test.ts",
  "test/agents/memory-folder.test.ts",
  "test/reproduce/express-tables.test.ts",
  "test/reproduce/reproduce-openeqa-active.test.ts",
  "test/cli/batch.test.ts",
  "test/cli/score-tag.test.ts",
  "test/generate/tag-baselines.test.ts",
  "test/docs/library-examples.test.ts",
];

function allTestFiles(): string[] {
  const testRoot = join(root, "test");
  const files: string[] = [];
  for (const area of readdirSync(testRoot, { withFileTypes: true })) {
    if (!area.isDirectory()) continue;
    for (const name of readdirSync(join(testRoot, area.name))) {
      if (name.endsWith(".test.ts")) files.push(`test/${area.name}/${name}`);
    }
  }
  return files.sort();
}

/** The known long files first, in their order, then the others by path. */
function inRunOrder(files: string[]): string[] {
  const rank = (file: string): number => {
    const index = LONGEST_FIRST.indexOf(file);
    return index === -1 ? LONGEST_FIRST.length : index;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

const named = process.argv.slice(2).map((file) => relative(root, resolve(file)));
const files = inRunOrder(named.length > 0 ? named : allTestFiles()).map((file) => join(root, file));

/** Seconds per file: the sum of its top-level tests' durations, as node's reporter gives them. */
const fileSeconds = new Map<string, number>();
function countFile(event: { file?: string; nesting: number; details: { duration_ms: number } }): void {
  if (event.nesting !== 0 || event.file === undefined) return;
  const file = relative(root, event.file);
  fileSeconds.set(file, (fileSeconds.get(file) ?? 0) + event.details.duration_ms / 1000);
}

/** The ten longest files, after the summary, on stderr: what to look at when the suite grows slow. */
function printLongestFiles(): void {
  const longest = [...fileSeconds].sort((a, b) => b[1] - a[1]).slice(0, 10);
  if (longest.length < 2) return;
  process.stderr.write(`# longest files (s): ${longest.map(([file, s]) => `${file} ${s.toFixed(0)}`).join(", ")}\n`);
}

const stream = run({ files, concurrency: CONCURRENCY });
stream.on("test:pass", countFile);
// as `node --test`: a failed test fails the run, a failed test marked todo does not
stream.on("test:fail", (event) => {
  countFile(event);
  if (event.todo === undefined || event.todo === false) process.exitCode = 1;
});
const report = stream.compose(process.stdout.isTTY ? new spec() : tap);
report.pipe(process.stdout);
report.on("end", printLongestFiles);
