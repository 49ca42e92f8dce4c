/**
 * The reading side of eqakit's two process protocols, JSON-RPC 2.0 one message a line: an
 * agent's (`agents/external`) and an environment's (`sim/stdio`). The reader splits the bytes
 * into lines itself, so that a line without end cannot grow past the protocol's cap; strips a
 * final CR; skips blank lines; and checks each line as JSON, then with the protocol's message
 * schema. The first line it cannot take stops it and goes to the protocol, which words the
 * failure its own way (both end the connection on it). Messages are handed over in order; one
 * whose handler stops the reader is the last.
 */
import type { Readable } from "node:stream";
import type { z } from "zod";

/** How many bytes of a line a problem keeps, for its message. */
const KEPT_BYTES = 200;

/** A line the reader could not take: longer than the cap (its first bytes), not JSON, or not a message of the protocol. */
export type JsonLineProblem = { kind: "too-long"; maxLineBytes: number; start: string } | { kind: "not-json"; line: string } | { kind: "not-message"; line: string };

export interface JsonLineHandlers<T> {
  /** A line that is a message of the protocol, with its text. */
  message(message: T, line: string): void;
  /** The line that stopped the reader. */
  problem(problem: JsonLineProblem): void;
}

export interface JsonLineReaderOptions {
  /** Bytes a line may hold before its end (default: no cap; a process's own recordings may be large). */
  maxLineBytes?: number;
}

/** Reads `input` a line at a time, each line a `schema` message, until a bad line or `stop()`. */
export class JsonLineReader<T> {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private stopped = false;
  private readonly maxLineBytes: number;
  private readonly onData = (chunk: Buffer | string): void => this.take(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);

  constructor(
    private readonly input: Readable,
    private readonly schema: z.ZodType<T>,
    private readonly handlers: JsonLineHandlers<T>,
    options: JsonLineReaderOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? Infinity;
    input.on("data", this.onData);
  }

  /** Reads no more: what arrives later is left unread. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.buffered = [];
    this.input.off("data", this.onData);
  }

  private take(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1 && !this.stopped; end = chunk.indexOf(10, start)) {
      this.buffered.push(chunk.subarray(start, end));
      const line = Buffer.concat(this.buffered).toString("utf8");
      this.buffered = [];
      this.bufferedBytes = 0;
      start = end + 1;
      this.read(line.endsWith("\r") ? line.slice(0, -1) : line);
    }
    if (this.stopped) return;
    const rest = chunk.subarray(start);
    this.bufferedBytes += rest.byteLength;
    if (this.bufferedBytes > this.maxLineBytes) {
      const begins = Buffer.concat([...this.buffered, rest]).subarray(0, KEPT_BYTES).toString("utf8");
      this.refuse({ kind: "too-long", maxLineBytes: this.maxLineBytes, start: begins });
      return;
    }
    if (rest.byteLength > 0) this.buffered.push(rest);
  }

  private read(line: string): void {
    if (line.trim() === "") return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.refuse({ kind: "not-json", line });
      return;
    }
    const parsed = this.schema.safeParse(raw);
    if (!parsed.success) {
      this.refuse({ kind: "not-message", line });
      return;
    }
    this.handlers.message(parsed.data, line);
  }

  private refuse(problem: JsonLineProblem): void {
    this.stop();
    this.handlers.problem(problem);
  }
}
