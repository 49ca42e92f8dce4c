/**
 * Fine-EQA as EXPRESS-Bench's published code runs it (`main.py`, `src/tsdf.py`, `src/geom.py`
 * and `fine_eqa.yaml`, HCPLab-SYSU/EXPRESS-Bench @ e8789da; the semantic value map is
 * explore-eqa's, Stanford-ILIAD/explore-eqa `run_vlm_exp.py`), so that runs can be set beside
 * Table 3 of seed `003_…`. `eqa explore --agent fine-eqa:reference`; `fine-eqa` stays eqakit's
 * own, simpler explorer. Every difference that remains is listed in docs/active-eqa.md
 * ("Fine-EQA reference mode").
 *
 * Each step, up to the budget ⌊3·√area⌋ (the reference's `max_step_room_size_ratio`):
 * 1. Teleport to the point chosen the step before (the start at step 0) and observe a 512×512
 *    view (90° field of view; the caller asks the environment for that size). A view more than
 *    half black is not used (the reference's `black_pixel_ratio`).
 * 2. Add the depth to the occupancy map; the stop check (Fine-EQA's own request); on "yes" the
 *    answer from this view, and exploration ends (no move).
 * 3. Candidate points in view (`find_prompt_points_within_view`): reachable free cells seen by
 *    the camera moved 0.6 m forward (30 px side and 100 px top margins at 512 px), 2 to 10 m
 *    away, with at most one occupied cell on the line to the agent; at most 300 drawn at random,
 *    farthest-point sampled down to 3, merged within 1 m. With at least 2, they are drawn on the
 *    view as grey circles lettered A, B, C, and the VLM is asked
 *    - which lettered point it would explore (`fine-eqa-reference-direction`): LSV, one-hot on
 *      its letter, times n/3;
 *    - whether any direction in the plain view is worth exploring (`fine-eqa-reference-worth`):
 *      GSV = exp(p/0.5)/3 with p = 1 for yes, 0 otherwise;
 *    and each candidate's SV = LSV·GSV is averaged into the semantic value map over a 1 m disc
 *    (`integrate_sem`, running mean with weight 1).
 *    Then which region the view shows (Fine-EQA's view-region request); unless unknown, which
 *    lettered point lies in that region (`fine-eqa-reference-region-point`): a 1 m disc of the
 *    region map takes the region, joined to its earlier points within 3 m (`modify_map`), and
 *    when the region is relevant and no visited point is within 0.5 m the point becomes one of
 *    the region's goal points (`integrate_reg`).
 * 4. Goal-oriented (GOE) or frontier-based (FBE) exploration by the reference's state machine
 *    over the relevant regions (`get_exp_state`: only the first region, and the second when
 *    exactly two were named, are ever visited; at most 3 rounds of four looks each).
 *    GOE: the region's goal point of highest smoothed value (σ = 5 cells), else the highest
 *    smoothed value inside the region away from visited points (`find_next_point_region`);
 *    on the round's first look the agent moves there keeping its heading (no 3 m limit, as in
 *    the reference), on the other three it turns left 90°.
 *    FBE (`find_next_pose`): frontier cells (reachable, 3 or 4 unknown neighbours of 8),
 *    clustered when more than 10, each weighted by exp(unexplored/0.2)·exp(unoccupied/2)·
 *    exp(value/0.5)·exp(value ahead/0.5)·exp(−d/10) along its normal into the unknown (value
 *    terms left out for the first 2 steps), one drawn at random by weight and backed off up to
 *    1.5 m, heading into the unknown; a goal more than 3 m away is committed to and approached
 *    30 cells a step along the path. When no frontier is left: the current point and a random
 *    heading, never a stop.
 * 5. The move: snapped to a navigable point, the path length adds the environment's geodesic
 *    distance when it finds a path (as the reference adds `path.geodesic_distance`). The last
 *    step's move is made too, before the blind answer (the reference measures the end point
 *    and d_T after it).
 *
 * Random draws use a seeded generator (default 42, the reference's `seed`), so a run repeats.
 * Replies are read defensively; an unreadable one is counted in `badReplies` and that update
 * is skipped.
 */
import { join } from "node:path";
import { renderPromptFile, seededRandom, type Random } from "../../core/index.js";
import { FrameFolderWriter, loadSharp, prepareImage, type ImageOptions, type PreparedImage } from "../../episodes/index.js";
import { inRole, type ChatModel, type ChatRequest, type ContentPart } from "../../models/index.js";
import { MOVE_STEP_M, TURN_STEP_DEG, wrapAngle, type AgentState, type DiscreteAction, type Environment, type EnvObservation, type Point3 } from "../../sim/index.js";
import { newTrace, promptHashes, tracedCall } from "../calls.js";
import { explorerClock, headingTo, nearestTraversable } from "./explorer.js";
import { EXPRESS_REGIONS, FINE_EQA_PROMPTS, STOP_CHECK_ROLE, fineEqaBlindAnswer, fineEqaBudget, fineEqaViewAnswer, fineEqaPromptHashes, fineEqaRequests, parseStopReply, parseViewRegionReply, type FineEqaExploration, type FineEqaStep } from "./fine-eqa.js";
import { CELL_FREE, CELL_OCCUPIED, CELL_UNKNOWN, OccupancyMap, type OccupancyOptions } from "./occupancy.js";
import { aStar, distanceField } from "./planning.js";

export const FINE_EQA_REFERENCE_PROMPTS = {
  direction: "fine-eqa-reference-direction",
  worth: "fine-eqa-reference-worth",
  regionPoint: "fine-eqa-reference-region-point",
} as const;

/** The reference's observation size (`fine_eqa.yaml`: img_width, img_height 512, hfov 90). */
export const FINE_EQA_REFERENCE_OBSERVATION = { width: 512, height: 512 } as const;

