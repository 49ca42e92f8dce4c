/**
 * What the agent saw, and a set's check of it.
 *
 * A question must be answerable from the observations: every object it refers to must have
 * been seen, as it was at the moment the question refers to it (`TrajectoryWorld.seenFor`).
 * Whether an object is seen at a step comes from the recording's frames when they have instance
 * masks (`maskSightings`: at least `SEEN_MIN_PIXELS` pixels of the object's mask whose depth lies
 * within 0.1 m to `SEEN_RANGE`, so occlusion is the renderer's), else from the geometric test
 * of `TrajectoryWorld` (ALFRED: pose at that step, field of view, range, closed receptacles,
 * furniture boxes when sizes are known). An object in the agent's hand is always known to it.
 *
 * Simulator recordings name each object `<type>-<instance id>` (src/sim/record.ts), the id of
 * its pixels in the instance masks; an object whose id names no instance of its type in the
 * episode's labels is never seen.
 */
import type { TagQuestion, TrajectoryLog } from "../data/index.js";
import { openEpisode } from "../episodes/index.js";
import { SEEN_RANGE, type ObjectSightings } from "./world.js";

/** Fewest pixels of an object's mask, within range, that make it seen (a 160×120 frame has 19,200). */
export const SEEN_MIN_PIXELS = 10;
const MIN_DEPTH = 0.1;

/**
 * The sightings of every object of a log from its recording's instance masks, one frame per
 * step (a step without a frame sees nothing). Null when the frames have no masks.
 */
export async function maskSightings(log: TrajectoryLog, framesDir: string): Promise<ObjectSightings | null> {
  const episode = await openEpisode(framesDir, log.id);
  const byMaskId = new Map<number, string>();
  const sightings = new Map<string, Uint8Array>();
  let labels: Record<string, string> | null = null;
  for (const step of log.steps) {
    if (typeof step.frame !== "number" || step.frame >= episode.frameCount) continue;
    const frame = await episode.frame(step.frame);
    if (!frame.masks) return null;
    if (labels === null) {
      labels = frame.masks.labels;
      for (const o of log.objects) {
        const id = /-(\d+)$/.exec(o.id)?.[1];
        if (id !== undefined && labels[id] === o.type) byMaskId.set(Number(id), o.id);
      }
    }
    const { ids } = frame.masks;
    const depth = frame.depth && frame.depth.length === ids.length ? frame.depth : null;
    const counts = new Map<number, number>();
    for (let p = 0; p < ids.length; p++) {
      const id = ids[p]!;
      if (id === 0 || !byMaskId.has(id)) continue;
      if (depth && !(depth[p]! >= MIN_DEPTH && depth[p]! <= SEEN_RANGE)) continue;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const [id, n] of counts) {
      if (n < SEEN_MIN_PIXELS) continue;
      const object = byMaskId.get(id)!;
      let steps = sightings.get(object);
      if (!steps) sightings.set(object, (steps = new Uint8Array(log.steps.length)));
      steps[step.step] = 1;
    }
  }
  return labels === null ? null : sightings;
}

export interface SeenReport {
  /** Questions checked, and those without a `seen` record (made before it was recorded). */
  questions: number;
  unrecorded: number;
  /** Objects the questions refer to (seen records), and those never seen: a record without steps, or an answer's object no record accounts for. */
  objects: number;
  neverSeen: number;
  /** Up to five question ids with a never-seen object. */
  examples: string[];
}

/**
 * Checks a set's questions for objects never seen: each `seen` record must list a step, and each
 * object of the structured answers (grounded forms included) must be one of the records (same
 * type, same position within 1 cm).
 */
export function checkSeenSet(questions: readonly TagQuestion[]): SeenReport {
  const report: SeenReport = { questions: questions.length, unrecorded: 0, objects: 0, neverSeen: 0, examples: [] };
  for (const q of questions) {
    if (!q.seen) {
      report.unrecorded++;
      continue;
    }
    report.objects += q.seen.length;
    let missing = q.seen.filter((s) => s.steps.length === 0).length;
    const answers = [q.structured_answer, ...(q.grounded ? [q.grounded.structured_answer] : [])];
    for (const answer of answers) {
      for (const o of answer.flatMap((g) => g.objects)) {
        const accounted = q.seen.some((s) => s.type === o.type && samePosition(s.position, o.position ?? null));
        if (!accounted) missing++;
      }
    }
    if (missing > 0) {
      report.neverSeen += missing;
      if (report.examples.length < 5) report.examples.push(q.question_id);
    }
  }
  return report;
}

function samePosition(a: readonly number[] | null, b: readonly number[] | null): boolean {
  if (!a || !b) return a === b;
  return Math.abs(a[0]! - b[0]!) <= 0.011 && Math.abs(a[1]! - b[1]!) <= 0.011 && Math.abs(a[2]! - b[2]!) <= 0.011;
}
