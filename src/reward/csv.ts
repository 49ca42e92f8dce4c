import { UserError } from "../core/index.js";

/** RFC 4180 CSV: fields quoted when they hold a comma, a quote or a line break; quotes doubled. */
export function toCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  const cell = (v: string | number | null): string => {
    const text = v === null ? "" : String(v);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [header, ...rows].map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n";
}

/** Parses RFC 4180 CSV (as spreadsheets write it, a byte-order mark allowed) into rows of fields, with each row's first line. */
export function parseCsv(text: string, file: string): { rows: string[][]; lines: number[] } {
  const rows: string[][] = [];
  const lines: number[] = [];
  let field = "";
  let row: string[] = [];
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let fieldStarted = false;
  const endRow = (): void => {
    row.push(field);
    if (!(row.length === 1 && row[0] === "")) {
      rows.push(row);
      lines.push(rowLine);
    }
    row = [];
    field = "";
    fieldStarted = false;
  };
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === "\n") line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
    } else if (c === ",") {
      row.push(field);
      field = "";
      fieldStarted = false;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endRow();
      line++;
      rowLine = line;
    } else {
      field += c;
      fieldStarted = true;
    }
  }
  if (quoted) throw new UserError("a quoted field is not closed", { file, line: rowLine }, "check the file was saved as CSV");
  if (field !== "" || row.length > 0) endRow();
  return { rows, lines };
}
