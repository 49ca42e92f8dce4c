import { createHash } from "node:crypto";
import { configure } from "safe-stable-stringify";

const stringifyCanonical = configure({ deterministic: true, bigint: false, circularValue: Error });

/** JSON with sorted keys: equal values give equal strings, whatever the key order. */
export function canonicalJson(value: unknown): string {
  const text = stringifyCanonical(value);
  if (text === undefined) throw new TypeError("value cannot be serialised to JSON");
  return text;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function md5Hex(data: string | Uint8Array): string {
  return createHash("md5").update(data).digest("hex");
}
