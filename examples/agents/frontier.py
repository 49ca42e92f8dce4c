"""A frontier-following active agent of your own: it reads each observation's depth frame,
keeps a 2-D occupancy grid of the floor (free, occupied, unknown), and walks to the nearest
frontier (a free cell beside unknown ones) by the shortest path on the grid, turning toward its
next waypoint and moving forward. It starts with a full turn on the spot; when no frontier is
left (or its own --steps are spent, or eqakit's budget) it shows the run's model frames it saw
and answers; without a model it stops.

    eqa explore --episodes episodes.json --env builtin --agent exec:"python3 examples/agents/frontier.py" --model openai/gpt-4o …

Standard library only: the 16-bit depth PNGs are decoded by ``read_png16`` below, which takes
most of its time (about 0.2 s a step at 320×240, 10 ms at 64×48, on 2 cores); an agent of your
own would read them with Pillow or OpenCV.
"""

import argparse
import math
import struct
import sys
import zlib
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "clients" / "python"))

from eqakit_agent import STOP, Agent, answer, serve  # noqa: E402

CELL = 0.25  # metres: one forward move
METRES_PER_UNIT = 10 / 65535  # the depth PNGs' scale (docs/agent-protocol.md)
TURN = math.radians(30)
FREE, OCCUPIED = 1, 2


def read_png16(path):
    """A 16-bit greyscale PNG as (width, height, values row by row)."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, width, height = 8, [], 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 16 or colour != 0 or interlace != 0:
                raise ValueError(f"{path}: expected a 16-bit greyscale PNG without interlacing")
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    raw = zlib.decompress(b"".join(idat))
    stride, bpp = width * 2, 2
    rows, prev = [], bytearray(stride)
    for r in range(height):
        kind = raw[r * (stride + 1)]
        line = bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(struct.unpack(f">{width}H", bytes(line)))
        prev = line
    return width, height, rows


def wrap(angle):
    return (angle + math.pi) % (2 * math.pi) - math.pi


class Frontier(Agent):
    name = "frontier-python"
    version = "1.0"
    supports = ["active"]

    def __init__(self, steps, stride):
        self.steps = steps
        self.stride = stride
        self.model = None

    def initialize(self, task, settings):
        self.model = settings.get("model")

    def reset(self, episode, observation):
        self.grid = {}
        self.blocked = set()
        self.seen = []
        self.target = None
        self.fails = 0
        return self.step(observation)

    def cell(self, x, z):
        return (math.floor(x / CELL), math.floor(z / CELL))

    def integrate(self, observation):
        """Adds the depth frame to the grid: floor points and rays free, points above the floor occupied."""
        _, _, depth = read_png16(observation["frame"]["depthPath"])
        cam, pose = observation["camera"], observation["pose"]
        floor = observation["state"]["position"][1]
        origin = self.cell(pose[3], pose[11])
        for v in range(0, cam["height"], self.stride):
            row = depth[v]
            for u in range(0, cam["width"], self.stride):
                d = row[u] * METRES_PER_UNIT
                if d <= 0 or d > 6:
                    continue
                xc, yc, zc = (u + 0.5 - cam["cx"]) / cam["fx"] * d, -(v + 0.5 - cam["cy"]) / cam["fy"] * d, -d
                x = pose[0] * xc + pose[1] * yc + pose[2] * zc + pose[3]
                y = pose[4] * xc + pose[5] * yc + pose[6] * zc + pose[7]
                z = pose[8] * xc + pose[9] * yc + pose[10] * zc + pose[11]
                hit = self.cell(x, z)
                for c in self.line(origin, hit)[:-1]:
                    self.grid.setdefault(c, FREE)
                height = y - floor
                if 0.15 < height < 1.8:
                    self.grid[hit] = OCCUPIED
                elif height <= 0.15:
                    self.grid.setdefault(hit, FREE)

    @staticmethod
    def line(a, b):
        (x0, z0), (x1, z1) = a, b
        n = max(abs(x1 - x0), abs(z1 - z0))
        return [(round(x0 + (x1 - x0) * t / n), round(z0 + (z1 - z0) * t / n)) for t in range(n + 1)] if n else [a]

    def passable(self, c, margin):
        if self.grid.get(c) != FREE:
            return False
        return not margin or all(self.grid.get((c[0] + dx, c[1] + dz)) != OCCUPIED for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)))

    def path_to_frontier(self, start):
        """The shortest path to the nearest frontier cell, keeping a cell away from obstacles where it can (None when there is none)."""
        return self.search(start, True) or self.search(start, False)

    def search(self, start, margin):
        came = {start: None}
        queue = deque([start])
        while queue:
            c = queue.popleft()
            if c != start and c not in self.blocked and any((c[0] + dx, c[1] + dz) not in self.grid for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1))):
                path = [c]
                while came[path[-1]] != start:
                    path.append(came[path[-1]])
                return path[::-1]
            for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                n = (c[0] + dx, c[1] + dz)
                if n not in came and self.passable(n, margin):
                    came[n] = c
                    queue.append(n)
        return None

    def step(self, observation):
        frame = observation["frame"]["index"]
        if not self.seen or self.seen[-1] != frame:
            self.seen.append(frame)
            self.integrate(observation)
        last = observation["lastAction"]
        state = observation["state"]
        x, _, z = state["position"]
        here = self.cell(x, z)
        if last is not None and last["action"] == "move_forward" and not last["success"]:
            ahead = self.cell(x - math.sin(state["yaw"]) * CELL, z - math.cos(state["yaw"]) * CELL)
            self.grid[ahead] = OCCUPIED
            self.fails += 1
            if self.fails > 3 and self.target is not None:
                self.blocked.add(self.target)
                self.fails = 0
        if observation["budget"]["stepsLeft"] == 0 or observation["step"] >= self.steps:
            return self.finish("budget")
        if observation["step"] < round(2 * math.pi / TURN):
            return "turn_left"
        path = self.path_to_frontier(here)
        if path is None:
            return self.finish("no frontier left")
        if path[-1] != self.target:
            self.target, self.fails = path[-1], 0
        wx, wz = path[min(1, len(path) - 1)]
        want = math.atan2(-((wx + 0.5) * CELL - x), -((wz + 0.5) * CELL - z))
        error = wrap(want - state["yaw"])
        if abs(error) > TURN / 2:
            return "turn_left" if error > 0 else "turn_right"
        return "move_forward"

    def finish(self, why):
        free = sum(1 for v in self.grid.values() if v == FREE)
        self.log(f"{why}: {len(self.seen)} frames, {free} free cells of {CELL} m")
        if self.model is None:
            return STOP
        k = min(8, len(self.seen))
        frames = [self.seen[round(i * (len(self.seen) - 1) / max(k - 1, 1))] for i in range(k)]
        parts = [{"type": "frame", "index": i} for i in frames]
        parts.append({"type": "text", "text": f"These are views from an exploration of a home. Answer in a few words: {self.episode['question']['text']}"})
        reply = self.complete([{"role": "user", "content": parts}], temperature=0, maxTokens=64)
        return answer((reply["text"] or "").strip() or None, 0.5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10**9, help="its own most actions (default: eqakit's budget)")
    parser.add_argument("--stride", type=int, default=2, help="read every n-th depth pixel in each direction (default 2)")
    flags = parser.parse_args()
    serve(Frontier(flags.steps, flags.stride))
