/**
 * JSON-RPC 2.0 in both directions over a pair of byte streams, one message a line: eqakit's
 * requests to an agent and the agent's requests (callbacks) to eqakit. Lines are read by core's
 * `JsonLineReader`, capped at `MAX_LINE_BYTES`; any line that is not a JSON-RPC 2.0 message ends
 * the connection with an error that quotes it.
 */
import type { Readable, Writable } from "node:stream";
import { z } from "zod";
import { JsonLineReader, describeError, type JsonLineProblem } from "../../core/index.js";
import { MAX_LINE_BYTES } from "./protocol.js";

/** What went wrong with the other side: it could not start, died, hung, sent garbage or replied with an error. */
export type AgentFailureKind = "spawn" | "exited" | "timeout" | "malformed" | "remote";

/** A failure of the connection or of one request, before it is named after the agent and item. */
export class RpcFailure extends Error {
  constructor(
    readonly kind: AgentFailureKind,
    message: string,
  ) {
    super(message);
    this.name = "RpcFailure";
  }
}

/** An error the handler of a callback returns to the agent as a JSON-RPC error. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

const id = z.union([z.number(), z.string()]);
const messageSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: id.optional(), method: z.string(), params: z.unknown().optional() }),
  z.object({ jsonrpc: z.literal("2.0"), id, result: z.unknown() }),
  z.object({ jsonrpc: z.literal("2.0"), id: id.nullable(), error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
]);

export interface RpcHandlers {
  /** Answers a request the other side made (throw an RpcError to refuse it). */
  request(method: string, params: unknown): Promise<unknown>;
  /** Takes a notification (a request without id). */
  notify(method: string, params: unknown): void;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: RpcFailure) => void;
  timer: NodeJS.Timeout;
}

const quote = (line: string): string => JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line);

export class LineRpc {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: RpcFailure | undefined;
  private readonly reader: JsonLineReader<z.infer<typeof messageSchema>>;
  /** Takes an error reply to no request (id null: the agent could not read a line) instead of ending the connection. */
  onStrayError: ((error: { code: number; message: string }) => void) | undefined;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly handlers: RpcHandlers,
    /** Called once, with the failure that ended the connection. */
    private readonly onFailure: (failure: RpcFailure) => void = () => {},
  ) {
    this.reader = new JsonLineReader(input, messageSchema, { message: (message, line) => this.onMessage(message, line), problem: (problem) => this.onProblem(problem) }, { maxLineBytes: MAX_LINE_BYTES });
    output.on("error", () => {
      /* a closed pipe: the process's exit reports it */
    });
  }

  /** The failure that ended the connection, if one did. */
  get failed(): RpcFailure | undefined {
    return this.failure;
  }

  private onProblem(problem: JsonLineProblem): void {
    switch (problem.kind) {
      case "too-long":
        this.fail(new RpcFailure("malformed", `a line on stdout longer than ${problem.maxLineBytes} bytes (it starts ${quote(problem.start)})`));
        return;
      case "not-json":
        this.fail(new RpcFailure("malformed", `a line on stdout that is not JSON: ${quote(problem.line)} (logs go to stderr or the log method)`));
        return;
      case "not-message":
        this.fail(new RpcFailure("malformed", `a line on stdout that is not a JSON-RPC 2.0 message: ${quote(problem.line)}`));
        return;
    }
  }

  private onMessage(message: z.infer<typeof messageSchema>, line: string): void {
    if ("method" in message) {
      if (message.id === undefined) {
        this.handlers.notify(message.method, message.params);
        return;
      }
      const requestId = message.id;
      this.handlers.request(message.method, message.params).then(
        (result) => this.send({ jsonrpc: "2.0", id: requestId, result: result ?? null }),
        (error: unknown) => {
          const code = error instanceof RpcError ? error.code : -32000;
          this.send({ jsonrpc: "2.0", id: requestId, error: { code, message: describeError(error) } });
        },
      );
      return;
    }
    const pending = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
    if (!pending) {
      if ("error" in message && message.id === null && this.onStrayError) this.onStrayError(message.error);
      else if ("error" in message && message.id === null) this.fail(new RpcFailure("remote", `the agent reported: ${message.error.message} (code ${message.error.code})`));
      else this.fail(new RpcFailure("malformed", `a reply to no request eqakit sent (id ${JSON.stringify(message.id)}): ${quote(line)}`));
      return;
    }
    clearTimeout(pending.timer);
    this.pending.delete(message.id as number);
    if ("error" in message) pending.reject(new RpcFailure("remote", `${pending.method} failed in the agent: ${message.error.message} (code ${message.error.code})`));
    else pending.resolve(message.result);
  }

  private send(message: object): void {
    this.sendLine(JSON.stringify(message));
  }

  /** Writes one line as it is (the conformance check sends malformed ones). */
  sendLine(line: string): void {
    if (this.failure) return;
    this.output.write(`${line}\n`);
  }

  /** Ends the connection: every request in flight is rejected with `failure`. */
  fail(failure: RpcFailure): void {
    if (this.failure) return;
    this.failure = failure;
    for (const [key, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(key);
      pending.reject(failure);
    }
    this.reader.stop();
    this.onFailure(failure);
  }

  /** Sends a request and waits for its result at most `timeoutMs` (a timeout ends the connection). */
  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const requestId = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new RpcFailure("timeout", `${method} got no reply in ${timeoutMs} ms`)), timeoutMs);
      this.pending.set(requestId, { method, resolve, reject, timer });
      this.send({ jsonrpc: "2.0", id: requestId, method, params });
    });
  }
}
