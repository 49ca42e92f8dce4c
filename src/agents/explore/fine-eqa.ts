/**
 * The Fine-EQA explorer of EXPRESS-Bench (seed `003_…`, supplementary §1-2.1, and the
 * benchmark's `main.py`), over any `Environment` and any chat VLM. Its prompts are eqakit's own
 * (`prompts/fine-eqa-*.txt`), written for the jobs of the benchmark's and read back the same way
 * (its files have no licence; `eqa explore --prompts original` sends them, once `eqa data fetch
 * express-bench` has downloaded them).
 *
 * 1. The VLM names the regions relevant to the question (`fine-eqa-regions`, no image).
 * 2. Each step observes, adds the depth to an occupancy map, records the frame and asks the VLM
 *    whether the view suffices (`fine-eqa-stop-check`, "yes" anywhere in the reply, as the
 *    reference reads it). On yes, the answer comes from that latest view
 *    (`fine-eqa-answer`) and exploration ends.
 * 3. Otherwise, with relevant regions, the VLM says which region the view shows
 *    (`fine-eqa-view-region`); a relevant region seen (with no goal pending for it) becomes a
 *    goal at the farthest traversable point straight ahead (at most 2.5 m). Goal-oriented exploration walks to the
 *    highest-priority seen region with rounds left; on arrival a round begins: the agent looks
 *    in the four directions (three 90° turns, one step each, each with its stop check). A region
 *    has at most `roundsPerRegion` (3) rounds; a round needs a new sighting.
 * 4. With no region goal, frontier-based exploration: the frontier goal of `chooseGoal`. A hop
 *    toward it lands facing the heading that could reveal the most unknown floor
 *    (`bestViewHeading`), so that arriving at a frontier looks past it; a goal reached (or with no path) is struck off
 *    with its surroundings; a point the environment refuses is marked occupied and the same goal
 *    planned again.
 * 5. With no frontier left (the map holds all the floor it can reach) and budget left, the agent
 *    keeps looking: it goes where the view shows the known cells that earlier views saw least
 *    (`chooseLookout`), so that a VLM that is never sure sees the house again from new places
 *    until the budget runs out. Only when nothing reachable is left to look at does it stop
 *    (`no_frontier`).
 * 6. Every move goes to a point at most `maxHopM` (3 m) along the A* path on the map, by
 *    teleport facing the direction of travel (unless said otherwise above), as the reference
 *    moves (it sets the agent's pose and adds the geodesic distance). The path length adds the environment's geodesic distance
 *    (the map's A* length when the environment finds none); its length in steps adds the
 *    equivalent primitive actions: ⌈d / 0.25 m⌉ moves and the 30° turns to face the new heading.
 * 7. The budget is `max(1, ⌊stepsPerSqrtArea · √area⌋)` steps (the reference's
 *    `int(sqrt(scene_size) · 3)`), the area being the x-z extent of the scene bounds. When it
 *    runs out (or nothing is left to look at), the answer is blind (`fine-eqa-blind-answer`).
 *
 * Replies are read defensively; an unreadable reply (no text, no known region, no letter) is
 * counted in `badReplies` and exploration goes on (no stop, no region for that view).
 * `explorerMs` is the explorer's own time: without the environment's and the models' calls and
 * without writing frames.
 */
import { join } from "node:path";
import { loadPromptFile } from "../../core/index.js";
import { FrameFolderWriter, prepareImage, type ImageOptions, type PreparedImage } from "../../episodes/index.js";
import { yesProbability, type ChatModel, type ChatRequest, type ChatResponse, type ContentPart } from "../../models/index.js";
import { MOVE_STEP_M, TURN_STEP_DEG, wrapAngle, type AgentState, type Environment, type EnvObservation, type SceneBounds } from "../../sim/index.js";
import { promptHashes } from "../calls.js";
import type { AgentTrace } from "../types.js";
import { OccupancyMap, type OccupancyOptions } from "./occupancy.js";
import { ViewFan, aStar, bestViewHeading, chooseGoal, chooseLookout, horizontalFov } from "./planning.js";
import { excludeAround, headingTo, nearestTraversable } from "./explorer.js";
import { FineEqaWalk, type FineEqaStep } from "./fine-eqa-walk.js";

