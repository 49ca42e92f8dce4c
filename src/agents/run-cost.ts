import { emptyUsage, type RoleUsage, type UsageTotals } from "../models/index.js";
import type { AgentTrace } from "./types.js";

/** Calls made for the captioner's role (frame and object captions, open-vocabulary detection); every other call is the agent's. */
const CAPTIONER_CALLS = new Set(["caption", "detect"]);

/**
 * Per role (agent, captioner) and model, the usage of the traces a run recorded, from each
 * call's tokens. A trace written by an older version, whose calls lack tokens, counts whole
 * under the agent's model.
 */
export function traceRoleUsage(traces: readonly AgentTrace[], agentModel: string): RoleUsage[] {
  const byKey = new Map<string, RoleUsage>();
  const add = (role: string, model: string): UsageTotals => {
    const key = `${role}\u0000${model}`;
    let part = byKey.get(key);
    if (!part) byKey.set(key, (part = { role, model, usage: emptyUsage() }));
    return part.usage;
  };
  add("agent", agentModel);
  for (const trace of traces) {
    if (!trace.calls.every((call) => call.usage)) {
      const usage = add("agent", agentModel);
      for (const field of Object.keys(usage) as (keyof UsageTotals)[]) usage[field] += trace.usage[field] ?? 0;
      continue;
    }
    for (const call of trace.calls) {
      const tokens = call.usage!;
      const usage = add(CAPTIONER_CALLS.has(call.role) ? "captioner" : "agent", call.model);
      usage.calls++;
      usage.promptTokens += tokens.promptTokens;
      usage.completionTokens += tokens.completionTokens;
      usage.thinkingTokens += tokens.thinkingTokens;
      if (call.cached) {
        usage.cacheHits++;
        usage.cachedPromptTokens += tokens.promptTokens;
        usage.cachedCompletionTokens += tokens.completionTokens;
      }
    }
  }
  return [...byKey.values()].filter((part, index) => index === 0 || part.usage.calls > 0);
}
