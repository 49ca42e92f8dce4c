/**
 * The COCO classes the embedded detector finds a built-in catalogue type as: a sofa is a couch,
 * an armchair a chair or a couch, a table, desk or coffee table a dining table, a TV stand its
 * tv, a stove an oven, a fridge a refrigerator, a mug a cup, a plant a potted plant. Shared by
 * bench/sim-detect.ts and bench/sim-memory.ts.
 */
export const COCO_CLASSES: Readonly<Record<string, readonly string[]>> = {
  sofa: ["couch"],
  armchair: ["chair", "couch"],
  table: ["dining table"],
  desk: ["dining table"],
  "coffee table": ["dining table"],
  bed: ["bed"],
  toilet: ["toilet"],
  "tv stand": ["tv"],
  laptop: ["laptop"],
  microwave: ["microwave"],
  stove: ["oven"],
  sink: ["sink"],
  fridge: ["refrigerator"],
  plant: ["potted plant"],
  book: ["book"],
  vase: ["vase"],
  mug: ["cup"],
  bowl: ["bowl"],
  bottle: ["bottle"],
};

/** An instance's pixel count and bounding box ([x0, x1) × [y0, y1)) in a view's mask. */
export interface MaskBox {
  n: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** The pixel count and box of every instance id in a row-major mask of `width` pixels a row. */
export function maskBoxes(ids: ArrayLike<number>, width: number): Map<number, MaskBox> {
  const boxes = new Map<number, MaskBox>();
  for (let p = 0; p < ids.length; p++) {
    const id = ids[p]!;
    const u = p % width;
    const v = (p - u) / width;
    const b = boxes.get(id);
    if (!b) boxes.set(id, { n: 1, x0: u, y0: v, x1: u + 1, y1: v + 1 });
    else {
      b.n++;
      b.x0 = Math.min(b.x0, u);
      b.y0 = Math.min(b.y0, v);
      b.x1 = Math.max(b.x1, u + 1);
      b.y1 = Math.max(b.y1, v + 1);
    }
  }
  return boxes;
}
