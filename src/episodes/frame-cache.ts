import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { canonicalJson, sha256Hex, userCacheDir } from "../core/index.js";
import { loadSharp, type ImageSettings, type PreparedImage } from "./image.js";

/**
 * Prepared frames, kept so that the questions of an episode, which sample the same frames,
 * share one preparation (decode, resize, encode) per frame and image settings:
 * - in memory for as long as the cache (a `FrameCache`) is in use: bounded in bytes (least recently used out first),
 *   (a frame's bytes and the base64 a request makes of them counted together), keyed by the
 *   opened episode (files read when it was opened are taken as they were), the
 *   frame index and the settings; a frame being prepared
 *   is shared by every caller that asks for it meanwhile, and a failed preparation is not kept;
 * - on disk across processes: one file per frame under `$XDG_CACHE_HOME/eqakit/frames/`
 *   (or `EQAKIT_FRAME_CACHE`, a folder, or `off`), keyed also by the source file's size and
 *   modification time and by libvips' version, so a replaced frame or another encoder is
 *   prepared again. Each file holds the image's size and sha256 before its bytes; a file whose
 *   bytes do not match its hash is ignored. The folder is trimmed to its bound, oldest first.
 * Cached bytes are the bytes a fresh preparation gives, so requests (and the model-call
 * cache's keys) do not change.
 */

export interface FrameCacheOptions {
  /** Bytes of prepared frames kept in memory, with their base64 (default 512 MiB; 0 keeps none). */
  memoryBytes?: number;
  /** The folder of prepared frames kept across runs, or false for none. */
  dir?: string | false;
  /** Bytes the folder may hold before its oldest files are removed (default 4 GiB). */
  diskBytes?: number;
}

/** What identifies one frame's preparation. */
export interface FrameKey {
  /** The opened episode ({@link episodeCacheId}). */
  episode: string;
  index: number;
  settings: ImageSettings;
  /** The file the frame is read from (the frame's image, or the video), for the on-disk key. */
  source: string;
}

const DEFAULT_MEMORY_BYTES = 512 * 1024 * 1024;
const DEFAULT_DISK_BYTES = 4 * 1024 * 1024 * 1024;
const FILE_MAGIC = "EQF1";
const HEADER_BYTES = 4 + 4 + 4 + 32;
/** Frames prepared at once across the process: sharp runs each on libuv's pool of four threads. */
const PREPARATION_WIDTH = Math.max(2, Math.min(4, availableParallelism()));

interface Entry {
  image: Promise<PreparedImage>;
  bytes: number;
}

interface Settle {
  resolve: (image: PreparedImage) => void;
  reject: (error: unknown) => void;
}

function resolveOptions(options: FrameCacheOptions): Required<FrameCacheOptions> {
  const variable = process.env.EQAKIT_FRAME_CACHE;
  const dir = options.dir !== undefined ? options.dir : variable === "off" ? false : variable ? resolve(variable) : join(userCacheDir(), "frames");
  return { memoryBytes: options.memoryBytes ?? DEFAULT_MEMORY_BYTES, dir, diskBytes: options.diskBytes ?? DEFAULT_DISK_BYTES };
}

/** A key for an opened episode, unique to this opening: files read when it was opened are taken as they were. */
export function episodeCacheId(path: string): string {
  return `${randomUUID()}\u0000${resolve(path)}`;
}

/**
 * One frame cache (see the file's comment), with its own settings, memory and counts: a run that
 * wants other settings than the default cache's (a dry run keeps nothing on disk) opens its
 * episodes with its own, and no other run sees it.
 */
export class FrameCache {
  readonly settings: Readonly<Required<FrameCacheOptions>>;
  private readonly memory = new Map<string, Entry>();
  private heldBytes = 0;
  private prepared = 0;
  private trimmed = false;

  /** Settings not given come from `EQAKIT_FRAME_CACHE` (the folder) and the defaults. */
  constructor(options: FrameCacheOptions = {}) {
    this.settings = resolveOptions(options);
  }

