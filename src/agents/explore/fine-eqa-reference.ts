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
import { renderPromptFile, seededRandom } from "../../core/index.js";
import { FrameFolderWriter, loadSharp, prepareImage, type ImageOptions, type PreparedImage } from "../../episodes/index.js";
import { type ChatModel, type ChatRequest, type ContentPart } from "../../models/index.js";
import { MOVE_STEP_M, TURN_STEP_DEG, wrapAngle, type AgentState, type Environment, type EnvObservation, type Point3 } from "../../sim/index.js";
import { promptHashes } from "../calls.js";
import { nearestTraversable } from "./explorer.js";
import { EXPRESS_REGIONS, FINE_EQA_PROMPTS, fineEqaBlindAnswer, fineEqaBudget, fineEqaViewAnswer, fineEqaPromptHashes, fineEqaRequests, parseStopReply, parseViewRegionReply, type FineEqaExploration } from "./fine-eqa.js";
import { FineEqaWalk } from "./fine-eqa-walk.js";
import {
  REF,
  ReferenceMaps,
  activeRegion,
  advanceExplorationPlan,
  blackPixels,
  candidatePixel,
  clearStart,
  explorationPlan,
  integrateRegion,
  integrateValue,
  nextPose,
  nextRegionPoint,
  promptPoints,
  type ExplorationPlan,
} from "./fine-eqa-reference-steps.js";
import { OccupancyMap, type OccupancyOptions } from "./occupancy.js";

export const FINE_EQA_REFERENCE_PROMPTS = {
  direction: "fine-eqa-reference-direction",
  worth: "fine-eqa-reference-worth",
  regionPoint: "fine-eqa-reference-region-point",
} as const;

/** The reference's observation size (`fine_eqa.yaml`: img_width, img_height 512, hfov 90). */
export const FINE_EQA_REFERENCE_OBSERVATION = { width: 512, height: 512 } as const;

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

/** The reference mode's walk: its moves snap to the navigable floor and add the environment's geodesic distance. */
class ReferenceRun extends FineEqaWalk {
  /** A navigable point for a cell: its centre, else the nearest traversable cell's (the reference snaps to the navmesh). */
  async snap(map: OccupancyMap, cell: number): Promise<Point3 | undefined> {
    for (const c of [cell, nearestTraversable(map, cell)]) {
      if (c < 0) continue;
      const [x, z] = map.cellCentre(c);
      const p: Point3 = [x, this.state.position[1], z];
      if (await this.outside(() => this.env.isNavigable(p))) return p;
    }
    return undefined;
  }

  /** Teleports to `p` facing `yaw`; adds the geodesic distance when the environment finds a path. */
  async moveTo(p: Point3 | undefined, yaw: number): Promise<boolean> {
    const from = this.state.position;
    const target: AgentState = { position: p ?? from, yaw, pitch: 0 };
    const { geodesic, result } = await this.outside(async () => ({ geodesic: p ? await this.env.geodesicDistance(from, p) : 0, result: await this.env.act({ type: "teleport", state: target }) }));
    if (!result.success) return false;
    const found = Number.isFinite(geodesic);
    if (found) {
      this.pathLengthM += geodesic;
      this.pathLengthSteps += Math.ceil(geodesic / MOVE_STEP_M - 1e-9);
    }
    this.pathLengthSteps += Math.round(Math.abs(wrapAngle(yaw - this.state.yaw)) / ((TURN_STEP_DEG * Math.PI) / 180));
    this.state = result.state;
    this.steps.push({ action: "teleport", success: true, state: this.state });
    return found;
  }
}

/** A view the agent took: the observation, its frame index and the image the VLM is shown. */
interface ReferenceView {
  step: number;
  obs: EnvObservation;
  frame: number;
  image: PreparedImage;
  agentCell: number;
}

