/**
 * A trajectory log built from what an agent perceived rather than from ground truth: the
 * objects of its 3-D memory (scene-graph instances, with the memory's ids), their positions
 * and on/inside relations as the memory inferred them, their colours as seen in their best
 * view, and the agent's poses from the frames. Programs generated over the ground-truth log
 * name objects by type and position, so they run unchanged over this log: the answer then
 * measures memory and retrieval, as TAG-EQA's isolated component tests do.
 *
 * Only instances the memory could place are kept: an object seen only beyond the depth range
 * has no position, and is most often a far view of an object placed from nearer.
 *
 * What perception does not give is left unknown, so the program executor cannot use it:
 * relations the memory did not infer, and, without an action history, object states and events
 * (the memory is a snapshot, not a history). Material and use are type knowledge (what any
 * model knows of a mug), taken from `typeKnowledge` when given.
 *
 * With the agent's action history (`actions`, history.ts: what it picked up, put, opened…, where,
 * in the grounding frame), the log gets the agent's events, each on the memory's object of that
 * type nearest to where the action was (within `ACTION_MATCH_DISTANCE`; else an object of its
 * own, known from the action alone), and what they imply over time: an object opened at step s
 * was closed before and open from s until it is closed (toggled, sliced, filled, broken alike);
 * a picked-up object stood where it was taken from until then, is in hand until put, and then is
 * on or inside where it was put, at the position the history gives.
 */
import { colourName, type Pose } from "../core/index.js";
import { TRAJECTORY_FORMAT, type TrajectoryLog, type TrajectoryObject, type TrajectoryObjectState, type TrajectoryStateName } from "../data/index.js";
import { loadSharp, type Episode } from "../episodes/index.js";
import { cameraPosition, cameraYaw, invertRigid } from "../geometry/index.js";
import type { MemoryInstance, SceneGraph } from "../agents/index.js";
import type { TagAction } from "./history.js";
import { applyTransform, groundingTransform } from "./world.js";

export interface PerceivedLogOptions {
  id: string;
  environment: string;
  /** Height of the camera above the agent's feet, metres. */
  cameraHeight: number;
  /** Material and use of an object type, as general knowledge gives them. */
  typeKnowledge?: (type: string) => { material?: string; use?: string } | undefined;
  /** The brightest a lit surface can look relative to its colour (the renderer's light), for naming colours. */
  lighting?: number;
  /** The agent's own actions (`actionHistory`), positions in the grounding frame. */
  actions?: readonly TagAction[];
}

/** Farthest the memory's object may be from where an action was done to an object of its type, metres. */
export const ACTION_MATCH_DISTANCE = 1.5;

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

function objectId(instance: MemoryInstance): string {
  return `${instance.label.replace(/\s+/g, "_")}-m${instance.id}`;
}

/** Mean colour of each instance's pixels in its best view, by memory id. */
async function seenColours(episode: Episode, instances: readonly MemoryInstance[]): Promise<Map<number, [number, number, number]>> {
  const byFrame = new Map<number, { instance: MemoryInstance; maskId: number }[]>();
  for (const instance of instances) {
    const view = instance.views[instance.bestView];
    if (view?.maskId === undefined) continue;
    const list = byFrame.get(view.frame) ?? [];
    list.push({ instance, maskId: view.maskId });
    byFrame.set(view.frame, list);
  }
  const colours = new Map<number, [number, number, number]>();
  if (byFrame.size === 0) return colours;
  const sharp = await loadSharp();
  for (const [index, wanted] of byFrame) {
    const frame = await episode.frame(index);
    if (!frame.rgbPath || !frame.masks) continue;
    const { data, info } = await sharp(frame.rgbPath).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const masks = frame.masks;
    if (info.width !== masks.width || info.height !== masks.height) continue;
    for (const { instance, maskId } of wanted) {
      let r = 0;
      let g = 0;
      let b = 0;
      let n = 0;
      for (let p = 0; p < masks.ids.length; p++) {
        if (masks.ids[p] !== maskId) continue;
        r += data[p * 3] as number;
        g += data[p * 3 + 1] as number;
        b += data[p * 3 + 2] as number;
        n++;
      }
      if (n > 0) colours.set(instance.id, [r / n, g / n, b / n]);
    }
  }
  return colours;
}

