import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { OutputInfo } from "sharp";
import { z } from "zod";
import { UserError, describeError, indefinite, forEachConcurrent, isUserError, type Camera, type Frame, type InstanceMasks, type Pose } from "../core/index.js";
import { readJsonFile, readTextFile } from "../data/index.js";
import { defaultFrameCache, episodeCacheId, limitPreparation, type FrameCache } from "./frame-cache.js";
import { DECODE_OPTIONS, checkImageOptions, encodePrepared, imageReadError, loadSharp, readImageHeader, type ImageHeader, type ImageOptions, type ImageSettings, type PreparedImage } from "./image.js";
import { allFinite, correctLinearVfov, intrinsicsFromMatrix, isIdentity4, parseMatrixText, scaleCamera, scannetPoseToEqakit, type Intrinsics } from "./matrix.js";
import { checkFrameIndex, distinctIndices, type Episode, type EpisodeFrameImage, type EpisodeKind } from "./types.js";

/**
 * OpenEQA frame folders, as its extraction scripts write them under `frames/<episode_history>/`:
 *
 * HM3D (`hm3d-v0/…`, five-digit names):
 * - `NNNNN-rgb.png`: the colour frame (1920×1080 in OpenEQA);
 * - `NNNNN-depth.png`: 16-bit depth of the same size, metres = value / 65535 × 10 (the
 *   reference truncates to whole steps of 0.15 mm, and depth beyond 10 m does not fit);
 * - `NNNNN.txt`: the 4×4 camera-to-world pose, OpenGL camera axes in a y-up world, which is
 *   eqakit's convention already;
 * - `intrinsic_color.txt` (and `intrinsic_depth.txt`, the same): 4×4 intrinsics, whose fy
 *   the reference computes from a linear vertical field of view; eqakit corrects it to the
 *   square-pixel value (fy = fx) and says so in the episode's notes.
 *
 * ScanNet (`scannet-v0/…`, six-digit names):
 * - `NNNNNN-rgb.png`: the colour frame (1296×968);
 * - `NNNNNN-depth.png`: 16-bit depth in millimetres at the depth camera's own size (640×480),
 *   with its intrinsics in `intrinsic_depth.txt`;
 * - `NNNNNN.txt`: the camera-to-world pose in OpenCV camera axes and ScanNet's z-up world,
 *   converted to eqakit's convention (see `scannetPoseToEqakit`); a pose holding -inf or NaN
 *   (ScanNet's lost tracking) gives a null pose, and the frame is still an image;
 * - `intrinsic_color.txt`, `intrinsic_depth.txt`, `extrinsic_color.txt`, `extrinsic_depth.txt`.
 *
 * The kind is the episode id's (`hm3d-v0/…`, `scannet-v0/…`, or a name like
 * `002-scannet-scene0709_00`) when it says, else six-digit names mean ScanNet and other
 * numbered names HM3D's layout (also what `eqa frames extract` writes). A folder without
 * `*-rgb.*` files but with `.png`, `.jpg`, `.jpeg` or `.webp` images is of kind "images":
 * its frames are those files in natural name order, with no depth, pose or camera.
 *
 * Either layout may add ground-truth instance masks, as a simulator writes them:
 * `NNNNN-instance.png` (a 16-bit grey image of instance ids, 0 = none, at the depth image's
 * size) per frame and one `instance_labels.json` (`{"<id>": "<label>", …}`) for the episode.
 *
 * Depth, poses and masks are all or nothing: when some frames have them, every frame must.
 * Opening reads every pose file and every image's header (not its pixels).
 */

const RGB_NAME = /^(\d+)-rgb\.(png|jpe?g)$/i;
const PLAIN_IMAGE = /\.(png|jpe?g|webp)$/i;
const DEPTH_SUFFIX = /-depth\.png$/i;
/** At most this many files are read at once while opening an episode. */
const OPEN_CONCURRENCY = 16;

interface FrameFiles {
  rgb: string;
  rgbHeader: ImageHeader;
  depth?: string;
  depthHeader?: ImageHeader;
  /** The pose in eqakit's convention, null when the file holds -inf or NaN; absent when the episode has no poses. */
  pose?: Pose | null;
  /** The instance-id image, when the episode has masks. */
  instances?: string;
}

/** The episode's intrinsics files; each frame's camera takes its image's size from the image's header. */
interface Cameras {
  color?: Intrinsics;
  depth?: Intrinsics;
}

export class FolderEpisode implements Episode {
  readonly frameCount: number;
  private readonly cacheId: string;

