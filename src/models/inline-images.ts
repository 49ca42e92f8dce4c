/**
 * Images as requests carry them, computed once per image and kept beside its bytes: the
 * questions of an episode send the same prepared frames again and again (50 of them, 6 MB of
 * base64, in one OpenEQA request), so an image's base64 and sha256 are worked out the first
 * time its bytes are sent and kept while the bytes are (a weak map keyed by the bytes), and a
 * request's body is built as byte chunks in which each image's base64 is written as kept,
 * never copied into one large string and never measured again.
 *
 * The bytes sent are those of `JSON.stringify` of the same body with each image inline, so
 * requests and the model-call cache's keys do not depend on how the body was built. Image
 * bytes are never changed once in a request (prepared frames are not), which is what lets
 * their encodings be kept.
 */
import { randomUUID } from "node:crypto";
import { sha256Hex } from "../core/index.js";

interface Encodings {
  sha256?: string;
  base64?: Buffer;
}

const kept = new WeakMap<Uint8Array, Encodings>();

function encodingsOf(data: Uint8Array): Encodings {
  let encodings = kept.get(data);
  if (!encodings) {
    encodings = {};
    kept.set(data, encodings);
  }
  return encodings;
}

/** The sha256 of an image's bytes, hex: hashed the first time it is asked for, then kept while the bytes are. */
export function imageSha256(data: Uint8Array): string {
  const encodings = encodingsOf(data);
  return (encodings.sha256 ??= sha256Hex(data));
}

/**
 * Records the sha256 already known for these bytes (a prepared frame's, verified when it was
 * read or computed when it was encoded), so that it is not hashed again.
 */
export function knownImageSha256(data: Uint8Array, sha256: string): void {
  encodingsOf(data).sha256 ??= sha256;
}

/** An image's bytes as base64 (ASCII bytes): encoded the first time, then kept while the bytes are. */
export function imageBase64(data: Uint8Array): Buffer {
  const encodings = encodingsOf(data);
  return (encodings.base64 ??= Buffer.from(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64"), "latin1"));
}

/** While a body is being cut into chunks: the inline images met, in the order they are written. */
let collecting: InlineBase64[] | undefined;
/** Stands for an inline image in the text of a body being cut (random, and not text any JSON string holds as is). */
const MARK = `\u0000eqakit-image-${randomUUID()}\u0000`;
const MARK_JSON = JSON.stringify(MARK);

/**
 * A JSON string value made of a short text prefix (e.g. `data:image/png;base64,`) and an
 * image's base64. `JSON.stringify` writes it as that string (batch files are written so);
 * {@link jsonBody} writes the base64 bytes as they are kept.
 */
export class InlineBase64 {
  constructor(
    readonly prefix: string,
    readonly base64: Buffer,
  ) {}

  toJSON(): string {
    if (collecting) {
      collecting.push(this);
      return MARK;
    }
    return this.prefix + this.base64.toString("latin1");
  }
}

/** The base64 of an image's bytes as a JSON string value, after `prefix`. */
export function inlineImage(data: Uint8Array, prefix = ""): InlineBase64 {
  return new InlineBase64(prefix, imageBase64(data));
}

/** A JSON body as the chunks to write, in order, and their length in bytes. */
export interface JsonBody {
  chunks: Buffer[];
  length: number;
}

/**
 * The UTF-8 bytes of `JSON.stringify(body)`, as chunks: the text around the images encoded
 * once, each {@link InlineBase64}'s base64 written as kept (base64 needs no escaping in JSON).
 */
export function jsonBody(body: unknown): JsonBody {
  const images: InlineBase64[] = [];
  collecting = images;
  let text: string;
  try {
    text = JSON.stringify(body);
  } finally {
    collecting = undefined;
  }
  const pieces = text.split(MARK_JSON);
  if (pieces.length !== images.length + 1) throw new Error(`a request body held ${pieces.length - 1} image marks for ${images.length} images`);
  const chunks: Buffer[] = [];
  let length = 0;
  const push = (chunk: Buffer): void => {
    if (chunk.length === 0) return;
    chunks.push(chunk);
    length += chunk.length;
  };
  pieces.forEach((piece, i) => {
    const image = images[i];
    // each image's string: its opening quote and escaped prefix with the text before, its closing quote with the text after
    const before = `${i > 0 ? '"' : ""}${piece}${image ? `"${JSON.stringify(image.prefix).slice(1, -1)}` : ""}`;
    push(Buffer.from(before, "utf8"));
    if (image) push(image.base64);
  });
  return { chunks, length };
}
