"""OpenEQA's ScanNet frame extraction, ported for measurement beside `eqa data prepare openeqa`.

What it reproduces: facebookresearch/open-eqa @ cfa3fce, data/scannet/extract-frames.py with its
SensorData.py (MIT): the whole .sens is read into memory, every byte of every frame through
struct.unpack("c" * size) and b"".join; then for the first --max-num-frames frames (600) the
intrinsics and extrinsics, the poses (np.savetxt(fmt="%f") row by row), the depth images
(zlib.decompress, np.frombuffer(uint16), .tolist(), written as a 16-bit PNG row by row as pypng's
Writer(bitdepth=16) does: array("H") byte-swapped to big-endian, filter 0, zlib level 6) and the
colour images (imageio.imread of the JPEG, imageio.imwrite as PNG through Pillow).

Standard library and numpy; Pillow when the Python running it has it (imageio.imread and
imwrite go through Pillow), else two shortcuts. The depth PNG is written with zlib as pypng does.
Without Pillow, the colour PNG is written with zlib at Pillow's default compress_level 6 but
without the filter Pillow chooses per row, and its pixels are looked up by the JPEG's md5 in
--pixels (raw RGB files the benchmark decoded beforehand), since the standard library has no JPEG
decoder: the time of decoding (about 10-20 ms a 1296x968 frame in libjpeg-turbo) is left out.
Both shortcuts make this port faster than the reference, never slower. It prints which it used.

usage: openeqa_scannet_reference.py --sens FILE --out DIR --pixels DIR [--rgb-only] [--max-num-frames 600]
"""

import argparse
import hashlib
import os
import struct
import sys
import zlib
from array import array

import numpy as np


class RGBDFrame:
    def load(self, f):
        self.camera_to_world = np.asarray(struct.unpack("f" * 16, f.read(16 * 4)), dtype=np.float32).reshape(4, 4)
        self.timestamp_color = struct.unpack("Q", f.read(8))[0]
        self.timestamp_depth = struct.unpack("Q", f.read(8))[0]
        self.color_size_bytes = struct.unpack("Q", f.read(8))[0]
        self.depth_size_bytes = struct.unpack("Q", f.read(8))[0]
        # as SensorData.py reads them: one bytes object per byte, then joined
        self.color_data = b"".join(struct.unpack("c" * self.color_size_bytes, f.read(self.color_size_bytes)))
        self.depth_data = b"".join(struct.unpack("c" * self.depth_size_bytes, f.read(self.depth_size_bytes)))


class SensorData:
    def __init__(self, filename):
        with open(filename, "rb") as f:
            version = struct.unpack("I", f.read(4))[0]
            assert version == 4
            strlen = struct.unpack("Q", f.read(8))[0]
            self.sensor_name = b"".join(struct.unpack("c" * strlen, f.read(strlen)))
            m = lambda: np.asarray(struct.unpack("f" * 16, f.read(64)), dtype=np.float32).reshape(4, 4)
            self.intrinsic_color, self.extrinsic_color, self.intrinsic_depth, self.extrinsic_depth = m(), m(), m(), m()
            self.color_compression_type = struct.unpack("i", f.read(4))[0]
            self.depth_compression_type = struct.unpack("i", f.read(4))[0]
            self.color_width, self.color_height, self.depth_width, self.depth_height = struct.unpack("IIII", f.read(16))
            self.depth_shift = struct.unpack("f", f.read(4))[0]
            num_frames = struct.unpack("Q", f.read(8))[0]
            self.frames = []
            for _ in range(num_frames):
                frame = RGBDFrame()
                frame.load(f)
                self.frames.append(frame)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path, rows_bytes, width, height, bitdepth, colour_type, level=6):
    compressor = zlib.compressobj(level)
    idat = []
    for row in rows_bytes:
        idat.append(compressor.compress(b"\x00" + row))
    idat.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, bitdepth, colour_type, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", b"".join(idat)) + png_chunk(b"IEND", b""))


def save_mat_to_file(matrix, filename):
    with open(filename, "w") as f:
        for line in matrix:
            np.savetxt(f, line[np.newaxis], fmt="%f")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sens", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pixels", required=True)
    parser.add_argument("--rgb-only", action="store_true")
    parser.add_argument("--max-num-frames", type=int, default=600)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sd = SensorData(args.sens)
    count = min(args.max_num_frames, len(sd.frames))
    if not args.rgb_only:
        for name in ["intrinsic_color", "extrinsic_color", "intrinsic_depth", "extrinsic_depth"]:
            save_mat_to_file(getattr(sd, name), os.path.join(args.out, name + ".txt"))
        for i in range(count):
            save_mat_to_file(sd.frames[i].camera_to_world, os.path.join(args.out, f"{i:06d}.txt"))
        for i in range(count):
            depth = np.frombuffer(zlib.decompress(sd.frames[i].depth_data), dtype=np.uint16).reshape(sd.depth_height, sd.depth_width)
            rows = []
            for row in depth.reshape(-1, depth.shape[1]).tolist():
                a = array("H", row)
                if sys.byteorder == "little":
                    a.byteswap()
                rows.append(a.tobytes())
            write_png(os.path.join(args.out, f"{i:06d}-depth.png"), rows, sd.depth_width, sd.depth_height, 16, 0)
    try:
        import io

        from PIL import Image
    except ImportError:
        Image = None
    print("colour through", "Pillow" if Image else "zlib, pixels looked up (no Pillow)", file=sys.stderr)
    for i in range(count):
        if Image is not None:
            Image.fromarray(np.asarray(Image.open(io.BytesIO(sd.frames[i].color_data)))).save(os.path.join(args.out, f"{i:06d}-rgb.png"))
            continue
        key = hashlib.md5(sd.frames[i].color_data).hexdigest()
        pixels = np.fromfile(os.path.join(args.pixels, key + ".rgb"), dtype=np.uint8).reshape(sd.color_height, sd.color_width, 3)
        write_png(os.path.join(args.out, f"{i:06d}-rgb.png"), [r.tobytes() for r in pixels], sd.color_width, sd.color_height, 8, 2)


if __name__ == "__main__":
    main()
