/**
 * The report's thumbnails of the frames the agents used. Every question of an episode usually
 * uses the same frames (OpenEQA's uniform sampling), and runs compared side by side use the
 * same episodes, so a frame is prepared once and stored once: as one CSS rule holding its image
 * (embedded), or as one file in a folder beside the report (`--frames-dir`), which every
 * question showing it names by its class.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { forEachConcurrent, isUserError, UserError, writeFileAtomically } from "../core/index.js";
import { openEpisode, prepareImage, resolveEpisodePath, type PreparedImage } from "../episodes/index.js";
import { Html, html } from "./html-parts.js";
import type { LoadedRun } from "./runs.js";

/** One frame's thumbnail, shared by every answer that used the frame. */
export interface Thumbnail {
  /** Its CSS class (`f0`, `f1`, …). */
  id: string;
  index: number;
  width: number;
  height: number;
  /** A data: URL, or the file's path relative to the report. */
  src: string;
  /** The frame's file (frame folders), or the video at the frame's time. */
  full: string;
}

export interface ThumbnailOptions {
  /** Thumbnails per question and run (default 4; 0 for none). */
  perQuestion?: number;
  /** Longest side of a thumbnail in pixels (default 128). */
  size?: number;
  /** Write the thumbnails as files into this folder (named relative to `reportDir`) instead of embedding them. */
  dir?: string;
  /** The folder the report is written to. */
  reportDir?: string;
  /** Longest side of a question's plan in pixels (default 240). */
  planSize?: number;
}

export interface Thumbnails {
  /** Each frame once. */
  frames: Thumbnail[];
  /** The thumbnails of run `r`'s answer to a question, by `${r}\0${questionId}`. */
  byAnswer: Map<string, Thumbnail[]>;
  /** The top-down plan of the path run `r`'s agent walked for a question (an exploration's), by the same key. */
  plans: Map<string, Thumbnail>;
}

/** The questions of a run whose frames the report shows: its own, and a TAG run's answered in its `answers/` (their transcripts). */
function questionsWithFrames(run: LoadedRun): { questionId: string; episode?: string; frames: number[] }[] {
  const tagged = (run.tag?.questions ?? []).flatMap((q) => (q.transcript ? [{ questionId: q.questionId, frames: q.transcript.frames, ...(q.transcript.episode ? { episode: q.transcript.episode } : {}) }] : []));
  return [...run.questions, ...tagged];
}

export const answerKey = (r: number, questionId: string): string => `${r}\u0000${questionId}`;

/** Reads and shrinks each frame the runs' answers used once; an unreadable episode is counted in `notes`. */
export async function collectThumbnails(runs: LoadedRun[], options: ThumbnailOptions, notes: string[]): Promise<Thumbnails> {
  const perQuestion = options.perQuestion ?? 4;
  const size = options.size ?? 128;
  const out: Thumbnails = { frames: [], byAnswer: new Map(), plans: new Map() };
  if (perQuestion === 0) return out;
  // what each answer shows, and each episode's frames wanted by any answer
  const episodes = new Map<string, { id: string; indices: Set<number> }>();
  const wanted: { key: string; path: string; indices: number[] }[] = [];
  let failed = 0;
  for (const [r, run] of runs.entries()) {
    if (!run.framesRoot) continue;
    for (const q of questionsWithFrames(run)) {
      if (q.frames.length === 0 || !q.episode) continue;
      let path: string | undefined;
      try {
        path = resolveEpisodePath(run.framesRoot, q.episode);
      } catch (error) {
        if (!isUserError(error)) throw error;
        path = undefined; // a path that leaves the frames folder is not read
      }
      if (!path) {
        failed++;
        continue;
      }
      const indices = evenly(q.frames, perQuestion);
      let episode = episodes.get(path);
      if (!episode) episodes.set(path, (episode = { id: q.episode, indices: new Set() }));
      for (const i of indices) episode.indices.add(i);
      wanted.push({ key: answerKey(r, q.questionId), path, indices });
    }
  }
  const made = new Map<string, Map<number, Thumbnail>>();
  const unreadable = new Set<string>();
  // by name: frames alike (in two episodes) are one file, written once
  const files = new Map<string, Buffer>();
  await forEachConcurrent([...episodes], 2, async ([path, { id, indices }]) => {
    try {
      const opened = await openEpisode(path, id);
      const valid = [...indices].filter((i) => Number.isInteger(i) && i >= 0 && i < opened.frameCount).sort((a, b) => a - b);
      const small = await opened.images(valid, { maxSide: size, format: "jpeg", quality: 70 });
      const thumbs = new Map<number, Thumbnail>();
      for (const image of small) {
        let full = "";
        if (opened.kind === "video") {
          // the video itself, at the frame's time (a media fragment): nothing large is embedded
          const seconds = opened.timestamps?.[image.index];
          full = `${pathToFileURL(opened.path).href}${seconds !== undefined ? `#t=${seconds.toFixed(3)}` : ""}`;
        } else {
          // the file's name only: a frame read whole would read its depth image too
          const file = opened.rgbPath ? opened.rgbPath(image.index) : (await opened.frame(image.index)).rgbPath;
          full = file ? pathToFileURL(file).href : "";
        }
        let src = `data:${image.mediaType};base64,${image.data.toString("base64")}`;
        if (options.dir) {
          const file = join(options.dir, `${image.sha256.slice(0, 32)}.jpg`);
          files.set(file, image.data);
          src = relative(options.reportDir ?? process.cwd(), file).split("\\").join("/");
        }
        thumbs.set(image.index, { id: "", index: image.index, width: image.width, height: image.height, src, full });
      }
      made.set(path, thumbs);
    } catch {
      unreadable.add(path);
    }
  });
  // classes in the order the answers first show them, so that the same runs give the same page
  for (const { key, path, indices } of wanted) {
    const thumbs = made.get(path);
    if (!thumbs) {
      failed++;
      continue;
    }
    const shown: Thumbnail[] = [];
    for (const i of indices) {
      const t = thumbs.get(i);
      if (!t) continue;
      if (t.id === "") {
        t.id = `f${out.frames.length}`;
        out.frames.push(t);
      }
      shown.push(t);
    }
    out.byAnswer.set(key, shown);
  }
  if (failed > 0) notes.push(`frames of ${failed} answer(s) could not be read: shown without thumbnails`);
  await collectPlans(runs, out, options, files);
  // a file that cannot be written stops the report (exit 3), unlike a frame that cannot be read
  await forEachConcurrent([...files], 4, ([path, data]) => writeFileAtomically(path, data));
  return out;
}