export { STOP_CHECK_ROLE, type FineEqaStep } from "./fine-eqa-walk.js";

export const FINE_EQA_PROMPTS = {
  region: "fine-eqa-regions",
  explore: "fine-eqa-stop-check",
  answer: "fine-eqa-answer",
  blind: "fine-eqa-blind-answer",
  viewRegion: "fine-eqa-view-region",
} as const;

/** EXPRESS-Bench's region list, keyed by the letters its `main.py` uses. */
export const EXPRESS_REGIONS = [
  "bathroom", "bedroom", "dining room", "garage", "kitchen", "laundry room", "living room", "office", "rec room", "study",
  "hallway", "entryway", "laboratory", "workout room", "warehouse", "lounge", "balcony", "staircase", "cloakroom", "unknown",
] as const;
const LETTERS = "ABCDEFGHIJKLMNOPQRST";

export interface FineEqaOptions extends OccupancyOptions {
  question: string;
  /** Where the frames are written (an OpenEQA-style frame folder). */
  framesDir: string;
  /** Budget = max(1, ⌊stepsPerSqrtArea · √area⌋) (default 3, the reference's ratio). */
  stepsPerSqrtArea?: number;
  /** A fixed budget instead. */
  maxSteps?: number;
  /** Furthest hop between exploration points, metres (default 3). */
  maxHopM?: number;
  /** Look-around rounds per region (default 3). */
  roundsPerRegion?: number;
  /** How views are prepared for the VLM. */
  image?: ImageOptions;
}


export type FineEqaStop = "answered" | "budget" | "no_frontier";

/** One stop check: the view it saw, its reading, and the VLM's confidence that the view suffices. */
export interface FineEqaStopCheck {
  /** The frame shown. */
  frame: number;
  /** Whether the reply read as yes (`parseStopReply`). */
  yes: boolean;
  /**
   * P(yes): from the reply's log-probabilities where the provider returns them (`yesProbability`),
   * else from a confidence the reply states (`parseStatedConfidence`: c for a yes, 1 − c for a
   * no); null when there is neither.
   */
  confidence: number | null;
  source: "logprobs" | "stated" | null;
}

/** Log-probabilities asked of the stop check: the top alternatives at each token. */
export const STOP_CHECK_LOGPROBS = 5;

/** What an exploration of either Fine-EQA mode gives: the answer, the path and the explorer's own time. */
export interface FineEqaExploration {
  answer: string | null;
  /** `view`: from the latest view after a yes; `blind`: without an image. */
  answerSource: "view" | "blind";
  regions: string[];
  /** Exploration steps taken (each an observation and a stop check). */
  explorationSteps: number;
  budget: number;
  /** Every pose the agent stood in, with the action that led there. */
  steps: FineEqaStep[];
  pathLengthM: number;
  /** Equivalent primitive actions (see the module comment). */
  pathLengthSteps: number;
  /** Frames written (one per exploration step). */
  frames: number;
  /** Step index (into `steps`) of each frame. */
  observedSteps: number[];
  badReplies: { call: string; reply: string | null }[];
  map: OccupancyMap;
  trace: AgentTrace;
  explorerMs: number;
  explorerMsPerStep: number;
}

export interface FineEqaResult extends FineEqaExploration {
  stop: FineEqaStop;
  roundsByRegion: Record<string, number>;
  /** Every stop check, in order (the last is the one for the view the exploration ended on). */
  stopChecks: FineEqaStopCheck[];
}

/** Python's `readlines()` (universal newlines). */
function readLines(text: string): string[] {
  return text.replace(/\r\n?/g, "\n").split(/(?<=\n)/).filter((l) => l.length > 0);
}

/**
 * A request built as EXPRESS-Bench's `gpt.py` builds it: line 2 of the file is the system
 * message, lines 4 on followed by `tail` the user text, then the image if any.
 */
