/**
 * What TAG-EQA's baselines read of a trajectory (seed 002, section 4, "Socratic LLM + Image
 * captions"): "the history of actions and observations, where each action consists of a natural
 * language description and an indicator of success, and each observation consists of a caption
 * and an agent's position", with "up to K=50 observations" kept so that "every manipulation
 * action … is picked and each object is visible at least once".
 *
 * - Observations (`observeTrajectory`): one per step that has a frame; the agent's position is
 *   its camera's in the grounding frame (the frame the questions' coordinates are in), rounded
 *   to 2 decimals. The objects an observation shows come from the recording's ground-truth
 *   instance masks (the simulator's "ground truth objects masks, object matching": an object
 *   keeps its instance id from frame to frame), with the generator's rule of what is seen
 *   (`SEEN_MIN_PIXELS` pixels whose depth lies in 0.1 m to `SEEN_RANGE`, as `maskSightings`), and
 *   each one's 3-D position estimated from the depth of its pixels: the per-axis median of its
 *   back-projected pixels, in the grounding frame (the visible surface's middle, not its box's
 *   centre).
 * - Actions (`describeActions`): each step's action in words ("picked up the bread", "put the
 *   bread in the fridge", "turned left") with whether it succeeded.
 * - Selection (`selectObservations`): the paper's graph, each manipulation event (the log's
 *   events: picked up, put, opened, cooled…) and each object seen is a node, each observation
 *   an edge between the nodes it captures (an event is captured by the observation of its step).
 *   The paper gives no weights: an edge of an observation that captures n nodes weighs 1/n, so
 *   that the minimum spanning tree (Kruskal; a forest where the graph falls apart; ties by step)
 *   is drawn from the observations that capture most. Inside one observation every edge weighs
 *   the same, so its clique is replaced by a star, which joins the same components. The
 *   observations of the tree's edges are the essential ones; a node no edge reaches (an object
 *   seen only alone) adds the observation that shows it with most pixels, an event its own step's.
 *   When more than K are essential, the events' observations are kept first, then the others by
 *   how many nodes they capture (the paper does not say what it does then); when fewer, the rest
 *   of the K are spread evenly over the other observations. The kept observations are in step order.
 */
import type { TrajectoryEventType, TrajectoryLog } from "../../data/index.js";
import { SEEN_MIN_PIXELS } from "../sightings.js";
import { SEEN_RANGE, type Vec3 } from "../world.js";
import { PAST_TENSE, words } from "../phrases.js";
import type { TagBaselineTrajectory } from "./types.js";

/** The paper's K: observations kept per trajectory. */
export const TAG_OBSERVATION_LIMIT = 50;
const MIN_DEPTH = 0.1;

/** An object an observation shows, from the instance masks: the log's id, its type, its pixels in range, and its estimated position in the grounding frame. */
export interface TagSeenObject {
  id: string;
  type: string;
  pixels: number;
  /** The per-axis median of its back-projected pixels, metres, 2 decimals; null when the frame has no depth or pose. */
  position: Vec3 | null;
}

/** One observation: a step with a frame. */
export interface TagObservation {
  step: number;
  frame: number;
  /** The agent's camera in the grounding frame (metres, 2 decimals); null when the frame has no pose. */
  position: Vec3 | null;
  /** The objects it shows, most pixels first. */
  objects: TagSeenObject[];
}

/** One step's action as the baselines describe it. */
export interface TagActionDescription {
  step: number;
  /** The action in words, in the past tense ("picked up the bread"). */
  text: string;
  success: boolean;
}

const round2 = (v: number): number => Math.round(v * 100) / 100 + 0;

