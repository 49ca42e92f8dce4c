/**
 * The ledger of a run's model calls: `calls.jsonl` in the run folder, one line per call as it
 * completes, for every role (agent, captioner, judge, reward model, explorer, stop-check,
 * force-guess, an external agent's `model/complete`…), live or batch, cached or not, answered or failed. It is the
 * run's bill: every cost figure is computed from it (`ledgerCost`), and a resumed run appends
 * to it, so the calls of earlier processes stay counted.
 *
 * Format 1, one JSON object a line:
 * `{ format: 1, at, model, role, endpoint, mode: "live" | "batch", cached, status, reason?,
 *    item?, promptTokens, completionTokens, thinkingTokens, images, retries, latencyMs }`.
 * `status` is `ok`, `truncated`, `filtered`, `refused` (a reply that is not an answer; its
 * tokens were billed) or `failed` (no reply after the retries; nothing billed). A cached call
 * was read from eqakit's model-call cache: no request was sent and nothing was billed.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UserError, writeFileAtomically } from "../core/index.js";
import { JsonlAppender } from "../store/index.js";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.js";

/**
 * Roles that several modules name: `eqa run` costs its judge's calls apart from its agent's.
 * The others are named where their models are made ("agent", "captioner", "explorer",
 * "stop-check", "responder", "scorer", "rewriter").
 */
export const JUDGE_ROLE = "judge";
export const REWARD_MODEL_ROLE = "reward model";
/**
 * Force-a-guess's calls of the agent's model (its abstention check and the blind guess that
 * replaces an abstaining answer): costed on a row of their own, within the answering stage.
 */
export const FORCE_GUESS_ROLE = "force-guess";

/** The ledger's file in a run folder. */
export const CALLS_FILE = "calls.jsonl";
/** The format the writer below writes; readers take this one only. */
export const CALL_LEDGER_FORMAT = 1;

export const CALL_STATUSES = ["ok", "truncated", "filtered", "refused", "failed"] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const callEntrySchema = z.object({
  format: z.literal(CALL_LEDGER_FORMAT),
  at: z.string(),
  model: z.string(),
  role: z.string(),
  endpoint: z.string(),
  mode: z.enum(["live", "batch"]),
  cached: z.boolean(),
  status: z.enum(CALL_STATUSES),
  reason: z.string().optional(),
  item: z.string().optional(),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  thinkingTokens: z.number().int().nonnegative(),
  images: z.number().int().nonnegative(),
  retries: z.number().int().nonnegative(),
  latencyMs: z.number().nonnegative(),
});

/** One model call, as the ledger holds it. */
export type CallEntry = z.infer<typeof callEntrySchema>;

/** A call before it is written: the format and time are the writer's. */
export type CallRecord = Omit<CallEntry, "format" | "at">;

/**
 * Reads a run folder's ledger (none: no calls). A last line without its newline is what a
 * killed process leaves: it is left out. Any other line that is not a call is a UserError
 * naming the file and the line.
 */
export function readCallLedger(runDir: string): CallEntry[] {
  const path = join(runDir, CALLS_FILE);
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  const end = text.lastIndexOf("\n") + 1;
  const entries: CallEntry[] = [];
  const lines = text.slice(0, end).split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UserError("a line of the model-call ledger is not JSON", { file: path, line: index + 1 }, "the ledger is written by eqakit only: restore it, or remove the line (its call is then not counted)");
    }
    const parsed = callEntrySchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UserError(`not a model call of ledger format ${CALL_LEDGER_FORMAT}: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim(), { file: path, line: index + 1 }, "the ledger is written by eqakit only: restore it, or remove the line (its call is then not counted)");
    }
    entries.push(parsed.data);
  }
  return entries;
}

/** Appends calls to a run folder's ledger, each line written at once. */
export class CallLedgerWriter {
  private readonly appender: JsonlAppender;

  constructor(readonly runDir: string) {
    const path = join(runDir, CALLS_FILE);
    // a line cut by a killed process: removed, so that appends start on a line of their own
    if (existsSync(path)) {
      const text = readFileSync(path);
      const end = text.lastIndexOf(0x0a) + 1;
      if (end < text.length) truncateSync(path, end);
    }
    this.appender = new JsonlAppender(path);
  }

  append(call: CallRecord): void {
    const entry: CallEntry = { format: CALL_LEDGER_FORMAT, at: new Date().toISOString(), ...call };
    this.appender.append(entry);
  }
}

/**
 * `eqa merge`: the ledgers of a run's shards, one after the other, as the merged run's ledger
 * (written whole into `outDir`); returns its calls.
 */
export async function mergeCallLedgers(shardDirs: readonly string[], outDir: string): Promise<CallEntry[]> {
  const calls = shardDirs.flatMap((dir) => readCallLedger(dir));
  await writeFileAtomically(join(outDir, CALLS_FILE), calls.map((call) => `${JSON.stringify(call)}\n`).join(""));
  return calls;
}

/** What the ledger learns of a call from where it is made: the item (question, episode) and a role that overrides the model's own. */
export interface CallContext {
  item?: string;
  role?: string;
}

const callContext = new AsyncLocalStorage<CallContext>();

/** Runs `work` with its model calls recorded under `context` (an item's id, a role), kept through awaits. */
export function withCallContext<T>(context: CallContext, work: () => T): T {
  return callContext.run({ ...callContext.getStore(), ...context }, work);
}

/** The context of the call being made now. */
export function currentCallContext(): CallContext {
  return callContext.getStore() ?? {};
}

/** `model`, with its calls recorded under `role` (a stop check of an explorer's VLM, force-a-guess's calls of the agent's model). */
export function inRole(model: ChatModel, role: string): ChatModel {
  return {
    name: model.name,
    spec: model.spec,
    complete: (request: ChatRequest): Promise<ChatResponse> => withCallContext({ role }, () => model.complete(request)),
  };
}
