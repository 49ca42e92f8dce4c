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

/**
 * Reads a UTF-8 text file whole. A leading byte-order mark is dropped (spreadsheets and Windows
 * editors write one); a file that is not UTF-8 (Latin-1, UTF-16) or larger than
 * {@link MAX_DATA_FILE_BYTES} is refused with a UserError naming it.
 */
export async function readTextFile(path: string): Promise<string> {
  return decodeUtf8(await readDataBytes(path), path);
}

async function readDataBytes(path: string): Promise<Uint8Array> {
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

/** Decodes UTF-8 strictly (no silent U+FFFD), dropping a byte-order mark. */
function decodeUtf8(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    const offset = firstInvalidUtf8Byte(bytes);
    if (offset < 0) throw error;
    return invalidUtf8(bytes, offset, path);
  }
}

function invalidUtf8(bytes: Uint8Array, offset: number, path: string): never {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  const byte = bytes[offset]?.toString(16).toUpperCase().padStart(2, "0") ?? "";
  throw new UserError(
    `not valid UTF-8: byte 0x${byte} at byte offset ${offset}`,
    { file: path, line },
    "save the file as UTF-8 (it may be in Latin-1, Windows-1252 or UTF-16)",
  );
}

/** The offset where the first ill-formed UTF-8 sequence starts (RFC 3629 §4), or -1 when there is none. */
function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0) return i;
    for (let k = 1; k < length; k++) {
      const [low, high] = k === 1 ? secondByteRange(lead) : [0x80, 0xbf];
      const next = bytes[i + k];
      if (next === undefined || next < low || next > high) return i;
    }
    i += length;
  }
  return -1;
}

/** Overlong forms, surrogates and code points past U+10FFFF are excluded by the second byte's range. */
function secondByteRange(lead: number): [number, number] {
  if (lead === 0xe0) return [0xa0, 0xbf];
  if (lead === 0xed) return [0x80, 0x9f];
  if (lead === 0xf0) return [0x90, 0xbf];
  if (lead === 0xf4) return [0x80, 0x8f];
  return [0x80, 0xbf];
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