function agentFromPose(pose: Pose, cameraHeight: number): TrajectoryLog["steps"][number]["agent"] {
  const [x, y, z] = cameraPosition(pose);
  const forwardY = -(pose[6] as number);
  return { position: [round3(x), round3(y - cameraHeight), round3(z)], yaw: cameraYaw(pose), pitch: Math.asin(Math.max(-1, Math.min(1, forwardY))) };
}

/**
 * The perceived log of an episode from its memory: one step per frame of the episode that
 * has a pose, every memory instance present at every step at its memory position.
 */
export async function perceivedLog(graph: SceneGraph, episode: Episode, options: PerceivedLogOptions): Promise<TrajectoryLog> {
  const placed = graph.instances.filter((i) => i.center !== undefined);
  const colours = await seenColours(episode, placed);
  const ids = new Map(placed.map((i) => [i.id, objectId(i)]));
  const objects: TrajectoryObject[] = placed.map((instance) => {
    const known = options.typeKnowledge?.(instance.label);
    const colour = colours.get(instance.id);
    const size = instance.box ? ([0, 1, 2].map((a) => round3((instance.box!.max[a] as number) - (instance.box!.min[a] as number))) as [number, number, number]) : undefined;
    return {
      id: objectId(instance),
      type: instance.label,
      kind: "object",
      receptacle: null,
      ...(size ? { size } : {}),
      properties: {
        ...(colour ? { colour: colourName(colour, options.lighting ?? 1) } : {}),
        ...(known?.material ? { material: known.material } : {}),
        ...(known?.use ? { use: known.use } : {}),
      },
      states: [],
    };
  });
  const placement = new Map<number, { relation: "on" | "inside"; receptacle: string }>();
  for (const r of graph.relations) {
    if (r.relation !== "on" && r.relation !== "inside") continue;
    if (placement.has(r.subject) && placement.get(r.subject)?.relation === "inside") continue;
    const target = ids.get(r.object);
    if (target) placement.set(r.subject, { relation: r.relation, receptacle: target });
  }
  const snapshot: Record<string, TrajectoryObjectState> = {};
  for (const instance of placed) {
    const place = placement.get(instance.id);
    snapshot[objectId(instance)] = {
      position: instance.center ? [instance.center[0], instance.center[1], instance.center[2]] : null,
      relation: place?.relation ?? "unknown",
      receptacle: place?.receptacle ?? null,
      states: {},
    };
  }
  const steps: TrajectoryLog["steps"] = [];
  for (let index = 0; index < episode.frameCount; index++) {
    const frame = await episode.frame(index);
    if (!frame.pose) continue;
    steps.push({ step: steps.length, action: null, success: true, frame: index, agent: agentFromPose(frame.pose, options.cameraHeight), held: null, objects: snapshot });
  }
  if (steps.length === 0) throw new Error(`episode ${episode.id} has no frame with a pose: no perceived log`);
  const log: TrajectoryLog = { format: TRAJECTORY_FORMAT, id: options.id, source: "perceived", environment: options.environment, cameraHeight: options.cameraHeight, objects, steps, events: [] };
  return options.actions && options.actions.length > 0 ? withActions(log, options.actions) : log;
}

const STATE_OF: Partial<Record<TagAction["action"], [TrajectoryStateName, boolean]>> = {
  open: ["open", true],
  close: ["open", false],
  toggle_on: ["toggled", true],
  toggle_off: ["toggled", false],
  slice: ["sliced", true],
  fill: ["filled", true],
  empty: ["filled", false],
  break: ["broken", true],
};

