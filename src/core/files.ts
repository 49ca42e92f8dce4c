import { readdirSync, rmSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { UserError } from "./errors.js";

/**
 * Writing results: every final file is written whole or not at all, and a write the machine
 * refuses (a full disk, a quota, a read-only or failing device) becomes an {@link OutputError}
 * that names the file, so a run stops with every finished record kept and resumes once the
 * cause is gone.
 */

/** Error codes that mean the results cannot be written where they were asked to go. */
const OUTPUT_FAILURES: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  EROFS: "the file system is read-only",
  EIO: "the device reported an input/output error",
  EFBIG: "the file is larger than the file system allows",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted",
};

/** A run's results could not be written: the CLI prints it and exits 3. */
export class OutputError extends UserError {
  constructor(message: string, file: string, readonly code: string) {
    super(message, { file }, "free the space or fix the cause (or choose another --out), then run the same command again: finished work is kept and the run resumes");
    this.name = "OutputError";
  }
}

/** `error` as an OutputError when it is a refused write of `file`; otherwise `error` itself. */
export function outputFailure(file: string, error: unknown): unknown {
  if (error instanceof OutputError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === undefined ? undefined : OUTPUT_FAILURES[code];
  return reason === undefined ? error : new OutputError(`could not write the file: ${reason} (${code})`, file, code!);
}

/** The name of the temporary file that becomes `path`; {@link removeStaleTemporaries} knows it. */
function temporaryName(path: string): string {
  return `${path}.${process.pid}.tmp`;
}

const TEMPORARY = /\.\d+\.tmp$/;

/**
 * Writes `path` whole or not at all: a temporary file beside it, flushed to the disk, then
 * renamed over it. On failure the temporary file is removed and the old `path` (if any) stays.
 * `sync: false` skips the flush: a killed process still leaves no half-written `path` (the
 * rename comes after the last byte), only a power cut could; for many files that can be remade.
 */
export async function writeFileAtomically(path: string, data: string | Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
  const temporary = temporaryName(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    const handle = await open(temporary, "w");
    try {
      await handle.writeFile(data);
      if (options.sync !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw outputFailure(path, error);
  }
}

/**
 * Removes the temporary files that an earlier, interrupted process left in `dir` (not in its
 * subfolders) while writing its results atomically. A resumed run calls it first.
 */
export function removeStaleTemporaries(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const own = `.${process.pid}.tmp`;
  for (const name of names) if (TEMPORARY.test(name) && !name.endsWith(own)) rmSync(join(dir, name), { force: true });
}
