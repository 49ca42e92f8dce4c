/**
 * ScanNet's `.sens` files (format version 4, as ScanNet's SensReader and OpenEQA's
 * `data/scannet/SensorData.py` read them), read as a stream: the header, then one frame at a
 * time, and only as far as asked. OpenEQA's reader unpacks every frame of a scan into memory
 * before its first frame is written; this one holds one frame's bytes at a time and skips the
 * colour and depth bytes of frames it is told are already done.
 *
 * Layout (little-endian): u32 version (4), u64 length and the sensor name, four 4×4 float32
 * matrices (colour intrinsics, colour extrinsics, depth intrinsics, depth extrinsics, row-major),
 * i32 colour and depth compression (colour 2 = JPEG, depth 1 = zlib of uint16), u32 colour width,
 * height, depth width, height, f32 depth shift, u64 frame count; then per frame the 4×4 float32
 * camera-to-world matrix, u64 colour and depth timestamps, u64 colour and depth sizes and the
 * bytes themselves.
 */
import { open, type FileHandle } from "node:fs/promises";
import { UserError } from "../core/index.js";

export const SENS_VERSION = 4;
/** The compression names of SensorData.py, by code. */
const COLOR_COMPRESSION: Record<number, string> = { [-1]: "unknown", 0: "raw", 1: "png", 2: "jpeg" };
const DEPTH_COMPRESSION: Record<number, string> = { [-1]: "unknown", 0: "raw_ushort", 1: "zlib_ushort", 2: "occi_ushort" };
const FRAME_FIXED_BYTES = 16 * 4 + 4 * 8;

export interface SensHeader {
  sensorName: string;
  /** Row-major 4×4 float32 matrices. */
  intrinsicColor: Float32Array;
  extrinsicColor: Float32Array;
  intrinsicDepth: Float32Array;
  extrinsicDepth: Float32Array;
  colorCompression: string;
  depthCompression: string;
  colorWidth: number;
  colorHeight: number;
  depthWidth: number;
  depthHeight: number;
  /** Depth units per metre (1000 in ScanNet). */
  depthShift: number;
  frameCount: number;
}

export interface SensFrame {
  /** 0-based index in the file. */
  index: number;
  /** Row-major 4×4 float32 camera-to-world matrix (ScanNet writes -inf where tracking failed). */
  cameraToWorld: Float32Array;
  timestampColor: bigint;
  timestampDepth: bigint;
  /** The compressed colour and depth bytes; absent when the frame was skipped. */
  color?: Buffer;
  depth?: Buffer;
}

function sensError(path: string, message: string, hint?: string): UserError {
  return new UserError(message, { file: path }, hint ?? "download the scan again (ScanNet's download-scannet.py --id SCENE --type .sens)");
}

/** An open `.sens` file: its header, and its frames read one after the other. */
export class SensReader {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    readonly header: SensHeader,
    private readonly framesStart: number,
    private readonly size: number,
  ) {}

  /** Opens a file and reads its header; a file that is not a version-4 `.sens` is a UserError. */
  static async open(path: string): Promise<SensReader> {
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw sensError(path, code === "ENOENT" ? "no such file" : `cannot read the file (${code ?? String(error)})`);
    }
    try {
      const size = (await handle.stat()).size;
      const readExact = async (position: number, length: number, what: string): Promise<Buffer> => {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = length === 0 ? { bytesRead: 0 } : await handle.read(buffer, 0, length, position);
        if (bytesRead < length) throw sensError(path, `the file ends inside its header (${what}, at byte ${position} of ${size})`);
        return buffer;
      };
      const version = (await readExact(0, 4, "version")).readUInt32LE(0);
      if (version !== SENS_VERSION) throw sensError(path, `.sens format version ${version}, expected ${SENS_VERSION}`, "eqakit reads ScanNet v2's .sens files (format version 4), as OpenEQA's SensorData.py does");
      const nameLength = Number((await readExact(4, 8, "sensor name length")).readBigUInt64LE(0));
      if (nameLength > size) throw sensError(path, `the sensor name is ${nameLength} bytes long, more than the file`);
      const sensorName = (await readExact(12, nameLength, "sensor name")).toString("latin1");
      let at = 12 + nameLength;
      const rest = await readExact(at, 4 * 64 + 4 * 7 + 8, "intrinsics, sizes and frame count");
      at += rest.length;
      const matrix = (offset: number): Float32Array => Float32Array.from({ length: 16 }, (_, i) => rest.readFloatLE(offset + i * 4));
      const colorCode = rest.readInt32LE(256);
      const depthCode = rest.readInt32LE(260);
      const header: SensHeader = {
        sensorName,
        intrinsicColor: matrix(0),
        extrinsicColor: matrix(64),
        intrinsicDepth: matrix(128),
        extrinsicDepth: matrix(192),
        colorCompression: COLOR_COMPRESSION[colorCode] ?? `code ${colorCode}`,
        depthCompression: DEPTH_COMPRESSION[depthCode] ?? `code ${depthCode}`,
        colorWidth: rest.readUInt32LE(264),
        colorHeight: rest.readUInt32LE(268),
        depthWidth: rest.readUInt32LE(272),
        depthHeight: rest.readUInt32LE(276),
        depthShift: rest.readFloatLE(280),
        frameCount: Number(rest.readBigUInt64LE(284)),
      };
      return new SensReader(path, handle, header, at, size);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Frames 0 … count-1 (at most the file's frame count), in order. `wanted(index)` false skips
   * the frame's colour and depth bytes (its pose is still read). A frame the file cuts short is
   * a UserError naming it; frames before it have been yielded.
   */
  async *frames(count: number, wanted: (index: number) => boolean = () => true): AsyncGenerator<SensFrame> {
    const last = Math.min(count, this.header.frameCount);
    let position = this.framesStart;
    const fixed = Buffer.alloc(FRAME_FIXED_BYTES);
    for (let index = 0; index < last; index++) {
      const truncated = (what: string): UserError =>
        sensError(this.path, `frame ${index} is cut short: the file ends inside its ${what} (${this.size} bytes, ${this.header.frameCount} frames announced)`);
      if ((await this.handle.read(fixed, 0, FRAME_FIXED_BYTES, position)).bytesRead < FRAME_FIXED_BYTES) throw truncated("pose and sizes");
      const cameraToWorld = Float32Array.from({ length: 16 }, (_, i) => fixed.readFloatLE(i * 4));
      const colorBytes = Number(fixed.readBigUInt64LE(80));
      const depthBytes = Number(fixed.readBigUInt64LE(88));
      position += FRAME_FIXED_BYTES;
      if (position + colorBytes + depthBytes > this.size) throw truncated(position + colorBytes > this.size ? "colour bytes" : "depth bytes");
      const frame: SensFrame = { index, cameraToWorld, timestampColor: fixed.readBigUInt64LE(64), timestampDepth: fixed.readBigUInt64LE(72) };
      if (wanted(index)) {
        const data = Buffer.alloc(colorBytes + depthBytes);
        if ((await this.handle.read(data, 0, data.length, position)).bytesRead < data.length) throw truncated("colour and depth bytes");
        frame.color = data.subarray(0, colorBytes);
        frame.depth = data.subarray(colorBytes);
      }
      position += colorBytes + depthBytes;
      yield frame;
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
