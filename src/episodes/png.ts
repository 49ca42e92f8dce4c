/**
 * A small PNG encoder for greyscale images of 16 bits (OpenEQA's depth frames), written here
 * because the reference writes them with pypng (`png.Writer(bitdepth=16)`) and eqakit needs the
 * same values, big-endian, without a round trip through an 8-bit pipeline. Rows carry filter 0
 * (none), as pypng writes them; the compression is zlib's, at the level given.
 */
import { promisify } from "node:util";
import { crc32, deflate } from "node:zlib";

const deflateAsync = promisify(deflate);
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/**
 * A 16-bit greyscale PNG of `values` (row-major, `width × height`, host order); zlib `level`
 * 0-9 (default 1: fast, and depth compresses well at any level).
 */
export async function encodeGrey16Png(values: Uint16Array, width: number, height: number, level = 1): Promise<Buffer> {
  if (values.length !== width * height) throw new RangeError(`${values.length} values for a ${width}×${height} image`);
  const stride = width * 2 + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    let offset = y * stride + 1;
    const start = y * width;
    for (let x = 0; x < width; x++, offset += 2) {
      const v = values[start + x]!;
      raw[offset] = v >> 8;
      raw[offset + 1] = v & 0xff;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 16; // bit depth
  header[9] = 0; // greyscale
  return Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", await deflateAsync(raw, { level })), chunk("IEND", Buffer.alloc(0))]);
}
