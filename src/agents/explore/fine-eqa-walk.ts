/**
 * What a Fine-EQA exploration keeps while it runs, eqakit's (`fine-eqa.ts`) and the reference
 * mode (`fine-eqa-reference.ts`) alike: the environment and the VLM, reached off the explorer's
 * own clock (their time is not the explorer's); the agent's state; every pose it stood in and the
 * path it walked; the replies it could not read.
 */
import { inRole, type ChatModel, type ChatRequest, type ChatResponse } from "../../models/index.js";
import type { AgentState, DiscreteAction, Environment } from "../../sim/index.js";
import { newTrace, tracedCall } from "../calls.js";
import type { AgentTrace } from "../types.js";
import { explorerClock } from "./explorer.js";

/** The role of Fine-EQA's stop checks, in its traces and in the run's ledger of model calls (its other calls are the explorer's). */
export const STOP_CHECK_ROLE = "stop-check";

/** A pose the agent stood in, with what led there. */
export interface FineEqaStep {
  /** What led here (undefined for the start). */
  action?: DiscreteAction | "teleport";
  success: boolean;
  state: AgentState;
  /** For a teleport: the (x, z) points of the planned route it stands for, start and end excluded. */
  via?: [number, number][];
}

/** One call of the VLM: its role in the trace, its prompt file, the request, the frames it saw. */
export type FineEqaCall = (role: string, prompt: string, request: ChatRequest, frames?: number[]) => Promise<string | null>;

export class FineEqaWalk {
  readonly trace: AgentTrace;
  readonly clock = explorerClock();
  readonly steps: FineEqaStep[] = [];
  readonly badReplies: { call: string; reply: string | null }[] = [];
  pathLengthM = 0;
  /** Equivalent primitive actions. */
  pathLengthSteps = 0;
  state: AgentState = { position: [0, 0, 0], yaw: 0, pitch: 0 };
  /** The stop checks are a role of their own in the run's ledger of model calls and its cost. */
  private readonly stopCheckModel: ChatModel;

  constructor(
    readonly env: Environment,
    private readonly vlm: ChatModel,
    agent: string,
  ) {
    this.trace = newTrace(agent);
    this.stopCheckModel = inRole(vlm, STOP_CHECK_ROLE);
  }

  /** Awaits the environment, the model or the disk: their time is not the explorer's own. */
  outside<T>(work: () => Promise<T>): Promise<T> {
    return this.clock.outside(work);
  }

  respond(role: string, prompt: string, request: ChatRequest, frames?: number[]): Promise<ChatResponse> {
    return this.outside(() => tracedCall(this.trace, role === STOP_CHECK_ROLE ? this.stopCheckModel : this.vlm, role, prompt, request, frames));
  }

  readonly call: FineEqaCall = async (role, prompt, request, frames) => (await this.respond(role, prompt, request, frames)).text;

  async act(action: DiscreteAction): Promise<void> {
    const result = await this.outside(() => this.env.act({ type: action }));
    this.state = result.state;
    this.pathLengthSteps++;
    this.steps.push({ action, success: result.success, state: this.state });
  }

  /** Records a reply that could not be read; what it would have fed is skipped. */
  unreadable(call: string, reply: string | null): void {
    this.badReplies.push({ call, reply });
  }
}