  constructor(
    readonly id: string,
    readonly path: string,
    readonly kind: EpisodeKind,
    private readonly frames: FrameFiles[],
    private readonly cameras: Cameras,
    readonly notes: string[],
    private readonly instanceLabels: Record<string, string> | undefined,
    private readonly frameCache: FrameCache,
  ) {
    this.frameCount = frames.length;
    this.cacheId = episodeCacheId(path);
  }

  /** Opens the folder; its frames are prepared through `frameCache`. */
  static async open(path: string, id: string, frameCache: FrameCache = defaultFrameCache()): Promise<FolderEpisode> {
    const names = await listFolder(path, id);
    const numbered = names.filter((name) => RGB_NAME.test(name));
    if (numbered.length > 0) return openLayout(path, id, names, numbered, frameCache);
    const plain = names.filter((name) => PLAIN_IMAGE.test(name) && !DEPTH_SUFFIX.test(name)).sort(naturalOrder);
    if (plain.length === 0) {
      throw episodeError(id, path, "the episode folder has no frames (no NNNNN-rgb.png files, nor .png/.jpg/.webp images)", "point --frames at the folder that holds the extracted frames, or extract a video with `eqa frames extract`");
    }
    const headers = await readHeaders(id, plain.map((name) => join(path, name)));
    const frames = plain.map((name, i) => ({ rgb: join(path, name), rgbHeader: headers[i]! }));
    return new FolderEpisode(id, path, "images", frames, {}, [], undefined, frameCache);
  }

  async images(indices: readonly number[], options: ImageOptions = {}): Promise<EpisodeFrameImage[]> {
    const settings = checkImageOptions(options);
    const wanted = distinctIndices(this, indices);
    const images = await this.frameCache.frames(
      wanted.map((index) => ({ episode: this.cacheId, index, settings, source: this.frames[index]!.rgb })),
      (missing) => Promise.all(missing.map((key) => limitPreparation(() => this.prepare(key.index, settings)))),
    );
    const prepared = new Map(wanted.map((index, i) => [index, images[i]!]));
    return indices.map((index) => ({ ...prepared.get(index)!, index }));
  }

  private async prepare(index: number, settings: ImageSettings): Promise<PreparedImage> {
    const file = this.frames[index]!.rgb;
    try {
      const sharp = await loadSharp();
      return await encodePrepared(sharp(file, DECODE_OPTIONS), settings);
    } catch (error) {
      throw imageReadError(error, file, `episode ${this.id}, frame ${index}: `);
    }
  }

  rgbPath(index: number): string {
    checkFrameIndex(this, index);
    return this.frames[index]!.rgb;
  }

  async frame(index: number): Promise<Frame> {
    checkFrameIndex(this, index);
    const files = this.frames[index]!;
    const frame: Frame = { index, rgbPath: files.rgb };
    const { color, depth } = this.cameras;
    const camera = color ? withSize(color, files.rgbHeader) : undefined;
    if (camera) frame.camera = camera;
    if (files.depth && files.depthHeader) {
      frame.depth = await this.readDepth(files.depth, files.depthHeader, index);
      const { width, height } = files.depthHeader;
      if (depth) frame.depthCamera = withSize(depth, files.depthHeader);
      else if (camera) frame.depthCamera = scaleCamera(camera, width, height);
    }
    if (files.pose !== undefined) frame.pose = files.pose === null ? null : Float64Array.from(files.pose);
    if (files.instances) frame.masks = await this.readMasks(files.instances, index);
    return frame;
  }

  /** The instance ids of a frame, with the labels of the episode's `instance_labels.json`. */
  private async readMasks(file: string, index: number): Promise<InstanceMasks> {
    let raw: { data: Buffer; info: OutputInfo };
    try {
      raw = await (await loadSharp())(file, DECODE_OPTIONS).toColourspace("grey16").raw({ depth: "ushort" }).toBuffer({ resolveWithObject: true });
    } catch (error) {
      throw imageReadError(error, file, `episode ${this.id}, frame ${index}: instance masks: `);
    }
    const { data, info } = raw;
    if (info.channels !== 1) throw episodeError(this.id, file, `the instance image has ${info.channels} channels, not one 16-bit grey channel`);
    const aligned = data.byteOffset % 2 === 0 ? data : Buffer.from(data);
    const ids = Uint32Array.from(new Uint16Array(aligned.buffer, aligned.byteOffset, info.width * info.height));
    return { width: info.width, height: info.height, ids, labels: { ...(this.instanceLabels ?? {}) } };
  }

