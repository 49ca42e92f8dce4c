"""Back-projects depth frames and voxelises them into a 5 cm map with NumPy: the reference side of
bench/memory.ts. Reads frames written by it (raw float32 depth, 4x4 OpenGL camera-to-world poses),
times only the computation, prints JSON."""
import json
import sys
import time

import numpy as np


def main(folder: str) -> None:
    meta = json.load(open(f"{folder}/meta.json"))
    w, h, fx, fy, cx, cy = meta["width"], meta["height"], meta["fx"], meta["fy"], meta["cx"], meta["cy"]
    depths = [np.fromfile(f"{folder}/{i:03d}.f32", dtype=np.float32).reshape(h, w) for i in range(meta["frames"])]
    poses = [np.array(p, dtype=np.float64).reshape(4, 4) for p in meta["poses"]]
    started = time.perf_counter()
    u, v = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    xf = (u - cx) / fx
    yf = -(v - cy) / fy
    clouds = []
    for depth, pose in zip(depths, poses):
        keep = (depth >= 0.1) & (depth <= 4.0)
        d = depth[keep]
        cam = np.stack([xf[keep] * d, yf[keep] * d, -d], axis=1)
        world = cam @ pose[:3, :3].T.astype(np.float32) + pose[:3, 3].astype(np.float32)
        clouds.append(world)
    points = np.concatenate(clouds)
    # one int64 key per voxel (each index within +-2^16, as eqakit packs them), then unique + bincount:
    # the usual fast NumPy form (np.unique(axis=0) and np.add.at are several times slower)
    ijk = np.floor(points.astype(np.float64) / 0.05).astype(np.int64) + 65536
    keys = (ijk[:, 0] * 131072 + ijk[:, 1]) * 131072 + ijk[:, 2]
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    centroids = np.stack([np.bincount(inverse, weights=points[:, a], minlength=counts.shape[0]) for a in range(3)], axis=1) / counts[:, None]
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "points": int(points.shape[0]), "voxels": int(centroids.shape[0]), "numpy": np.__version__}))


if __name__ == "__main__":
    main(sys.argv[1])
