import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./paths.js";

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const MODEL_VARIABLES = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "EQA_JUDGE"];
/** A suite run inside a Slurm job array would otherwise shard every command it tests. */
const JOB_ARRAY_VARIABLES = ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT"];

/** The environment a CLI test runs in: no model credentials from the machine, no job array, its own cache and data dirs. */
export function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: join(home, "cache"), XDG_DATA_HOME: join(home, "data"), NO_COLOR: "1" };
  for (const name of [...MODEL_VARIABLES, ...JOB_ARRAY_VARIABLES]) delete env[name];
  return { ...env, ...extra };
}

/** tsx's loader by its own address, so that a command run from any folder finds it. */
const TSX_LOADER = import.meta.resolve("tsx");
/** What `bin/eqa.js` runs: the build `npm install` makes. */
const BUILT_MAIN = join(projectRoot, "dist", "cli", "main.js");

/** The newest modification time of the files under `dir`, in ms. */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * How a test starts `eqa`: the build, as `bin/eqa.js` runs it for a user, when it is newer than
 * every file under `src/` (a clean clone's, built by `npm install`); else the sources through tsx,
 * so that a test run after an edit to `src/` runs the edit. The build starts in about half the
 * time, and the suite starts the command several hundred times.
 */
const CLI_ENTRY: readonly string[] = (() => {
  const built = existsSync(BUILT_MAIN) && statSync(BUILT_MAIN).mtimeMs > newestUnder(join(projectRoot, "src"));
  return built ? [BUILT_MAIN] : ["--import", TSX_LOADER, join(projectRoot, "src", "cli", "main.ts")];
})();

/** Starts `eqa ARGS` (the build when it is up to date, else the sources), in `cwd`. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, cwd = projectRoot): ChildProcess {
  return spawn(process.execPath, [...CLI_ENTRY, ...args], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd = projectRoot): Promise<CliResult> {
  return collect(startCli(args, env, cwd));
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}
