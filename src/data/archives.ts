/**
 * OpenEQA's HM3D archives that a user already has (`open-eqa-hm3d-frames-v0.tgz`, the RGB frames;
 * `open-eqa-hm3d-states-v0.tgz`, the agent states), checked against the MD5 sums OpenEQA's
 * `data/README.md` publishes and unpacked into the frames folder as its `tar -xzf … -C
 * data/frames` does (`hm3d-v0/<episode>/…`). eqakit does not download them: their links are
 * a third party's and are reported expired.
 *
 * The archive is read twice as a stream, never whole: once for its sum (nothing is written when it
 * differs), once to unpack (gzip, then tar's 512-byte records: regular files and folders; GNU
 * long names and pax paths honoured; links and devices skipped). Each file is written under a
 * temporary name and renamed; a file already there with the archive's size is kept, so a run
 * stopped at any point resumes. A verified archive is remembered beside the output (by size and
 * modification time) so a rerun does not hash it again.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join, normalize, sep } from "node:path";
import { createGunzip } from "node:zlib";
import { z } from "zod";
import { UserError, describeError, removeStaleTemporaries } from "../core/index.js";
import { testSums } from "./fetch.js";

export interface KnownArchive {
  name: string;
  description: string;
  md5: string;
}

/** OpenEQA's published archives (data/README.md at facebookresearch/open-eqa@cfa3fce). */
export const OPENEQA_ARCHIVES: readonly KnownArchive[] = [
  { name: "open-eqa-hm3d-frames-v0.tgz", description: "OpenEQA's HM3D episode histories, RGB frames only (12 GB)", md5: "286aa5d2fda99f4ed1567ae212998370" },
  { name: "open-eqa-hm3d-states-v0.tgz", description: "OpenEQA's HM3D agent states (hm3d-v0/<episode>/*.pkl), for rendering with Habitat", md5: "0db1a723573a5b9f5139e0df2ae960e0" },
];

export interface ArchiveProgress {
  stage: "checking" | "unpacking";
  bytes: number;
  total: number;
}

export interface UnpackedArchive {
  archive: string;
  /** What was checked, e.g. "md5 286a… ok" (or "checked before" when remembered). */
  checked: string;
  written: number;
  kept: number;
}

const RECORD = 512;
/** The mark left beside the output once an archive's sum was checked: its size and modification time then. */
const checkedStamp = z.object({ size: z.number(), mtimeMs: z.number() });

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function archiveError(path: string, message: string, hint?: string): UserError {
  return new UserError(message, { file: path }, hint);
}

/** Streams a file through md5 and sha256. */
async function digests(path: string, size: number, onProgress?: (p: ArchiveProgress) => void): Promise<{ md5: string; sha256: string }> {
  const md5 = createHash("md5");
  const sha = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    md5.update(chunk);
    sha.update(chunk);
    bytes += chunk.length;
    onProgress?.({ stage: "checking", bytes, total: size });
  }
  return { md5: md5.digest("hex"), sha256: sha.digest("hex") };
}

/** A tar member's path made safe to join under the output folder, or undefined (absolute, or leaving it). */
function memberPath(name: string): string | undefined {
  const clean = normalize(name.replace(/^(\.\/)+/, ""));
  if (clean === "." || clean === "" || clean.startsWith("/") || clean === ".." || clean.startsWith(`..${sep}`)) return undefined;
  return clean;
}

function field(header: Buffer, offset: number, length: number): string {
  const raw = header.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString("utf8");
}

function octal(header: Buffer, offset: number, length: number): number {
  if (header[offset]! & 0x80) {
    // GNU base-256 for sizes over 8 GB
    let value = 0;
    for (let i = 1; i < length; i++) value = value * 256 + header[offset + i]!;
    return value;
  }
  const text = field(header, offset, length).trim();
  return text === "" ? 0 : parseInt(text, 8);
}

