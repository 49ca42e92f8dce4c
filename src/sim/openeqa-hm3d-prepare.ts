/**
 * OpenEQA's HM3D episode histories rendered from its agent-state files through the Habitat
 * bridge (`eqa data prepare openeqa --hm3d ROOT --states DIR`): what OpenEQA's
 * `data/hm3d/extract-frames.py` writes, file for file.
 *
 * Reference behaviour kept:
 * - episodes: every distinct `episode_history` of the questions that contains "hm3d", sorted;
 *   its states are `STATES/<episode_history>/*.pkl` (OpenEQA's `open-eqa-hm3d-states-v0.tgz`
 *   unpacked, as `--archive` does), one frame per file in sorted order, written into
 *   `OUT/<episode_history>/` under the state file's name: `00000.pkl` gives `00000-rgb.png`, and
 *   unless `rgbOnly` `00000-depth.png` and `00000.txt`, plus `intrinsic_color.txt` and
 *   `intrinsic_depth.txt` once (the reference writes no extrinsic files for HM3D);
 * - rendering: 1920×1080, 90° horizontal field of view, the camera where habitat-sim puts it
 *   for the state (see `openeqa-hm3d-states.ts`); colour as an 8-bit RGB PNG (the alpha channel
 *   dropped, as `convert("RGB")` does), depth as 16-bit `metres / 10 × 65535` truncated
 *   (`hm3dDepthValues`), poses and intrinsics in "%.6f".
 * Differences: the scene path recorded in the states (`/datasets01/hm3d/090121/val/…`) is
 *   remapped under `--hm3d` (the reference opens it as it is: open-eqa #13, #26); one bridge
 *   process serves every episode of a scene and several scenes render at once (the reference
 *   loads a simulator per episode, one at a time); PNGs at zlib level 1, as the ScanNet frames;
 *   a failed episode is recorded and the others go on (the reference stops).
 *
 * Writes: each file under a temporary name, then renamed, so a killed run leaves no partial
 * image; a rerun removes the temporaries and skips every frame whose files are all there, and a
 * scene whose episodes are complete starts no bridge, so it ends with the files an
 * uninterrupted run writes.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { OutputError, UserError, describeError, forEachConcurrent, isUserError, packageRoot, removeStaleTemporaries, writeFileAtomically } from "../core/index.js";
import { hm3dSceneFolder } from "../data/index.js";
import { encodeDepthPng, encodeRgbPng, hm3dDepthValues, savetxtMatrix } from "../episodes/index.js";
import { hm3dCameraPose, hm3dIntrinsicsText, hm3dSensorHeight, readHm3dStates, type Hm3dStateFile } from "./openeqa-hm3d-states.js";
import type { EnvObservation } from "./protocol.js";
import { StdioEnvironment } from "./stdio.js";

/** extract-frames.py's rendering: `sensor_width`, `sensor_height`, `sensor_hfov`. */
export const OPENEQA_HM3D_RENDER = { width: 1920, height: 1080, hfov: 90 } as const;
const PNG_LEVEL = 1;
/** Per bridge request; the first waits for the scene to load. */
const BRIDGE_TIMEOUT_MS = 300_000;

export interface Hm3dPrepareOptions {
  /** Episode histories (`hm3d-v0/000-hm3d-BFRyYbPCCPE`). */
  episodes: readonly string[];
  /** `--states`: the folder holding `hm3d-v0/<episode>/*.pkl`. */
  states: string;
  /** `--hm3d`: the HM3D folder (holding `val/`), under which the states' scene paths are remapped. */
  hm3dRoot: string;
  /** `--out`: the frames folder. */
  out: string;
  /** `--rgb-only`: colour frames only. */
  rgbOnly?: boolean;
  /** `--width`, `--height`: default 1920×1080, OpenEQA's. */
  width?: number;
  height?: number;
  /** Scenes rendered at once (one bridge process each); default the machine's cores. */
  concurrency?: number;
  /** `--bridge-python`: the Python with habitat-sim (any Python 3 for the stand-in); default python3. */
  python?: string;
  /** `--standin`: the bridge's grid world instead of habitat-sim (for testing the path without it). */
  standin?: boolean;
  onProgress?: (progress: Hm3dProgress) => void;
}

export interface Hm3dProgress {
  episodesDone: number;
  episodesFailed: number;
  episodes: number;
  framesDone: number;
  frames: number;
  /** The episode whose frame just finished (or which just ended). */
  episode?: { episodeHistory: string; framesDone: number; frames: number; finished: boolean };
}

export interface Hm3dOutcome {
  episodeHistory: string;
  /** The HM3D scene folder its states name (`val/00853-5cdEh9F2hJL`). */
  scene?: string;
  frames: number;
  written: number;
  kept: number;
  /** Why the episode failed (its file named); the others go on. */
  error?: string;
}

