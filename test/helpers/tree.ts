import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** Every file under `dir` (relative path → SHA-256 of its bytes) and every folder (→ "dir"): what "left byte-identical" compares. */
export function treeSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string): void => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      const rel = relative(dir, full);
      if (statSync(full).isDirectory()) {
        out[rel] = "dir";
        walk(full);
      } else out[rel] = createHash("sha256").update(readFileSync(full)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

/**
 * Runs `run` (a CLI call writing into `dir`) and checks that it exited 2 with a message naming
 * `dir` and matching `message`, leaving every file and folder of `dir` byte-identical.
 */
export async function assertRefusedUnchanged(dir: string, run: () => Promise<{ code: number | null; stderr: string }>, message: RegExp): Promise<void> {
  const before = treeSnapshot(dir);
  const result = await run();
  if (result.code !== 2) throw new Error(`expected exit 2 for a refused run in ${dir}, got ${result.code}: ${result.stderr}`);
  if (!result.stderr.includes(dir) || !message.test(result.stderr)) throw new Error(`the refusal does not name ${dir} or match ${message}: ${result.stderr}`);
  const after = treeSnapshot(dir);
  if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`the refused run changed ${dir}: ${JSON.stringify({ before, after })}`);
}
