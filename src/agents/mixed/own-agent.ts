/**
 * An agent of the user's own on a Mixed EQA set (`eqa explore --episodes SET/episodes.json
 * --agent exec:…`, the protocol's `mixed` kind): the active episode loop (`exploreExternal`)
 * whose `reset` also carries the history, per day when it was, its frame folder and frame count,
 * and the agent's own actions with positions in the home's world frame (the frame of the
 * observations now). What happened while the agent was away never reaches it.
 */
import type { AgentState, Environment } from "../../sim/index.js";
import type { MixedHistory as ProtocolMixedHistory } from "../external/protocol.js";
import type { ExternalActiveAgent } from "../external/index.js";
import { exploreExternal } from "../explore/external.js";
import type { MixedOutcome } from "./agents.js";
import type { HistoryAction, HistoryActionObject, MixedHistory } from "./types.js";

/** An agent of the user's own for a mixed run, with its episode time budget. */
export interface OwnMixedAgent {
  own: ExternalActiveAgent;
  /** Each episode's wall-time budget, milliseconds (none when absent). */
  timeMs?: number;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

function toWorld(m: readonly number[], p: readonly number[]): [number, number, number] {
  const at = (r: number): number => round3(m[r * 4]! * p[0]! + m[r * 4 + 1]! * p[1]! + m[r * 4 + 2]! * p[2]! + m[r * 4 + 3]!);
  return [at(0), at(1), at(2)];
}

function worldObject<T extends HistoryActionObject>(m: readonly number[], o: T): T {
  return { ...o, position: o.position ? toWorld(m, o.position) : null };
}

function worldAction(m: readonly number[], a: HistoryAction): HistoryAction {
  return { ...a, object: worldObject(m, a.object), ...(a.from ? { from: worldObject(m, a.from) } : {}), ...(a.target ? { target: worldObject(m, a.target) } : {}) };
}

/** The history as the protocol hands it: each day's frame folder, frame count and actions in the world frame. */
export function protocolHistory(history: MixedHistory): ProtocolMixedHistory {
  return {
    days: history.days.map((d) => ({ day: d.day, when: d.when, framesDir: d.frames, frameCount: d.frameCount, actions: d.actions.map((a) => worldAction(d.toWorld, a)) })),
  };
}

/** One episode with the user's agent (call `env.reset` first): its answer as it gave it, its path and frames. */
export async function answerWithOwnAgent(agent: OwnMixedAgent, question: { questionId: string; question: string; category: string; scene: string }, context: { env: Environment; start: AgentState; history: MixedHistory; framesDir: string; maxSteps: number }): Promise<MixedOutcome> {
  const r = await exploreExternal(agent.own, { questionId: question.questionId, question: question.question, category: question.category, scene: question.scene, start: context.start }, context.env, context.framesDir, {
    maxSteps: context.maxSteps,
    ...(agent.timeMs !== undefined ? { timeMs: agent.timeMs } : {}),
    history: protocolHistory(context.history),
  });
  return {
    answer: r.answer === null || r.answer.trim() === "" ? null : r.answer.trim(),
    stop: r.stop,
    steps: r.steps.map((s) => ({ action: s.action, success: s.success, state: s.state })),
    pathLengthM: r.pathLengthM,
    pathLengthSteps: r.pathLengthSteps,
    frames: r.frames,
    historyFrames: [],
    map: r.map,
    details: { confidence: r.confidence, failedActions: r.failedActions, agentMsPerStep: Math.round(r.agentMsPerStep), modelCalls: r.trace.calls.length, ...(r.trace.log ? { log: r.trace.log.slice(0, 50) } : {}), ...(r.trace.stderr ? { stderr: r.trace.stderr.slice(-2000) } : {}) },
  };
}