/** Runs the reference mode from the environment's current state (call `reset` first). */
export async function exploreFineEqaReference(env: Environment, vlm: ChatModel, options: FineEqaReferenceOptions): Promise<FineEqaReferenceResult> {
  const run = new ReferenceRun(env, vlm, "fine-eqa:reference");
  const bounds = await env.bounds();
  const budget = fineEqaBudget(bounds, options);
  const maps = new ReferenceMaps(new OccupancyMap(bounds, options), seededRandom(options.seed ?? REF.seed));
  const writer = new FrameFolderWriter(options.framesDir);
  const observedSteps: number[] = [];
  const found: Pick<FineEqaReferenceResult, "valueUpdates" | "regionPoints" | "moves"> = { valueUpdates: [], regionPoints: [], moves: [] };

  const regionReply = await run.call("regions", FINE_EQA_PROMPTS.region, fineEqaRequests.regions(options.question));
  if (regionReply === null) run.unreadable("regions", regionReply);
  const relevant = parseReferenceRegions(regionReply);
  const plan = explorationPlan(relevant);
  let answer: string | null = null;
  let answerSource: FineEqaReferenceResult["answerSource"] = "blind";
  let stop: FineEqaReferenceResult["stop"] = "budget";
  let explorationSteps = 0;
  let finalMove: ReferenceMove | null = null;
  let observation = { width: 0, height: 0 };

  for (let step = 0; step < budget; step++) {
    const { obs, frame, image } = await run.outside(async () => {
      const obs = await env.observe();
      const frame = await writer.write(obs);
      const image = await prepareImage(join(options.framesDir, `${String(frame).padStart(5, "0")}-rgb.png`), options.image);
      return { obs, frame, image };
    });
    observation = { width: obs.width, height: obs.height };
    run.state = obs.state;
    if (run.steps.length === 0) {
      run.steps.push({ success: true, state: run.state });
      clearStart(maps, run.state.position, options.initClearanceM ?? REF.initClearanceM);
    }
    observedSteps.push(run.steps.length - 1);
    explorationSteps++;
    const agentCell = nearestTraversable(maps.map, maps.map.cellAt(run.state.position[0], run.state.position[2]));

    if (blackPixels(obs) < REF.blackPixelRatio * obs.width * obs.height) {
      maps.map.integrate(obs, run.state.position[1]);
      const stopReply = await run.call("stop-check", FINE_EQA_PROMPTS.explore, fineEqaRequests.stopCheck(options.question, image), [frame]);
      if (stopReply === null) run.unreadable("stop-check", stopReply);
      if (parseStopReply(stopReply)) {
        answer = await fineEqaViewAnswer(run.call, options.question, image, frame, run.badReplies);
        answerSource = "view";
        stop = "answered";
        break;
      }
      await updateSemanticMaps(run, maps, plan, { step, obs, frame, image, agentCell }, options, found);
    }
    const move = await moveNext(run, maps, plan, step, agentCell);
    if (move) found.moves.push(move);
    if (step === budget - 1 && move) finalMove = move;
  }

  if (answerSource === "blind") answer = await fineEqaBlindAnswer(run.call, options.question, run.badReplies);
  run.trace.agentAnswer = answer;
  run.trace.frames = observedSteps.map((_, i) => i);
  run.clock.pause();
  return {
    answer,
    answerSource,
    stop,
    regions: relevant.map((r) => EXPRESS_REGIONS[r] as string),
    explorationSteps,
    budget,
    steps: run.steps,
    pathLengthM: run.pathLengthM,
    pathLengthSteps: run.pathLengthSteps,
    frames: writer.frames,
    observedSteps,
    badReplies: run.badReplies,
    ...found,
    finalMove,
    observation,
    valueMap: maps.value,
    map: maps.map,
    trace: run.trace,
    explorerMs: run.clock.ownMs(),
    explorerMsPerStep: explorationSteps > 0 ? run.clock.ownMs() / explorationSteps : 0,
  };
}

/**
 * The semantic update of one view (main.py, after the stop check): the candidate points drawn as
 * lettered circles, the VLM's chosen direction and its yes/no on the view averaged into the value
 * map, then the region the view shows and the candidate in it into the region map.
 */
