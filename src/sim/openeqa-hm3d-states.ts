/**
 * OpenEQA's HM3D agent states (`open-eqa-hm3d-states-v0.tgz`: `hm3d-v0/<episode>/NNNNN.pkl`, one
 * per frame) and what OpenEQA's `data/hm3d/extract-frames.py` makes of them: the camera pose of
 * each frame and the intrinsics it writes.
 *
 * The pickles are read by `bridges/habitat/states.py --all` (standard-library Python, no
 * habitat-sim or numpy), which prints each file's agent position and rotation, each sensor's
 * position and rotation, the scene path, `resolution` and `hfov`.
 *
 * Reference behaviour (extract-frames.py with its `config.py`, habitat-sim's `Agent.set_state`):
 * - the sensor's height is taken once per episode, from its first state file (sorted by name):
 *   `sensor_states["rgb"].position[1] - agent_state.position[1]` (float32 values);
 * - every frame then sets the agent's body to the state's position and rotation with
 *   `set_state`'s defaults (`reset_sensors=True`, `infer_sensor_states=True`): the sensor goes
 *   back to its configured place, `[0, height, 0]` in the body's frame with no rotation of its
 *   own, and the state's own sensor poses are not used. The camera-to-world pose is therefore
 *   `T(position) · R(rotation) · T(0, height, 0)`, written as habitat-sim's float32
 *   `absolute_transformation()` by `np.savetxt(fmt="%.6f")`;
 * - intrinsics (`intrinsic_color.txt` and `intrinsic_depth.txt`, the same) are
 *   `[[w/tan(hfov/2)/2, 0, w/2, 0], [0, h/tan(vfov/2)/2, h/2, 0], [0, 0, 1, 0], [0, 0, 0, 1]]`
 *   with the linear `vfov = hfov·h/w` (for 1920×1080 at 90°, fy ≈ 1141.7 where square pixels
 *   give 960; eqakit's frame reader corrects it, see `correctLinearVfov`), in "%.6f".
 * Differences: the pose is computed in double precision and rounded to float32 at the end
 * (habitat-sim rounds each step), so a sixth decimal can differ where a value falls on a
 * rounding boundary; the intrinsics are those of the frames rendered (1920×1080, 90° unless
 * `--width`/`--height` say otherwise), where the reference takes them from the first state's
 * `resolution` and `hfov` (OpenEQA's states record those same 1920×1080 and 90°).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { z } from "zod";
import { UserError, packageRoot, type Pose } from "../core/index.js";
import { savetxtMatrix } from "../episodes/index.js";

const STATES_SCRIPT = join(packageRoot, "bridges", "habitat", "states.py");
const vec3 = z.tuple([z.number().finite(), z.number().finite(), z.number().finite()]);
/** [w, x, y, z]. */
const quaternion = z.tuple([z.number().finite(), z.number().finite(), z.number().finite(), z.number().finite()]);

const stateFileSchema = z.object({
  file: z.string(),
  scene_id: z.string().nullable().optional(),
  position: vec3,
  rotation: quaternion,
  sensors: z.record(z.string(), z.object({ position: vec3, rotation: quaternion })),
  resolution: z.tuple([z.number().int(), z.number().int()]).optional(),
  hfov: z.number().optional(),
});
/** One state file as `states.py --all` reports it. */
export type Hm3dStateFile = z.infer<typeof stateFileSchema>;

const folderSchema = z.union([z.object({ error: z.string(), file: z.string().optional() }), z.object({ frames: z.array(stateFileSchema) })]);
export type Hm3dStatesFolder = z.infer<typeof folderSchema>;
const replySchema = z.record(z.string(), folderSchema);

/** Every state file of each folder (by folder path), read by `states.py --all` with `python`. */
export async function readHm3dStates(python: string, folders: readonly string[]): Promise<Map<string, Hm3dStatesFolder>> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(python, [STATES_SCRIPT, "--all", ...folders], { maxBuffer: 1024 * 2 ** 20, encoding: "utf8" }, (error, out, err) => {
      if (!error) return resolve(out);
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      reject(
        missing
          ? new UserError(`cannot run ${python}`, { field: "--bridge-python" }, "install Python 3 or pass --bridge-python PATH (reading the state files needs the standard library only)")
          : new UserError(`${python} ${STATES_SCRIPT} failed: ${(err || error.message).trim().split("\n").pop()}`, { file: STATES_SCRIPT }),
      );
    });
  });
  const parsed = replySchema.safeParse(JSON.parse(stdout));
  if (!parsed.success) throw new Error(`states.py answered in an unexpected form: ${parsed.error.message}`);
  return new Map(Object.entries(parsed.data));
}

/**
 * The sensor's height above the agent's feet as extract-frames.py takes it from an episode's
 * first state: the `rgb` sensor's y minus the agent's y, in float32; undefined without an `rgb` sensor.
 */
export function hm3dSensorHeight(first: Hm3dStateFile): number | undefined {
  const rgb = first.sensors.rgb;
  return rgb === undefined ? undefined : Math.fround(Math.fround(rgb.position[1]) - Math.fround(first.position[1]));
}

/** The camera-to-world pose habitat-sim gives the sensor for a state (see the file's comment), rounded to float32. */
export function hm3dCameraPose(state: Pick<Hm3dStateFile, "position" | "rotation">, sensorHeight: number): Pose {
  // habitat-sim turns numpy-quaternion's doubles into a float32 Magnum quaternion
  const [qw, qx, qy, qz] = state.rotation;
  const norm = Math.hypot(Math.fround(qw), Math.fround(qx), Math.fround(qy), Math.fround(qz));
  const scale = Math.abs(norm - 1) < 1e-6 ? 1 : 1 / norm;
  const [w, x, y, z] = [Math.fround(qw) * scale, Math.fround(qx) * scale, Math.fround(qy) * scale, Math.fround(qz) * scale];
  const r = [
    1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
    2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
    2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
  ];
  const [px, py, pz] = [Math.fround(state.position[0]), Math.fround(state.position[1]), Math.fround(state.position[2])];
  const pose = Float64Array.from([
    r[0]!, r[1]!, r[2]!, px + r[1]! * sensorHeight,
    r[3]!, r[4]!, r[5]!, py + r[4]! * sensorHeight,
    r[6]!, r[7]!, r[8]!, pz + r[7]! * sensorHeight,
    0, 0, 0, 1,
  ]);
  // habitat-sim's matrix products start from +0, so an entry that is zero is never written "-0.000000"
  for (let i = 0; i < 16; i++) pose[i] = Math.fround(pose[i]!) + 0;
  return pose;
}

/** `np.savetxt(path, K, fmt="%.6f")` of extract-frames.py's intrinsics for an image size and horizontal field of view. */
export function hm3dIntrinsicsText(width: number, height: number, hfovDeg: number): string {
  const hfov = (hfovDeg * Math.PI) / 180;
  const vfov = (hfov * height) / width;
  return savetxtMatrix([width / Math.tan(hfov / 2) / 2, 0, width / 2, 0, 0, height / Math.tan(vfov / 2) / 2, height / 2, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
}
