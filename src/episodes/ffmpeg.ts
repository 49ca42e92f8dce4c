import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { z } from "zod";
import { UserError } from "../core/index.js";

/**
 * eqakit decodes videos with ffmpeg and ffprobe. Each is looked for in this order:
 * `FFMPEG_PATH` / `FFPROBE_PATH` (a user's explicit choice), then the system's PATH (a
 * system build is usually newer and faster), then the binary inside the npm packages
 * `@ffmpeg-installer/ffmpeg` and `@ffprobe-installer/ffprobe`, which `npm install` brings with
 * the platform's build in the registry tarball (nothing is downloaded). It never downloads.
 */
const INSTALL_HINT = "reinstall eqakit's dependencies (`npm install`: they bring ffmpeg for Linux, macOS and Windows), or install ffmpeg from your system's packages: `apt-get install ffmpeg` (Debian, Ubuntu), `brew install ffmpeg` (macOS), `dnf install ffmpeg` (Fedora)";

export type FfmpegProgram = "ffmpeg" | "ffprobe";

/** Where a program was found: the variable that named it, PATH, or eqakit's npm dependency. */
export type ToolSource = "variable" | "system" | "npm";

export interface ResolvedTool {
  program: FfmpegProgram;
  path: string;
  source: ToolSource;
}

export interface ToolSearch {
  /** The environment whose PATH and FFMPEG_PATH/FFPROBE_PATH are read (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Whether the binaries of the npm packages may be used (default true). */
  packages?: boolean;
}

const VARIABLES: Record<FfmpegProgram, string> = { ffmpeg: "FFMPEG_PATH", ffprobe: "FFPROBE_PATH" };
const PACKAGES: Record<FfmpegProgram, string> = { ffmpeg: "@ffmpeg-installer/ffmpeg", ffprobe: "@ffprobe-installer/ffprobe" };
const require = createRequire(import.meta.url);

/** Finds `program` as described above; undefined when none can be run. */
export async function findTool(program: FfmpegProgram, search: ToolSearch = {}): Promise<ResolvedTool | undefined> {
  const env = search.env ?? process.env;
  const named = env[VARIABLES[program]];
  if (named) {
    if (await canRun(named)) return { program, path: named, source: "variable" };
    throw new UserError(`${VARIABLES[program]} names ${named}, which cannot be run`, { field: VARIABLES[program] }, `point ${VARIABLES[program]} at a working ${program}, or unset it`);
  }
  const onPath = searchPath(program, env.PATH ?? "");
  if (onPath && (await canRun(onPath))) return { program, path: onPath, source: "system" };
  if (search.packages === false) return undefined;
  const packaged = packageBinary(program);
  if (packaged && (await canRun(packaged))) return { program, path: packaged, source: "npm" };
  return undefined;
}

function searchPath(program: string, pathVariable: string): string | undefined {
  const name = process.platform === "win32" ? `${program}.exe` : program;
  for (const dir of pathVariable.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The binary an npm package ships for this platform; undefined when the platform has none. */
function packageBinary(program: FfmpegProgram): string | undefined {
  try {
    const module: unknown = require(PACKAGES[program]);
    const path = z.object({ path: z.string() }).safeParse(module);
    return path.success ? path.data.path : undefined;
  } catch {
    return undefined; // an unsupported platform: the package throws when loaded
  }
}

function canRun(program: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(program, ["-version"], { stdio: "ignore" });
    child.on("error", () => resolve(false));
    child.on("close", (code) => resolve(code === 0));
  });
}

let resolved: Promise<Partial<Record<FfmpegProgram, ResolvedTool>>> | undefined;

/** ffmpeg and ffprobe as this process uses them (looked for once per process). */
export function ffmpegTools(): Promise<Partial<Record<FfmpegProgram, ResolvedTool>>> {
  resolved ??= Promise.all([findTool("ffmpeg"), findTool("ffprobe")]).then(([ffmpeg, ffprobe]) => ({
    ...(ffmpeg ? { ffmpeg } : {}),
    ...(ffprobe ? { ffprobe } : {}),
  }));
  return resolved;
}

/** Whether both `ffmpeg` and `ffprobe` can be run. */
export async function ffmpegAvailable(): Promise<boolean> {
  const tools = await ffmpegTools();
  return tools.ffmpeg !== undefined && tools.ffprobe !== undefined;
}

/** A line saying which binaries are used, e.g. for `eqa frames extract`. */
export async function describeFfmpeg(): Promise<string> {
  const tools = await ffmpegTools();
  const describe = (program: FfmpegProgram): string => {
    const tool = tools[program];
    if (!tool) return `${program}: not found`;
    const from = tool.source === "npm" ? `from the npm package ${PACKAGES[program]}` : tool.source === "system" ? "from PATH" : `from ${VARIABLES[program]}`;
    return `${program} ${tool.path} (${from})`;
  };
  return `${describe("ffmpeg")}; ${describe("ffprobe")}`;
}

