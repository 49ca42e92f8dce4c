import { UserError } from "../core/index.js";

/**
 * Which frames of an episode an agent looks at:
 * - `uniform`: `count` frames spread evenly, exactly as OpenEQA's baselines pick them
 *   (`np.round(np.linspace(0, n - 1, count)).astype(int)`, duplicates included when the
 *   episode has fewer frames than `count`);
 * - `every`: frames 0, step, 2·step, …;
 * - `seconds`: the first frame at or after every `interval` seconds from the first frame
 *   (needs timestamps, which videos have).
 */
export type SamplingSpec = { kind: "uniform"; count: number } | { kind: "every"; step: number } | { kind: "seconds"; interval: number };

const SAMPLING_FORMS = "uniform:K (or just K), every:N or seconds:S, e.g. uniform:50, every:10, seconds:2";

/** Parses `uniform:50` (or a bare `50`), `every:10` or `seconds:2`. */
export function parseSamplingSpec(text: string): SamplingSpec {
  const trimmed = text.trim();
  const match = /^(?:(uniform|every|seconds):)?\s*([^:\s]+)$/.exec(trimmed);
  const invalid = (why: string): UserError => new UserError(`invalid frame sampling "${text}": ${why}`, {}, `use ${SAMPLING_FORMS}`);
  if (!match) throw invalid("not of the form KIND:VALUE");
  const kind = match[1] ?? "uniform";
  const value = Number(match[2]);
  if (kind === "seconds") {
    if (!Number.isFinite(value) || value <= 0) throw invalid("the interval must be a number of seconds above 0");
    return { kind: "seconds", interval: value };
  }
  if (!Number.isInteger(value) || value < 1) throw invalid(`the ${kind === "every" ? "step" : "frame count"} must be a whole number of at least 1`);
  return kind === "every" ? { kind: "every", step: value } : { kind: "uniform", count: value };
}

/**
 * The frame indices `spec` picks from an episode of `frameCount` frames, in increasing
 * order (uniform sampling may repeat an index, as the reference does). Sampling by seconds
 * needs one timestamp per frame and throws a UserError without them.
 */
export function sampleFrameIndices(frameCount: number, spec: SamplingSpec, timestamps?: readonly number[]): number[] {
  checkCount(frameCount, "frameCount");
  switch (spec.kind) {
    case "uniform":
      return linspaceRoundIndices(frameCount, spec.count);
    case "every": {
      checkCount(spec.step, "step");
      if (spec.step < 1) throw new RangeError("step must be at least 1");
      const indices: number[] = [];
      for (let i = 0; i < frameCount; i += spec.step) indices.push(i);
      return indices;
    }
    case "seconds":
      return sampleBySeconds(frameCount, spec.interval, timestamps);
  }
}

/**
 * `np.round(np.linspace(0, n - 1, count)).astype(int)`, bit for bit: numpy computes
 * `i * ((n - 1) / (count - 1))` in doubles, sets the last value to `n - 1` exactly, and
 * rounds halves to even (linspace(0, 3, 3) = [0, 1.5, 3] gives [0, 2, 3]). An empty
 * episode gives no indices.
 */
export function linspaceRoundIndices(frameCount: number, count: number): number[] {
  checkCount(frameCount, "frameCount");
  checkCount(count, "count");
  if (frameCount === 0 || count === 0) return [];
  const stop = frameCount - 1;
  const div = count - 1;
  const indices: number[] = [];
  if (div === 0) return [0];
  const step = stop / div;
  for (let i = 0; i < count; i++) {
    // numpy: y = arange(num) * step (or, when step is 0, arange(num) / div * delta), y[-1] = stop
    const y = i === div ? stop : step === 0 ? (i / div) * stop : i * step;
    indices.push(roundHalfToEven(y));
  }
  return indices;
}

function roundHalfToEven(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction < 0.5) return floor;
  if (fraction > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

/**
 * Keeps the first frame at or after each of t0, t0 + interval, t0 + 2·interval, … where
 * t0 is the first frame's timestamp; a gap longer than the interval yields one frame, not
 * repeats.
 */
function sampleBySeconds(frameCount: number, interval: number, timestamps: readonly number[] | undefined): number[] {
  if (!(interval > 0) || !Number.isFinite(interval)) throw new RangeError("interval must be a number of seconds above 0");
  if (timestamps === undefined) {
    throw new UserError("sampling by seconds needs the frames' timestamps, and this episode has none (only videos have them)", {}, "sample with uniform:K or every:N instead");
  }
  if (timestamps.length !== frameCount) throw new RangeError(`${timestamps.length} timestamps for ${frameCount} frames`);
  const indices: number[] = [];
  if (frameCount === 0) return indices;
  const t0 = timestamps[0]!;
  // a tolerance well below any frame interval, so that 0.1 + 0.2 counts as reaching 0.3
  const epsilon = 1e-9 * Math.max(1, interval);
  let slot = 0;
  for (let i = 0; i < frameCount; i++) {
    const t = timestamps[i]! - t0;
    if (t + epsilon >= slot * interval) {
      indices.push(i);
      slot = Math.floor((t + epsilon) / interval) + 1;
    }
  }
  return indices;
}

function checkCount(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number of at least 0, got ${value}`);
}
