"""A stand-in environment for testing the bridge's protocol layer without habitat-sim: a tiny
grid world (a 4 m x 4 m room of 0.5 m cells, some cells blocked by pillars and a wall stub),
walls 2.5 m high, rendered by ray marching at a small resolution. Standard library only.

It follows the same rules as the Habitat environment: move_forward 0.25 m (fails, changing
nothing, when the end point or the way there is not free), turns of 30 degrees, looks of 15
degrees within +-60 degrees, teleport to a navigable state; observe_pose renders from any
camera pose (inside the room or not) without moving the agent.
"""
import heapq
import math

from protocol import (
    LOOK_STEP_DEG,
    MAX_PITCH_DEG,
    MOVE_STEP_M,
    TURN_STEP_DEG,
    Observation,
    agent_pose,
    camera_intrinsics,
    wrap_angle,
)

# '#' blocked, '.' free; row 0 is the smallest z. The room spans x, z in [-2, 2].
DEFAULT_GRID = (
    "........",
    "........",
    "..#.....",
    "........",
    "....##..",
    "........",
    ".#......",
    "........",
)
CELL_M = 0.5
WALL_HEIGHT_M = 2.5
CAMERA_HEIGHT_M = 1.5
LABELS = {1: "floor", 2: "ceiling", 3: "wall", 4: "pillar"}
COLOURS = {1: (150, 120, 90), 2: (235, 235, 230), 3: (200, 190, 170), 4: (70, 110, 160)}
EPS = 1e-9


