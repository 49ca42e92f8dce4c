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
