/**
 * One live agent: a process spoken to over stdio, or a JavaScript module loaded in-process.
 * A session runs one request at a time; the callbacks the agent makes while it works go to
 * the `CallContext` of that request, and run in the asynchronous context of the code that sent
 * it: a process's stdout is read in the context it was started in (the item that started it),
 * so without this a reused process's model calls would be recorded under that first item.
 */
import { AsyncResource } from "node:async_hooks";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { describeError } from "../../core/index.js";
import { LineRpc, RpcError, RpcFailure } from "./rpc.js";

/** What eqakit does for the agent while one request runs. */
export interface CallContext {
  /** A `model/complete` callback: resolves to its result, or throws an RpcError for the agent. */
  request(method: string, params: unknown): Promise<unknown>;
  /** A `log` notification. */
  notify(method: string, params: unknown): void;
}

export interface AgentSession {
  /** Sends one request and waits for its result; a failure of the session rejects with an RpcFailure. */
  call(method: string, params: unknown, timeoutMs: number, context: CallContext): Promise<unknown>;
  /** What the agent wrote on stderr since the last call to this (capped to its tail). */
  takeStderr(): string;
  /** Stops the agent at once. */
  kill(): void;
  /** Asks the agent to shut down and waits for it (killing it after `timeoutMs`). */
  shutdown(timeoutMs: number): Promise<void>;
}

/** Characters of stderr kept: per request in the trace, and in the error of an agent that died. */
export const STDERR_TAIL_CHARS = 4000;

const NO_CONTEXT: CallContext = {
  request: (method) => Promise.reject(new RpcError(-32601, `${method} is only answered while the agent handles a request`)),
  notify: () => {},
};

const tail = (text: string): string => (text.length > STDERR_TAIL_CHARS ? text.slice(-STDERR_TAIL_CHARS) : text);

/** An agent process started from a command line, without a shell. */
export class ProcessSession implements AgentSession {
  private readonly child: ChildProcessWithoutNullStreams;
  readonly rpc: LineRpc;
  private context: CallContext = NO_CONTEXT;
  private stderrSince = "";
  private stderrAll = "";
  private readonly exited: Promise<void>;

