import { homedir } from "node:os";
import { join } from "node:path";

/** Where eqakit keeps the model-call cache: `$XDG_CACHE_HOME/eqakit` or `~/.cache/eqakit`. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "eqakit");
}

/** Where downloaded benchmarks go: `$XDG_DATA_HOME/eqakit` or `~/.local/share/eqakit`. */
export function userDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "eqakit");
}