  /** How many frames this cache has prepared from their source (not from memory or the folder), and the bytes held in memory. */
  stats(): { prepared: number; memoryBytes: number; memoryEntries: number } {
    return { prepared: this.prepared, memoryBytes: this.heldBytes, memoryEntries: this.memory.size };
  }

  /**
   * The prepared images of `keys`, in order. Frames neither held nor being prepared are looked
   * up on disk, and those not there are handed to `prepare` in one call (in the order given),
   * which resolves to their images in the same order.
   */
  frames(keys: readonly FrameKey[], prepare: (missing: FrameKey[]) => Promise<PreparedImage[]>): Promise<PreparedImage[]> {
    const ids = keys.map(memoryKey);
    const missing: { key: FrameKey; id: string; settle: Settle }[] = [];
    for (let i = 0; i < keys.length; i++) {
      const id = ids[i]!;
      const held = this.memory.get(id);
      if (held) {
        this.memory.delete(id); // refreshed as the most recently used
        this.memory.set(id, held);
        continue;
      }
      if (missing.some((m) => m.id === id)) continue;
      let settle!: Settle;
      const image = new Promise<PreparedImage>((resolve, reject) => (settle = { resolve, reject }));
      image.catch(() => undefined); // a failure reaches the callers below; none goes unhandled
      this.memory.set(id, { image, bytes: 0 });
      missing.push({ key: keys[i]!, id, settle });
    }
    if (missing.length > 0) void this.fill(missing, prepare);
    return Promise.all(ids.map((id) => this.memory.get(id)?.image ?? Promise.reject(new Error(`frame ${id} left the cache while being prepared`))));
  }

  private async fill(missing: { key: FrameKey; id: string; settle: Settle }[], prepare: (missing: FrameKey[]) => Promise<PreparedImage[]>): Promise<void> {
    const dir = this.settings.dir;
    try {
      const diskKeys = dir ? await Promise.all(missing.map((m) => diskKey(m.key).catch(() => undefined))) : [];
      const fromDisk = dir ? await Promise.all(diskKeys.map((k) => (k ? readCached(dir, k) : undefined))) : [];
      const rest = missing.filter((_, i) => fromDisk[i] === undefined);
      missing.forEach((m, i) => {
        const image = fromDisk[i];
        if (image) this.done(m.id, m.settle, image);
      });
      if (rest.length === 0) return;
      const images = await prepare(rest.map((m) => m.key));
      this.prepared += rest.length;
      await Promise.all(
        rest.map(async (m, i) => {
          const image = images[i]!;
          // written before it is handed out, so a process that ends right after leaves it whole
          const k = diskKeys[missing.indexOf(m)];
          if (dir && k && (await writeCached(dir, k, image))) this.trimOnce(dir);
          this.done(m.id, m.settle, image);
        }),
      );
    } catch (error) {
      for (const m of missing) {
        const entry = this.memory.get(m.id);
        if (entry && entry.bytes === 0) this.memory.delete(m.id);
        m.settle.reject(error);
      }
    }
  }

  private done(id: string, settle: Settle, image: PreparedImage): void {
    const entry = this.memory.get(id);
    if (entry) {
      // a frame sent to a model keeps its base64 beside its bytes (4 for every 3) for as long as it is held
      entry.bytes = image.data.byteLength + Math.ceil(image.data.byteLength / 3) * 4;
      this.heldBytes += entry.bytes;
      if (entry.bytes > this.settings.memoryBytes) this.forget(id);
    }
    settle.resolve(image);
    // the least recently used frames leave first; frames still being prepared stay
    for (const [key, held] of this.memory) {
      if (this.heldBytes <= this.settings.memoryBytes) break;
      if (held.bytes > 0) this.forget(key);
    }
  }

  private forget(id: string): void {
    const entry = this.memory.get(id);
    if (!entry) return;
    this.heldBytes -= entry.bytes;
    this.memory.delete(id);
  }