async function updateSemanticMaps(run: ReferenceRun, maps: ReferenceMaps, plan: ExplorationPlan, view: ReferenceView, options: FineEqaReferenceOptions, found: Pick<FineEqaReferenceResult, "valueUpdates" | "regionPoints">): Promise<void> {
  const { step, obs, frame, image, agentCell } = view;
  const candidates = promptPoints(maps.map, obs, run.state, agentCell, maps.random);
  if (candidates.length < REF.minPromptPoints) return;
  const floorY = run.state.position[1];
  const drawn = await run.outside(async () => prepareImage(await drawCandidates(obs, candidates.map((c) => candidatePixel(maps.map, obs, c, floorY))), options.image));
  const k = candidates.length;
  const dirReply = await run.call("direction", FINE_EQA_REFERENCE_PROMPTS.direction, fineEqaReferenceRequests.direction(options.question, drawn, k), [frame]);
  const chosen = parseLetterReply(dirReply, k);
  if (chosen === undefined) run.unreadable("direction", dirReply);
  const lsv = candidates.map((_, i) => (i === chosen ? 1 : 0) * (k / 3));
  const worthReply = await run.call("worth", FINE_EQA_REFERENCE_PROMPTS.worth, fineEqaReferenceRequests.worth(options.question, image), [frame]);
  if (worthReply === null) run.unreadable("worth", worthReply);
  const gsv = Math.exp((parseStopReply(worthReply) ? 1 : 0) / REF.gsvT) / REF.gsvF;
  const sv = lsv.map((l) => l * gsv);
  if (chosen !== undefined) integrateValue(maps, candidates, sv);
  found.valueUpdates.push({ step, candidates: candidates.map((c) => maps.centre(c)), chosen: chosen === undefined ? null : (LETTERS[chosen] as string), lsv, gsv, values: sv });

  const regionReplyText = await run.call("view-region", FINE_EQA_PROMPTS.viewRegion, fineEqaRequests.viewRegion(image), [frame]);
  const seen = parseViewRegionReply(regionReplyText);
  if (seen === undefined) run.unreadable("view-region", regionReplyText);
  const regionIndex = seen === undefined ? UNKNOWN_REGION : EXPRESS_REGIONS.indexOf(seen as (typeof EXPRESS_REGIONS)[number]);
  if (regionIndex === UNKNOWN_REGION) return;
  const pointReply = await run.call("region-point", FINE_EQA_REFERENCE_PROMPTS.regionPoint, fineEqaReferenceRequests.regionPoint(seen as string, drawn, k), [frame]);
  const pick = parseLetterReply(pointReply, k);
  if (pick === undefined) {
    run.unreadable("region-point", pointReply);
    return;
  }
  const goal = integrateRegion(maps, plan, candidates[pick] as number, regionIndex);
  found.regionPoints.push({ step, region: seen as string, letter: LETTERS[pick] as string, point: maps.centre(candidates[pick] as number), goal });
}

/**
 * Where next (main.py, after the semantic map): by the exploration plan, goal-oriented (to the
 * region's next point on a round's first look, else a left turn of 90°) or, when that finds no
 * path or the plan says so, frontier-based.
 */
async function moveNext(run: ReferenceRun, maps: ReferenceMaps, plan: ExplorationPlan, step: number, agentCell: number): Promise<ReferenceMove | undefined> {
  const goe = plan.regions.length > 0 ? !advanceExplorationPlan(plan) : false;
  let found = true;
  let move: ReferenceMove | undefined;
  const here = (): [number, number] => [run.state.position[0], run.state.position[2]];
  if (goe) {
    const entry = plan.regions[activeRegion(plan)]!;
    const region = EXPRESS_REGIONS[entry.region] as string;
    if (entry.dir === 0) {
      found = false;
      for (let tries = 0; tries < REF.goalPathTries && !found; tries++) {
        const p = await run.snap(maps.map, nextRegionPoint(maps, entry));
        const reachable = p !== undefined && Number.isFinite(await run.outside(() => run.env.geodesicDistance(run.state.position, p)));
        if (!reachable) continue;
        found = await run.moveTo(p, run.state.yaw);
        move = { step, kind: "region", region, point: here(), yaw: run.state.yaw, pathFound: found };
      }
    } else {
      nextRegionPoint(maps, entry);
      for (let i = 0; i < 3; i++) await run.act("turn_left");
      move = { step, kind: "look", region, point: here(), yaw: run.state.yaw, pathFound: true };
    }
  }
  if (!goe || !found) {
    const next = nextPose(maps, run.state, step, agentCell);
    const p = next.cell === agentCell ? ([run.state.position[0], run.state.position[1], run.state.position[2]] as Point3) : await run.snap(maps.map, next.cell);
    const ok = await run.moveTo(p, next.yaw);
    move = { step, kind: next.kind, point: here(), yaw: run.state.yaw, pathFound: ok };
  }
  return move;
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
