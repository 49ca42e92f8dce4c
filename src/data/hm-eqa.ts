/**
 * HM-EQA (multiple-choice EQA over HM3D scenes): loaders for its `questions.csv` and
 * `scene_init_poses.csv`, with the two small parsers they need.
 *
 * - `parseCsvRows`: RFC 4180 CSV as Python's `csv` module reads it with the default dialect: fields
 *   separated by commas, a field in double quotes may hold commas, line breaks and doubled
 *   quotes (`""` for `"`); records end at LF or CRLF outside quotes; a final line break is
 *   optional. An unterminated quote is a UserError naming the file and line.
 * - `parsePythonStringList`: a Python list literal of strings, read exactly as
 *   `ast.literal_eval` reads it: single- or double-quoted strings (so `"It's open"` keeps its
 *   apostrophe), the escapes `\\ \' \" \n \t \r \a \b \f \v \xhh \ooo \uXXXX \UXXXXXXXX` and
 *   backslash-newline, unknown escapes kept as written (backslash included), `r`/`u` prefixes,
 *   triple-quoted strings, adjacent literals concatenated, a trailing comma. Anything else (a
 *   number, a nested list, an unterminated string) is an error. HM-EQA's `choices` column is
 *   such a literal. The reference code reads it as
 *   `[c.split("'")[1] for c in choices.split("',")]`, which cuts every choice written in double
 *   quotes because it contains an apostrophe (`"It's open"` becomes `s open", `): eqakit does not.
 *
 * Questions carry the answer letter and, for convenience, the chosen text. Start poses are keyed
 * by `scene_floor` (`00001-UVdNNRcVyV1_0`) and give the position in Habitat's world frame and the
 * heading angle in radians as the file gives them.
 */
import { UserError, type InputLocation } from "../core/index.js";
import { readTextFile } from "./json.js";

// ---------------------------------------------------------------------------------------------
// CSV

/** Parses CSV text into rows of fields (`file` names it in errors). A blank line is an empty row. */
export function parseCsvRows(text: string, file?: string): string[][] {
  return parseCsvWithLines(text, file).rows;
}