/** Each question's plan (an exploration's top-down picture of its path), shrunk to `planSize`; one that cannot be read is left out. */
async function collectPlans(runs: LoadedRun[], out: Thumbnails, options: ThumbnailOptions, files: Map<string, Buffer>): Promise<void> {
  const wanted = runs.flatMap((run, r) => run.questions.flatMap((q) => (q.plan ? [{ key: answerKey(r, q.questionId), path: q.plan }] : [])));
  const made = new Map<string, Thumbnail | null>();
  await forEachConcurrent(wanted, 2, async ({ path }) => {
    if (made.has(path)) return;
    made.set(path, null);
    try {
      const image = await prepareImage(path, { maxSide: options.planSize ?? 240, format: "png" });
      let src = `data:${image.mediaType};base64,${image.data.toString("base64")}`;
      if (options.dir) {
        const file = join(options.dir, `${image.sha256.slice(0, 32)}.png`);
        files.set(file, image.data);
        src = relative(options.reportDir ?? process.cwd(), file).split("\\").join("/");
      }
      made.set(path, { id: "", index: -1, width: image.width, height: image.height, src, full: pathToFileURL(path).href });
    } catch {
      // a picture that cannot be read: the question is shown without it
    }
  });
  for (const { key, path } of wanted) {
    const t = made.get(path);
    if (!t) continue;
    if (t.id === "") {
      t.id = `f${out.frames.length}`;
      out.frames.push(t);
    }
    out.plans.set(key, t);
  }
}

/** A question's plan, linked to the full picture. */
export function planLink(plan: Thumbnail | undefined, label: string): Html {
  if (!plan) return html``;
  return html`<a class="plan-link" href="${plan.full}" target="_blank" rel="noopener" title="${label}"><span class="plan ${plan.id}" role="img" aria-label="${label}"></span></a>`;
}

/** A simulator recording as the report shows it: its plan and a few of its colour frames. */
export interface RecordingThumbnails {
  /** The recording's folder name (`home-1`). */
  name: string;
  plan?: Thumbnail;
  frames: Thumbnail[];
}

export interface RecordingThumbnailOptions {
  /** Colour frames per recording, spread evenly from the first to the last (default 4). */
  perRecording?: number;
  /** Longest side of a frame's thumbnail in pixels (default 128). */
  size?: number;
  /** Longest side of the plan's in pixels (default 240). */
  planSize?: number;
  /** As for the answers' thumbnails: write files into this folder (named relative to `reportDir`) instead of embedding. */
  dir?: string;
  reportDir?: string;
}

/**
 * Each recording under `dir` (a folder of `home-N/` recordings, as `eqa sim record` and `eqa demo`
 * write them: `frames/` and `plan.png`), in natural name order, with its plan and a few evenly
 * spaced frames shrunk. They join `thumbs`, so a frame an answer already shows is embedded once;
 * a recording that cannot be read is counted in `notes`.
 */