/** `fine_eqa.yaml` and the defaults of `main.py` / `tsdf.py` the reference runs with. */
const REF = {
  seed: 42,
  initClearanceM: 1.0,
  blackPixelRatio: 0.5,
  minRandomInitSteps: 2,
  maxRounds: 3,
  gsvT: 0.5,
  gsvF: 3,
  promptPoints: 3,
  maxUnoccupied: 300,
  minPointsForClustering: 3,
  pointMinDistM: 2,
  pointMaxDistM: 10,
  clusterThresholdM: 1,
  minPromptPoints: 2,
  camOffsetM: 0.6,
  viewMarginTopPx: 100,
  viewMarginSidePx: 30,
  circleRadiusPx: 18,
  fontPx: 30,
  referenceSidePx: 512,
  valueRadiusM: 1,
  regionRadiusM: 1,
  regionJoinFactor: 3,
  visitedRadiusM: 0.5,
  smoothSigmaCells: 5,
  distT: 10,
  unexploredT: 0.2,
  unoccupiedT: 2,
  valT: 0.5,
  valDirT: 0.5,
  maxValCheckM: 3,
  minDistFromCur: 0.5,
  maxDistFromCurM: 3,
  frontierSpacingM: 1.5,
  maxUnexploredCheckM: 3,
  maxUnoccupiedCheckM: 1,
  frontierTries: 50,
  goalPathTries: 10,
} as const;

const LETTERS = ["A", "B", "C", "D"] as const;
const UNKNOWN_REGION = EXPRESS_REGIONS.indexOf("unknown");

export interface FineEqaReferenceOptions extends OccupancyOptions {
  question: string;
  /** Where the frames are written (an OpenEQA-style frame folder). */
  framesDir: string;
  /** Budget = max(1, ⌊stepsPerSqrtArea · √area⌋) (default 3, the reference's ratio). */
  stepsPerSqrtArea?: number;
  /** A fixed budget instead. */
  maxSteps?: number;
  /** How views are prepared for the VLM. */
  image?: ImageOptions;
  /** Seed of the random draws (default 42, the reference's). */
  seed?: number;
  /** Radius around the start taken as free floor, metres (default 1.0: the reference's init_clearance·2). */
  initClearanceM?: number;
}

/** One update of the semantic value map. */
export interface ValueMapUpdate {
  step: number;
  /** Candidate points (x, z), in letter order. */
  candidates: [number, number][];
  /** The letter the VLM chose, or null when its reply had none. */
  chosen: string | null;
  lsv: number[];
  gsv: number;
  /** SV = LSV·GSV per candidate, averaged into the map. */
  values: number[];
}

/** A region point the VLM chose among the candidates. */
export interface RegionPointChoice {
  step: number;
  region: string;
  letter: string;
  point: [number, number];
  /** Whether it became one of a relevant region's goal points. */
  goal: boolean;
}

/** Where each step sent the agent. */
export interface ReferenceMove {
  step: number;
  /** region: GOE to a region point; look: GOE turn left 90°; frontier, commit: FBE; random: no frontier, a random heading. */
  kind: "region" | "look" | "frontier" | "commit" | "random";
  region?: string;
  point: [number, number];
  yaw: number;
  /** The environment found a path (its geodesic distance was added). */
  pathFound: boolean;
}

/** `regions` are the relevant regions as the reference keeps them (exact names split on commas; repeats kept). */
export interface FineEqaReferenceResult extends FineEqaExploration {
  stop: "answered" | "budget";
  valueUpdates: ValueMapUpdate[];
  regionPoints: RegionPointChoice[];
  moves: ReferenceMove[];
  /** The move made after the last step, before the blind answer (null when the agent answered from a view). */
  finalMove: ReferenceMove | null;
  /** Observation size the environment gave. */
  observation: { width: number; height: number };
  /** Semantic value per map cell (row-major, as the occupancy map). */
  valueMap: Float32Array;
}

/** "A, B and C" for n letters. */
function letterList(n: number): string {
  const l = LETTERS.slice(0, n);
  return l.length <= 1 ? l.join("") : `${l.slice(0, -1).join(", ")} and ${l[l.length - 1]}`;
}

function userRequest(text: string, image: PreparedImage): ChatRequest {
  const content: ContentPart[] = [{ type: "text", text }, { type: "image", data: image.data, mediaType: image.mediaType }];
  return { messages: [{ role: "user", content }] };
}

/** The reference mode's own requests (the stop check, answer, regions and view region are Fine-EQA's, `fineEqaRequests`). */
export const fineEqaReferenceRequests = {
  direction: (question: string, drawn: PreparedImage, n: number): ChatRequest => userRequest(renderPromptFile(FINE_EQA_REFERENCE_PROMPTS.direction, { question, letters: letterList(n) }), drawn),
  worth: (question: string, image: PreparedImage): ChatRequest => userRequest(renderPromptFile(FINE_EQA_REFERENCE_PROMPTS.worth, { question }), image),
  regionPoint: (region: string, drawn: PreparedImage, n: number): ChatRequest => userRequest(renderPromptFile(FINE_EQA_REFERENCE_PROMPTS.regionPoint, { region, letters: letterList(n) }), drawn),
};

/** The index of the letter (A, B, …, of `n`) a reply names, or undefined. */
export function parseLetterReply(reply: string | null, n: number): number | undefined {
  if (reply === null) return undefined;
  const text = reply.trim();
  const m = /^\W*([A-D])\W*$/i.exec(text) ?? /^\W*([A-D])\s*[:).\]-]/.exec(text) ?? /\b(?:point|place|letter|answer|circle)\b(?:\s+is)?\W+([A-D])\b/i.exec(text) ?? /['"`]([A-D])['"`]/.exec(text) ?? /\b([A-D])\b/.exec(text);
  if (!m) return undefined;
  const index = LETTERS.indexOf((m[1] as string).toUpperCase() as (typeof LETTERS)[number]);
  return index >= 0 && index < n ? index : undefined;
}

