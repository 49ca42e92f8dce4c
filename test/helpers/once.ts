import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";

/** How long a test process waits for another to finish making a shared folder before it gives up. */
const MAKE_WAIT_MS = 10 * 60_000;
/** A lock whose owner wrote no pid within this time died between taking it and saying who it is. */
const ORPHAN_LOCK_MS = 60_000;

/**
 * The folder `home`, made once per machine: whichever process comes first takes a lock (a
 * directory, made atomically), makes the folder in a staging folder of its own with `make` and
 * renames it into place; the others wait for it. A lock left by a process that died is taken over.
 * `home` exists only once it is whole, so two test files (or two `npm test` runs) never see a
 * half-made one. `ready(home)` says whether a folder in place is whole (by default: it exists).
 */
export async function madeOnce(home: string, make: (staging: string) => Promise<void>, ready: (home: string) => boolean = existsSync): Promise<string> {
  const lock = `${home}.lock`;
  const deadline = Date.now() + MAKE_WAIT_MS;
  while (!ready(home)) {
    if (takeLock(lock)) {
      try {
        if (!ready(home)) await makeInto(home, make, ready);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    } else if (lockOrphaned(lock)) {
      rmSync(lock, { recursive: true, force: true });
    } else if (Date.now() > deadline) {
      throw new Error(`${home} is still being made by the process named in ${lock}; remove ${lock} if no test runs`);
    } else {
      await sleep(250);
    }
  }
  return home;
}

/** Makes the folder in a fresh staging folder beside `home`, then renames it to `home`. */
async function makeInto(home: string, make: (staging: string) => Promise<void>, ready: (home: string) => boolean): Promise<void> {
  const staging = mkdtempSync(`${home}.partial-`);
  try {
    await make(staging);
    try {
      renameSync(staging, home);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== "ENOTEMPTY" && code !== "EEXIST") || !ready(home)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  writeFileSync(join(lock, "pid"), String(process.pid));
  return true;
}

/** The lock's owner is gone: its pid names no process, or it never wrote one. */
function lockOrphaned(lock: string): boolean {
  try {
    const pid = Number(readFileSync(join(lock, "pid"), "utf8"));
    process.kill(pid, 0);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return true;
    if (code !== "ENOENT") return false; // EPERM: the process exists
    try {
      return Date.now() - statSync(lock).mtimeMs > ORPHAN_LOCK_MS;
    } catch {
      return false; // released meanwhile
    }
  }
}