interface EpisodePlan {
  outcome: Hm3dOutcome;
  folder: string;
  states: Hm3dStateFile[];
  sensorHeight: number;
  /** The scene path the first state records (remapped by the bridge under `--hm3d`). */
  sceneId: string;
  /** Indices into `states` still to write. */
  todo: number[];
}

/** The HM3D episodes among some `episode_history` values, as extract-frames.py's folders (distinct, sorted). */
export function hm3dEpisodes(episodeHistories: Iterable<string>): string[] {
  return [...new Set([...episodeHistories].filter((h) => h.includes("hm3d")))].sort();
}

function frameFiles(folder: string, stateFile: string, rgbOnly: boolean): string[] {
  const stem = join(folder, stateFile.replace(/\.pkl$/, ""));
  return rgbOnly ? [`${stem}-rgb.png`] : [`${stem}-rgb.png`, `${stem}-depth.png`, `${stem}.txt`];
}

function checkFolders(options: Hm3dPrepareOptions): void {
  if (existsSync(options.out) && !statSync(options.out).isDirectory()) throw new UserError("the output folder is a file", { file: options.out, field: "--out" }, "give --out a folder (it is made when missing)");
  if (!existsSync(options.states) || !statSync(options.states).isDirectory()) {
    throw new UserError("no such folder", { file: options.states, field: "--states" }, "give --states the folder holding hm3d-v0/ from OpenEQA's open-eqa-hm3d-states-v0.tgz (eqa data prepare openeqa --archive unpacks it)");
  }
  if (!options.standin && (!existsSync(options.hm3dRoot) || !statSync(options.hm3dRoot).isDirectory())) {
    throw new UserError("no such folder", { file: options.hm3dRoot, field: "--hm3d" }, "give --hm3d your HM3D folder (holding val/, as habitat-sim's datasets_download lays it out)");
  }
}

/** Each episode's plan, or its outcome when its states cannot be used. */
async function planEpisodes(options: Hm3dPrepareOptions, rgbOnly: boolean): Promise<(EpisodePlan | Hm3dOutcome)[]> {
  const folders = options.episodes.map((e) => join(options.states, e));
  const states = await readHm3dStates(options.python ?? "python3", folders);
  return options.episodes.map((episodeHistory, i): EpisodePlan | Hm3dOutcome => {
    const outcome: Hm3dOutcome = { episodeHistory, frames: 0, written: 0, kept: 0 };
    const found = states.get(folders[i]!);
    if (found === undefined || "error" in found) {
      const problem = found === undefined ? "states.py did not answer for it" : found.error;
      return { ...outcome, error: `${found && "file" in found && found.file ? found.file : folders[i]}: ${problem}` };
    }
    const first = found.frames[0]!;
    const firstState = join(folders[i]!, first.file);
    const sensorHeight = hm3dSensorHeight(first);
    if (sensorHeight === undefined) return { ...outcome, error: `${firstState}: no rgb sensor state (agent_state.sensor_states["rgb"]), from which OpenEQA takes the camera's height` };
    const sceneId = first.scene_id ?? "";
    const scene = hm3dSceneFolder(sceneId);
    if (scene === undefined) return { ...outcome, error: `${firstState}: scene_id ${JSON.stringify(first.scene_id ?? null)} names no HM3D scene folder (NNNNN-<id>)` };
    const folder = join(options.out, episodeHistory);
    const todo = found.frames.flatMap((state, k) => (frameFiles(folder, state.file, rgbOnly).every((f) => existsSync(f)) ? [] : [k]));
    return { outcome: { ...outcome, scene, kept: found.frames.length - todo.length }, folder, states: found.frames, sensorHeight, sceneId, todo };
  });
}

/** The bridge for a scene; it starts the agent anywhere navigable, since every frame places the camera itself. */
function bridgeFor(options: Hm3dPrepareOptions, sceneId: string, width: number, height: number): StdioEnvironment {
  const size = ["--width", String(width), "--height", String(height), "--hfov", String(OPENEQA_HM3D_RENDER.hfov)];
  const bridge = join(packageRoot, "bridges", "habitat", "bridge.py");
  const args = options.standin ? [bridge, "--standin", "--no-masks", ...size] : [bridge, "--scene", sceneId, "--scene-root", options.hm3dRoot, ...size];
  return new StdioEnvironment({ command: options.python ?? "python3", args, timeoutMs: BRIDGE_TIMEOUT_MS });
}

async function writeFrame(plan: EpisodePlan, k: number, obs: EnvObservation, pose: Float64Array, rgbOnly: boolean): Promise<void> {
  const [rgb, depth, poseFile] = frameFiles(plan.folder, plan.states[k]!.file, rgbOnly);
  await writeFileAtomically(rgb!, await encodeRgbPng(obs.rgb, obs.width, obs.height, PNG_LEVEL), { sync: false });
  if (rgbOnly) return;
  await writeFileAtomically(depth!, await encodeDepthPng(hm3dDepthValues(obs.depth), obs.width, obs.height, PNG_LEVEL), { sync: false });
  await writeFileAtomically(poseFile!, savetxtMatrix(pose), { sync: false });
}

