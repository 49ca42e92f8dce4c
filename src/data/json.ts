import { open } from "node:fs/promises";
import { parse as parseTolerant, printParseErrorCode, type ParseError } from "jsonc-parser";
import { UserError } from "../core/index.js";

/**
 * Largest data file eqakit reads (JSON, JSONL, CSV, text), in bytes: 500 MiB. Every loader reads
 * its file whole, JSONL and CSV included: their records all end up in memory anyway, and the
 * loaders hash the file's text. V8's longest string is just under 512 Mi characters, and a parsed
 * file takes several times its size, so a larger file is refused before it is read (Node's
 * own errors, ERR_FS_FILE_TOO_LARGE past 2 GiB and ERR_STRING_TOO_LONG, name no file).
 */
export const MAX_DATA_FILE_BYTES = 500 * 2 ** 20;

/** Reads and parses a JSON file; a syntax error names the file, line and column. */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = await readTextFile(path);
  return parseJsonText(text, path);
}

/** Reads a UTF-8 text file whole, refusing one larger than {@link MAX_DATA_FILE_BYTES}. */
export async function readTextFile(path: string): Promise<string> {
  return (await readDataBytes(path)).toString("utf8");
}

async function readDataBytes(path: string): Promise<Buffer> {
  try {
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      if (size > MAX_DATA_FILE_BYTES) throw fileTooLarge(path, size);
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw readError(error, path);
  }
}

function readError(error: unknown, path: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new UserError("file not found", { file: path });
  if (code === "EISDIR") return new UserError("is a directory, expected a file", { file: path });
  if (code === "EACCES") return new UserError("permission denied", { file: path });
  return error;
}

function fileTooLarge(path: string, size: number): UserError {
  return new UserError(
    `the file is ${formatMebibytes(size)}, larger than the ${formatMebibytes(MAX_DATA_FILE_BYTES)} a data file may have`,
    { file: path },
    "data files are read whole into memory: check that this is the intended file, or split it",
  );
}

function formatMebibytes(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
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