  /** Depth in metres: HM3D stores value / 65535 × 10 m, ScanNet millimetres; 0 stays 0 (unknown). */
  private async readDepth(file: string, header: ImageHeader, index: number): Promise<Float32Array> {
    let raw: { data: Buffer; info: OutputInfo };
    try {
      raw = await (await loadSharp())(file, DECODE_OPTIONS).toColourspace("grey16").raw({ depth: "ushort" }).toBuffer({ resolveWithObject: true });
    } catch (error) {
      throw imageReadError(error, file, `episode ${this.id}, frame ${index}: depth: `);
    }
    const { data, info } = raw;
    if (info.width !== header.width || info.height !== header.height || info.channels !== 1) {
      throw episodeError(this.id, file, `the depth image decodes to ${info.width}×${info.height}×${info.channels}, not the ${header.width}×${header.height} grey image its header announces`);
    }
    // raw output is in the machine's byte order, as Uint16Array reads it
    const aligned = data.byteOffset % 2 === 0 ? data : Buffer.from(data);
    const values = new Uint16Array(aligned.buffer, aligned.byteOffset, info.width * info.height);
    const scale = this.kind === "scannet" ? 1 / 1000 : 10 / 65535;
    const depth = new Float32Array(values.length);
    for (let i = 0; i < values.length; i++) depth[i] = values[i]! * scale;
    return depth;
  }
}

function withSize(intrinsics: Intrinsics, header: ImageHeader): Camera {
  return { width: header.width, height: header.height, ...intrinsics };
}

function episodeError(id: string, file: string, message: string, hint?: string): UserError {
  return new UserError(`episode ${id}: ${message}`, { file }, hint);
}

async function listFolder(path: string, id: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw episodeError(id, path, "the episode folder does not exist", "check --frames: it should hold one folder per episode_history (OpenEQA's frames/), or be the episode's folder or video itself");
    if (code === "ENOTDIR") throw episodeError(id, path, "is a file, not an episode folder");
    if (code === "EACCES") throw episodeError(id, path, "permission denied");
    throw error;
  }
}

function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

/** The kind named by the episode id: `hm3d-v0/…`, `scannet-v0/…` or `NNN-scannet-scene…`. */
function kindFromId(id: string): "hm3d" | "scannet" | undefined {
  const segments = id.split("/");
  const first = segments[0] ?? "";
  const last = segments[segments.length - 1] ?? "";
  for (const kind of ["hm3d", "scannet"] as const) {
    if (first === `${kind}-v0` || new RegExp(`^\\d+-${kind}-`).test(last)) return kind;
  }
  return undefined;
}

async function openLayout(path: string, id: string, names: string[], rgbNames: string[], frameCache: FrameCache): Promise<FolderEpisode> {
  const present = new Set(names);
  const numbered = rgbNames
    .map((name) => {
      const digits = RGB_NAME.exec(name)![1]!;
      return { name, digits, number: Number(digits) };
    })
    .sort((a, b) => a.number - b.number || a.name.localeCompare(b.name));
  for (let i = 1; i < numbered.length; i++) {
    if (numbered[i]!.number === numbered[i - 1]!.number) {
      throw episodeError(id, join(path, numbered[i]!.name), `two colour frames carry the number ${numbered[i]!.number} (${numbered[i - 1]!.name} and ${numbered[i]!.name})`, "remove one of them");
    }
  }
  const kind = kindFromId(id) ?? (numbered.every((f) => f.digits.length === 6) ? "scannet" : "hm3d");
  const notes: string[] = [];

  const depthNames = numbered.map((f) => `${f.digits}-depth.png`);
  const poseNames = numbered.map((f) => `${f.digits}.txt`);
  const hasDepth = allOrNone(id, path, depthNames, present, "depth image");
  const hasPoses = allOrNone(id, path, poseNames, present, "pose file");
  const instanceNames = numbered.map((f) => `${f.digits}-instance.png`);
  const hasMasks = allOrNone(id, path, instanceNames, present, "instance mask");
  const instanceLabels = hasMasks ? await readInstanceLabels(id, join(path, "instance_labels.json"), present.has("instance_labels.json")) : undefined;

  const rgbPaths = numbered.map((f) => join(path, f.name));
  const depthPaths = hasDepth ? depthNames.map((name) => join(path, name)) : [];
  const [rgbHeaders, depthHeaders, poses, cameras] = await Promise.all([
    readHeaders(id, rgbPaths),
    readHeaders(id, depthPaths),
    hasPoses ? readPoses(id, poseNames.map((name) => join(path, name)), kind) : Promise.resolve(undefined),
    readCameras(id, path, present, kind, notes),
  ]);

  if (hasDepth) checkDepth(id, kind, rgbPaths, rgbHeaders, depthPaths, depthHeaders);
  if (hasDepth && cameras.color && !cameras.depth && (depthHeaders[0]!.width !== rgbHeaders[0]!.width || depthHeaders[0]!.height !== rgbHeaders[0]!.height)) {
    notes.push("no intrinsic_depth.txt: the depth camera's intrinsics are the colour camera's, scaled to the depth image's size");
  }
  if (!cameras.color && (hasDepth || hasPoses)) notes.push("no intrinsic_color.txt: frames have no camera intrinsics");

  if (poses) {
    const invalid = poses.flatMap((pose, i) => (pose === null ? [i] : []));
    if (kind === "scannet") notes.push("poses converted from ScanNet's convention (OpenCV camera axes, z-up world) to eqakit's (OpenGL camera axes, y-up world)");
    if (invalid.length > 0) {
      const shown = invalid.slice(0, 10).join(", ") + (invalid.length > 10 ? ", …" : "");
      notes.push(`${invalid.length} of ${poses.length} frames have an invalid pose (-inf or NaN) and a null pose: they are left out of geometry but still usable as images (frames ${shown})`);
    }
  }
  const first = numbered[0]!.number;
  const last = numbered[numbered.length - 1]!.number;
  if (first !== 0 || last !== numbered.length - 1) {
    notes.push(`frame files are numbered ${first}-${last} for ${numbered.length} frames: frame indices are positions in that order (0-${numbered.length - 1})`);
  }

  const frames: FrameFiles[] = numbered.map((_, i) => ({
    rgb: rgbPaths[i]!,
    rgbHeader: rgbHeaders[i]!,
    ...(hasDepth ? { depth: depthPaths[i]!, depthHeader: depthHeaders[i]! } : {}),
    ...(poses ? { pose: poses[i]! } : {}),
    ...(hasMasks ? { instances: join(path, instanceNames[i]!) } : {}),
  }));
  return new FolderEpisode(id, path, kind, frames, cameras, notes, instanceLabels, frameCache);
}