/** Throws a UserError saying how to install ffmpeg when it is missing; `file` is the video wanted. */
export async function requireFfmpeg(file: string, context = ""): Promise<void> {
  if (!(await ffmpegAvailable())) throw new UserError(`${context}reading a video needs ffmpeg and ffprobe, which were found neither on PATH nor in eqakit's npm dependencies`, { file }, INSTALL_HINT);
}

/** Starts ffmpeg or ffprobe with stderr kept (its last lines explain a failure). */
export async function startTool(program: FfmpegProgram, args: string[]): Promise<{ child: ChildProcess; stderr: () => string; exit: Promise<number | null> }> {
  const tool = (await ffmpegTools())[program];
  if (!tool) throw new UserError(`${program} was found neither on PATH nor in eqakit's npm dependencies`, {}, INSTALL_HINT);
  const child = spawn(tool.path, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 16_384) stderr = stderr.slice(-8_192);
  });
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  // marked handled here; whoever awaits `exit` still sees the error
  exit.catch(() => undefined);
  return { child, stderr: () => stderr, exit };
}

/** The last meaningful line ffmpeg wrote, for an error message. */
export function lastLine(stderr: string): string {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return lines[lines.length - 1] ?? "no message";
}

const probeSchema = z.object({
  streams: z
    .array(
      z.object({
        width: z.number().int().positive(),
        height: z.number().int().positive(),
        nb_frames: z.string().optional(),
      }),
    )
    .min(1),
  packets: z.array(z.object({ pts_time: z.string().optional() })).optional(),
  frames: z.array(z.object({ best_effort_timestamp_time: z.string().optional() })).optional(),
});

export interface VideoProbe {
  width: number;
  height: number;
  frameCount: number;
  /** Seconds from the first frame, in presentation order; absent when the file has no usable times. */
  timestamps?: number[];
  /** The frame count the container's header announces, when it gives one. */
  declaredFrames?: number;
}

/**
 * Counts a video's frames and reads their times with ffprobe. The packets' presentation
 * times, sorted, give the frames in display order without decoding anything; when a
 * container lacks them, the frames are decoded once to read their best-effort times.
 * Times are made relative to the first frame.
 */
export async function probeVideo(file: string, context = ""): Promise<VideoProbe> {
  await requireFfmpeg(file, context);
  const fromPackets = await runProbe(file, ["-show_entries", "stream=width,height,nb_frames:packet=pts_time"], context);
  const packetTimes = (fromPackets.packets ?? []).map((p) => parseTime(p.pts_time));
  let times: (number | undefined)[] = packetTimes;
  if (packetTimes.length === 0 || packetTimes.some((t) => t === undefined)) {
    const fromFrames = await runProbe(file, ["-show_entries", "stream=width,height:frame=best_effort_timestamp_time"], context);
    times = (fromFrames.frames ?? []).map((f) => parseTime(f.best_effort_timestamp_time));
  }
  const stream = fromPackets.streams[0]!;
  if (times.length === 0) throw new UserError(`${context}the video has no frames ffprobe can read`, { file });
  const result: VideoProbe = { width: stream.width, height: stream.height, frameCount: times.length };
  const declared = Number(stream.nb_frames);
  if (stream.nb_frames !== undefined && Number.isInteger(declared) && declared > 0) result.declaredFrames = declared;
  const known = times.filter((t): t is number => t !== undefined);
  if (known.length === times.length) {
    const sorted = known.sort((x, y) => x - y);
    const first = sorted[0]!;
    result.timestamps = sorted.map((t) => Math.round((t - first) * 1e6) / 1e6);
  }
  return result;
}

function parseTime(text: string | undefined): number | undefined {
  if (text === undefined || text === "N/A") return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

async function runProbe(file: string, entries: string[], context: string): Promise<z.infer<typeof probeSchema>> {
  const tool = await startTool("ffprobe", ["-v", "error", "-select_streams", "v:0", ...entries, "-of", "json", file]);
  let stdout = "";
  tool.child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await tool.exit;
  if (code !== 0) throw new UserError(`${context}ffprobe cannot read this file as a video (${lastLine(tool.stderr())})`, { file }, "check that the file is a complete video (.mp4, .mkv, .mov, .avi, .webm, …)");
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new UserError(`${context}ffprobe's report on this file is not JSON`, { file });
  }
  const result = probeSchema.safeParse(parsed);
  if (!result.success) throw new UserError(`${context}the file has no video stream ffprobe can describe`, { file }, "check that the file is a video");
  return result.data;
}