/** The reference's region list: the reply split on commas, names kept only when exactly a known region other than "unknown" (no trimming). */
export function parseReferenceRegions(reply: string | null): number[] {
  if (reply === null) return [];
  const out: number[] = [];
  for (const part of reply.split(",")) {
    const index = (EXPRESS_REGIONS as readonly string[]).indexOf(part);
    if (part !== "unknown" && index >= 0) out.push(index);
  }
  return out;
}

/** scipy.ndimage.gaussian_filter (mode "reflect", truncate 4) on a rows×cols grid. */
export function gaussianSmooth(values: Float32Array, rows: number, cols: number, sigma: number): Float32Array {
  const radius = Math.floor(4 * sigma + 0.5);
  const kernel = new Float64Array(2 * radius + 1);
  let sum = 0;
  for (let i = -radius; i <= radius; i++) sum += kernel[i + radius] = Math.exp((-0.5 * i * i) / (sigma * sigma));
  for (let i = 0; i < kernel.length; i++) kernel[i] = (kernel[i] as number) / sum;
  const reflect = (i: number, n: number): number => {
    const period = 2 * n;
    let j = ((i % period) + period) % period;
    if (j >= n) j = period - 1 - j;
    return j;
  };
  const tmp = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let k = -radius; k <= radius; k++) acc += (kernel[k + radius] as number) * (values[r * cols + reflect(c + k, cols)] as number);
      tmp[r * cols + c] = acc;
    }
  }
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let k = -radius; k <= radius; k++) acc += (kernel[k + radius] as number) * (tmp[reflect(r + k, rows) * cols + c] as number);
      out[r * cols + c] = acc;
    }
  }
  return out;
}

/** Cells (row, col) within `radius` cells of (r0, c0), inside the grid. */
function disc(r0: number, c0: number, radius: number, rows: number, cols: number): number[] {
  const out: number[] = [];
  for (let r = Math.max(0, Math.ceil(r0 - radius)); r <= Math.min(rows - 1, Math.floor(r0 + radius)); r++) {
    for (let c = Math.max(0, Math.ceil(c0 - radius)); c <= Math.min(cols - 1, Math.floor(c0 + radius)); c++) {
      if (Math.hypot(r - r0, c - c0) <= radius) out.push(r * cols + c);
    }
  }
  return out;
}

/** Farthest-point sampling from the first point (the reference's `fps`). */
function farthestPoints(points: [number, number][], n: number): [number, number][] {
  const chosen = [0];
  const d = points.map(() => Infinity);
  while (chosen.length < Math.min(n, points.length)) {
    const last = points[chosen[chosen.length - 1] as number] as [number, number];
    let best = -1;
    for (let i = 0; i < points.length; i++) {
      if (chosen.includes(i)) continue;
      const p = points[i] as [number, number];
      d[i] = Math.min(d[i] as number, (p[0] - last[0]) ** 2 + (p[1] - last[1]) ** 2);
      if (best < 0 || (d[i] as number) > (d[best] as number)) best = i;
    }
    chosen.push(best);
  }
  return chosen.map((i) => points[i] as [number, number]);
}

/** World (x, y, z) to pixel (u, v) and depth through a camera-to-world pose (OpenGL axes); undefined behind the camera. */
function project(obs: EnvObservation, pose: Float64Array, x: number, y: number, z: number): { u: number; v: number } | undefined {
  const dx = x - (pose[3] as number);
  const dy = y - (pose[7] as number);
  const dz = z - (pose[11] as number);
  const cx = (pose[0] as number) * dx + (pose[4] as number) * dy + (pose[8] as number) * dz;
  const cy = (pose[1] as number) * dx + (pose[5] as number) * dy + (pose[9] as number) * dz;
  const cz = (pose[2] as number) * dx + (pose[6] as number) * dy + (pose[10] as number) * dz;
  const depth = -cz;
  if (!(depth > 0)) return undefined;
  return { u: obs.camera.cx + (obs.camera.fx * cx) / depth, v: obs.camera.cy - (obs.camera.fy * cy) / depth };
}

