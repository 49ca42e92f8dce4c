/**
 * Train / validation / test splits (section 3, "Dataset statistics"): 70/15/15 of the questions,
 * stratified by predicate types, query type and grounding, with half of validation and test from
 * environments absent from training.
 *
 * A trajectory's questions stay together (they share what was seen, so a trajectory in two splits
 * leaks answers between them), and a held-out environment's trajectories all go to validation and
 * test. Environments are held out (in a seeded order) until their questions reach half of the
 * validation and test share (15 % of all). A dataset from a single environment has none to hold
 * out. Within each pool, trajectories are ordered by their most frequent stratum (shuffled inside
 * it) and each is dealt, with all its questions, to the split furthest below its share of
 * questions, so every stratum is divided in about the same proportions.
 */
import { seededRandom, type Random } from "../core/index.js";
import type { TagSplit } from "../data/index.js";
import { shuffled } from "./generate.js";

export interface SplitItem {
  environment: string;
  /** The trajectory the question is about: its questions share a split. */
  trajectory: string;
  /** The stratum: predicate types, query type and grounding. */
  stratum: string;
}

export const SPLIT_SHARES: Record<TagSplit, number> = { train: 0.7, validation: 0.15, test: 0.15 };

interface Unit {
  environment: string;
  stratum: string;
  members: number[];
}

function unitsOf(items: readonly SplitItem[]): Unit[] {
  const byTrajectory = new Map<string, number[]>();
  items.forEach((item, i) => byTrajectory.set(item.trajectory, [...(byTrajectory.get(item.trajectory) ?? []), i]));
  return [...byTrajectory.keys()].sort().map((trajectory) => {
    const members = byTrajectory.get(trajectory)!;
    const counts = new Map<string, number>();
    for (const i of members) counts.set(items[i]!.stratum, (counts.get(items[i]!.stratum) ?? 0) + 1);
    const stratum = [...counts].sort(([a, x], [b, y]) => y - x || a.localeCompare(b))[0]![0];
    return { environment: items[members[0]!]!.environment, stratum, members };
  });
}

export function assignSplits(items: readonly SplitItem[], seed: number): TagSplit[] {
  const random = seededRandom(seed ^ 0x5eed);
  const unseen = heldOutEnvironments(items, random);
  const splits: TagSplit[] = new Array<TagSplit>(items.length).fill("train");
  const units = unitsOf(items);
  const held = units.filter((u) => unseen.has(u.environment));
  const seen = units.filter((u) => !unseen.has(u.environment));
  const heldShare = held.reduce((a, u) => a + u.members.length, 0) / Math.max(1, items.length);
  // what remains of validation and test after the unseen questions, over the seen ones
  const rest = Math.max(0, 0.15 - heldShare / 2);
  const seenShares: Record<TagSplit, number> = { train: 0.7, validation: rest, test: rest };
  deal(stratified(held, random), { train: 0, validation: 0.5, test: 0.5 }, splits);
  deal(stratified(seen, random), seenShares, splits);
  return splits;
}

/** Environments held out from training, their questions about 15 % of all. */
export function heldOutEnvironments(items: readonly SplitItem[], random: Random): Set<string> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.environment, (counts.get(item.environment) ?? 0) + 1);
  const environments = shuffled([...counts.keys()].sort(), random);
  const held = new Set<string>();
  if (environments.length < 2) return held;
  const target = 0.15 * items.length;
  let total = 0;
  for (const env of environments) {
    if (held.size >= environments.length - 1) break;
    const n = counts.get(env)!;
    if (total > 0 && Math.abs(total + n - target) > Math.abs(total - target)) continue;
    held.add(env);
    total += n;
    if (total >= target) break;
  }
  return held;
}

function stratified(units: Unit[], random: Random): Unit[] {
  const strata = new Map<string, Unit[]>();
  for (const unit of units) strata.set(unit.stratum, [...(strata.get(unit.stratum) ?? []), unit]);
  return [...strata.keys()].sort().flatMap((key) => shuffled(strata.get(key)!, random));
}

function deal(order: Unit[], shares: Record<TagSplit, number>, out: TagSplit[]): void {
  const names = (Object.keys(shares) as TagSplit[]).filter((s) => shares[s] > 0);
  const total = names.reduce((s, n) => s + shares[n], 0);
  const counts = new Map<TagSplit, number>(names.map((n) => [n, 0]));
  let dealt = 0;
  for (const unit of order) {
    dealt += unit.members.length;
    let best = names[0]!;
    let bestDeficit = -Infinity;
    for (const name of names) {
      const deficit = (dealt * shares[name]) / total - counts.get(name)!;
      if (deficit > bestDeficit) {
        bestDeficit = deficit;
        best = name;
      }
    }
    counts.set(best, counts.get(best)! + unit.members.length);
    for (const index of unit.members) out[index] = best;
  }
}