async function readInstanceLabels(id: string, file: string, present: boolean): Promise<Record<string, string>> {
  if (!present) throw episodeError(id, file, "the frames have instance masks (NNNNN-instance.png) but the episode has no instance_labels.json", 'write {"<id>": "<label>", …} for the instance ids');
  let parsed: unknown;
  try {
    parsed = await readJsonFile(file);
  } catch (error) {
    if (isUserError(error)) throw error;
    throw episodeError(id, file, `cannot read the instance labels (${describeError(error)})`);
  }
  const labels = z.record(z.string(), z.string()).safeParse(parsed);
  if (!labels.success) throw episodeError(id, file, 'the instance labels are not an object of strings: expected {"<id>": "<label>", …}');
  return labels.data;
}

/** Whether every frame has its file of this sort; a UserError naming the first missing one when only some do. */
function allOrNone(id: string, path: string, names: string[], present: Set<string>, what: string): boolean {
  const missing = names.filter((name) => !present.has(name));
  if (missing.length === 0) return true;
  if (missing.length === names.length) return false;
  throw episodeError(id, join(path, missing[0]!), `${missing.length} of ${names.length} frames have no ${what} (this is the first) while the others have one`, `re-extract the episode, or remove every ${what} to use the frames as images only`);
}

async function readHeaders(id: string, files: string[]): Promise<ImageHeader[]> {
  const headers: ImageHeader[] = new Array<ImageHeader>(files.length);
  await forEachConcurrent(files, OPEN_CONCURRENCY, async (file, i) => {
    try {
      headers[i] = await readImageHeader(file);
    } catch (error) {
      throw imageReadError(error, file, `episode ${id}: `);
    }
  });
  return headers;
}

function checkDepth(id: string, kind: EpisodeKind, rgbPaths: string[], rgbHeaders: ImageHeader[], depthPaths: string[], depthHeaders: ImageHeader[]): void {
  const reference = depthHeaders[0]!;
  depthHeaders.forEach((depth, i) => {
    const file = depthPaths[i]!;
    if (depth.bitDepth !== 16 || depth.channels !== 1) {
      throw episodeError(id, file, `the depth image is ${depth.bitDepth}-bit with ${depth.channels} channel(s), not a 16-bit grey image`, "depth images are 16-bit PNGs as OpenEQA's extraction writes them");
    }
    const size = `${depth.width}×${depth.height}`;
    if (kind === "scannet") {
      if (depth.width !== reference.width || depth.height !== reference.height) {
        throw episodeError(id, file, `the depth image is ${size} where the episode's other depth images are ${reference.width}×${reference.height}`);
      }
    } else {
      const rgb = rgbHeaders[i]!;
      if (depth.width !== rgb.width || depth.height !== rgb.height) {
        throw episodeError(id, file, `the depth image is ${size} but its colour frame ${rgbPaths[i]!} is ${rgb.width}×${rgb.height}; HM3D's depth has the colour frame's size`);
      }
    }
  });
}

