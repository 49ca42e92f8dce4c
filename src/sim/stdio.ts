/**
 * The environment protocol over stdio (wire format: see the doc comment of `protocol.ts`):
 * `StdioEnvironment` spawns a process and speaks to it; `serveEnvironment` wraps any
 * `Environment` on a pair of streams (stdin/stdout by default).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { z } from "zod";
import { JsonLineReader, UserError, describeError, type JsonLineProblem, type Pose } from "../core/index.js";
import {
  actResultSchema,
  actionSchema,
  agentStateSchema,
  boundsSchema,
  decodeObservation,
  encodeObservation,
  infoSchema,
  poseSchema,
  vec3Schema,
  wireObservationSchema,
  type ActResult,
  type Action,
  type AgentState,
  type Environment,
  type EnvironmentInfo,
  type EnvObservation,
  type SceneBounds,
  type Point3,
} from "./protocol.js";

export type EnvironmentErrorKind = "spawn" | "exited" | "timeout" | "malformed" | "remote" | "closed";

/** An environment process failed: it could not start, died, hung, sent garbage or reported an error. */
export class EnvironmentError extends UserError {
  readonly kind: EnvironmentErrorKind;
  constructor(kind: EnvironmentErrorKind, message: string, hint?: string) {
    super(`environment ${kind === "remote" ? "error" : kind}: ${message}`, {}, hint);
    this.name = "EnvironmentError";
    this.kind = kind;
  }
}

export interface StdioEnvironmentOptions {
  command: string;
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Per-request timeout in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Extra time for the requests sent before the process first answers, while it starts (default 60 000): a slow start (a heavy import, a loaded machine) is not a hang. */
  startupMs?: number;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const responseSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.number(), result: z.unknown() }),
  z.object({
    jsonrpc: z.literal("2.0"),
    id: z.number().nullable(),
    error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
  }),
]);

const STDERR_TAIL = 2000;

/** An environment living in another process, spoken to by JSON-RPC over its stdio. */
export class StdioEnvironment implements Environment {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, Pending>();
  private readonly timeoutMs: number;
  private readonly startupMs: number;
  /** Whether the process has answered anything yet (until then it may still be starting). */
  private started = false;
  private nextId = 1;
  private failure: EnvironmentError | undefined;
  private stderrTail = "";
  private closing = false;

