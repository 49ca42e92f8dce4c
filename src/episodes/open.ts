import { readdirSync, statSync, type Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { UserError, resolveInside, type InputLocation, type PathLinks } from "../core/index.js";
import { FolderEpisode } from "./folder.js";
import { defaultFrameCache, type FrameCache } from "./frame-cache.js";
import type { Episode } from "./types.js";
import { VIDEO_EXTENSIONS, VideoEpisode } from "./video.js";

export interface OpenEpisodeOptions {
  /** Where its prepared frames are kept (default: `defaultFrameCache()`, shared by the episodes opened without one). */
  frameCache?: FrameCache;
}

/**
 * Opens an episode: a frame folder (OpenEQA's HM3D or ScanNet layout, or plain images) or
 * a video file (anything ffmpeg reads). `id` names it in messages and defaults to the
 * folder's name (the video's, without its extension). Checks the episode's structure
 * (a missing or empty folder, pose files that are not 4×4, depth images of the wrong
 * size, unreadable image headers) with UserErrors naming the episode and the file.
 */
export async function openEpisode(path: string, id?: string, options: OpenEpisodeOptions = {}): Promise<Episode> {
  const frameCache = options.frameCache ?? defaultFrameCache();
  let info: Stats | undefined;
  try {
    info = await stat(path);
  } catch {
    info = undefined;
  }
  if (info?.isFile()) return VideoEpisode.open(path, id ?? basename(path, extname(path)), frameCache);
  const name = id ?? basename(path);
  if (!info) {
    throw new UserError(`episode ${name}: no episode folder or video here`, { file: path }, "check --frames: it should hold one folder (or video) per episode_history, or be the episode's folder or video itself");
  }
  return FolderEpisode.open(path, name, frameCache);
}

/**
 * Where the frames of `episodeHistory` (e.g. `hm3d-v0/000-hm3d-BFRyYbPCCPE`) are under
 * `framesRoot`, first match wins:
 * 1. `framesRoot` itself, when it is a file (a video) or a frame folder (holds `*-rgb.png`):
 *    the one episode of every question;
 * 2. `framesRoot/<episodeHistory>` as a folder or file, then with a video extension
 *    (.mp4 .mkv .mov .avi .webm);
 * 3. the same for the history's last segment alone (`framesRoot/<last>`…), so that the
 *    folder holding `open-eqa-hm3d-demo.mp4` serves `assets/open-eqa-hm3d-demo`.
 * Undefined when none exists. A history that is absolute or climbs out with `..` is a
 * UserError at `at` (the record it came from), whether or not such a file exists. Symbolic
 * links inside `framesRoot` are the user's (frames kept on another disk, linked into place)
 * and are followed, unless `links.followLinks` is false: then a link that leads out is refused too.
 */
export function resolveEpisodePath(framesRoot: string, episodeHistory: string, at: InputLocation = { field: "episode_history" }, links: PathLinks = { followLinks: true }): string | undefined {
  const hint = links.followLinks ? EPISODE_PATH_HINT : `${EPISODE_PATH_HINT}, and without symbolic links that lead out of it`;
  const inside = (relative: string): string => resolveInside(framesRoot, relative, at, hint, links);
  inside(episodeHistory);
  const root = statOrUndefined(framesRoot);
  if (!root) return undefined;
  if (root.isFile()) return framesRoot;
  if (hasRgbFrames(framesRoot)) return framesRoot;
  const segments = episodeHistory.split("/").filter((s) => s.length > 0);
  const candidates = [segments.join("/")];
  const last = segments[segments.length - 1];
  if (segments.length > 1 && last !== undefined) candidates.push(last);
  for (const candidate of candidates) {
    for (const name of [candidate, ...VIDEO_EXTENSIONS.map((extension) => candidate + extension)]) {
      const info = statOrUndefined(join(framesRoot, name));
      if (info && (name === candidate || info.isFile())) {
        inside(name);
        return join(framesRoot, name);
      }
    }
  }
  return undefined;
}

/**
 * Why `path` cannot hold episode histories (`--frames`): nothing is there. Undefined when a
 * folder or file is; what it holds is checked when its episodes are opened.
 */
export function framesPathProblem(path: string): string | undefined {
  if (path.trim() === "") return "expected a folder or video";
  return statOrUndefined(path) ? undefined : `${path}: no such folder or video`;
}

const EPISODE_PATH_HINT = "an episode_history names a folder or video inside --frames: relative, without \"..\" that leaves it";

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function hasRgbFrames(folder: string): boolean {
  try {
    return readdirSync(folder).some((name) => /-rgb\.png$/i.test(name));
  } catch {
    return false;
  }
}