class GridWorld:
    def __init__(self, grid=DEFAULT_GRID, width=32, height=24, hfov_deg=90.0, masks=True, start=None):
        self.grid = [list(row) for row in grid]
        self.rows = len(self.grid)
        self.cols = len(self.grid[0])
        self.x0 = -self.cols * CELL_M / 2.0
        self.z0 = -self.rows * CELL_M / 2.0
        self.width = width
        self.height = height
        self.camera = camera_intrinsics(width, height, hfov_deg)
        self.masks = masks
        self.start = start or {"position": [0.25, 0.0, 0.75], "yaw": 0.0, "pitch": 0.0}
        self.state = dict(self.start)
        self.closed = False

    # -- geometry -------------------------------------------------------------------------------
    def _cell(self, x, z):
        return int(math.floor((x - self.x0) / CELL_M)), int(math.floor((z - self.z0) / CELL_M))

    def _blocked_cell(self, i, j):
        return not (0 <= i < self.cols and 0 <= j < self.rows) or self.grid[j][i] == "#"

    def navigable(self, point):
        x, _, z = point
        i, j = self._cell(x, z)
        return not self._blocked_cell(i, j)

    def _clear(self, a, b):
        """Whether the straight segment a -> b (x, z) stays on free cells (sampled every 1 cm)."""
        length = math.hypot(b[0] - a[0], b[2] - a[2])
        steps = max(1, int(math.ceil(length / 0.01)))
        for k in range(steps + 1):
            t = k / steps
            if not self.navigable((a[0] + (b[0] - a[0]) * t, 0.0, a[2] + (b[2] - a[2]) * t)):
                return False
        return True

    def _corners(self):
        """Points just off the convex corners of blocked cells: the visibility graph's nodes."""
        out = []
        d = 1e-3
        for j in range(self.rows):
            for i in range(self.cols):
                if self.grid[j][i] != "#":
                    continue
                for ci, cj, sx, sz in ((i, j, -1, -1), (i + 1, j, 1, -1), (i, j + 1, -1, 1), (i + 1, j + 1, 1, 1)):
                    p = (self.x0 + ci * CELL_M + sx * d, 0.0, self.z0 + cj * CELL_M + sz * d)
                    if self.navigable(p):
                        out.append(p)
        return out

    def geodesic_distance(self, a, b):
        """Shortest path on the free floor (a visibility graph over pillar corners); inf when a
        point is not navigable. Symmetric by construction."""
        if not (self.navigable(a) and self.navigable(b)):
            return math.inf
        a = (a[0], 0.0, a[2])
        b = (b[0], 0.0, b[2])
        if self._clear(a, b):
            return math.hypot(b[0] - a[0], b[2] - a[2])
        nodes = [a, b] + self._corners()
        dist = {0: 0.0}
        queue = [(0.0, 0)]
        done = set()
        while queue:
            d, k = heapq.heappop(queue)
            if k in done:
                continue
            done.add(k)
            if k == 1:
                return d
            for m, q in enumerate(nodes):
                if m in done:
                    continue
                p = nodes[k]
                if not self._clear(p, q):
                    continue
                nd = d + math.hypot(q[0] - p[0], q[2] - p[2])
                if nd < dist.get(m, math.inf):
                    dist[m] = nd
                    heapq.heappush(queue, (nd, m))
        return math.inf

    def bounds(self):
        return {
            "min": [self.x0, 0.0, self.z0],
            "max": [self.x0 + self.cols * CELL_M, WALL_HEIGHT_M, self.z0 + self.rows * CELL_M],
        }

    # -- protocol ---------------------------------------------------------------------------------
    def info(self):
        return {"name": "eqakit-habitat-bridge-standin", "sceneId": "standin-grid", "cameraHeight": CAMERA_HEIGHT_M}

    def reset(self, start=None):
        if start is not None:
            if not self.navigable(start["position"]):
                raise ValueError("the start %r is not navigable" % (start["position"],))
            self.start = {"position": [start["position"][0], 0.0, start["position"][2]], "yaw": start["yaw"], "pitch": start["pitch"]}
        self.state = {"position": list(self.start["position"]), "yaw": self.start["yaw"], "pitch": self.start["pitch"]}
        return self._state()

    def _state(self):
        return {"position": list(self.state["position"]), "yaw": self.state["yaw"], "pitch": self.state["pitch"]}

    def _fail(self, reason):
        return {"success": False, "reason": reason, "state": self._state()}

    def act(self, action):
        kind = action["type"]
        s = self.state
        if kind in ("turn_left", "turn_right"):
            step = math.radians(TURN_STEP_DEG) * (1 if kind == "turn_left" else -1)
            s["yaw"] = wrap_angle(s["yaw"] + step)
        elif kind in ("look_up", "look_down"):
            pitch = s["pitch"] + math.radians(LOOK_STEP_DEG) * (1 if kind == "look_up" else -1)
            if abs(pitch) > math.radians(MAX_PITCH_DEG) + 1e-9:
                return self._fail("the pitch would go beyond %g degrees" % MAX_PITCH_DEG)
            s["pitch"] = pitch
        elif kind == "move_forward":
            x, y, z = s["position"]
            target = [x - math.sin(s["yaw"]) * MOVE_STEP_M, y, z - math.cos(s["yaw"]) * MOVE_STEP_M]
            if not self.navigable(target) or not self._clear(s["position"], target):
                return self._fail("blocked: the way forward is not navigable")
            s["position"] = target
        elif kind == "teleport":
            t = action["state"]
            if not self.navigable(t["position"]):
                return self._fail("teleport: the target is not navigable")
            if abs(t["pitch"]) > math.radians(MAX_PITCH_DEG) + 1e-9:
                return self._fail("teleport: the pitch is beyond %g degrees" % MAX_PITCH_DEG)
            self.state = {"position": [t["position"][0], 0.0, t["position"][2]], "yaw": t["yaw"], "pitch": t["pitch"]}
        else:
            return self._fail("unknown action %s" % kind)
        return {"success": True, "state": self._state()}

    def observe(self):
        return self._render(agent_pose(self.state, CAMERA_HEIGHT_M))

    def observe_pose(self, pose):
        """What the camera sees from `pose` (camera-to-world, 16 floats); the agent stays put."""
        return self._render([float(v) + 0.0 for v in pose])

    def _render(self, pose):
        cam = self.camera
        w, h = self.width, self.height
        rgb = bytearray(w * h * 3)
        depth = [0.0] * (w * h)
        ids = [0] * (w * h)
        ox, oy, oz = pose[3], pose[7], pose[11]
        for v in range(h):
            for u in range(w):
                # camera ray (OpenGL axes), z = -1
                cx = (u + 0.5 - cam["cx"]) / cam["fx"]
                cy = -(v + 0.5 - cam["cy"]) / cam["fy"]
                dx = pose[0] * cx + pose[1] * cy - pose[2]
                dy = pose[4] * cx + pose[5] * cy - pose[6]
                dz = pose[8] * cx + pose[9] * cy - pose[10]
                t, hit = self._cast(ox, oy, oz, dx, dy, dz)
                k = v * w + u
                if hit:
                    depth[k] = t  # the ray's z in camera space is -1 per unit t: depth along -z = t
                    ids[k] = hit
                    shade = 1.0 / (1.0 + 0.15 * t)
                    r, g, b = COLOURS[hit]
                    rgb[3 * k] = int(r * shade)
                    rgb[3 * k + 1] = int(g * shade)
                    rgb[3 * k + 2] = int(b * shade)
        return Observation(w, h, dict(cam), pose, self._state(), rgb, depth,
                           ids if self.masks else None, dict(LABELS) if self.masks else None)

    def _cast(self, ox, oy, oz, dx, dy, dz):
        """Marches a ray in steps of 2 cm of t; returns (t, surface id) or (0, 0)."""
        t_plane = math.inf
        plane = 0
        if dy < -EPS:
            t_plane, plane = (0.0 - oy) / dy, 1
        elif dy > EPS:
            t_plane, plane = (WALL_HEIGHT_M - oy) / dy, 2
        t = 0.0
        step = 0.02
        limit = min(t_plane, 20.0)
        while t < limit:
            t += step
            if t >= limit:
                break
            i, j = self._cell(ox + dx * t, oz + dz * t)
            if self._blocked_cell(i, j):
                inside = 0 <= i < self.cols and 0 <= j < self.rows
                return t, 4 if inside else 3
        if plane and t_plane <= 20.0:
            return t_plane, plane
        return 0.0, 0

    def close(self):
        self.closed = True
