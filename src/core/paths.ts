import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve, sep, win32 } from "node:path";
import { UserError, type InputLocation } from "./errors.js";

/** Where eqakit keeps the model-call cache: `$XDG_CACHE_HOME/eqakit` or `~/.cache/eqakit`. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "eqakit");
}

/** Where downloaded benchmarks go: `$XDG_DATA_HOME/eqakit` or `~/.local/share/eqakit`. */
export function userDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "eqakit");
}

/** How a path's symbolic links are judged: they must stay inside the root, or (a folder of the user's own) they are followed wherever they lead. */
export interface PathLinks {
  /** Follow symbolic links found under the root (the user made them); the path as written must still stay inside. */
  followLinks?: boolean;
}

/**
 * Where `relative`, a path read from a data file (an `episode_history`, a `frames` field), is
 * under `root`, or why it may not be used: it is absolute, holds a NUL byte, climbs out of
 * `root` with `..`, or (unless `followLinks`) passes through a symbolic link that leads outside
 * `root` (checked with realpath on the longest part of the path that exists). `..` that stays
 * inside is allowed; the path returned is normalised, so the OS opens what was checked.
 */
export function pathInside(root: string, relative: string, links: PathLinks = {}): { path: string } | { refused: string } {
  if (relative.includes("\0")) return { refused: "holds a NUL byte" };
  if (isAbsolute(relative) || win32.isAbsolute(relative)) return { refused: "is an absolute path" };
  const base = resolve(root);
  const path = resolve(base, relative);
  if (!within(base, path)) return { refused: `climbs out of ${base} with ".."` };
  if (links.followLinks) return { path };
  let realBase: string;
  try {
    realBase = realpathSync(base);
  } catch {
    return { path }; // nothing exists under a missing root, so nothing can lead out of it
  }
  for (let prefix = path; within(base, prefix); prefix = dirname(prefix)) {
    let real: string;
    try {
      real = realpathSync(prefix);
    } catch {
      continue; // not there (or a dangling link): look at its parent
    }
    if (!within(realBase, real)) return { refused: `leads through a symbolic link to ${real}, outside ${base}` };
    break;
  }
  return { path };
}

/** {@link pathInside}, throwing a UserError at `at` (the record and field the path came from) when the path is refused. */
export function resolveInside(root: string, relative: string, at: InputLocation, hint = "paths in data files must be relative and stay inside the folder they are resolved in", links: PathLinks = {}): string {
  const inside = pathInside(root, relative, links);
  if ("refused" in inside) throw new UserError(`path "${relative}" ${inside.refused}`, at, hint);
  return inside.path;
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}
