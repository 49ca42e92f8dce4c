/**
 * OpenEQA's A-EQA questions as active episodes (`eqa data convert a-eqa`).
 *
 * OpenEQA (seed `001_…`) poses its A-EQA questions (the 184 ids of
 * `open-eqa-v0-184-questions.json`) in the HM3D scene of each question's episode history, and
 * an agent starts where that history started. Each history folder of OpenEQA's
 * `open-eqa-hm3d-states-v0.tgz` (`hm3d-v0/000-hm3d-BFRyYbPCCPE/00000.pkl`, …) holds one
 * habitat-sim agent state per frame, with the path of the scene it was recorded in
 * (`…/val/00853-5cdEh9F2hJL/5cdEh9F2hJL.basis.glb`). The pickles are read by
 * `bridges/habitat/states.py` (standard-library Python: no habitat-sim, numpy or
 * numpy-quaternion needed), and each episode gets:
 * - `scene`: the HM3D scene folder relative to the HM3D root (`val/00853-5cdEh9F2hJL`), which
 *   `eqa explore --env habitat --scenes HM3D_DIR` opens;
 * - `start`: the first state's position (the agent's feet, on the navmesh) and yaw (about +y,
 *   from its rotation quaternion; pitch 0);
 * - `gt_path_length`: the ground-truth path length in metres when a `{question_id: metres}`
 *   file gives one (OpenEQA's efficiency E; the 3D-Mem authors' `gt_path_length.json` covers
 *   the 557 HM3D questions), left out otherwise;
 * - the question, answer, category and `episode_history` as the benchmark gives them.
 *
 * Decisions: the start is the history's first frame (the files are sorted by name, as OpenEQA's
 * `extract-frames.py` sorts them); a ScanNet question is refused (A-EQA runs in HM3D only); a
 * state file whose scene is not the history's (`…-hm3d-<id>` against `NNNNN-<id>`) is refused.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { z } from "zod";
import { UserError, packageRoot, type Question } from "../core/index.js";

/** An episode as the active-episodes file spells it (snake_case; see `eqa explore --episodes`). */
export interface AEqaEpisode {
  question_id: string;
  question: string;
  answer: string;
  category: string;
  scene: string;
  start: { position: [number, number, number]; yaw: number };
  /** Metres. */
  gt_path_length?: number;
  episode_history: string;
}

export interface AEqaConvertOptions {
  /** The A-EQA questions, from the OpenEQA benchmark (HM3D episode histories only). */
  questions: Question[];
  /** The folder holding `hm3d-v0/<episode_history>/*.pkl` (OpenEQA's `data/frames`). */
  states: string;
  /** Ground-truth path lengths in metres by question id. */
  gtPathLengths?: ReadonlyMap<string, number>;
  /** The Python that runs `bridges/habitat/states.py` (standard library only); default `python3`. */
  python?: string;
}

export interface AEqaConversion {
  episodes: AEqaEpisode[];
  /** Questions the ground-truth file has no length for (none when no file was given). */
  withoutGtPathLength: string[];
  scenes: number;
}

const STATES_SCRIPT = join(packageRoot, "bridges", "habitat", "states.py");
const SPLITS = new Set(["train", "val", "minival", "test", "example"]);
const vec3 = z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]);
const folderSchema = z.union([
  z.object({ error: z.string(), file: z.string().optional() }),
  z.object({ file: z.string(), scene_id: z.string().nullable(), position: vec3, rotation: z.array(z.number()), yaw: z.number().finite(), states: z.number().int() }),
]);
const replySchema = z.record(z.string(), folderSchema);

/**
 * The HM3D scene folder of a scene path, relative to the HM3D root: `…/val/00853-5cdEh9F2hJL/x.glb`
 * gives `val/00853-5cdEh9F2hJL`, a path without a split folder gives `00853-5cdEh9F2hJL`;
 * undefined when no part is an HM3D scene folder (`NNNNN-<id>`).
 */