/** Runs the reference mode from the environment's current state (call `reset` first). */
export async function exploreFineEqaReference(env: Environment, vlm: ChatModel, options: FineEqaReferenceOptions): Promise<FineEqaReferenceResult> {
  const trace = newTrace("fine-eqa:reference");
  const bounds = await env.bounds();
  const clock = explorerClock();
  const { pause, resume } = clock;
  const random: Random = seededRandom(options.seed ?? REF.seed);
  const budget = fineEqaBudget(bounds, options);
  const map = new OccupancyMap(bounds, options);
  const { rows, cols, cellSize } = map;
  const n = rows * cols;
  const value = new Float32Array(n);
  const valueWeight = new Float32Array(n);
  const regionMap = new Int16Array(n).fill(-1);
  const regionHistory = new Map<number, number[]>();
  const visited: number[] = [];
  const writer = new FrameFolderWriter(options.framesDir);
  const badReplies: FineEqaReferenceResult["badReplies"] = [];
  const steps: FineEqaStep[] = [];
  const observedSteps: number[] = [];
  const valueUpdates: ValueMapUpdate[] = [];
  const regionPoints: RegionPointChoice[] = [];
  const moves: ReferenceMove[] = [];
  let pathLengthM = 0;
  let pathLengthSteps = 0;
  const rc = (cell: number): [number, number] => [Math.floor(cell / cols), cell % cols];
  const centre = (cell: number): [number, number] => map.cellCentre(cell);

  // the stop checks are a role of their own in the run's ledger of model calls and its cost
  const stopCheckModel = inRole(vlm, STOP_CHECK_ROLE);
  const call = async (role: string, prompt: string, request: ChatRequest, frames?: number[]): Promise<string | null> => {
    pause();
    const response = await tracedCall(trace, role === STOP_CHECK_ROLE ? stopCheckModel : vlm, role, prompt, request, frames);
    resume();
    return response.text;
  };

  const regionReply = await call("regions", FINE_EQA_PROMPTS.region, fineEqaRequests.regions(options.question));
  if (regionReply === null) badReplies.push({ call: "regions", reply: regionReply });
  const relevant = parseReferenceRegions(regionReply);
  const expList = relevant.map((region) => ({ region, count: 0, dir: 0, points: [] as number[] }));
  let fbe = true;

  // The state machine of the reference's get_exp_state (tsdf.py), rule for rule.
  const hasPoints = (i: number): boolean => i >= 0 && i < expList.length && expList[i]!.count === 0 && expList[i]!.points.length > 0;
  const complete = (i: number): boolean => expList[i]!.count === REF.maxRounds && expList[i]!.dir === 3;
  const resetExp = (i: number): void => {
    if (i >= 0 && i < expList.length) expList[i] = { region: expList[i]!.region, count: 0, dir: 0, points: [] };
  };
  const advance = (i: number): void => {
    const e = expList[i]!;
    if (e.dir === 3) {
      e.count++;
      e.dir = 0;
    } else e.dir++;
  };
  const expState = (): boolean => {
    if (expList.length === 0) return fbe;
    if (fbe) {
      if (hasPoints(0)) {
        fbe = false;
        expList[0]!.count = 1;
      } else if (expList.length === 2 && hasPoints(1)) {
        fbe = false;
        expList[1]!.count = 1;
      }
    } else if (expList[0]!.count > 0) {
      if (complete(0)) {
        resetExp(0);
        if (expList.length === 2 && hasPoints(1)) expList[1]!.count = 1;
        else fbe = true;
      } else advance(0);
    } else if (hasPoints(0)) {
      resetExp(1);
      expList[0]!.count = 1;
    } else if (complete(1)) {
      resetExp(1);
      fbe = true;
    } else advance(1);
    return fbe;
  };

  let state: AgentState = { position: [0, 0, 0], yaw: 0, pitch: 0 };
  let answer: string | null = null;
  let answerSource: FineEqaReferenceResult["answerSource"] = "blind";
  let stop: FineEqaReferenceResult["stop"] = "budget";
  let explorationSteps = 0;
  let committed: { target: number; toward: [number, number] } | undefined;
  let finalMove: ReferenceMove | null = null;
  let observation = { width: 0, height: 0 };

  const act = async (action: DiscreteAction): Promise<void> => {
    pause();
    const result = await env.act({ type: action });
    resume();
    state = result.state;
    pathLengthSteps++;
    steps.push({ action, success: result.success, state });
  };

  /** A navigable point for a cell: its centre, else the nearest traversable cell's (the reference snaps to the navmesh). */
  const snap = async (cell: number): Promise<Point3 | undefined> => {
    for (const c of [cell, nearestTraversable(map, cell)]) {
      if (c < 0) continue;
      const [x, z] = centre(c);
      const p: Point3 = [x, state.position[1], z];
      pause();
      const ok = await env.isNavigable(p);
      resume();
      if (ok) return p;
    }
    return undefined;
  };

  /** Teleports to `p` facing `yaw`; adds the geodesic distance when the environment finds a path. */
  const moveTo = async (p: Point3 | undefined, yaw: number): Promise<boolean> => {
    const from = state.position;
    const target: AgentState = { position: p ?? from, yaw, pitch: 0 };
    pause();
    const geodesic = p ? await env.geodesicDistance(from, p) : 0;
    const result = await env.act({ type: "teleport", state: target });
    resume();
    if (!result.success) return false;
    const found = Number.isFinite(geodesic);
    if (found) {
      pathLengthM += geodesic;
      pathLengthSteps += Math.ceil(geodesic / MOVE_STEP_M - 1e-9);
    }
    pathLengthSteps += Math.round(Math.abs(wrapAngle(yaw - state.yaw)) / ((TURN_STEP_DEG * Math.PI) / 180));
    state = result.state;
    steps.push({ action: "teleport", success: true, state });
    return found;
  };

  for (let step = 0; step < budget; step++) {
    pause();
    const obs: EnvObservation = await env.observe();
    const frame = await writer.write(obs);
    const framePath = join(options.framesDir, `${String(frame).padStart(5, "0")}-rgb.png`);
    const image = await prepareImage(framePath, options.image);
    resume();
    observation = { width: obs.width, height: obs.height };
    state = obs.state;
    if (steps.length === 0) {
      steps.push({ success: true, state });
      const clearance = options.initClearanceM ?? REF.initClearanceM;
      const start = map.cellAt(state.position[0], state.position[2]);
      if (start >= 0 && clearance > 0) {
        const [r0, c0] = rc(start);
        for (const cell of disc(r0, c0, clearance / cellSize, rows, cols)) if (map.cells[cell] === CELL_UNKNOWN) map.cells[cell] = CELL_FREE;
      }
    }
    observedSteps.push(steps.length - 1);
    explorationSteps++;
    const floorY = state.position[1];
    let black = 0;
    for (let i = 0; i < obs.rgb.length; i += 3) if ((obs.rgb[i] as number) + (obs.rgb[i + 1] as number) + (obs.rgb[i + 2] as number) === 0) black++;
    const agentCell = nearestTraversable(map, map.cellAt(state.position[0], state.position[2]));

    if (black < REF.blackPixelRatio * obs.width * obs.height) {
      map.integrate(obs, floorY);
      const stopReply = await call("stop-check", FINE_EQA_PROMPTS.explore, fineEqaRequests.stopCheck(options.question, image), [frame]);
      if (stopReply === null) badReplies.push({ call: "stop-check", reply: stopReply });
      if (parseStopReply(stopReply)) {
        answer = await fineEqaViewAnswer(call, options.question, image, frame, badReplies);
        answerSource = "view";
        stop = "answered";
        break;
      }
      const candidates = promptPoints(map, obs, state, agentCell, random);
      if (candidates.length >= REF.minPromptPoints) {
        pause();
        const drawn = await prepareImage(await drawCandidates(obs, candidates.map((c) => candidatePixel(map, obs, c, floorY))), options.image);
        resume();
        const k = candidates.length;
        const dirReply = await call("direction", FINE_EQA_REFERENCE_PROMPTS.direction, fineEqaReferenceRequests.direction(options.question, drawn, k), [frame]);
        const chosen = parseLetterReply(dirReply, k);
        if (chosen === undefined) badReplies.push({ call: "direction", reply: dirReply });
        const lsv = candidates.map((_, i) => (i === chosen ? 1 : 0) * (k / 3));
        const worthReply = await call("worth", FINE_EQA_REFERENCE_PROMPTS.worth, fineEqaReferenceRequests.worth(options.question, image), [frame]);
        if (worthReply === null) badReplies.push({ call: "worth", reply: worthReply });
        const gsv = Math.exp((parseStopReply(worthReply) ? 1 : 0) / REF.gsvT) / REF.gsvF;
        const sv = lsv.map((l) => l * gsv);
        if (chosen !== undefined) {
          candidates.forEach((cell, i) => {
            const [r0, c0] = rc(cell);
            for (const p of disc(r0, c0, Math.trunc(REF.valueRadiusM / cellSize), rows, cols)) {
              const w = valueWeight[p] as number;
              valueWeight[p] = w + 1;
              value[p] = (w * (value[p] as number) + (sv[i] as number)) / (w + 1);
            }
          });
        }
        valueUpdates.push({ step, candidates: candidates.map(centre), chosen: chosen === undefined ? null : (LETTERS[chosen] as string), lsv, gsv, values: sv });

        const regionReplyText = await call("view-region", FINE_EQA_PROMPTS.viewRegion, fineEqaRequests.viewRegion(image), [frame]);
        const seen = parseViewRegionReply(regionReplyText);
        if (seen === undefined) badReplies.push({ call: "view-region", reply: regionReplyText });
        const regionIndex = seen === undefined ? UNKNOWN_REGION : EXPRESS_REGIONS.indexOf(seen as (typeof EXPRESS_REGIONS)[number]);
        if (regionIndex !== UNKNOWN_REGION) {
          const pointReply = await call("region-point", FINE_EQA_REFERENCE_PROMPTS.regionPoint, fineEqaReferenceRequests.regionPoint(seen as string, drawn, k), [frame]);
          const pick = parseLetterReply(pointReply, k);
          if (pick === undefined) badReplies.push({ call: "region-point", reply: pointReply });
          else {
            const goal = integrateRegion(candidates[pick] as number, regionIndex);
            regionPoints.push({ step, region: seen as string, letter: LETTERS[pick] as string, point: centre(candidates[pick] as number), goal });
          }
        }
      }
    }

    // Where next: GOE or FBE (main.py, after the semantic map).
    const goe = expList.length > 0 ? !expState() : false;
    let found = true;
    let move: ReferenceMove | undefined;
    if (goe) {
      const idx = argmaxCount();
      const e = expList[idx]!;
      const region = EXPRESS_REGIONS[e.region] as string;
      if (e.dir === 0) {
        found = false;
        for (let tries = 0; tries < REF.goalPathTries && !found; tries++) {
          const cell = nextRegionPoint(idx);
          const p = await snap(cell);
          pause();
          const reachable = p !== undefined && Number.isFinite(await env.geodesicDistance(state.position, p));
          resume();
          if (!reachable) continue;
          found = await moveTo(p, state.yaw);
          move = { step, kind: "region", region, point: [state.position[0], state.position[2]], yaw: state.yaw, pathFound: found };
        }
      } else {
        nextRegionPoint(idx);
        for (let i = 0; i < 3; i++) await act("turn_left");
        move = { step, kind: "look", region, point: [state.position[0], state.position[2]], yaw: state.yaw, pathFound: true };
      }
    }
    if (!goe || !found) {
      const next = nextPose(step, agentCell);
      const p = next.cell === agentCell ? ([state.position[0], state.position[1], state.position[2]] as Point3) : await snap(next.cell);
      const ok = await moveTo(p, next.yaw);
      move = { step, kind: next.kind, point: [state.position[0], state.position[2]], yaw: state.yaw, pathFound: ok };
    }
    if (move) moves.push(move);
    if (step === budget - 1 && move) finalMove = move;
  }

  if (answerSource === "blind") answer = await fineEqaBlindAnswer(call, options.question, badReplies);
  trace.agentAnswer = answer;
  trace.frames = observedSteps.map((_, i) => i);
  pause();
  return {
    answer,
    answerSource,
    stop,
    regions: relevant.map((r) => EXPRESS_REGIONS[r] as string),
    explorationSteps,
    budget,
    steps,
    pathLengthM,
    pathLengthSteps,
    frames: writer.frames,
    observedSteps,
    badReplies,
    valueUpdates,
    regionPoints,
    moves,
    finalMove,
    observation,
    valueMap: value,
    map,
    trace,
    explorerMs: clock.ownMs(),
    explorerMsPerStep: explorationSteps > 0 ? clock.ownMs() / explorationSteps : 0,
  };

  function argmaxCount(): number {
    let best = 0;
    expList.forEach((e, i) => {
      if (e.count > (expList[best] as (typeof expList)[number]).count) best = i;
    });
    return best;
  }

  /** integrate_reg and modify_map: the region's disc, joined to its earlier points within 3 m; a goal point when relevant and not near a visited point. */
  function integrateRegion(cell: number, region: number): boolean {
    const radius = Math.trunc(REF.regionRadiusM / cellSize);
    const [r0, c0] = rc(cell);
    for (const p of disc(r0, c0, radius, rows, cols)) regionMap[p] = region;
    const history = regionHistory.get(region);
    if (history === undefined) regionHistory.set(region, [cell]);
    else {
      for (const earlier of history) {
        const [r1, c1] = rc(earlier);
        if (Math.hypot(r1 - r0, c1 - c0) > REF.regionJoinFactor * radius) continue;
        const len = Math.max(Math.abs(r1 - r0), Math.abs(c1 - c0));
        for (let s = 0; s <= len; s++) {
          const r = Math.round(r1 + ((r0 - r1) * s) / Math.max(1, len));
          const c = Math.round(c1 + ((c0 - c1) * s) / Math.max(1, len));
          for (const p of disc(r, c, radius, rows, cols)) regionMap[p] = region;
        }
      }
      history.push(cell);
    }
    const idx = expList.findIndex((e) => e.region === region);
    if (idx < 0) return false;
    const near = visited.some((v) => {
      const [vr, vc] = rc(v);
      return Math.hypot(vr - r0, vc - c0) < radius / 2;
    });
    if (near) return false;
    expList[idx]!.points.push(cell);
    return true;
  }

  /** find_next_point_region: the region's goal point of highest masked value, else the masked map's maximum away from visited points. */
  function nextRegionPoint(idx: number): number {
    const e = expList[idx]!;
    const smooth = gaussianSmooth(value, rows, cols, REF.smoothSigmaCells);
    const masked = new Float32Array(n);
    for (let i = 0; i < n; i++) masked[i] = regionMap[i] === e.region ? (smooth[i] as number) : 0;
    const maskedSmooth = gaussianSmooth(masked, rows, cols, REF.smoothSigmaCells);
    let next: number;
    if (e.points.length > 0) {
      let best = 0;
      e.points.forEach((p, i) => {
        if ((maskedSmooth[p] as number) > (maskedSmooth[e.points[best] as number] as number)) best = i;
      });
      next = e.points[best] as number;
      e.points.splice(best, 1);
    } else {
      const away = Float32Array.from(maskedSmooth);
      const radius = Math.trunc(REF.visitedRadiusM / cellSize);
      for (const v of visited) {
        const [vr, vc] = rc(v);
        for (const p of disc(vr, vc, radius, rows, cols)) away[p] = 0;
      }
      const again = gaussianSmooth(away, rows, cols, REF.smoothSigmaCells);
      let max = -Infinity;
      const ties: number[] = [];
      for (let i = 0; i < n; i++) {
        const v = again[i] as number;
        if (v > max) {
          max = v;
          ties.length = 0;
        }
        if (v === max) ties.push(i);
      }
      next = ties[Math.floor(random() * ties.length)] as number;
    }
    visited.push(next);
    return next;
  }

  /** find_next_pose: a frontier drawn by weight and backed off, committed when beyond 3 m; no frontier: here, a random heading. */
  function nextPose(step: number, agentCell: number): { cell: number; yaw: number; kind: ReferenceMove["kind"] } {
    const island = distanceField(map, agentCell);
    const inIsland = (r: number, c: number): boolean => r >= 0 && c >= 0 && r < rows && c < cols && Number.isFinite(island[r * cols + c] as number);
    const unknownAt = (r: number, c: number): number => (r >= 0 && c >= 0 && r < rows && c < cols && map.cells[r * cols + c] === CELL_UNKNOWN ? 1 : 0);
    const [ar, ac] = agentCell >= 0 ? rc(agentCell) : rc(map.cellAt(state.position[0], state.position[2]));
    const yawOf = (dr: number, dc: number): number => headingTo(0, 0, dc, dr);
    let target: number;
    let toward: [number, number];
    let kind: ReferenceMove["kind"];
    if (committed) {
      target = committed.target;
      toward = committed.toward;
      kind = "commit";
    } else {
      const smooth = gaussianSmooth(value, rows, cols, REF.smoothSigmaCells);
      let frontiers: [number, number][] = [];
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          if (!inIsland(r, c)) continue;
          let k = 0;
          for (let dr = -1; dr <= 1; dr++) for (let dc = -1; dc <= 1; dc++) if (dr !== 0 || dc !== 0) k += unknownAt(r + dr, c + dc);
          if (k >= 3 && k <= 4) frontiers.push([r, c]);
        }
      }
      if (frontiers.length > 10) frontiers = clusterCentres(frontiers);
      const noValue = step < REF.minRandomInitSteps;
      const weights = frontiers.map(([r, c]) => {
        const [nr, nc] = normalInto(r, c);
        const along = (metres: number, f: (r: number, c: number) => number): number[] => {
          const out: number[] = [];
          for (let i = 0; i < Math.trunc(metres / cellSize); i++) {
            const rr = Math.round(r + i * nr);
            const cc = Math.round(c + i * nc);
            if (rr >= 0 && cc >= 0 && rr < rows && cc < cols) out.push(f(rr, cc));
          }
          return out;
        };
        const unoccupiedRate = along(REF.maxUnoccupiedCheckM, (rr, cc) => (map.cells[rr * cols + cc] === CELL_FREE ? 1 : 0)).reduce((a, b) => a + b, 0) / Math.trunc(REF.maxUnoccupiedCheckM / cellSize);
        const unexploredRate = along(REF.maxUnexploredCheckM, unknownAt).reduce((a, b) => a + b, 0) / Math.trunc(REF.maxUnexploredCheckM / cellSize);
        const ahead = along(REF.maxValCheckM, (rr, cc) => smooth[rr * cols + cc] as number).filter((v) => v > 0);
        const valAhead = ahead.length === 0 ? 0 : ahead.reduce((a, b) => a + b, 0) / ahead.length;
        let w = Math.exp(unexploredRate / REF.unexploredT) * Math.exp(unoccupiedRate / REF.unoccupiedT);
        if (!noValue) w *= Math.exp((smooth[r * cols + c] as number) / REF.valT) * Math.exp(valAhead / REF.valDirT);
        const dist = Math.hypot(r - ar, c - ac) * cellSize;
        w *= Math.exp(-dist / REF.distT);
        // the reference compares metres with a count of cells here (0.5 / 0.1): within 5 m and facing it
        if (dist < REF.minDistFromCur / cellSize && Math.abs(wrapAngle(state.yaw - yawOf(nr, nc))) < Math.PI / 6) w *= 1e-3;
        return w;
      });
      let picked: { cell: number; toward: [number, number] } | undefined;
      if (frontiers.length > 0) {
        const total = weights.reduce((a, b) => a + b, 0);
        for (let tries = 0; tries < REF.frontierTries && !picked; tries++) {
          let x = random() * total;
          let i = 0;
          while (i < weights.length - 1 && x >= (weights[i] as number)) x -= weights[i++] as number;
          const [fr, fc] = frontiers[i] as [number, number];
          const [nr, nc] = normalInto(fr, fc);
          let pr = fr;
          let pc = fc;
          let back = 0;
          const maxBack = Math.trunc(REF.frontierSpacingM / cellSize);
          for (;;) {
            pr -= nr;
            pc -= nc;
            back++;
            if (back >= maxBack) break;
            if (pr <= 0 || pc <= 0 || pr >= rows || pc >= cols) break;
            const cell = Math.trunc(pr) * cols + Math.trunc(pc);
            if (map.cells[cell] === CELL_OCCUPIED || !inIsland(Math.trunc(pr), Math.trunc(pc))) {
              pr += 2 * nr;
              pc += 2 * nc;
              break;
            }
          }
          const rr = Math.round(pr);
          const cc = Math.round(pc);
          if (back >= 2 && rr > 0 && cc > 0 && rr < rows && cc < cols && inIsland(rr, cc)) picked = { cell: rr * cols + cc, toward: [fr, fc] };
        }
      }
      if (!picked) {
        const a = random() - 0.5;
        const b = random() - 0.5;
        return { cell: agentCell, yaw: yawOf(a, b), kind: "random" };
      }
      target = picked.cell;
      toward = picked.toward;
      kind = "frontier";
    }
    const [tr, tc] = rc(target);
    let next = target;
    let dir: [number, number] = [toward[0] - tr, toward[1] - tc];
    let reachedEnd = true;
    if (Math.hypot(tr - ar, tc - ac) > REF.maxDistFromCurM / cellSize) {
      committed = { target, toward };
      const path = agentCell >= 0 ? aStar(map, agentCell, target) : undefined;
      if (path && path.length > 1) {
        const index = Math.min(Math.trunc(REF.maxDistFromCurM / cellSize), path.length - 1);
        next = path[index] as number;
        reachedEnd = index === path.length - 1;
        const [xr, xc] = rc(next);
        dir = [toward[0] - xr, toward[1] - xc];
      }
    }
    if (Math.hypot(tr - ar, tc - ac) <= REF.maxDistFromCurM / cellSize || reachedEnd) committed = undefined;
    if (dir[0] === 0 && dir[1] === 0) dir = [toward[0] - ar, toward[1] - ac];
    return { cell: next, yaw: dir[0] === 0 && dir[1] === 0 ? state.yaw : yawOf(dir[0], dir[1]), kind };
  }

  /** find_normal_into_space: the Sobel gradient of the unknown mask at a cell, turned toward the side with more unknown (random on ties or a flat gradient). */
  function normalInto(r: number, c: number): [number, number] {
    const u = (rr: number, cc: number): number => {
      const r2 = Math.min(rows - 1, Math.max(0, rr));
      const c2 = Math.min(cols - 1, Math.max(0, cc));
      return map.cells[r2 * cols + c2] === CELL_UNKNOWN ? 1 : 0;
    };
    let g0 = 0;
    let g1 = 0;
    for (let k = -1; k <= 1; k++) {
      const w = k === 0 ? 2 : 1;
      g0 += w * (u(r + 1, c + k) - u(r - 1, c + k));
      g1 += w * (u(r + k, c + 1) - u(r + k, c - 1));
    }
    let nr: number;
    let nc: number;
    if (g0 === 0 && g1 === 0) {
      nr = random();
      nc = random();
    } else {
      nr = -g0;
      nc = -g1;
    }
    const len = Math.hypot(nr, nc) || 1;
    nr /= len;
    nc /= len;
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < 10; i++) {
      const a = [Math.trunc(r + i * nr), Math.trunc(c + i * nc)] as const;
      const b = [Math.trunc(r - i * nr), Math.trunc(c - i * nc)] as const;
      if (a[0] >= 0 && a[1] >= 0 && a[0] < rows && a[1] < cols) s1 += u(a[0], a[1]);
      if (b[0] >= 0 && b[1] >= 0 && b[0] < rows && b[1] < cols) s2 += u(b[0], b[1]);
    }
    if (s1 < s2 || (s1 === s2 && random() < 0.5)) return [-nr, -nc];
    return [nr, nc];
  }
}

