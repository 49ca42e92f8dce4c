import { sha256Hex, seededRandom, type Random } from "../core/index.js";
import { loadSharp } from "../episodes/index.js";

/**
 * C-GRPO's three augmentations (EQA-RM, seed 004, §4.3 and Table 5), each seeded and
 * reproducible: the same seed gives the same perturbation on every machine.
 */

/** A Fisher-Yates permutation of 0 … n−1 that moves at least one element when n ≥ 2 (an identity would perturb nothing). */
export function derangingPermutation(n: number, random: Random): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  if (n < 2) return order;
  for (;;) {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    if (order.some((v, i) => v !== i)) return order;
  }
}

/** Temporal shuffle (v^t from v^o): the keyframes in a random order that differs from the original. */
export function temporalShuffle<T>(frames: readonly T[], seed: number): { frames: T[]; order: number[] } {
  const order = derangingPermutation(frames.length, seededRandom(seed));
  return { frames: order.map((i) => frames[i]!), order };
}

/**
 * Reasoning permutation (z^r from z^o): the steps in a random order that changes the
 * sequence (when the steps are not all the same); no step is lost or added.
 */
export function permuteReasoningSteps(steps: readonly string[], seed: number): { steps: string[]; order: number[] } {
  const random = seededRandom(seed);
  const distinct = new Set(steps).size > 1;
  for (;;) {
    const order = derangingPermutation(steps.length, random);
    const permuted = order.map((i) => steps[i]!);
    if (!distinct || permuted.some((s, i) => s !== steps[i])) return { steps: permuted, order };
  }
}

export interface MaskOptions {
  /** Patch side in pixels (Table 5: 16). */
  patchSize?: number;
  /** Fraction of the patches masked (Table 5: 0.15). */
  ratio?: number;
  /** The value every channel of a masked pixel is set to (Table 5: 0). */
  value?: number;
}

export const MASK_DEFAULTS = { patchSize: 16, ratio: 0.15, value: 0 } as const;

/** The patches chosen for masking: indices into the row-major grid of ⌈w/p⌉ × ⌈h/p⌉ patches (edge patches are clipped). */
export function chooseMaskedPatches(width: number, height: number, seed: number, options: MaskOptions = {}): { columns: number; rows: number; patches: number[] } {
  const p = options.patchSize ?? MASK_DEFAULTS.patchSize;
  const ratio = options.ratio ?? MASK_DEFAULTS.ratio;
  const columns = Math.ceil(width / p);
  const rows = Math.ceil(height / p);
  const total = columns * rows;
  const count = Math.round(total * ratio);
  // a partial Fisher-Yates draw: `count` distinct patches, uniformly
  const random = seededRandom(seed);
  const pool = Int32Array.from({ length: total }, (_, i) => i);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (total - i));
    const t = pool[i]!;
    pool[i] = pool[j]!;
    pool[j] = t;
  }
  return { columns, rows, patches: Array.from(pool.subarray(0, count)).sort((a, b) => a - b) };
}

/** Sets the chosen patches of raw interleaved pixels to `value` in place. */
export function maskPixels(pixels: Uint8Array, width: number, height: number, channels: number, patches: readonly number[], columns: number, options: MaskOptions = {}): void {
  const p = options.patchSize ?? MASK_DEFAULTS.patchSize;
  const value = options.value ?? MASK_DEFAULTS.value;
  for (const patch of patches) {
    const x0 = (patch % columns) * p;
    const y0 = Math.floor(patch / columns) * p;
    const x1 = Math.min(width, x0 + p);
    const y1 = Math.min(height, y0 + p);
    for (let y = y0; y < y1; y++) pixels.fill(value, (y * width + x0) * channels, (y * width + x1) * channels);
  }
}

export interface MaskedImage {
  data: Buffer;
  mediaType: "image/png";
  width: number;
  height: number;
  sha256: string;
  patches: number[];
}

/**
 * Spatial masking (v^s from v^o): decodes an encoded frame, sets 15% of its 16×16 patches
 * (chosen by the seed) to 0 in every channel, and encodes it as PNG (lossless, so the masked
 * pixels stay exactly 0 and the others exactly as they were).
 */
export async function spatialMask(image: Uint8Array, seed: number, options: MaskOptions = {}): Promise<MaskedImage> {
  const sharp = await loadSharp();
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const { columns, patches } = chooseMaskedPatches(info.width, info.height, seed, options);
  maskPixels(data, info.width, info.height, info.channels, patches, columns, options);
  const png = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } }).png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer();
  return { data: png, mediaType: "image/png", width: info.width, height: info.height, sha256: sha256Hex(png), patches };
}

/** A seed for one augmentation of one instance, derived from a run seed: reproducible and independent between instances. */
export function augmentationSeed(runSeed: number, instanceId: string, augmentation: string, index = 0): number {
  return Number.parseInt(sha256Hex(`${runSeed}\u0000${instanceId}\u0000${augmentation}\u0000${index}`).slice(0, 8), 16);
}
