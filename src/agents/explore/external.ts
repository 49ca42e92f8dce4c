/**
 * The episode loop of an active agent of the user's own (the agent protocol's `active` kind,
 * `docs/agent-protocol.md`): eqakit observes, writes the frame to the run's frame folder,
 * adds the depth to an occupancy map (for the coverage metric and the trajectory picture, as
 * for the built-in explorers), and sends the agent the observation (`reset` for the first,
 * `step` after each action); the agent replies with an action, an answer or stop.
 *
 * Budgets: at most `maxSteps` actions and, when given, `timeMs` of wall time. When a budget is
 * spent the agent is told so (`stepsLeft` 0) and asked once more: it may answer or stop; an
 * action then ends the episode without an answer (stop `budget` or `time`). A failed action
 * (a wall) leaves the state unchanged: the agent is shown the same frame again with
 * `lastAction.success` false. `agentMsPerStep` is the agent's time per reply, protocol
 * included, its model calls left out.
 */
import { join, resolve } from "node:path";
import type { EpisodeFrameImage, ImageOptions } from "../../episodes/index.js";
import { FrameFolderWriter, prepareImage } from "../../episodes/index.js";
import type { AgentState, EnvObservation, Environment } from "../../sim/index.js";
import type { AgentTrace } from "../types.js";
import type { MixedHistory } from "../external/protocol.js";
import { ACTIVE_ACTIONS, type AgentActiveAction, type AgentActiveObservation, type CheckedDecision, type ExternalActiveAgent } from "../external/index.js";
import { OccupancyMap } from "./occupancy.js";
import type { ActiveEpisode } from "./explorer-types.js";

export interface ExternalExploreOptions {
  /** Most actions (default 500, as the frontier explorer). */
  maxSteps?: number;
  /** The episode's wall-time budget, milliseconds (none when absent). */
  timeMs?: number;
  /** How frames asked for in model/complete are prepared. */
  image?: ImageOptions;
  /** A Mixed EQA episode's history (the protocol's `mixed` kind), sent in `reset`. */
  history?: MixedHistory;
}

export type ExternalStopReason = "answered" | "stopped" | "budget" | "time";

export interface ExternalExplorationResult {
  answer: string | null;
  confidence: number | null;
  stop: ExternalStopReason;
  /** Step 0 is the start; one entry per action after it. */
  steps: { action: AgentActiveAction | null; success: boolean; state: AgentState }[];
  pathLengthM: number;
  pathLengthSteps: number;
  moves: number;
  failedActions: number;
  frames: number;
  map: OccupancyMap;
  agentMsPerStep: number;
  /** The longest wait for one reply (model calls included), milliseconds. */
  slowestReplyMs: number;
  trace: AgentTrace;
}

const frameName = (dir: string, index: number, suffix: string): string => resolve(join(dir, `${String(index).padStart(5, "0")}-${suffix}.png`));

/** Runs one episode with the agent (call `env.reset` first); see the module comment. */
export async function exploreExternal(agent: ExternalActiveAgent, episode: ActiveEpisode, env: Environment, framesDir: string, options: ExternalExploreOptions = {}): Promise<ExternalExplorationResult> {
  const maxSteps = options.maxSteps ?? 500;
  // the time budget runs from the reset on (an agent process that starts is not spending it)
  let started = performance.now();
  const writer = new FrameFolderWriter(framesDir);
  const map = new OccupancyMap(await env.bounds());
  const prepared = new Map<string, Promise<EpisodeFrameImage>>();
  const frames = {
    get frameCount(): number {
      return writer.frames;
    },
    images: (indices: number[], image?: ImageOptions): Promise<EpisodeFrameImage[]> =>
      Promise.all(
        indices.map((index) => {
          const key = `${index}:${JSON.stringify(image ?? {})}`;
          let p = prepared.get(key);
          if (!p) {
            p = prepareImage(frameName(framesDir, index, "rgb"), image).then((i) => ({ ...i, index }));
            prepared.set(key, p);
          }
          return p;
        }),
      ),
  };

  let obs: EnvObservation = await env.observe();
  let frame = await writer.write(obs);
  map.integrate(obs, obs.state.position[1]);
  const steps: ExternalExplorationResult["steps"] = [{ action: null, success: true, state: obs.state }];
  let pathLengthM = 0;
  let moves = 0;
  let failedActions = 0;
  let lastAction: AgentActiveObservation["lastAction"] = null;

  const timeLeft = (): number | null => (options.timeMs === undefined ? null : Math.max(0, options.timeMs - (performance.now() - started)));
  const observation = (): AgentActiveObservation => {
    const actions = steps.length - 1;
    const time = timeLeft();
    return {
      step: actions,
      frame: { index: frame, path: frameName(framesDir, frame, "rgb"), depthPath: frameName(framesDir, frame, "depth"), ...(obs.masks ? { masksPath: frameName(framesDir, frame, "instance") } : {}) },
      pose: Array.from(obs.pose),
      state: obs.state,
      camera: { ...obs.camera },
      lastAction,
      budget: { stepsLeft: time === 0 ? 0 : Math.max(0, maxSteps - actions), timeLeftMs: time === null ? null : Math.round(time) },
    };
  };

  const session = await agent.begin(episode.questionId, frames);
  started = performance.now();
  let decision: CheckedDecision;
  let stop: ExternalStopReason;
  try {
    decision = await session.reset({
      episode: {
        id: episode.questionId,
        question: { id: episode.questionId, text: episode.question, ...(episode.category ? { category: episode.category } : {}), ...(episode.choices ? { choices: episode.choices } : {}) },
        scene: episode.scene,
        framesDir: resolve(framesDir),
        ...(options.history ? { history: options.history } : {}),
      },
      actions: [...ACTIVE_ACTIONS],
      budget: { maxSteps, timeMs: options.timeMs ?? null, timeoutMs: agent.timeoutMs },
      observation: observation(),
    });
    for (;;) {
      if (decision.kind === "answer") {
        stop = "answered";
        break;
      }
      if (decision.kind === "stop") {
        stop = "stopped";
        break;
      }
      const told = observation().budget;
      if (told.stepsLeft === 0) {
        stop = steps.length - 1 >= maxSteps ? "budget" : "time";
        break;
      }
      const result = await env.act({ type: decision.action });
      const prev = steps[steps.length - 1]!.state;
      if (result.success) {
        pathLengthM += Math.hypot(result.state.position[0] - prev.position[0], result.state.position[1] - prev.position[1], result.state.position[2] - prev.position[2]);
        if (decision.action === "move_forward") moves++;
        obs = await env.observe();
        frame = await writer.write(obs);
        map.integrate(obs, obs.state.position[1]);
      } else failedActions++;
      steps.push({ action: decision.action, success: result.success, state: result.state });
      lastAction = { action: decision.action, success: result.success, ...(result.reason !== undefined ? { reason: result.reason } : {}) };
      decision = await session.next({ episode: episode.questionId, observation: observation() });
    }
  } finally {
    // after a failure of the agent its session is killed already; after one of the environment or the disk it serves the next episode
    session.end();
  }
  const replies = steps.length;
  return {
    answer: decision.kind === "answer" ? decision.answer : null,
    confidence: decision.kind === "answer" ? (decision.confidence ?? null) : null,
    stop,
    steps,
    pathLengthM,
    pathLengthSteps: steps.length - 1,
    moves,
    failedActions,
    frames: writer.frames,
    map,
    agentMsPerStep: session.agentMs / replies,
    slowestReplyMs: session.slowestReplyMs,
    trace: session.trace,
  };
}
