import { statSync } from "node:fs";

/**
 * A module loaded on first use and then kept: heavy dependencies (native image libraries,
 * model runtimes) stay out of the start-up of commands that never touch them.
 */
export function lazyImport<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

/**
 * What `load` makes of a file, kept per path for as long as the file keeps its size, modification
 * time and inode: a file changed between two uses (two runs in one process, a viewer left open)
 * is read again, so what a caller gets never depends on what was read before.
 */
export function memoByFile<T>(load: (path: string) => T): (path: string) => T {
  const kept = new Map<string, { stamp: string; value: T }>();
  return (path) => {
    const stamp = fileStamp(path);
    const held = kept.get(path);
    if (held && held.stamp === stamp) return held.value;
    const value = load(path);
    kept.set(path, { stamp, value });
    return value;
  };
}

function fileStamp(path: string): string {
  try {
    const info = statSync(path);
    return `${info.size}:${info.mtimeMs}:${info.ino}`;
  } catch {
    return "missing";
  }
}