/** Checks `archive` against OpenEQA's sum for its name, then unpacks it into `out` (see the file's comment). */
export async function unpackOpenEqaArchive(archive: string, out: string, options: { onProgress?: (p: ArchiveProgress) => void; env?: NodeJS.ProcessEnv } = {}): Promise<UnpackedArchive> {
  const known = OPENEQA_ARCHIVES.find((a) => a.name === basename(archive));
  if (!known) {
    throw archiveError(archive, "not one of OpenEQA's archives", `eqakit checks and unpacks ${OPENEQA_ARCHIVES.map((a) => a.name).join(" and ")} (keep their names)`);
  }
  if (!existsSync(archive) || !statSync(archive).isFile()) throw archiveError(archive, "no such file");
  const size = statSync(archive).size;
  mkdirSync(out, { recursive: true });
  const marker = join(out, `.eqakit-checked-${known.name}.json`);
  const stamp = { size, mtimeMs: statSync(archive).mtimeMs };
  let checked = "checked before";
  const remembered = existsSync(marker) ? checkedStamp.safeParse(safeJson(readFileSync(marker, "utf8"))).data : undefined;
  if (remembered?.size !== stamp.size || remembered.mtimeMs !== stamp.mtimeMs) {
    const sums = await digests(archive, size, options.onProgress);
    const override = testSums(options.env ?? process.env)[known.name];
    const [kind, got, want] = override ? ["sha256", sums.sha256, override] : ["md5", sums.md5, known.md5];
    if (got !== want) throw archiveError(archive, `has ${kind} ${got}, expected ${want}`, "the archive is damaged or another version: nothing was unpacked; download it again");
    checked = `${kind} ${got} ok`;
    writeFileSync(marker, `${JSON.stringify(stamp)}\n`);
  }

  let written = 0;
  let kept = 0;
  let bytes = 0;
  const cleaned = new Set<string>();
  const input = createReadStream(archive, { highWaterMark: 1 << 20 });
  input.on("data", (chunk) => {
    bytes += chunk.length;
    options.onProgress?.({ stage: "unpacking", bytes, total: size });
  });
  const gunzip = input.pipe(createGunzip());
  let pending: Buffer = Buffer.alloc(0);
  let longName: string | undefined;
  // the member being read: its remaining data bytes, padding, and where they go
  let member: { remaining: number; padding: number; kind: "file" | "meta" | "skip"; path?: string; temporary?: string; handle?: Awaited<ReturnType<typeof open>>; meta?: Buffer[] } | undefined;
  let ended = false;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let at = 0;
      while (!ended) {
        if (member) {
          const take = Math.min(member.remaining, pending.length - at);
          if (take > 0) {
            const data = pending.subarray(at, at + take);
            if (member.kind === "file" && member.handle) await member.handle.write(data);
            else if (member.kind === "meta") member.meta!.push(Buffer.from(data));
            member.remaining -= take;
            at += take;
          }
          if (member.remaining > 0) break;
          const skip = Math.min(member.padding, pending.length - at);
          member.padding -= skip;
          at += skip;
          if (member.padding > 0) break;
          if (member.kind === "file" && member.handle) {
            await member.handle.close();
            renameSync(member.temporary!, member.path!);
            written++;
          } else if (member.kind === "meta") {
            const text = Buffer.concat(member.meta!).toString("utf8");
            longName = member.path === "pax" ? /(?:^|\n)\d+ path=([^\n]*)\n/.exec(text)?.[1] : text.replace(/\0+$/, "");
          }
          member = undefined;
          continue;
        }
        if (pending.length - at < RECORD) break;
        const header = pending.subarray(at, at + RECORD);
        at += RECORD;
        if (header.every((b) => b === 0)) {
          ended = true;
          break;
        }
        const type = String.fromCharCode(header[156]!) || "0";
        const dataSize = octal(header, 124, 12);
        const padding = (RECORD - (dataSize % RECORD)) % RECORD;
        const prefix = field(header, 345, 155);
        const rawName = longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
        if (type === "L" || type === "x") {
          member = { remaining: dataSize, padding, kind: "meta", meta: [], path: type === "x" ? "pax" : "gnu" };
          continue;
        }
        longName = undefined;
        const relative = memberPath(rawName);
        if (relative === undefined) throw archiveError(archive, `holds a path outside the output folder: ${rawName}`);
        const target = join(out, relative);
        if (type === "5") {
          mkdirSync(target, { recursive: true });
          member = { remaining: dataSize, padding, kind: "skip" };
        } else if (type === "0" || type === "\0" || type === "7") {
          const folder = dirname(target);
          mkdirSync(folder, { recursive: true });
          if (!cleaned.has(folder)) {
            removeStaleTemporaries(folder);
            cleaned.add(folder);
          }
          if (existsSync(target) && statSync(target).size === dataSize) {
            kept++;
            member = { remaining: dataSize, padding, kind: "skip" };
          } else {
            const temporary = `${target}.${process.pid}.tmp`;
            member = { remaining: dataSize, padding, kind: "file", path: target, temporary, handle: await open(temporary, "w") };
            if (dataSize === 0 && padding === 0) continue;
          }
        } else {
          member = { remaining: dataSize, padding, kind: "skip" };
        }
      }
      pending = pending.subarray(at);
      if (ended) break;
    }
  } catch (error) {
    await member?.handle?.close().catch(() => undefined);
    if (error instanceof UserError) throw error;
    throw archiveError(archive, `cannot be unpacked: ${describeError(error)}`, "the archive is damaged: download it again");
  } finally {
    input.destroy();
  }
  if (member !== undefined || (!ended && pending.length > 0)) {
    await member?.handle?.close().catch(() => undefined);
    throw archiveError(archive, "ends inside a file: the archive is cut short", "download it again");
  }
  return { archive, checked, written, kept };
}