  constructor(command: string, args: readonly string[], cwd?: string) {
    this.child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
    this.rpc = new LineRpc(
      this.child.stdout,
      this.child.stdin,
      { request: (method, params) => this.context.request(method, params), notify: (method, params) => this.context.notify(method, params) },
      () => this.kill(),
    );
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderrSince = tail(this.stderrSince + chunk);
      this.stderrAll = tail(this.stderrAll + chunk);
    });
    this.child.on("error", (error) => this.rpc.fail(new RpcFailure("spawn", `cannot start ${command}: ${error.message}`)));
    this.exited = new Promise((done) => {
      this.child.on("close", (code, signal) => {
        const stderr = this.stderrAll.trim();
        this.rpc.fail(new RpcFailure("exited", `the agent process exited (${signal ? `signal ${signal}` : `exit code ${code}`})${stderr ? `; its stderr ends with:\n${stderr}` : ""}`));
        done();
      });
    });
  }

  async call(method: string, params: unknown, timeoutMs: number, context: CallContext): Promise<unknown> {
    // the callbacks see the caller's call context (its item, its role), as a module agent's do
    this.context = { request: AsyncResource.bind(context.request.bind(context)), notify: AsyncResource.bind(context.notify.bind(context)) };
    try {
      return await this.rpc.request(method, params, timeoutMs);
    } finally {
      this.context = NO_CONTEXT;
    }
  }

  /** Resolves when the process has exited and its streams are closed. */
  get closed(): Promise<void> {
    return this.exited;
  }

  takeStderr(): string {
    const text = this.stderrSince;
    this.stderrSince = "";
    return text;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  async shutdown(timeoutMs: number): Promise<void> {
    if (!this.rpc.failed) {
      try {
        await this.rpc.request("shutdown", {}, timeoutMs);
      } catch {
        /* killed below */
      }
    }
    this.child.stdin.end();
    const timer = setTimeout(() => this.kill(), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * What a module agent exports (as its default export, or as named exports): the protocol's
 * methods as functions taking the params and a context with `complete`, `memory` and `log`.
 * An EM-EQA agent has `answer`, an active one `step` (and `reset`, which defaults to `step`).
 */
export interface ModuleAgent {
  initialize?(params: unknown, context: ModuleContext): unknown;
  answer?(params: unknown, context: ModuleContext): unknown;
  reset?(params: unknown, context: ModuleContext): unknown;
  step?(params: unknown, context: ModuleContext): unknown;
  shutdown?(params: unknown, context: ModuleContext): unknown;
}

/** The callbacks a module agent is given with each call. */
export interface ModuleContext {
  complete(params: unknown): Promise<unknown>;
  memory(params?: unknown): Promise<unknown>;
  log(message: string, level?: string): void;
}

const MODULE_METHODS = ["initialize", "answer", "reset", "step", "shutdown"] as const;

function isModuleAgent(value: unknown): value is ModuleAgent {
  if (typeof value !== "object" || value === null) return false;
  const agent = value as Record<string, unknown>;
  return typeof agent.answer === "function" || typeof agent.step === "function";
}

/**
 * Loads a module agent: its default export, or the module itself, must have an `answer` or a
 * `step` function. A TypeScript module (`.ts`, `.mts`) is loaded through tsx when Node cannot
 * load it alone (eqakit's own tsx, else one installed beside the module).
 */
export async function loadModuleAgent(path: string): Promise<ModuleAgent | string> {
  let loaded: unknown;
  try {
    loaded = await import(pathToFileURL(path).href);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (!/\.m?ts$/.test(path) || code !== "ERR_UNKNOWN_FILE_EXTENSION") return `cannot load ${path}: ${describeError(error)}`;
    const typescript = await importTypeScript(path);
    if (typeof typescript === "string") return typescript;
    loaded = typescript.module;
  }
  const candidates = [(loaded as { default?: unknown }).default, loaded];
  const agent = candidates.find(isModuleAgent);
  return agent ?? `${path} exports no answer or step function (export default { initialize, answer, shutdown } or { initialize, reset, step, shutdown })`;
}

async function importTypeScript(path: string): Promise<{ module: unknown } | string> {
  const resolvers = [createRequire(import.meta.url), createRequire(path)];
  for (const require of resolvers) {
    let api: string;
    try {
      // the ESM build of tsx's API (require.resolve would give its CommonJS one)
      const manifest = require.resolve("tsx/package.json");
      const exports = (JSON.parse(readFileSync(manifest, "utf8")) as { exports?: Record<string, { import?: { default?: string } } | string> }).exports?.["./esm/api"];
      const entry = typeof exports === "object" ? exports.import?.default : undefined;
      if (entry === undefined) continue;
      api = join(dirname(manifest), entry);
    } catch {
      continue;
    }
    try {
      const tsx = (await import(pathToFileURL(api).href)) as { tsImport: (specifier: string, parent: string) => Promise<unknown> };
      return { module: await tsx.tsImport(pathToFileURL(path).href, import.meta.url) };
    } catch (error) {
      return `cannot load ${path}: ${describeError(error)}`;
    }
  }
  return `cannot load ${path}: Node loads TypeScript through tsx, which is not installed (npm install tsx beside your agent, or give a .mjs module)`;
}

/** A module agent, called in-process: a timeout stops waiting for it, it cannot stop the code. */
export class ModuleSession implements AgentSession {
  private stopped = false;

  constructor(private readonly agent: ModuleAgent) {}

  async call(method: string, params: unknown, timeoutMs: number, context: CallContext): Promise<unknown> {
    if (this.stopped) throw new RpcFailure("exited", "the module agent was stopped after an earlier failure");
    const name = MODULE_METHODS.find((m) => m === method);
    const own = name === undefined ? undefined : name === "reset" && !this.agent.reset ? this.agent.step : this.agent[name];
    if (!own) {
      if (method === "initialize" || method === "shutdown") return method === "initialize" ? {} : null;
      throw new RpcFailure("remote", `${method} failed in the agent: the module has no ${method} function`);
    }
    const fn = own;
    const moduleContext: ModuleContext = {
      complete: (p) => context.request("model/complete", p),
      memory: (p) => context.request("memory/query", p ?? {}),
      log: (message, level) => context.notify("log", { message, ...(level !== undefined ? { level } : {}) }),
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RpcFailure("timeout", `${method} got no reply in ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([Promise.resolve().then(() => fn.call(this.agent, params, moduleContext)), timeout]);
    } catch (error) {
      if (error instanceof RpcFailure) throw error;
      throw new RpcFailure("remote", `${method} failed in the agent: ${describeError(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  takeStderr(): string {
    return "";
  }

  kill(): void {
    this.stopped = true;
  }

  async shutdown(timeoutMs: number): Promise<void> {
    if (this.stopped) return;
    try {
      await this.call("shutdown", {}, timeoutMs, NO_CONTEXT);
    } catch {
      /* nothing to kill in-process */
    }
    this.stopped = true;
  }
}