  /** Trims the folder to its bound once, after the cache's first write, in the background: no frame waits for it. */
  private trimOnce(dir: string): void {
    if (this.trimmed) return;
    this.trimmed = true;
    void trimFolder(dir, this.settings.diskBytes).catch(() => undefined);
  }
}

let defaultCache: FrameCache | undefined;

/** The frame cache of episodes opened without one: the default settings and `EQAKIT_FRAME_CACHE`, made at its first use. */
export function defaultFrameCache(): FrameCache {
  return (defaultCache ??= new FrameCache());
}

function memoryKey(key: FrameKey): string {
  const s = key.settings;
  return `${key.episode}\u0000${key.index}\u0000${s.maxSide}\u0000${s.format}\u0000${s.format === "jpeg" ? s.quality : ""}`;
}

async function diskKey(key: FrameKey): Promise<string> {
  const info = await stat(key.source);
  const sharp = await loadSharp();
  const s = key.settings;
  return sha256Hex(canonicalJson({ v: 1, vips: sharp.versions.vips, source: resolve(key.source), size: info.size, mtimeMs: info.mtimeMs, index: key.index, maxSide: s.maxSide, format: s.format, quality: s.format === "jpeg" ? s.quality : null }));
}

function cachePath(dir: string, key: string): string {
  return join(dir, key.slice(0, 2), `${key}.bin`);
}

async function readCached(dir: string, key: string): Promise<PreparedImage | undefined> {
  let file: Buffer;
  try {
    file = await readFile(cachePath(dir, key));
  } catch {
    return undefined;
  }
  if (file.length < HEADER_BYTES || file.toString("latin1", 0, 4) !== FILE_MAGIC) return undefined;
  const data = file.subarray(HEADER_BYTES);
  const sha256 = file.toString("hex", 12, HEADER_BYTES);
  if (sha256Hex(data) !== sha256) return undefined;
  const mediaType = data[0] === 0x89 ? "image/png" : "image/jpeg";
  return { data, mediaType, width: file.readUInt32BE(4), height: file.readUInt32BE(8), sha256 };
}

/** Writes a prepared frame to the folder (a file that cannot be written leaves the frame uncached, nothing more); whether it was written. */
async function writeCached(dir: string, key: string, image: PreparedImage): Promise<boolean> {
  const path = cachePath(dir, key);
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(FILE_MAGIC, 0, "latin1");
  header.writeUInt32BE(image.width, 4);
  header.writeUInt32BE(image.height, 8);
  header.write(image.sha256, 12, "hex");
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
    await writeFile(temporary, Buffer.concat([header, image.data]));
    await rename(temporary, path);
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
    return false;
  }
  return true;
}

/** Removes the folder's oldest files until it holds at most 80 % of `limit` bytes, when it holds more than `limit`. */
export async function trimFolder(dir: string, limit: number): Promise<void> {
  const files: { path: string; size: number; mtimeMs: number }[] = [];
  for (const sub of await readdir(dir)) {
    const names = await readdir(join(dir, sub)).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(dir, sub, name);
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile()) files.push({ path, size: info.size, mtimeMs: info.mtimeMs });
    }
  }
  let total = files.reduce((sum, f) => sum + f.size, 0);
  if (total <= limit) return;
  files.sort((a, b) => a.mtimeMs - b.mtimeMs);
  for (const file of files) {
    if (total <= limit * 0.8) break;
    await rm(file.path, { force: true });
    total -= file.size;
  }
}

const queue: (() => void)[] = [];
let running = 0;

/**
 * Runs `work` when fewer than a few preparations run in the process, first come first
 * served: the frames of the question that asked first are ready first, and libuv's threads
 * stay free for the run's file writes.
 */
export async function limitPreparation<T>(work: () => Promise<T>): Promise<T> {
  // a finished preparation hands its place to the next in the queue, so the width holds
  if (running >= PREPARATION_WIDTH) await new Promise<void>((go) => queue.push(go));
  else running++;
  try {
    return await work();
  } finally {
    const next = queue.shift();
    if (next) next();
    else running--;
  }
}