export function hm3dSceneFolder(scenePath: string): string | undefined {
  const parts = scenePath.split(/[\\/]+/).filter((p) => p.length > 0);
  const k = parts.findIndex((p) => /^\d{5}-[A-Za-z0-9]+$/.test(p));
  if (k < 0) return undefined;
  const split = k > 0 ? parts[k - 1]! : undefined;
  return split && SPLITS.has(split) ? `${split}/${parts[k]}` : parts[k];
}

/** Turns A-EQA questions into active episodes (see the module comment). */
export async function convertAEqa(options: AEqaConvertOptions): Promise<AEqaConversion> {
  const histories = [...new Set(options.questions.map((q) => q.episodeHistory))];
  const scannet = options.questions.find((q) => !q.episodeHistory.startsWith("hm3d-"));
  if (scannet) {
    throw new UserError(`episode history ${scannet.episodeHistory} is not an HM3D scene: A-EQA questions are posed in HM3D`, { id: scannet.questionId, field: "episode_history" }, "pass the A-EQA subset with --subset (open-eqa-v0-184-questions.json)");
  }
  const folders = new Map(histories.map((h) => [h, join(options.states, h)]));
  const reply = await readStates(options.python ?? "python3", [...folders.values()]);
  const starts = new Map<string, { scene: string; position: [number, number, number]; yaw: number }>();
  for (const [history, folder] of folders) {
    const found = reply[folder];
    if (!found) throw new UserError("states.py did not answer for this folder", { file: folder });
    if ("error" in found) {
      throw new UserError(found.error, { file: found.file ?? folder }, `--states takes the folder holding hm3d-v0/ from OpenEQA's open-eqa-hm3d-states-v0.tgz (see docs/active-eqa.md)`);
    }
    const scene = found.scene_id === null ? undefined : hm3dSceneFolder(found.scene_id);
    if (scene === undefined) throw new UserError(`scene_id ${JSON.stringify(found.scene_id)} names no HM3D scene folder (NNNNN-<id>)`, { file: found.file, field: "scene_id" });
    const id = history.split("-hm3d-").pop();
    if (id && !scene.endsWith(`-${id}`)) throw new UserError(`the state file's scene ${scene} is not the episode history's (${id})`, { file: found.file, field: "scene_id" });
    starts.set(history, { scene, position: found.position, yaw: found.yaw });
  }
  const withoutGtPathLength: string[] = [];
  const episodes = options.questions.map((q): AEqaEpisode => {
    const start = starts.get(q.episodeHistory)!;
    const gt = options.gtPathLengths?.get(q.questionId);
    if (options.gtPathLengths && gt === undefined) withoutGtPathLength.push(q.questionId);
    return {
      question_id: q.questionId,
      question: q.question,
      answer: q.answer,
      category: q.category,
      scene: start.scene,
      start: { position: start.position, yaw: start.yaw },
      ...(gt !== undefined ? { gt_path_length: gt } : {}),
      episode_history: q.episodeHistory,
    };
  });
  return { episodes, withoutGtPathLength, scenes: new Set([...starts.values()].map((s) => s.scene)).size };
}

async function readStates(python: string, folders: string[]): Promise<z.infer<typeof replySchema>> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(python, [STATES_SCRIPT, ...folders], { maxBuffer: 64 * 2 ** 20, encoding: "utf8" }, (error, out, err) => {
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
        reject(
          missing
            ? new UserError(`cannot run ${python}`, { field: "--python" }, "install Python 3 (standard library only) or pass --python PATH")
            : new UserError(`${python} ${STATES_SCRIPT} failed: ${(err || error.message).trim().split("\n").pop()}`, { file: STATES_SCRIPT }),
        );
      } else resolve(out);
    });
  });
  const parsed = replySchema.safeParse(JSON.parse(stdout));
  if (!parsed.success) throw new Error(`states.py answered in an unexpected form: ${parsed.error.message}`);
  return parsed.data;
}
