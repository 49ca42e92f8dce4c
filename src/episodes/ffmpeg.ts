import { spawn, type ChildProcess } from "node:child_process";
import { z } from "zod";
import { UserError } from "../core/index.js";

/**
 * eqakit decodes videos with the system's ffmpeg and ffprobe, found on PATH; it never
 * downloads them.
 */
const INSTALL_HINT = "install ffmpeg from your system's packages: `apt-get install ffmpeg` (Debian, Ubuntu), `brew install ffmpeg` (macOS), `dnf install ffmpeg` (Fedora)";

let available: Promise<boolean> | undefined;

/** Whether `ffmpeg` and `ffprobe` can be started (checked once per process). */
export function ffmpegAvailable(): Promise<boolean> {
  available ??= Promise.all([canRun("ffmpeg"), canRun("ffprobe")]).then(([a, b]) => a && b);
  return available;
}

function canRun(program: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(program, ["-version"], { stdio: "ignore" });
    child.on("error", () => resolve(false));
    child.on("close", (code) => resolve(code === 0));
  });
}

/** Throws a UserError saying how to install ffmpeg when it is missing; `file` is the video wanted. */
export async function requireFfmpeg(file: string, context = ""): Promise<void> {
  if (!(await ffmpegAvailable())) throw new UserError(`${context}reading a video needs ffmpeg and ffprobe, which are not installed (not found on PATH)`, { file }, INSTALL_HINT);
}

/** Starts ffmpeg or ffprobe with stderr kept (its last lines explain a failure). */
export function startTool(program: "ffmpeg" | "ffprobe", args: string[]): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 16_384) stderr = stderr.slice(-8_192);
  });
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on("error", (error: NodeJS.ErrnoException) => reject(error.code === "ENOENT" ? new UserError(`${program} is not installed (not found on PATH)`, {}, INSTALL_HINT) : error));
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
  const tool = startTool("ffprobe", ["-v", "error", "-select_streams", "v:0", ...entries, "-of", "json", file]);
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
