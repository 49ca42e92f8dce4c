/**
 * The small part of Python's string formatting that OpenEQA's prompts go through, so
 * that eqakit sends the same bytes: `str.format` with named fields, and `str(list)`.
 */

/** Python's `repr(str)`: single quotes unless the text has ' and no ", escapes as CPython does. */
export function pythonStrRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    out += escapeChar(char, quote);
  }
  return out + quote;
}

function escapeChar(char: string, quote: string): string {
  if (char === quote || char === "\\") return `\\${char}`;
  if (char === "\t") return "\\t";
  if (char === "\n") return "\\n";
  if (char === "\r") return "\\r";
  const code = char.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f) return `\\x${hex(code, 2)}`;
  if (code < 0x7f || isPythonPrintable(char)) return char;
  if (code <= 0xff) return `\\x${hex(code, 2)}`;
  if (code <= 0xffff) return `\\u${hex(code, 4)}`;
  return `\\U${hex(code, 8)}`;
}

/** Python's `str.isprintable` for one character: not in categories C*, Z* (space excepted). */
function isPythonPrintable(char: string): boolean {
  return !/[\p{C}\p{Z}]/u.test(char) || char === " ";
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}

/** Python's `str(list_of_str)`, e.g. `['a', "it's"]`. */
export function pythonListRepr(items: readonly string[]): string {
  return `[${items.map(pythonStrRepr).join(", ")}]`;
}

/**
 * Python's `template.format(**fields)` for plain named fields (`{name}`), with `{{`/`}}`
 * as literal braces. Fields are inserted as given; a field the template names but the
 * caller did not give is an error, as in Python.
 */
export function pythonFormat(template: string, fields: Record<string, string>): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (match, name: string | undefined) => {
    if (match === "{{") return "{";
    if (match === "}}") return "}";
    const value = fields[name ?? ""];
    if (value === undefined) throw new Error(`prompt template names an unknown field {${name}}`);
    return value;
  });
}

/** The characters for which Python's `str.isspace()` is true (JavaScript's `\s` also has U+FEFF, Python's does not). */
const PYTHON_SPACE = "[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const PYTHON_STRIP = new RegExp(`^${PYTHON_SPACE}+|${PYTHON_SPACE}+$`, "g");

/** Python's `str.strip()` with no argument. */
export function pythonStrip(text: string): string {
  return text.replace(PYTHON_STRIP, "");
}

/**
 * Python's `"%.Nf" % x` (numpy's `savetxt(fmt="%f")` goes through it): the exact value of the
 * double rounded half to even at N decimals, `-` kept on negative zero and on negatives that round
 * to zero, `nan`, `inf`, `-inf`. JavaScript's `toFixed` differs on all of these (it rounds ties
 * away from zero: 0.0078125 is "0.007813" there, "0.007812" in Python).
 */
export function pythonFixed(x: number, digits = 6): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // |x| = mantissa × 2^power exactly
  const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n);
  const power = exponent === 0 ? -1074 : exponent - 1075;
  let numerator = mantissa * 10n ** BigInt(digits);
  let denominator = 1n;
  if (power >= 0) numerator <<= BigInt(power);
  else denominator <<= BigInt(-power);
  let quotient = numerator / denominator;
  const twice = 2n * (numerator - quotient * denominator);
  if (twice > denominator || (twice === denominator && (quotient & 1n) === 1n)) quotient += 1n;
  const text = quotient.toString().padStart(digits + 1, "0");
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}