/**
 * Writes OpenEQA's HM3D episode folders (see the file's comment). An episode that cannot be
 * rendered fails alone, its outcome naming the file; `--out` being a file is a UserError.
 */
export async function prepareHm3dFrames(options: Hm3dPrepareOptions): Promise<Hm3dOutcome[]> {
  const rgbOnly = options.rgbOnly ?? false;
  const width = options.width ?? OPENEQA_HM3D_RENDER.width;
  const height = options.height ?? OPENEQA_HM3D_RENDER.height;
  checkFolders(options);
  mkdirSync(options.out, { recursive: true });
  const plans = await planEpisodes(options, rgbOnly);
  const outcomes = plans.map((p) => ("outcome" in p ? p.outcome : p));
  const progress: Hm3dProgress = { episodesDone: 0, episodesFailed: 0, episodes: plans.length, framesDone: 0, frames: 0 };
  for (const p of plans) if ("outcome" in p) [progress.frames, progress.framesDone] = [progress.frames + p.states.length, progress.framesDone + p.outcome.kept];
  const report = (episode?: Hm3dProgress["episode"]): void => options.onProgress?.({ ...progress, ...(episode ? { episode } : {}) });
  const finish = (outcome: Hm3dOutcome): void => {
    outcome.frames = outcome.written + outcome.kept;
    progress.episodesDone++;
    if (outcome.error !== undefined) progress.episodesFailed++;
  };
  const scenes = new Map<string, EpisodePlan[]>();
  for (const p of plans) {
    if (!("outcome" in p)) finish(p);
    else if (p.todo.length === 0) finish(p.outcome);
    else scenes.set(p.outcome.scene!, [...(scenes.get(p.outcome.scene!) ?? []), p]);
  }
  report();

  const renderEpisode = async (env: StdioEnvironment, plan: EpisodePlan): Promise<void> => {
    mkdirSync(plan.folder, { recursive: true });
    removeStaleTemporaries(plan.folder);
    if (!rgbOnly) {
      const intrinsics = hm3dIntrinsicsText(width, height, OPENEQA_HM3D_RENDER.hfov);
      for (const name of ["intrinsic_color.txt", "intrinsic_depth.txt"]) await writeFileAtomically(join(plan.folder, name), intrinsics, { sync: false });
    }
    const poses = plan.todo.map((k) => hm3dCameraPose(plan.states[k]!, plan.sensorHeight));
    // the bridge renders the next frame while this one is encoded and written
    const observe = (t: number): Promise<EnvObservation> => {
      const observation = env.observePose(poses[t]!);
      observation.catch(() => undefined); // awaited below, unless a failure ends the episode first
      return observation;
    };
    let next = observe(0);
    for (let t = 0; t < plan.todo.length; t++) {
      const obs = await next;
      if (t + 1 < plan.todo.length) next = observe(t + 1);
      if (obs.width !== width || obs.height !== height) throw new UserError(`the bridge rendered ${obs.width}×${obs.height}, not ${width}×${height}`, { file: join(plan.folder, plan.states[plan.todo[t]!]!.file) });
      await writeFrame(plan, plan.todo[t]!, obs, poses[t]!, rgbOnly);
      plan.outcome.written++;
      progress.framesDone++;
      report({ episodeHistory: plan.outcome.episodeHistory, framesDone: plan.outcome.kept + plan.outcome.written, frames: plan.states.length, finished: false });
    }
  };

  const renderScene = async (episodes: EpisodePlan[]): Promise<void> => {
    let env: StdioEnvironment | undefined;
    for (const plan of episodes) {
      env ??= bridgeFor(options, plan.sceneId, width, height);
      try {
        await renderEpisode(env, plan);
      } catch (error) {
        // a bug, or a disk that refuses the writes: the run stops, the finished frames stay
        if (!isUserError(error) || error instanceof OutputError) {
          await env.close();
          throw error;
        }
        plan.outcome.error = `${plan.outcome.episodeHistory} (scene ${plan.outcome.scene}): ${describeError(error)}`;
        await env.close();
        env = undefined; // the next episode gets a fresh bridge
      }
      finish(plan.outcome);
      report({ episodeHistory: plan.outcome.episodeHistory, framesDone: plan.outcome.kept + plan.outcome.written, frames: plan.states.length, finished: true });
    }
    await env?.close();
  };

  await forEachConcurrent([...scenes.values()], Math.max(1, options.concurrency ?? availableParallelism()), renderScene);
  return outcomes;
}