/** Like `parseCsvRows`, with the 1-based line on which each row starts. */
export function parseCsvWithLines(text: string, file?: string): { rows: string[][]; lines: number[] } {
  const rows: string[][] = [];
  const lines: number[] = [];
  let rowLine = 1;
  let row: string[] = [];
  let field = "";
  let i = 0;
  let line = 1;
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const n = body.length;
  let fieldStarted = false;
  while (i < n) {
    const c = body[i]!;
    if (c === '"' && field === "" && !fieldStarted) {
      const startLine = line;
      i++;
      let closed = false;
      while (i < n) {
        const d = body[i]!;
        if (d === '"') {
          if (body[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          closed = true;
          break;
        }
        if (d === "\n") line++;
        field += d;
        i++;
      }
      if (!closed) throw new UserError("unterminated quoted field", { ...(file ? { file } : {}), line: startLine }, "close the quote (write a quote inside a quoted field as \"\")");
      fieldStarted = true;
      continue;
    }
    if (c === ",") {
      row.push(field);
      field = "";
      fieldStarted = false;
      i++;
      continue;
    }
    if (c === "\n" || c === "\r") {
      // LF, CRLF or a lone CR ends a record, as in Python's csv module; a blank line is [].
      if (row.length > 0 || fieldStarted) row.push(field);
      rows.push(row);
      lines.push(rowLine);
      row = [];
      field = "";
      fieldStarted = false;
      i += c === "\r" && body[i + 1] === "\n" ? 2 : 1;
      line++;
      rowLine = line;
      continue;
    }
    // Text after a closing quote is appended, as Python's csv module does.
    field += c;
    fieldStarted = true;
    i++;
  }
  if (fieldStarted || row.length > 0) {
    row.push(field);
    rows.push(row);
    lines.push(rowLine);
  }
  return { rows, lines };
}

/**
 * CSV rows as records keyed by the header (blank lines skipped), with the line each starts on,
 * checking that every required column is present and every row has the header's width.
 */
export function csvRecordsByHeader(text: string, file: string, required: readonly string[]): { records: Record<string, string>[]; lines: number[] } {
  const { rows, lines } = parseCsvWithLines(text, file);
  const header = rows[0];
  if (!header) throw new UserError("empty CSV file, expected a header line", { file });
  const missing = required.filter((name) => !header.includes(name));
  if (missing.length > 0) {
    throw new UserError(`missing column(s) ${missing.join(", ")} in the header`, { file, line: 1 }, `expected columns: ${required.join(", ")}`);
  }
  const records: Record<string, string>[] = [];
  const recordLines: number[] = [];
  rows.forEach((row, k) => {
    if (k === 0 || row.length === 0) return; // the header, a blank line
    if (row.length !== header.length) {
      throw new UserError(`has ${row.length} fields, the header has ${header.length}`, { file, line: lines[k]!, index: records.length });
    }
    const record: Record<string, string> = {};
    header.forEach((name, j) => {
      record[name] = row[j]!;
    });
    records.push(record);
    recordLines.push(lines[k]!);
  });
  return { records, lines: recordLines };
}

// ---------------------------------------------------------------------------------------------
// Python list literals

/** Parses a Python list literal of strings as `ast.literal_eval` would. */
export function parsePythonStringList(text: string): string[] {
  const p = new PyListParser(text);
  return p.parse();
}

class PyListParser {
  private i = 0;
  constructor(private readonly s: string) {}

  private fail(message: string): never {
    throw new Error(`not a Python list of strings: ${message} at offset ${this.i}`);
  }

  private skipSpace(): void {
    // Inside brackets Python allows any white space, line breaks and comments.
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f") this.i++;
      else if (c === "\\" && this.s[this.i + 1] === "\n") this.i += 2;
      else if (c === "#") {
        while (this.i < this.s.length && this.s[this.i] !== "\n") this.i++;
      } else break;
    }
  }

  parse(): string[] {
    this.skipLeading();
    if (this.s[this.i] !== "[") this.fail("expected '['");
    this.i++;
    const items: string[] = [];
    this.skipSpace();
    if (this.s[this.i] === "]") {
      this.i++;
    } else {
      for (;;) {
        items.push(this.stringItem());
        this.skipSpace();
        const c = this.s[this.i];
        if (c === ",") {
          this.i++;
          this.skipSpace();
          if (this.s[this.i] === "]") {
            this.i++;
            break;
          }
          continue;
        }
        if (c === "]") {
          this.i++;
          break;
        }
        this.fail("expected ',' or ']'");
      }
    }
    this.skipSpace();
    if (this.i !== this.s.length) this.fail("unexpected text after the list");
    return items;
  }

  /** literal_eval strips leading spaces and tabs before parsing. */
  private skipLeading(): void {
    while (this.i < this.s.length && (this.s[this.i] === " " || this.s[this.i] === "\t")) this.i++;
  }

  /** One or more adjacent string literals, concatenated. */
  private stringItem(): string {
    let value = this.stringLiteral();
    for (;;) {
      const save = this.i;
      this.skipSpace();
      if (this.startsString()) value += this.stringLiteral();
      else {
        this.i = save;
        return value;
      }
    }
  }

  private startsString(): boolean {
    const m = /^(?:[rRuU]|)["']/.exec(this.s.slice(this.i, this.i + 2));
    return m !== null;
  }

  private stringLiteral(): string {
    let raw = false;
    const prefix = this.s[this.i];
    if (prefix === "r" || prefix === "R") {
      raw = true;
      this.i++;
    } else if (prefix === "u" || prefix === "U") {
      this.i++;
    }
    const quote = this.s[this.i];
    if (quote !== '"' && quote !== "'") this.fail("expected a string");
    const triple = this.s.startsWith(quote.repeat(3), this.i);
    const delimiter = triple ? quote.repeat(3) : quote;
    this.i += delimiter.length;
    let out = "";
    for (;;) {
      if (this.i >= this.s.length) this.fail("unterminated string");
      if (this.s.startsWith(delimiter, this.i)) {
        this.i += delimiter.length;
        return out;
      }
      const c = this.s[this.i]!;
      if (c === "\n" && !triple) this.fail("line break inside a string");
      if (c === "\\") {
        const next = this.s[this.i + 1];
        if (next === undefined) this.fail("unterminated string");
        if (raw) {
          // A raw string keeps the backslash, and the escaped character does not end it.
          out += c + next;
          this.i += 2;
          continue;
        }
        out += this.escape();
        continue;
      }
      out += c;
      this.i++;
    }
  }

  private escape(): string {
    const next = this.s[this.i + 1]!;
    this.i += 2;
    const simple: Record<string, string> = { "\\": "\\", "'": "'", '"': '"', n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", f: "\f", v: "\v", "\n": "" };
    const mapped = simple[next];
    if (mapped !== undefined) return mapped;
    if (next >= "0" && next <= "7") {
      let digits = next;
      while (digits.length < 3 && /[0-7]/.test(this.s[this.i] ?? "")) digits += this.s[this.i++];
      return String.fromCodePoint(parseInt(digits, 8));
    }
    const hexLength = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
    if (hexLength > 0) {
      const hex = this.s.slice(this.i, this.i + hexLength);
      if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) this.fail(`truncated \\${next} escape`);
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) this.fail(`illegal Unicode character in \\${next} escape`);
      this.i += hexLength;
      return String.fromCodePoint(code);
    }
    if (next === "N") this.fail("\\N{…} escapes are not supported");
    // Python keeps an unknown escape as written.
    return "\\" + next;
  }
}

// ---------------------------------------------------------------------------------------------
// HM-EQA files

export interface HmEqaQuestion {
  /** HM3D scene, e.g. `00004-VqCaAuuoeWk`. */
  scene: string;
  floor: number;
  question: string;
  /** The choices, in order A, B, C, … */
  choices: string[];
  /** The question with its lettered choices, as the file words it for the model. */
  questionFormatted: string;
  /** The correct letter. */
  answer: string;
  /** The text of the correct choice. */
  answerText: string;
  /** Question category: location, existence, state, identification, count. */
  label: string;
}

export interface HmEqaInitPose {
  /** `scene_floor`, e.g. `00001-UVdNNRcVyV1_0`. */
  sceneFloor: string;
  scene: string;
  floor: number;
  /** `[init_x, init_y, init_z]`. */
  position: [number, number, number];
  /** `init_angle`, in radians. */
  angle: number;
}

const QUESTION_COLUMNS = ["scene", "floor", "question", "choices", "question_formatted", "answer", "label"] as const;
const POSE_COLUMNS = ["scene_floor", "init_x", "init_y", "init_z", "init_angle"] as const;

/** Parses the text of HM-EQA's `questions.csv`. */
export function parseHmEqaQuestions(text: string, file: string): HmEqaQuestion[] {
  const { records, lines } = csvRecordsByHeader(text, file, QUESTION_COLUMNS);
  return records.map((r, index) => {
    const at = (field: string): InputLocation => ({ file, line: lines[index]!, index, field });
    const floor = parseInteger(r.floor!, at("floor"));
    let choices: string[];
    try {
      choices = parsePythonStringList(r.choices!);
    } catch (error) {
      throw new UserError((error as Error).message, at("choices"), "write the choices as a Python list of strings, e.g. ['Yes', 'No']");
    }
    if (choices.length === 0) throw new UserError("has no choices", at("choices"));
    const answer = r.answer!.trim();
    const k = /^[A-Z]$/.test(answer) ? answer.charCodeAt(0) - 65 : -1;
    if (k < 0 || k >= choices.length) {
      throw new UserError(`"${r.answer}" is not one of the letters A-${String.fromCharCode(64 + choices.length)}`, at("answer"));
    }
    if (r.scene!.trim() === "") throw new UserError("is empty", at("scene"));
    if (r.question!.trim() === "") throw new UserError("is empty", at("question"));
    return {
      scene: r.scene!,
      floor,
      question: r.question!,
      choices,
      questionFormatted: r.question_formatted!,
      answer,
      answerText: choices[k]!,
      label: r.label!,
    };
  });
}

/** Parses the text of HM-EQA's `scene_init_poses.csv`. */
export function parseHmEqaInitPoses(text: string, file: string): HmEqaInitPose[] {
  const { records, lines } = csvRecordsByHeader(text, file, POSE_COLUMNS);
  return records.map((r, index) => {
    const at = (field: string): InputLocation => ({ file, line: lines[index]!, index, field });
    const sceneFloor = r.scene_floor!;
    const m = /^(.+)_(\d+)$/.exec(sceneFloor);
    if (!m) throw new UserError(`"${sceneFloor}" is not SCENE_FLOOR (e.g. 00001-UVdNNRcVyV1_0)`, at("scene_floor"));
    return {
      sceneFloor,
      scene: m[1]!,
      floor: Number(m[2]),
      position: [parseNumber(r.init_x!, at("init_x")), parseNumber(r.init_y!, at("init_y")), parseNumber(r.init_z!, at("init_z"))],
      angle: parseNumber(r.init_angle!, at("init_angle")),
    };
  });
}

export async function loadHmEqaQuestions(file: string): Promise<HmEqaQuestion[]> {
  return parseHmEqaQuestions(await readTextFile(file), file);
}

export async function loadHmEqaInitPoses(file: string): Promise<HmEqaInitPose[]> {
  return parseHmEqaInitPoses(await readTextFile(file), file);
}

/** The start pose of a question's scene and floor, or undefined when the file has none. */
export function findHmEqaInitPose(poses: readonly HmEqaInitPose[], question: Pick<HmEqaQuestion, "scene" | "floor">): HmEqaInitPose | undefined {
  return poses.find((p) => p.scene === question.scene && p.floor === question.floor);
}

function parseNumber(text: string, at: InputLocation): number {
  const value = Number(text.trim());
  if (text.trim() === "" || !Number.isFinite(value)) throw new UserError(`"${text}" is not a number`, at);
  return value;
}

function parseInteger(text: string, at: InputLocation): number {
  const value = parseNumber(text, at);
  if (!Number.isInteger(value)) throw new UserError(`"${text}" is not an integer`, at);
  return value;
}