/** DBSCAN with eps 1 cell and 2 samples on grid cells: 4-connected groups of at least two, each by its member nearest the mean. */
function clusterCentres(cells: [number, number][]): [number, number][] {
  const key = (r: number, c: number): string => `${r},${c}`;
  const index = new Map(cells.map((p, i) => [key(p[0], p[1]), i]));
  const seen = new Uint8Array(cells.length);
  const out: [number, number][] = [];
  for (let i = 0; i < cells.length; i++) {
    if (seen[i]) continue;
    const group: number[] = [];
    const stack = [i];
    seen[i] = 1;
    while (stack.length > 0) {
      const j = stack.pop() as number;
      group.push(j);
      const [r, c] = cells[j] as [number, number];
      for (const [dr, dc] of [[1, 0], [-1, 0], [0, 1], [0, -1]] as const) {
        const k = index.get(key(r + dr, c + dc));
        if (k !== undefined && !seen[k]) {
          seen[k] = 1;
          stack.push(k);
        }
      }
    }
    if (group.length < 2) continue;
    const mr = group.reduce((a, j) => a + (cells[j] as [number, number])[0], 0) / group.length;
    const mc = group.reduce((a, j) => a + (cells[j] as [number, number])[1], 0) / group.length;
    let best = group[0] as number;
    for (const j of group) {
      const [r, c] = cells[j] as [number, number];
      const [br, bc] = cells[best] as [number, number];
      if (Math.hypot(r - mr, c - mc) < Math.hypot(br - mr, bc - mc)) best = j;
    }
    out.push(cells[best] as [number, number]);
  }
  return out;
}

