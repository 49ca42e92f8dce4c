import { UserError } from "../core/index.js";

/**
 * Why `value` cannot be a model endpoint's base URL, or undefined when it can: eqakit speaks
 * HTTP to every provider, so it must be an absolute http:// or https:// URL with a host.
 */
export function baseURLProblem(value: string): string | undefined {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) return `"${value}" is not an http or https URL`;
  if (url.hostname === "") return `"${value}" names no host`;
  return undefined;
}

/** `value` when it is a usable base URL; else a UserError naming `source`, the flag or environment variable it came from. */
export function checkBaseURL(value: string, source: string): string {
  const problem = baseURLProblem(value);
  if (problem) throw new UserError(problem, { field: source }, `give ${source} the endpoint's http(s) address, e.g. http://localhost:8000/v1`);
  return value;
}
