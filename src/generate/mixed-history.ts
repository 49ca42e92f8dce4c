/**
 * The history a Mixed EQA agent is handed, read from a set's recordings: per day its `when`, its
 * frame folder and its own action history (`actionHistory`: what it picked up, put, opened…,
 * where). The recordings' trajectory logs also hold every object's state at every step; that
 * ground truth is read here only to list the agent's own actions, and never handed on.
 *
 * `recallMixedDay` is what an agent remembers of a day: the memory built from the day's frames
 * and the perceived trajectory log made from that memory and its actions (`perceivedLog`).
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { UserError, resolveInside } from "../core/index.js";
import { invertRigid } from "../geometry/index.js";
import { loadTrajectoryLog, type MixedHome } from "../data/index.js";
import { openEpisode } from "../episodes/index.js";
import { buildMemory, type MixedHistory, type MixedHistoryDay, type RecalledDay } from "../agents/index.js";
import { actionHistory } from "./history.js";
import { groundingTransform } from "./world.js";
import { perceivedLog } from "./perceived-log.js";
import { STRUCTURE_LABELS } from "./program-agent.js";

/** A home's history as its agent may know it; paths in the set resolved against the set's folder. */
export async function loadMixedHistory(home: MixedHome, setDir: string, file: string): Promise<MixedHistory> {
  const days: MixedHistoryDay[] = [];
  for (const [index, day] of home.days.entries()) {
    const recording = resolveInside(setDir, day.recording, { file, index, id: home.scene, field: "recording" });
    const log = await loadTrajectoryLog(join(recording, "trajectory.json"));
    const frames = join(recording, log.frames ?? "frames");
    days.push({ day: day.day, when: day.when, frames, frameCount: await countFrames(frames), toWorld: Array.from(invertRigid(groundingTransform(log))), actions: actionHistory(log), cameraHeight: log.cameraHeight });
  }
  return { scene: home.scene, days: days.sort((a, b) => a.day - b.day) };
}

/** The colour frames of a frame folder. */
async function countFrames(dir: string): Promise<number> {
  const names = await readdir(dir).catch((error: unknown) => {
    throw new UserError(`cannot read the day's frame folder: ${(error as Error).message}`, { file: dir });
  });
  return names.filter((n) => /-rgb\.(png|jpe?g)$/i.test(n)).length;
}

/** What the agent remembers of a day: its memory of the day's frames (every second frame), with its own actions as events. */
export async function recallMixedDay(history: MixedHistory, day: MixedHistoryDay): Promise<RecalledDay> {
  const episode = await openEpisode(day.frames, `${history.scene}-day-${day.day}`);
  const { graph } = await buildMemory(episode, { sampling: { kind: "every", step: 2 }, detector: null, ignoredMaskLabels: STRUCTURE_LABELS });
  const log = await perceivedLog(graph, episode, { id: `${history.scene}-day-${day.day}`, environment: history.scene, cameraHeight: day.cameraHeight, actions: day.actions });
  return { day: day.day, graph, log };
}