export function expressPromptRequest(promptName: string, tail: string, image?: PreparedImage, fields: Record<string, string> = {}): ChatRequest {
  const lines = readLines(loadPromptFile(promptName).text);
  let user = lines.slice(3).join("") + tail;
  for (const [key, value] of Object.entries(fields)) user = user.split(`{${key}}`).join(value);
  const content: ContentPart[] = [{ type: "text", text: user }];
  if (image) content.push({ type: "image", data: image.data, mediaType: image.mediaType });
  return { messages: [{ role: "system", content: lines[1] ?? "" }, { role: "user", content }] };
}

/** Regions named in the reply: split on commas (and lines), trimmed, known, not "unknown", deduplicated. */
export function parseRegionReply(reply: string | null): string[] {
  if (reply === null) return [];
  const out: string[] = [];
  for (const part of reply.split(/[,\n]/)) {
    const name = part.replace(/^\s*region\s*:/i, "").trim().toLowerCase().replace(/^["'`]+|["'`.]+$/g, "").trim();
    if (name !== "unknown" && (EXPRESS_REGIONS as readonly string[]).includes(name) && !out.includes(name)) out.push(name);
  }
  return out;
}

/** The reference's stop test: "yes" anywhere in the lower-cased reply. */
export function parseStopReply(reply: string | null): boolean {
  return reply !== null && reply.toLowerCase().includes("yes");
}

/**
 * A confidence the reply states, in [0, 1]: a number after "confidence" ("confidence: 0.8",
 * "Confidence 80%"), else a lone percentage ("yes (90%)"); numbers above 1 are percentages.
 * Undefined when none is stated or it is out of range.
 */
export function parseStatedConfidence(reply: string | null): number | undefined {
  if (reply === null) return undefined;
  const match = /confiden(?:ce|t)\D{0,12}?(\d+(?:\.\d+)?)\s*(%?)/i.exec(reply) ?? /(\d+(?:\.\d+)?)\s*(%)/.exec(reply);
  if (!match) return undefined;
  const value = Number(match[1]);
  const share = match[2] === "%" || value > 1 ? value / 100 : value;
  return share >= 0 && share <= 1 ? share : undefined;
}

/** A stop check's reading and confidence (see `FineEqaStopCheck`). */
export function readStopCheck(response: Pick<ChatResponse, "text" | "tokenLogprobs">, frame: number): FineEqaStopCheck {
  const yes = parseStopReply(response.text);
  const fromLogprobs = response.tokenLogprobs ? yesProbability(response.tokenLogprobs) : undefined;
  if (fromLogprobs !== undefined) return { frame, yes, confidence: fromLogprobs, source: "logprobs" };
  const stated = parseStatedConfidence(response.text);
  if (stated !== undefined) return { frame, yes, confidence: yes ? stated : 1 - stated, source: "stated" };
  return { frame, yes, confidence: null, source: null };
}

/** The reference's answer clean-up: every "A:" removed, then trimmed. */
export function parseAnswerReply(reply: string | null): string | null {
  return reply === null ? null : reply.split("A:").join("").trim();
}

/**
 * The region a view-region reply names, or undefined: a bare letter A-T ("G", "G.", "G: living
 * room"), a letter after "key", "answer" or "letter", a quoted letter, else a region's name.
 */
export function parseViewRegionReply(reply: string | null): string | undefined {
  if (reply === null) return undefined;
  const text = reply.trim();
  const letter =
    /^\W*([A-T])\W*$/.exec(text) ?? /^\W*([A-T])\s*[:).\]-]/.exec(text) ?? /\b(?:key|answer|letter)\b(?:\s+is)?\W+([A-T])\b/i.exec(text) ?? /['"`]([A-T])['"`]/.exec(text);
  if (letter) return EXPRESS_REGIONS[LETTERS.indexOf((letter[1] as string).toUpperCase())];
  const lower = text.toLowerCase();
  return EXPRESS_REGIONS.find((r) => lower.includes(r));
}

/** The Python repr of the reference's regions dictionary. */
function regionsDictRepr(): string {
  return `{${EXPRESS_REGIONS.map((r, i) => `'${LETTERS[i]}': '${r}'`).join(", ")}}`;
}

const TURN = (TURN_STEP_DEG * Math.PI) / 180;

/** The farthest traversable cell straight ahead (contiguous from the agent, at most `maxM`), or the agent's cell. */
function pointAhead(map: OccupancyMap, state: AgentState, maxM = 2.5): number {
  const start = nearestTraversable(map, map.cellAt(state.position[0], state.position[2]));
  let best = start;
  for (let d = 0.1; d <= maxM + 1e-9; d += map.cellSize) {
    const cell = map.cellAt(state.position[0] - Math.sin(state.yaw) * d, state.position[2] - Math.cos(state.yaw) * d);
    if (cell < 0 || !map.traversable(cell)) break;
    best = cell;
  }
  return best;
}

/** The last cell of `path` within `maxM` metres of path length from its start. */
function hopAlong(map: OccupancyMap, path: number[], maxM: number): { cell: number; lengthM: number; index: number } {
  let length = 0;
  let cell = path[0] as number;
  let index = 0;
  for (let i = 1; i < path.length; i++) {
    const [x0, z0] = map.cellCentre(path[i - 1] as number);
    const [x1, z1] = map.cellCentre(path[i] as number);
    const next = length + Math.hypot(x1 - x0, z1 - z0);
    if (next > maxM) break;
    length = next;
    cell = path[i] as number;
    index = i;
  }
  return { cell, lengthM: length, index };
}

/** Fine-EQA's requests, as exploreFineEqa sends them (and `eqa explore --dry-run` counts them). */
export const fineEqaRequests = {
  regions: (question: string): ChatRequest => expressPromptRequest(FINE_EQA_PROMPTS.region, `QUESTION: ${question}\nREGION: `),
  stopCheck: (question: string, image: PreparedImage): ChatRequest => ({ ...expressPromptRequest(FINE_EQA_PROMPTS.explore, `QUESTION: ${question}`, image), logprobs: STOP_CHECK_LOGPROBS }),
  answer: (question: string, image: PreparedImage): ChatRequest => expressPromptRequest(FINE_EQA_PROMPTS.answer, `Q: ${question}\nA: `, image),
  viewRegion: (image: PreparedImage): ChatRequest => expressPromptRequest(FINE_EQA_PROMPTS.viewRegion, "", image, { regions: regionsDictRepr() }),
  blind: (question: string): ChatRequest => expressPromptRequest(FINE_EQA_PROMPTS.blind, question),
};

/** Fine-EQA's step budget in a scene: `maxSteps`, or ⌊stepsPerSqrtArea · √area⌋ (at least 1) over the x-z extent of its bounds. */
export function fineEqaBudget(bounds: SceneBounds, options: Pick<FineEqaOptions, "maxSteps" | "stepsPerSqrtArea"> = {}): number {
  const area = Math.max(0, bounds.max[0] - bounds.min[0]) * Math.max(0, bounds.max[2] - bounds.min[2]);
  return options.maxSteps ?? Math.max(1, Math.floor((options.stepsPerSqrtArea ?? 3) * Math.sqrt(area)));
}

/** Fine-EQA's answer when no view answered in time: the question asked blind (both modes). */
/** Fine-EQA's answer from the view the stop check said yes to (both modes). */
export async function fineEqaViewAnswer(call: (role: string, prompt: string, request: ChatRequest, frames?: number[]) => Promise<string | null>, question: string, image: PreparedImage, frame: number, badReplies: FineEqaResult["badReplies"]): Promise<string | null> {
  const reply = await call("answer", FINE_EQA_PROMPTS.answer, fineEqaRequests.answer(question, image), [frame]);
  if (reply === null) badReplies.push({ call: "answer", reply });
  return parseAnswerReply(reply);
}

export async function fineEqaBlindAnswer(call: (role: string, prompt: string, request: ChatRequest) => Promise<string | null>, question: string, badReplies: FineEqaResult["badReplies"]): Promise<string | null> {
  const reply = await call("blind-answer", FINE_EQA_PROMPTS.blind, fineEqaRequests.blind(question));
  if (reply === null) badReplies.push({ call: "blind-answer", reply });
  return parseAnswerReply(reply);
}

/** eqakit's Fine-EQA walk: the occupancy map, the goals never to be chosen again, how often each cell was looked at. */
class OwnFineEqaWalk extends FineEqaWalk {
  readonly map: OccupancyMap;
  readonly excluded: Uint8Array;
  /** How many looks saw each cell. */
  readonly looks: Uint16Array;
  /** What one look sees (from the first observation's camera). */
  fan: ViewFan | undefined;
  frontierGoal: number | undefined;

  constructor(
    env: Environment,
    vlm: ChatModel,
    bounds: SceneBounds,
    private readonly options: FineEqaOptions,
  ) {
    super(env, vlm, "fine-eqa");
    this.map = new OccupancyMap(bounds, options);
    this.excluded = new Uint8Array(this.map.cols * this.map.rows);
    this.looks = new Uint16Array(this.map.cols * this.map.rows);
  }

  agentCell(): number {
    return nearestTraversable(this.map, this.map.cellAt(this.state.position[0], this.state.position[2]));
  }

  /** A view taken: into the map and the count of looks. */
  integrate(obs: EnvObservation): void {
    this.map.integrate(obs, obs.state.position[1]);
    this.fan ??= new ViewFan(this.map, { hfov: horizontalFov(obs.camera), range: 4 });
    this.fan.forEach(this.state.position[0], this.state.position[2], this.state.yaw, (c) => {
      if ((this.looks[c] as number) < 0xffff) this.looks[c] = (this.looks[c] as number) + 1;
    });
  }

  /**
   * Teleports one hop toward `goal`: `moved`, `refused` (the environment refused the point,
   * which is marked occupied so that the next plan avoids it) or `stuck` (no path, or already
   * there). The agent faces the direction of travel; with `face` "unknown" the heading that
   * could reveal the most unknown floor from where it lands, with a number that heading when it
   * lands on the goal.
   */
  async hopToward(goal: number, face?: "unknown" | number): Promise<"moved" | "refused" | "stuck"> {
    const { map, state } = this;
    const agentCell = this.agentCell();
    const path = aStar(map, agentCell, goal);
    if (path === undefined || path.length < 2) return "stuck";
    const hop = hopAlong(map, path, this.options.maxHopM ?? 3);
    if (hop.cell === agentCell) return "stuck";
    const [x, z] = map.cellCentre(hop.cell);
    let yaw = headingTo(state.position[0], state.position[2], x, z);
    if (face === "unknown" && this.fan) {
      const best = bestViewHeading(this.fan, hop.cell);
      if (best.unknown > 0) yaw = best.yaw;
    } else if (typeof face === "number" && hop.cell === goal) yaw = face;
    const target: AgentState = { position: [x, state.position[1], z], yaw, pitch: 0 };
    const { result, geodesic } = await this.outside(async () => {
      const result = await this.env.act({ type: "teleport", state: target });
      return { result, geodesic: result.success ? await this.env.geodesicDistance(state.position, result.state.position) : 0 };
    });
    if (!result.success) {
      map.markOccupied(hop.cell);
      return "refused";
    }
    const metres = Number.isFinite(geodesic) ? geodesic : hop.lengthM;
    this.pathLengthM += metres;
    this.pathLengthSteps += Math.ceil(metres / MOVE_STEP_M - 1e-9) + Math.round(Math.abs(wrapAngle(yaw - state.yaw)) / TURN);
    this.state = result.state;
    this.steps.push({ action: "teleport", success: true, state: this.state, via: path.slice(1, hop.index).map((c) => map.cellCentre(c)) });
    return "moved";
  }

  /** One hop toward a frontier goal (chosen anew once reached or unreachable); false when no frontier is left. */
  async frontierHop(): Promise<boolean> {
    for (let tries = 0; tries < 8; tries++) {
      if (this.frontierGoal === undefined) {
        const goal = chooseGoal(this.map, this.agentCell(), { excluded: this.excluded });
        if (goal === undefined) return false;
        this.frontierGoal = goal.cell;
      }
      const [gx, gz] = this.map.cellCentre(this.frontierGoal);
      const reached = Math.hypot(gx - this.state.position[0], gz - this.state.position[2]) <= 0.3;
      if (!reached) {
        const hop = await this.hopToward(this.frontierGoal, "unknown");
        if (hop === "moved") return true;
        // A refused point is marked occupied: plan to the same goal again.
        if (hop === "refused") continue;
      }
      // Reached or unreachable: never this goal (and its surroundings) again.
      excludeAround(this.map, this.excluded, this.frontierGoal, 0.5);
      this.frontierGoal = undefined;
    }
    return false;
  }

  /** Teleports where the least-looked-at part of the map is in view (`chooseLookout`), or one hop toward it; false when nothing is left to look at. */
  async lookoutHop(): Promise<boolean> {
    for (let tries = 0; tries < 8 && this.fan; tries++) {
      const agentCell = this.agentCell();
      const lookout = chooseLookout(this.fan, agentCell, this.looks);
      if (lookout === undefined) return false;
      if (lookout.cell !== agentCell) {
        const hop = await this.hopToward(lookout.cell, lookout.yaw);
        if (hop === "moved") return true;
        if (hop === "refused") continue;
      }
      // Here already (or no path to it): turn where it looks.
      const target: AgentState = { position: this.state.position, yaw: lookout.yaw, pitch: 0 };
      const result = await this.outside(() => this.env.act({ type: "teleport", state: target }));
      if (!result.success) return false;
      this.pathLengthSteps += Math.round(Math.abs(wrapAngle(lookout.yaw - this.state.yaw)) / TURN);
      this.state = result.state;
      this.steps.push({ action: "teleport", success: true, state: this.state });
      return true;
    }
    return false;
  }
}

/** The relevant regions' look-arounds: rounds made in each, a sighted point per region to go to, looks left in the round under way. */
interface RegionRounds {
  regions: string[];
  rounds: Record<string, number>;
  sightings: Map<string, number>;
  lookAroundLeft: number;
  maxRounds: number;
}

/** Runs Fine-EQA from the environment's current state (call `reset` first). */
export async function exploreFineEqa(env: Environment, vlm: ChatModel, options: FineEqaOptions): Promise<FineEqaResult> {
  const bounds = await env.bounds();
  const walk = new OwnFineEqaWalk(env, vlm, bounds, options);
  const budget = fineEqaBudget(bounds, options);
  const writer = new FrameFolderWriter(options.framesDir);
  const observedSteps: number[] = [];
  const stopChecks: FineEqaStopCheck[] = [];

  const regionReply = await walk.call("regions", FINE_EQA_PROMPTS.region, fineEqaRequests.regions(options.question));
  const regions = parseRegionReply(regionReply);
  if (regionReply === null) walk.unreadable("regions", regionReply);
  const plan: RegionRounds = { regions, rounds: Object.fromEntries(regions.map((r) => [r, 0])), sightings: new Map(), lookAroundLeft: 0, maxRounds: options.roundsPerRegion ?? 3 };
  let answer: string | null = null;
  let answerSource: FineEqaResult["answerSource"] = "blind";
  let stop: FineEqaStop = "budget";
  let explorationSteps = 0;

  while (explorationSteps < budget) {
    const { obs, frame, image } = await walk.outside(async () => {
      const obs = await env.observe();
      const frame = await writer.write(obs);
      const image = await prepareImage(join(options.framesDir, `${String(frame).padStart(5, "0")}-rgb.png`), options.image);
      return { obs, frame, image };
    });
    walk.state = obs.state;
    if (walk.steps.length === 0) walk.steps.push({ success: true, state: walk.state });
    walk.integrate(obs);
    observedSteps.push(walk.steps.length - 1);
    explorationSteps++;
    const stopResponse = await walk.respond("stop-check", FINE_EQA_PROMPTS.explore, fineEqaRequests.stopCheck(options.question, image), [frame]);
    const stopReply = stopResponse.text;
    stopChecks.push(readStopCheck(stopResponse, frame));
    if (stopReply === null) walk.unreadable("stop-check", stopReply);
    if (parseStopReply(stopReply)) {
      answer = await fineEqaViewAnswer(walk.call, options.question, image, frame, walk.badReplies);
      answerSource = "view";
      stop = "answered";
      break;
    }
    if (explorationSteps >= budget) break;
    if (!(await moveFineEqa(walk, plan, image, frame))) {
      stop = "no_frontier";
      break;
    }
  }

  if (answerSource === "blind") answer = await fineEqaBlindAnswer(walk.call, options.question, walk.badReplies);
  walk.trace.agentAnswer = answer;
  walk.trace.frames = observedSteps.map((_, i) => i);
  walk.clock.pause();
  return {
    answer,
    answerSource,
    stop,
    regions,
    roundsByRegion: plan.rounds,
    explorationSteps,
    budget,
    steps: walk.steps,
    pathLengthM: walk.pathLengthM,
    pathLengthSteps: walk.pathLengthSteps,
    frames: writer.frames,
    observedSteps,
    badReplies: walk.badReplies,
    stopChecks,
    map: walk.map,
    trace: walk.trace,
    explorerMs: walk.clock.ownMs(),
    explorerMsPerStep: explorationSteps > 0 ? walk.clock.ownMs() / explorationSteps : 0,
  };
}

/**
 * After a view that did not stop the exploration: note a relevant region it shows (the point
 * ahead), then go on looking around, walk to a sighted region's point (a round of four looks on
 * arrival), or hop toward a frontier, else a lookout. False when nothing is left to explore.
 */
async function moveFineEqa(walk: OwnFineEqaWalk, plan: RegionRounds, image: PreparedImage, frame: number): Promise<boolean> {
  const { map } = walk;
  if (plan.regions.length > 0 && plan.lookAroundLeft === 0) {
    const reply = await walk.call("view-region", FINE_EQA_PROMPTS.viewRegion, fineEqaRequests.viewRegion(image), [frame]);
    const seen = parseViewRegionReply(reply);
    if (seen === undefined) walk.unreadable("view-region", reply);
    else if (plan.regions.includes(seen) && (plan.rounds[seen] ?? 0) < plan.maxRounds && !plan.sightings.has(seen)) plan.sightings.set(seen, pointAhead(map, walk.state));
  }
  if (plan.lookAroundLeft > 0) {
    plan.lookAroundLeft--;
    for (let i = 0; i < 3; i++) await walk.act("turn_left");
    return true;
  }
  for (const region of plan.regions) {
    const goal = plan.sightings.get(region);
    if (goal === undefined || (plan.rounds[region] ?? 0) >= plan.maxRounds) continue;
    const [gx, gz] = map.cellCentre(goal);
    if (Math.hypot(gx - walk.state.position[0], gz - walk.state.position[2]) <= 0.5) {
      // Arrived: a round of looking in the four directions begins (this view is the first).
      plan.rounds[region] = (plan.rounds[region] ?? 0) + 1;
      plan.sightings.delete(region);
      plan.lookAroundLeft = 2;
      for (let i = 0; i < 3; i++) await walk.act("turn_left");
      return true;
    }
    if ((await walk.hopToward(goal)) === "moved") return true;
    plan.sightings.delete(region);
  }
  return (await walk.frontierHop()) || (await walk.lookoutHop());
}

/** The prompts' hashes, for a run's configuration. */
export function fineEqaPromptHashes(): Record<string, string> {
  return promptHashes(Object.values(FINE_EQA_PROMPTS));
}