async function readMatrixFile(id: string, file: string, what: string): Promise<{ rows: number; columns: number; values: Float64Array }> {
  let text: string;
  try {
    text = await readTextFile(file);
  } catch (error) {
    if (isUserError(error)) throw error;
    throw episodeError(id, file, `cannot read the ${what} (${describeError(error)})`);
  }
  const parsed = parseMatrixText(text);
  if (!parsed.ok) throw episodeError(id, file, `the ${what} ${parsed.problem}; expected a 4×4 matrix, one row a line`);
  return parsed;
}

async function readPoses(id: string, files: string[], kind: EpisodeKind): Promise<(Pose | null)[]> {
  const poses = new Array<Pose | null>(files.length);
  await forEachConcurrent(files, OPEN_CONCURRENCY, async (file, i) => {
    const matrix = await readMatrixFile(id, file, "pose file");
    if (matrix.rows !== 4 || matrix.columns !== 4) {
      throw episodeError(id, file, `the pose file holds ${indefinite(`${matrix.rows}×${matrix.columns}`)} matrix, not a 4×4 camera-to-world transform`, "each NNNNN.txt holds 4 lines of 4 numbers");
    }
    poses[i] = !allFinite(matrix.values) ? null : kind === "scannet" ? scannetPoseToEqakit(matrix.values) : matrix.values;
  });
  return poses;
}

async function readCameras(id: string, path: string, present: Set<string>, kind: EpisodeKind, notes: string[]): Promise<Cameras> {
  const cameras: Cameras = {};
  // the files are read at once; their notes are kept apart and added in a fixed order below
  const fileNotes = new Map<string, string>();
  const intrinsics = async (name: string): Promise<Intrinsics | undefined> => {
    if (!present.has(name)) return undefined;
    const file = join(path, name);
    const matrix = await readMatrixFile(id, file, "intrinsics file");
    const square = matrix.rows === matrix.columns && (matrix.rows === 3 || matrix.rows === 4);
    if (!square || !allFinite(matrix.values)) throw episodeError(id, file, `the intrinsics file holds ${indefinite(`${matrix.rows}×${matrix.columns}`)} matrix${square ? " with non-finite numbers" : ""}; expected a 3×3 or 4×4 pinhole matrix`);
    let camera = intrinsicsFromMatrix(matrix);
    if (!(camera.fx > 0) || !(camera.fy > 0)) throw episodeError(id, file, `the intrinsics have fx = ${camera.fx}, fy = ${camera.fy}; both must be above 0`);
    if (kind === "hm3d") {
      const corrected = correctLinearVfov(camera);
      if (corrected) {
        fileNotes.set(name, `${name}: fy ${camera.fy.toFixed(2)} is OpenEQA's linear-vfov approximation; corrected to ${corrected.fy.toFixed(2)} (square pixels, fy = fx)`);
        camera = corrected;
      }
    }
    return camera;
  };
  const extrinsics = async (name: string): Promise<Float64Array | undefined> => {
    if (!present.has(name)) return undefined;
    const file = join(path, name);
    const matrix = await readMatrixFile(id, file, "extrinsics file");
    if (matrix.rows !== 4 || matrix.columns !== 4) throw episodeError(id, file, `the extrinsics file holds ${indefinite(`${matrix.rows}×${matrix.columns}`)} matrix, not a 4×4 transform`);
    return matrix.values;
  };
  const [color, depth, colorExtrinsic, depthExtrinsic] = await Promise.all([
    intrinsics("intrinsic_color.txt"),
    intrinsics("intrinsic_depth.txt"),
    extrinsics("extrinsic_color.txt"),
    extrinsics("extrinsic_depth.txt"),
  ]);
  for (const name of ["intrinsic_color.txt", "intrinsic_depth.txt"]) {
    const note = fileNotes.get(name);
    if (note) notes.push(note);
  }
  if (color) cameras.color = color;
  if (depth) cameras.depth = depth;
  for (const [name, values] of [["extrinsic_color.txt", colorExtrinsic], ["extrinsic_depth.txt", depthExtrinsic]] as const) {
    if (values && allFinite(values) && !isIdentity4(values)) notes.push(`${name} is not the identity: eqakit treats the depth image as registered to the colour frame and the pose as the colour camera's`);
  }
  return cameras;
}
