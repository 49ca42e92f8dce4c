import { readFile } from "node:fs/promises";
import { parse as parseTolerant, printParseErrorCode, type ParseError } from "jsonc-parser";
import { UserError } from "../core/index.js";

/** Reads and parses a JSON file; a syntax error names the file, line and column. */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = await readTextFile(path);
  return parseJsonText(text, path);
}

export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new UserError("file not found", { file: path });
    if (code === "EISDIR") throw new UserError("is a directory, expected a file", { file: path });
    if (code === "EACCES") throw new UserError("permission denied", { file: path });
    throw error;
  }
}

export function parseJsonText(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw locateSyntaxError(text, path);
  }
}

/** JSON.parse does not say where it failed on every Node version: a second, strict pass does. */
function locateSyntaxError(text: string, path: string): UserError {
  const errors: ParseError[] = [];
  parseTolerant(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  const offset = first?.offset ?? 0;
  const { line, column } = lineAndColumn(text, offset);
  const what = first ? printParseErrorCode(first.error) : "InvalidJson";
  return new UserError(`malformed JSON (${what})`, { file: path, line, column }, "fix the file so it is valid JSON");
}

export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