  constructor(options: StdioEnvironmentOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.startupMs = options.startupMs ?? 60_000;
    this.child = spawn(options.command, options.args ?? [], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
    });
    this.child.stdin.on("error", () => {
      /* reported through 'exit' */
    });
    this.child.on("error", (error) => this.fail(new EnvironmentError("spawn", `cannot start ${options.command}: ${error.message}`)));
    this.child.on("exit", (code, signal) => {
      if (this.closing && this.pending.size === 0) return;
      const tail = this.stderrTail.trim();
      this.fail(new EnvironmentError("exited", `the process ${options.command} exited (${signal ?? `code ${code}`})${tail ? `; its stderr ends with:\n${tail}` : ""}`));
    });
    new JsonLineReader(this.child.stdout, responseSchema, { message: (message) => this.onResponse(message), problem: (problem) => this.onProblem(problem) });
  }

  private fail(error: EnvironmentError): void {
    this.failure ??= error;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(error);
    }
  }

  private onProblem(problem: JsonLineProblem): void {
    if (problem.kind === "not-json") {
      this.fail(new EnvironmentError("malformed", `not JSON on stdout: ${problem.line.slice(0, 200)}`, "an environment must write only JSON-RPC responses on stdout (logs go to stderr)"));
    } else if (problem.kind === "not-message") {
      this.fail(new EnvironmentError("malformed", `not a JSON-RPC 2.0 response: ${problem.line.slice(0, 200)}`));
    } else {
      this.fail(new EnvironmentError("malformed", `a line on stdout longer than ${problem.maxLineBytes} bytes: ${problem.start}`));
    }
    this.kill();
  }

  private onResponse(message: z.infer<typeof responseSchema>): void {
    this.started = true;
    const pending = message.id === null ? undefined : this.pending.get(message.id);
    if (!pending) {
      if ("error" in message) this.fail(new EnvironmentError("remote", message.error.message));
      return; // a reply to a request that already timed out
    }
    clearTimeout(pending.timer);
    this.pending.delete(message.id as number);
    if ("error" in message) pending.reject(new EnvironmentError("remote", `${pending.method}: ${message.error.message} (code ${message.error.code})`));
    else pending.resolve(message.result);
  }

  private kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new EnvironmentError("closed", `${method} after close`));
    const id = this.nextId++;
    const waitMs = this.started ? this.timeoutMs : this.timeoutMs + this.startupMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const error = new EnvironmentError("timeout", `${method} got no reply in ${waitMs} ms`, "the environment process hangs; it was stopped");
        reject(error);
        this.fail(error);
        this.kill();
      }, waitMs);
      this.pending.set(id, { method, resolve, reject, timer });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  private async typed<T>(method: string, schema: z.ZodType<T>, params?: Record<string, unknown>): Promise<T> {
    const result = await this.call(method, params);
    const parsed = schema.safeParse(result);
    if (!parsed.success) {
      throw new EnvironmentError("malformed", `${method}: unexpected result: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    }
    return parsed.data;
  }

  info(): Promise<EnvironmentInfo> {
    return this.typed("info", infoSchema);
  }

  async reset(start?: AgentState): Promise<AgentState> {
    return this.typed("reset", agentStateSchema, start ? { start } : {});
  }

  async observe(): Promise<EnvObservation> {
    const wire = await this.typed("observe", wireObservationSchema);
    try {
      return decodeObservation(wire);
    } catch (error) {
      throw new EnvironmentError("malformed", `observe: ${describeError(error)}`);
    }
  }

  /** `observe_pose`: the camera placed at `pose`; an environment without it answers "unknown method". */
  async observePose(pose: Pose): Promise<EnvObservation> {
    const wire = await this.typed("observe_pose", wireObservationSchema, { pose: Array.from(pose) });
    try {
      return decodeObservation(wire);
    } catch (error) {
      throw new EnvironmentError("malformed", `observe_pose: ${describeError(error)}`);
    }
  }

  async act(action: Action): Promise<ActResult> {
    return this.typed("act", actResultSchema, { action });
  }

  isNavigable(point: Point3): Promise<boolean> {
    return this.typed("navigable", z.boolean(), { point });
  }

  async geodesicDistance(from: Point3, to: Point3): Promise<number> {
    const d = await this.typed("geodesic_distance", z.number().nullable(), { from, to });
    return d ?? Infinity;
  }

  async bounds(): Promise<SceneBounds> {
    return (await this.typed("bounds", boundsSchema)) as SceneBounds;
  }

  /** Asks the process to close and waits for it to exit (killing it after the timeout). */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((done) => this.child.once("exit", () => done()));
    if (!this.failure) {
      try {
        const closed = this.call("close");
        this.closing = true;
        await closed;
      } catch {
        /* killed below */
      }
    }
    this.closing = true;
    this.child.stdin.end();
    const timer = setTimeout(() => this.kill(), Math.min(this.timeoutMs, 5000));
    await exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Server

const requestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.number(), z.string()]).nullable().optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});

const paramSchemas = {
  info: z.object({}),
  reset: z.object({ start: agentStateSchema.optional() }),
  observe: z.object({}),
  observe_pose: z.object({ pose: poseSchema }),
  act: z.object({ action: actionSchema }),
  navigable: z.object({ point: vec3Schema }),
  geodesic_distance: z.object({ from: vec3Schema, to: vec3Schema }),
  bounds: z.object({}),
  close: z.object({}),
};

class RpcFailure extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

async function dispatch(env: Environment, method: string, rawParams: unknown): Promise<unknown> {
  if (!Object.hasOwn(paramSchemas, method)) throw new RpcFailure(-32601, `unknown method ${method}`);
  const schema = paramSchemas[method as keyof typeof paramSchemas];
  const parsed = schema.safeParse(rawParams ?? {});
  if (!parsed.success) throw new RpcFailure(-32602, `invalid params: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const p = parsed.data as Record<string, unknown>;
  switch (method) {
    case "info":
      return env.info();
    case "reset":
      return env.reset(p.start as AgentState | undefined);
    case "observe":
      return encodeObservation(await env.observe());
    case "observe_pose":
      if (!env.observePose) throw new RpcFailure(-32601, "unknown method observe_pose: this environment cannot place its camera at a pose");
      return encodeObservation(await env.observePose(Float64Array.from(p.pose as number[])));
    case "act":
      return env.act(p.action as Action);
    case "navigable":
      return env.isNavigable(p.point as Point3);
    case "geodesic_distance": {
      const d = await env.geodesicDistance(p.from as Point3, p.to as Point3);
      return Number.isFinite(d) ? d : null;
    }
    case "bounds":
      return env.bounds();
    case "close":
      await env.close();
      return null;
    default:
      throw new RpcFailure(-32601, `unknown method ${method}`);
  }
}

/**
 * Serves `env` on `input`/`output` (stdin/stdout by default) until `close` or the end of input.
 * Requests are handled one at a time, in order.
 */
export async function serveEnvironment(env: Environment, input: Readable = process.stdin, output: Writable = process.stdout): Promise<void> {
  const send = (message: object): void => {
    output.write(`${JSON.stringify(message)}\n`);
  };
  const lines = createInterface({ input, crlfDelay: Infinity });
  let closed = false;
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error: not JSON" } });
      continue;
    }
    const request = requestSchema.safeParse(raw);
    if (!request.success) {
      send({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: not a JSON-RPC 2.0 request" } });
      continue;
    }
    const { id, method, params } = request.data;
    try {
      const result = await dispatch(env, method, params);
      if (id !== undefined) send({ jsonrpc: "2.0", id, result });
    } catch (error) {
      const code = error instanceof RpcFailure ? error.code : -32000;
      if (id !== undefined) send({ jsonrpc: "2.0", id, error: { code, message: describeError(error) } });
    }
    if (method === "close") {
      closed = true;
      break;
    }
  }
  lines.close();
  if (!closed) await env.close();
}