/** The camera pose moved `camOffsetM` forward (the reference's view mask and candidate pixels use it). */
function shiftedPose(obs: EnvObservation): Float64Array {
  const pose = Float64Array.from(obs.pose);
  // forward is the camera's −z axis (third column, negated)
  pose[3] = (pose[3] as number) - (pose[2] as number) * REF.camOffsetM;
  pose[7] = (pose[7] as number) - (pose[6] as number) * REF.camOffsetM;
  pose[11] = (pose[11] as number) - (pose[10] as number) * REF.camOffsetM;
  return pose;
}

/** find_prompt_points_within_view: candidate cells in letter order (none when fewer than 3 qualify). */
function promptPoints(map: OccupancyMap, obs: EnvObservation, state: AgentState, agentCell: number, random: Random): number[] {
  if (agentCell < 0) return [];
  const { rows, cols, cellSize } = map;
  const scale = obs.width / REF.referenceSidePx;
  const marginTop = REF.viewMarginTopPx * (obs.height / REF.referenceSidePx);
  const marginSide = REF.viewMarginSidePx * scale;
  const pose = shiftedPose(obs);
  const floorY = state.position[1];
  const island = distanceField(map, agentCell);
  const inView = (x: number, z: number): boolean => {
    for (const h of [-0.2, 0, 1, 2, 3.5]) {
      const p = project(obs, pose, x, floorY + h, z);
      if (p && p.u >= marginSide && p.u < obs.width - marginSide && p.v >= marginTop && p.v < obs.height) return true;
    }
    return false;
  };
  let pool: number[] = [];
  for (let i = 0; i < rows * cols; i++) {
    if (!Number.isFinite(island[i] as number)) continue;
    const [x, z] = map.cellCentre(i);
    if (inView(x, z)) pool.push(i);
  }
  if (pool.length > REF.maxUnoccupied) {
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pool[i], pool[j]] = [pool[j] as number, pool[i] as number];
    }
    pool = pool.slice(0, REF.maxUnoccupied);
  }
  const ar = Math.floor(agentCell / cols);
  const ac = agentCell % cols;
  const kept = pool.filter((cell) => {
    const r = Math.floor(cell / cols);
    const c = cell % cols;
    const d = Math.hypot(r - ar, c - ac);
    if (!(d > REF.pointMinDistM / cellSize && d < REF.pointMaxDistM / cellSize)) return false;
    let occupied = 0;
    const len = Math.floor(d);
    for (let s = 0; s <= len; s++) {
      const rr = Math.trunc(r + ((ar - r) / d) * s);
      const cc = Math.trunc(c + ((ac - c) / d) * s);
      if (map.cells[rr * cols + cc] === CELL_OCCUPIED) occupied++;
    }
    return occupied <= 1;
  });
  if (kept.length < REF.minPointsForClustering) return [];
  const sampled = farthestPoints(kept.map((cell) => [Math.floor(cell / cols), cell % cols] as [number, number]), REF.promptPoints);
  const merged: [number, number][] = [];
  for (const p of sampled) {
    if (merged.every((q) => Math.hypot(q[0] - p[0], q[1] - p[1]) > REF.clusterThresholdM / cellSize)) merged.push(p);
  }
  return merged.map(([r, c]) => r * cols + c);
}

