/**
 * `eqa agent check` for every kind an agent supports: the EM-EQA suite (src/agents/external/check.ts),
 * the mixed suite given by the caller (src/generate/mixed-check.ts) and, for active agents, two episodes in the built-in simulator (home-0, 64×48 observations)
 * against the stand-in model: one the agent ends itself (within 60 actions), one of a
 * two-action budget after which it must answer or stop; the slowest reply against half the
 * timeout; then, for a process, malformed input, an unknown method, a `step` with invalid
 * params and shutdown. Every process is sent `initialize` once, with a run's settings.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HouseholdEnvironment } from "../../sim/index.js";
import { AGENT_TASK_KINDS, ExternalActiveAgent, checkAgent, checkModel, checkTagAgent, describeFailure, handshake, probeAgent, robustness, type AgentCheck, type AgentCheckOptions, type AgentTaskKind, type ExternalAgentSpec } from "../external/index.js";
import { exploreExternal, type ExternalExplorationResult } from "./external.js";

/** Most actions of the check's first active episode. */
const CHECK_STEPS = 60;

const isTaskKind = (kind: string): kind is AgentTaskKind => (AGENT_TASK_KINDS as readonly string[]).includes(kind);

/**
 * Checks the agent for every kind it says it supports (em-eqa when it says nothing or cannot
 * start); a kind the protocol does not have is a failed check naming it.
 */
export async function checkAgentKinds(spec: ExternalAgentSpec, options: AgentCheckOptions = {}, suites: { mixed?: AgentSuite } = {}): Promise<{ kinds: AgentTaskKind[]; checks: AgentCheck[] }> {
  const identity = await probeAgent(spec, options);
  const named = typeof identity === "string" ? [] : (identity.supports ?? ["em-eqa"]);
  const supported = AGENT_TASK_KINDS.filter((k) => named.includes(k));
  const kinds = supported.length > 0 ? supported : (["em-eqa"] as AgentTaskKind[]);
  const checks: AgentCheck[] = [];
  const unknown = named.filter((k) => !isTaskKind(k));
  if (unknown.length > 0) checks.push({ name: "supports", passed: false, detail: `names ${unknown.map((k) => JSON.stringify(k)).join(", ")}, which the protocol does not have (its task kinds: ${AGENT_TASK_KINDS.join(", ")})` });
  for (const kind of kinds) checks.push(...(await checkKind(kind, spec, options, suites)));
  return { kinds, checks };
}

/** A kind's suite run from a layer above this one (the mixed suite needs the generator and the mixed run). */
export type AgentSuite = (spec: ExternalAgentSpec, options: AgentCheckOptions) => Promise<AgentCheck[]>;

/** Each task kind's suite (the agent protocol's kinds, not run kinds). */
function checkKind(task: AgentTaskKind, spec: ExternalAgentSpec, options: AgentCheckOptions, suites: { mixed?: AgentSuite }): Promise<AgentCheck[]> {
  switch (task) {
    case "active":
      return checkActiveAgent(spec, options);
    case "tag":
      return checkTagAgent(spec, options);
    case "mixed":
      return suites.mixed ? suites.mixed(spec, options) : Promise.resolve([{ name: "mixed", passed: false, detail: "this check has no mixed suite" }]);
    case "em-eqa":
      return checkAgent(spec, options);
  }
}

function describeEpisode(r: ExternalExplorationResult): string {
  const failed = r.failedActions > 0 ? ` (${r.failedActions} failed)` : "";
  const end = r.stop === "answered" ? `answered ${JSON.stringify(r.answer)}${r.confidence !== null ? ` with confidence ${r.confidence}` : ""}` : r.stop === "stopped" ? "stopped without an answer" : `was ended by the ${r.stop === "time" ? "time" : "step"} budget`;
  const log = r.trace.log ? `, ${r.trace.log.length} log line(s)` : "";
  return `${r.pathLengthSteps} action(s)${failed}, ${r.pathLengthM.toFixed(2)} m, ${r.frames} frame(s), then ${end}; ${r.trace.calls.length} model call(s)${log}; ${r.agentMsPerStep.toFixed(1)} ms a reply, the slowest ${Math.round(r.slowestReplyMs)} ms`;
}

/** The active kind's checks (see the module comment); every check's name starts with "active:". */
export async function checkActiveAgent(spec: ExternalAgentSpec, options: AgentCheckOptions = {}): Promise<AgentCheck[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const checks: AgentCheck[] = [];
  let slowest = 0;
  const dir = mkdtempSync(join(tmpdir(), "eqakit-agent-check-"));
  const agent = new ExternalActiveAgent(spec, { model: checkModel(), timeoutMs, settings: { maxSteps: CHECK_STEPS, episodeTimeMs: null } });
  try {
    const episodes = [
      { name: "active: reset and step (home-0)", maxSteps: CHECK_STEPS, id: "eqakit-check-explore" },
      { name: "active: step budget (2 actions)", maxSteps: 2, id: "eqakit-check-budget" },
    ];
    for (const e of episodes) {
      const env = HouseholdEnvironment.fromSeed(0, { width: 64, height: 48 });
      try {
        await env.reset();
        const r = await exploreExternal(agent, { questionId: e.id, question: "What is in the middle of the living room?", scene: "home-0" }, env, join(dir, e.id), { maxSteps: e.maxSteps });
        if (checks.length === 0) checks.push({ ...handshake(agent), name: "active: initialize" });
        slowest = Math.max(slowest, r.slowestReplyMs);
        const passed = r.stop !== "budget" || e.maxSteps === CHECK_STEPS;
        checks.push({ name: e.name, passed, detail: passed ? describeEpisode(r) : `${describeEpisode(r)}: with stepsLeft 0 the agent must answer or stop, it took an action` });
      } catch (error) {
        if (checks.length === 0) checks.push({ ...handshake(agent, error), name: "active: initialize" });
        checks.push({ name: e.name, passed: false, detail: describeFailure(error) });
      } finally {
        await env.close();
      }
    }
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // a reply that took half the time allowed is a warning sign before a long run on a busier machine
  if (checks.some((c) => c.name.startsWith("active: reset") && c.passed)) {
    const ok = slowest < timeoutMs / 2;
    checks.push({ name: "active: reply time", passed: ok, detail: `the slowest reply took ${Math.round(slowest)} ms of the ${timeoutMs} ms allowed (--agent-timeout)${ok ? "" : ": more than half; give a longer --agent-timeout or a faster agent"}` });
  }
  if (spec.kind === "exec") checks.push(...(await robustness(spec.command, spec.args, timeoutMs, agent.initializeParams())).map((c) => ({ ...c, name: `active: ${c.name}` })));
  return checks;
}
