/** The benchmark scripts' command-line flags: `--name value`, else the fallback. */
export function textFlag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** A numeric `--name value`, else the fallback. */
export function numberFlag(name: string, fallback: number): number {
  return Number(textFlag(name, String(fallback)));
}