/** Where a candidate is drawn: the cell 0.2 m below the floor seen by the camera moved forward, as the reference projects it. */
function candidatePixel(map: OccupancyMap, obs: EnvObservation, cell: number, floorY: number): { u: number; v: number } {
  const [x, z] = map.cellCentre(cell);
  return project(obs, shiftedPose(obs), x, floorY - 0.2, z) ?? { u: -1000, v: -1000 };
}

/** The view with grey lettered circles (radius 18 px and 30 px letters at 512 px, scaled to the view). */
async function drawCandidates(obs: EnvObservation, pixels: { u: number; v: number }[]): Promise<Buffer> {
  const s = obs.width / REF.referenceSidePx;
  const r = REF.circleRadiusPx * s;
  const shapes = pixels.map(
    (p, i) =>
      `<circle cx="${p.u.toFixed(1)}" cy="${p.v.toFixed(1)}" r="${r.toFixed(1)}" fill="rgb(200,200,200)" stroke="black" stroke-width="${(3 * s).toFixed(1)}"/>` +
      `<text x="${p.u.toFixed(1)}" y="${p.v.toFixed(1)}" font-family="sans-serif" font-size="${(REF.fontPx * s).toFixed(1)}" text-anchor="middle" dominant-baseline="central">${LETTERS[i]}</text>`,
  );
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${obs.width}" height="${obs.height}">${shapes.join("")}</svg>`;
  const sharp = await loadSharp();
  return sharp(Buffer.from(obs.rgb.buffer, obs.rgb.byteOffset, obs.rgb.byteLength), { raw: { width: obs.width, height: obs.height, channels: 3 } })
    .composite([{ input: Buffer.from(svg), top: 0, left: 0 }])
    .png()
    .toBuffer();
}

/** The prompts' hashes (Fine-EQA's and the reference mode's own), for a run's configuration. */
export function fineEqaReferencePromptHashes(): Record<string, string> {
  return { ...fineEqaPromptHashes(), ...promptHashes(Object.values(FINE_EQA_REFERENCE_PROMPTS)) };
}