export async function collectRecordingThumbnails(dir: string, thumbs: Thumbnails, options: RecordingThumbnailOptions, notes: string[]): Promise<RecordingThumbnails[]> {
  const perRecording = options.perRecording ?? 4;
  const size = options.size ?? 128;
  if (!existsSync(dir)) throw new UserError("the folder of recordings is not there", { file: dir }, "give the folder holding the home-N/ recordings (eqa demo's recordings/, or eqa sim record's --out folders' parent)");
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "frames")))
    .map((e) => e.name)
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const byFile = new Map(thumbs.frames.map((t) => [t.full, t]));
  const files = new Map<string, Buffer>();
  const add = (image: PreparedImage & { index: number }, full: string): Thumbnail => {
    const known = byFile.get(full);
    if (known) return known;
    let src = `data:${image.mediaType};base64,${image.data.toString("base64")}`;
    if (options.dir) {
      const file = join(options.dir, `${image.sha256.slice(0, 32)}.${image.mediaType === "image/png" ? "png" : "jpg"}`);
      files.set(file, image.data);
      src = relative(options.reportDir ?? process.cwd(), file).split("\\").join("/");
    }
    const t: Thumbnail = { id: `f${thumbs.frames.length}`, index: image.index, width: image.width, height: image.height, src, full };
    thumbs.frames.push(t);
    byFile.set(full, t);
    return t;
  };
  const out: RecordingThumbnails[] = [];
  const unreadable: string[] = [];
  // one recording at a time, so that the classes come in the recordings' order
  for (const name of names) {
    try {
      const opened = await openEpisode(join(dir, name, "frames"), name);
      const indices = evenly(Array.from({ length: opened.frameCount }, (_, i) => i), perRecording);
      const small = await opened.images(indices, { maxSide: size, format: "jpeg", quality: 70 });
      const frames: Thumbnail[] = [];
      for (const image of small) {
        const file = opened.rgbPath ? opened.rgbPath(image.index) : (await opened.frame(image.index)).rgbPath;
        frames.push(add(image, file ? pathToFileURL(file).href : `${name}#${image.index}`));
      }
      const planFile = join(dir, name, "plan.png");
      const plan = existsSync(planFile) ? add({ ...(await prepareImage(planFile, { maxSide: options.planSize ?? 240, format: "png" })), index: -1 }, pathToFileURL(planFile).href) : undefined;
      out.push({ name, ...(plan ? { plan } : {}), frames });
    } catch {
      unreadable.push(name);
    }
  }
  await forEachConcurrent([...files], 4, ([path, data]) => writeFileAtomically(path, data));
  if (unreadable.length > 0) notes.push(`recordings ${unreadable.join(", ")} in ${dir} could not be read: not shown`);
  return out;
}

/** Each recording's plan beside its frames, each in a box of its own that scrolls sideways rather than the page. */
export function recordingsFigures(recordings: readonly RecordingThumbnails[]): Html {
  return html`<div class="recordings">${recordings.map(
    (r) => html`<figure class="recording" data-recording="${r.name}">${r.plan ? html`<a class="plan-link" href="${r.plan.full}" target="_blank" rel="noopener" title="${r.name}: plan"><span class="plan ${r.plan.id}" role="img" aria-label="${r.name}: plan"></span></a>` : html``}${thumbnailStrip(r.frames)}<figcaption>${r.name}: plan and ${r.frames.length} of its frames</figcaption></figure>`,
  )}</div>`;
}

/** The style rules holding each thumbnail's image, once. */
export function thumbnailStyle(thumbs: Thumbnails): string {
  return thumbs.frames.map((t) => `.${t.id}{background-image:url("${cssString(t.src)}");aspect-ratio:${t.width}/${t.height}}`).join("\n");
}

/** Text inside a double-quoted CSS string, also safe inside a <style> element. */
function cssString(text: string): string {
  return text.replace(/["\\\n<]/g, (c) => (c === "\n" ? "\\a " : c === "<" ? "\\3c " : `\\${c}`));
}

/** An answer's strip of thumbnails, each linked to its frame file (or the video at its time). */
export function thumbnailStrip(frames: Thumbnail[]): Html {
  if (frames.length === 0) return html``;
  return html`<div class="frames">${frames.map((t) => {
    const image = html`<span class="fthumb ${t.id}" role="img" aria-label="frame ${t.index}" data-frame="${t.index}"></span>`;
    return t.full ? html`<a class="frame" href="${t.full}" target="_blank" rel="noopener" title="frame ${t.index}">${image}</a>` : image;
  })}</div>`;
}

/** At most `k` items spread evenly over `items`, first and last included. */
function evenly<T>(items: readonly T[], k: number): T[] {
  if (items.length <= k) return [...items];
  if (k === 1) return [items[0]!];
  return Array.from({ length: k }, (_, i) => items[Math.round((i * (items.length - 1)) / (k - 1))]!);
}
