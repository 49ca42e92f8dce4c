/**
 * A module loaded on first use and then kept: heavy dependencies (native image libraries,
 * model runtimes) stay out of the start-up of commands that never touch them.
 */
export function lazyImport<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