/** The mask instance id of each object of the log (simulator recordings name objects `<type>-<instance id>`). */
function maskIds(log: TrajectoryLog, labels: Record<string, string>): Map<number, { id: string; type: string }> {
  const byMaskId = new Map<number, { id: string; type: string }>();
  for (const o of log.objects) {
    const id = /-(\d+)$/.exec(o.id)?.[1];
    if (id !== undefined && labels[id] === o.type) byMaskId.set(Number(id), { id: o.id, type: o.type });
  }
  return byMaskId;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Every observation of a trajectory (one per step with a frame), with the agent's position and
 * the objects its instance masks show. Frames without masks show no objects.
 */
export async function observeTrajectory(trajectory: TagBaselineTrajectory): Promise<TagObservation[]> {
  const { log, episode, tag } = trajectory;
  const observations: TagObservation[] = [];
  let byMaskId: Map<number, { id: string; type: string }> | null = null;
  for (const step of log.steps) {
    if (typeof step.frame !== "number" || step.frame >= episode.frameCount) continue;
    const frame = await episode.frame(step.frame);
    const pose = tag.poses[step.frame] ?? null;
    const position: Vec3 | null = pose ? [round2(pose[3]!), round2(pose[7]!), round2(pose[11]!)] : null;
    const objects: TagSeenObject[] = [];
    const masks = frame.masks;
    if (masks) {
      byMaskId ??= maskIds(log, masks.labels);
      const depth = frame.depth && frame.depth.length === masks.ids.length ? frame.depth : null;
      const camera = frame.depthCamera ?? frame.camera;
      const project = depth && camera && pose && camera.width === masks.width && camera.height === masks.height;
      const points = new Map<number, { n: number; x: number[]; y: number[]; z: number[] }>();
      for (let p = 0; p < masks.ids.length; p++) {
        const id = masks.ids[p]!;
        if (id === 0 || !byMaskId.has(id)) continue;
        const d = depth ? depth[p]! : null;
        if (d !== null && !(d >= MIN_DEPTH && d <= SEEN_RANGE)) continue;
        let entry = points.get(id);
        if (!entry) points.set(id, (entry = { n: 0, x: [], y: [], z: [] }));
        entry.n++;
        if (project && d !== null) {
          // OpenGL camera axes (x right, y up, looking along −z), carried by the camera-to-grounding pose
          const u = p % masks.width;
          const v = Math.floor(p / masks.width);
          const cx = ((u + 0.5 - camera.cx) * d) / camera.fx;
          const cy = (-(v + 0.5 - camera.cy) * d) / camera.fy;
          const cz = -d;
          entry.x.push(pose[0]! * cx + pose[1]! * cy + pose[2]! * cz + pose[3]!);
          entry.y.push(pose[4]! * cx + pose[5]! * cy + pose[6]! * cz + pose[7]!);
          entry.z.push(pose[8]! * cx + pose[9]! * cy + pose[10]! * cz + pose[11]!);
        }
      }
      for (const [id, entry] of points) {
        if (entry.n < SEEN_MIN_PIXELS) continue;
        const object = byMaskId.get(id)!;
        objects.push({ id: object.id, type: object.type, pixels: entry.n, position: entry.x.length > 0 ? [round2(median(entry.x)), round2(median(entry.y)), round2(median(entry.z))] : null });
      }
      objects.sort((a, b) => b.pixels - a.pixels || a.id.localeCompare(b.id));
    }
    observations.push({ step: step.step, frame: step.frame, position, objects });
  }
  return observations;
}

const MOVES: Record<string, string> = {
  move_forward: "moved forward",
  turn_left: "turned left",
  turn_right: "turned right",
  look_up: "looked up",
  look_down: "looked down",
  teleport: "was moved to another place",
};

/**
 * Each step's action in words with whether it succeeded, in step order (step 0, the first
 * observation, has none). The log writes an action as its type and the object it names
 * (`pickup bread-54`, `put fridge-22`); a put names the receptacle, and the object put is the
 * one held before it.
 */
export function describeActions(log: TrajectoryLog): TagActionDescription[] {
  const objects = new Map(log.objects.map((o) => [o.id, o]));
  const the = (id: string | null | undefined): string => {
    const o = id ? objects.get(id) : undefined;
    return o ? `the ${words(o.type)}` : "an object";
  };
  const out: TagActionDescription[] = [];
  for (const step of log.steps) {
    if (step.action === null) continue;
    const [type = "", target] = step.action.trim().split(/\s+/, 2);
    let text: string;
    if (MOVES[type] !== undefined) text = MOVES[type];
    else if (type === "put") {
      const held = log.steps[step.step - 1]?.held ?? null;
      const receptacle = target ? objects.get(target) : undefined;
      text = `put ${the(held)} ${receptacle?.receptacle === "in" ? "in" : "on"} ${the(target)}`;
    } else if (Object.hasOwn(PAST_TENSE, type)) text = `${PAST_TENSE[type as TrajectoryEventType]} ${the(target)}`;
    else text = step.action.replace(/_/g, " ");
    out.push({ step: step.step, text, success: step.success });
  }
  return out;
}

/** A position as the questions write coordinates: "(x=0.46, y=0.15, z=-0.83)". */
export function formatPosition(p: readonly number[]): string {
  return `(x=${p[0]}, y=${p[1]}, z=${p[2]})`;
}

/** What `selectObservations` kept: indices into the observations, in step order, and how many of them were essential (all of them when there were no more than K). */
export interface ObservationSelection {
  indices: number[];
  essential: number;
}

/** Union-find over node indices, for Kruskal. */
class Components {
  private readonly parent: number[];
  constructor(n: number) {
    this.parent = Array.from({ length: n }, (_, i) => i);
  }
  find(i: number): number {
    while (this.parent[i] !== i) {
      this.parent[i] = this.parent[this.parent[i]!]!;
      i = this.parent[i]!;
    }
    return i;
  }
  union(a: number, b: number): boolean {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return false;
    this.parent[rb] = ra;
    return true;
  }
}

/**
 * Up to `limit` observations (the paper's K = 50), keeping the observation of every
 * manipulation event (the log's `events`) and every seen object in at least one, chosen by the
 * minimum spanning tree of the events-and-objects graph (see the module's comment).
 */
export function selectObservations(observations: readonly TagObservation[], events: readonly { step: number }[], limit = TAG_OBSERVATION_LIMIT): ObservationSelection {
  if (observations.length <= limit) return { indices: observations.map((_, i) => i), essential: observations.length };
  // nodes: events first (by their index in the log), then objects in order of first sighting
  const nodeOf = new Map<string, number>();
  const node = (key: string): number => {
    let n = nodeOf.get(key);
    if (n === undefined) nodeOf.set(key, (n = nodeOf.size));
    return n;
  };
  const byStep = new Map(observations.map((o, i) => [o.step, i]));
  const eventObservation: number[] = [];
  events.forEach((event, k) => {
    const at = byStep.get(event.step);
    if (at === undefined) return;
    node(`event:${k}`);
    eventObservation.push(at);
  });
  const captured: number[][] = observations.map(() => []);
  events.forEach((event, k) => {
    const at = byStep.get(event.step);
    if (at !== undefined) captured[at]!.push(node(`event:${k}`));
  });
  observations.forEach((o, i) => {
    for (const object of o.objects) captured[i]!.push(node(`object:${object.id}`));
  });
  // each observation a star over its nodes, weighing 1/n; ties by step
  const edges: { weight: number; observation: number; a: number; b: number }[] = [];
  captured.forEach((nodes, i) => {
    for (let k = 1; k < nodes.length; k++) edges.push({ weight: 1 / nodes.length, observation: i, a: nodes[0]!, b: nodes[k]! });
  });
  edges.sort((x, y) => x.weight - y.weight || x.observation - y.observation || x.b - y.b);
  const components = new Components(nodeOf.size);
  const essential = new Set<number>();
  const reached = new Set<number>();
  for (const edge of edges) {
    if (!components.union(edge.a, edge.b)) continue;
    essential.add(edge.observation);
    reached.add(edge.a).add(edge.b);
  }
  // nodes no edge reaches: an event's own observation, an object's best view
  for (const at of eventObservation) essential.add(at);
  for (const [key, n] of nodeOf) {
    if (reached.has(n) || !key.startsWith("object:")) continue;
    const id = key.slice("object:".length);
    let best = -1;
    let most = 0;
    observations.forEach((o, i) => {
      const pixels = o.objects.find((s) => s.id === id)?.pixels ?? 0;
      if (pixels > most) [best, most] = [i, pixels];
    });
    if (best >= 0) essential.add(best);
  }
  let kept = [...essential];
  if (kept.length > limit) {
    const events = new Set(eventObservation);
    kept.sort((a, b) => Number(events.has(b)) - Number(events.has(a)) || captured[b]!.length - captured[a]!.length || a - b);
    kept = kept.slice(0, limit);
  }
  const essentialCount = kept.length;
  const rest = observations.map((_, i) => i).filter((i) => !essential.has(i));
  const wanted = limit - kept.length;
  for (let j = 0; j < wanted && rest.length > 0; j++) kept.push(rest[Math.floor(((j + 0.5) * rest.length) / wanted)]!);
  return { indices: [...new Set(kept)].sort((a, b) => a - b), essential: essentialCount };
}