/** The perceived log with the agent's actions as events and what they imply (see above). */
function withActions(log: TrajectoryLog, actions: readonly TagAction[]): TrajectoryLog {
  const toWorld = invertRigid(groundingTransform(log));
  const world = (p: readonly number[] | null): [number, number, number] | null => (p ? (applyTransform(toWorld, p).map(round3) as [number, number, number]) : null);
  const objects = log.objects.map((o) => ({ ...o, properties: { ...o.properties }, states: [...o.states] }));
  const snapshot = log.steps[0]!.objects;
  const stepOfFrame = new Map(log.steps.map((s) => [s.frame ?? s.step, s.step]));
  const lastStep = log.steps.length - 1;
  const stepOf = (a: TagAction): number | undefined => stepOfFrame.get(a.frame ?? a.step);
  let added = 0;
  const find = (named: { type: string; position: readonly number[] | null }): string => {
    const at = world(named.position);
    let best: string | undefined;
    let bestDistance = ACTION_MATCH_DISTANCE;
    for (const o of objects) {
      const p = snapshot[o.id]?.position;
      if (o.type !== named.type || !p || !at) continue;
      const d = Math.hypot(p[0] - at[0], p[1] - at[1], p[2] - at[2]);
      if (d <= bestDistance) [best, bestDistance] = [o.id, d];
    }
    if (best) return best;
    const id = `${named.type.replace(/\s+/g, "_")}-a${++added}`;
    objects.push({ id, type: named.type, kind: "object", receptacle: null, properties: {}, states: [] });
    snapshot[id] = { position: at, relation: "unknown", receptacle: null, states: {} };
    return id;
  };
  // per object, its placement and states from each step on
  const changes = new Map<string, { step: number; apply: (s: TrajectoryObjectState) => TrajectoryObjectState }[]>();
  const change = (id: string, step: number, apply: (s: TrajectoryObjectState) => TrajectoryObjectState): void => {
    changes.set(id, [...(changes.get(id) ?? []), { step, apply }]);
  };
  const events: TrajectoryLog["events"] = [];
  const counts = new Map<string, number>();
  const held = new Array<string | null>(lastStep + 1).fill(null);
  const known = new Set<string>();
  for (const action of actions) {
    const step = stepOf(action);
    if (step === undefined) continue;
    // a put puts down what the agent holds (the memory may have split it into two objects)
    const holding = action.action === "put" ? held[step] : null;
    const id = holding && objects.find((o) => o.id === holding)?.type === action.object.type ? holding : find(action.object);
    const target = action.target ? find(action.target) : undefined;
    const from = action.from ? find(action.from) : undefined;
    const key = `${action.action}\u0000${id}`;
    const index = (counts.get(key) ?? 0) + 1;
    counts.set(key, index);
    events.push({ step, type: action.action, object: id, index, ...(from ? { from } : {}), ...(target ? { target } : {}) });
    const state = STATE_OF[action.action];
    const object = objects.find((o) => o.id === id)!;
    if (state) {
      const [name, value] = state;
      if (!object.states.includes(name)) object.states.push(name);
      // the first action on a state tells what it was before
      if (!known.has(`${id}\u0000${name}`)) change(id, 0, (s) => (s.states[name] === undefined ? { ...s, states: { ...s.states, [name]: !value } } : s));
      known.add(`${id}\u0000${name}`);
      change(id, step, (s) => ({ ...s, states: { ...s.states, [name]: value } }));
    }
    const position = world(action.object.position);
    if (action.action === "pickup") {
      // where it was taken from, it stood since the start (unless an earlier action placed it)
      if (!known.has(`${id}\u0000place`)) change(id, 0, (s) => ({ ...s, position: position ?? s.position, relation: from ? (action.from?.relation ?? "on") : s.relation, receptacle: from ?? s.receptacle }));
      known.add(`${id}\u0000place`);
      change(id, step, (s) => ({ ...s, relation: "held", receptacle: null }));
      for (let t = step; t <= lastStep; t++) held[t] = id;
    } else if (action.action === "put") {
      const relation = action.target?.relation ?? "on";
      known.add(`${id}\u0000place`);
      change(id, step, (s) => ({ ...s, position: position ?? s.position, relation, receptacle: target ?? null }));
      for (let t = step; t <= lastStep; t++) if (held[t] === id) held[t] = null;
    }
  }
  events.sort((a, b) => a.step - b.step);
  const steps = log.steps.map((s, t) => {
    const objectsAt: Record<string, TrajectoryObjectState> = { ...snapshot };
    for (const [id, list] of changes) {
      let state = snapshot[id]!;
      // step-0 changes say what was before the first action; later ones take effect at their step
      for (const c of [...list].sort((a, b) => a.step - b.step)) if (c.step <= t) state = c.apply(state);
      if (state.relation === "held") state = { ...state, position: [s.agent.position[0], round3(s.agent.position[1] + log.cameraHeight), s.agent.position[2]] };
      objectsAt[id] = state;
    }
    return { ...s, held: held[t] ?? null, objects: objectsAt };
  });
  return { ...log, objects, steps, events };
}

