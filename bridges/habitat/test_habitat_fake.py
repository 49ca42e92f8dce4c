"""HabitatEnvironment's own logic, run against a fake of the small part of habitat-sim's API it
uses (Simulator, PathFinder, ShortestPath, AgentState/SixDOFPose, sensor specs), backed by the
stand-in grid world's geometry. This checks the bridge's code paths (moves, turns, looks,
teleports, the camera quaternion, navigability, geodesics, observations) but not habitat-sim
itself. Skipped when numpy is missing."""
import math
import sys
import types
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

from habitat_env import _quat_about_x, _quat_about_y, _quat_mul
from protocol import agent_pose
from standin import GridWorld

WORLD = GridWorld(width=4, height=3)


def make_fakes():
    quaternion = types.ModuleType("quaternion")

    class Quaternion:
        def __init__(self, w, x, y, z):
            self.w, self.x, self.y, self.z = w, x, y, z

    quaternion.quaternion = Quaternion

    hs = types.ModuleType("habitat_sim")
    hs.SensorType = types.SimpleNamespace(COLOR="color", DEPTH="depth", SEMANTIC="semantic")
    hs.SensorSubType = types.SimpleNamespace(PINHOLE="pinhole")

    class Plain:
        def __init__(self, *args, **kwargs):
            self.args = args
            for k, v in kwargs.items():
                setattr(self, k, v)

    hs.SimulatorConfiguration = Plain
    hs.CameraSensorSpec = Plain

    class AgentState:
        def __init__(self):
            self.position = None
            self.rotation = None
            self.sensor_states = {}

    hs.agent = types.SimpleNamespace(AgentConfiguration=Plain, AgentState=AgentState, SixDOFPose=Plain)

    class Configuration:
        def __init__(self, sim_cfg, agents):
            self.sim_cfg, self.agents = sim_cfg, agents

    hs.Configuration = Configuration

    class ShortestPath:
        requested_start = None
        requested_end = None
        geodesic_distance = math.inf

    hs.ShortestPath = ShortestPath

    class PathFinder:
        is_loaded = True

        def snap_point(self, p):
            if WORLD.navigable(p):
                return np.array([p[0], 0.0, p[2]], dtype=np.float32)
            return np.array([np.nan] * 3, dtype=np.float32)

        def is_navigable(self, p):
            return WORLD.navigable(p)

        def try_step(self, a, b):
            return np.array(b if WORLD._clear(a, b) and WORLD.navigable(b) else a, dtype=np.float32)

        def get_bounds(self):
            b = WORLD.bounds()
            return np.array(b["min"], dtype=np.float32), np.array(b["max"], dtype=np.float32)

        def find_path(self, path):
            path.geodesic_distance = WORLD.geodesic_distance(path.requested_start, path.requested_end)
            return math.isfinite(path.geodesic_distance)

        def get_random_navigable_point(self):
            return np.array([0.25, 0.0, 0.75], dtype=np.float32)

    class Agent:
        state = None
        calls = []

        def set_state(self, state, reset_sensors=True, infer_sensor_states=True):
            self.state = state
            self.calls.append((reset_sensors, infer_sensor_states))

    class Simulator:
        def __init__(self, cfg):
            self.cfg = cfg
            self.pathfinder = PathFinder()
            self.agent = Agent()
            self.specs = {s.uuid: s for s in cfg.agents[0].sensor_specifications}
            category = types.SimpleNamespace(name=lambda: "chair")
            self.semantic_scene = types.SimpleNamespace(objects=[types.SimpleNamespace(semantic_id=5, category=category), None])
            self.closed = False

        def get_agent(self, i):
            return self.agent

        def get_sensor_observations(self):
            h, w = self.specs["color"].resolution
            out = {
                "color": np.full((h, w, 4), 200, dtype=np.uint8),
                "depth": np.full((h, w), 1.25, dtype=np.float32),
            }
            out["depth"][0, 0] = np.inf
            if "semantic" in self.specs:
                sem = np.zeros((h, w), dtype=np.uint32)
                sem[0, :] = 5
                sem[1, :] = 9  # no category: must go out as 0
                out["semantic"] = sem
            return out

        def close(self):
            self.closed = True

    hs.Simulator = Simulator
    return hs, quaternion


def rotation_matrix(q):
    w, x, y, z = q.w, q.x, q.y, q.z
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]


@unittest.skipIf(np is None, "numpy is not installed")
class FakeHabitatTests(unittest.TestCase):
    def setUp(self):
        self.saved = {k: sys.modules.get(k) for k in ("habitat_sim", "quaternion")}
        sys.modules["habitat_sim"], sys.modules["quaternion"] = make_fakes()
        from habitat_env import HabitatEnvironment
        self.env = HabitatEnvironment("/data/hm3d/val/x/x.basis.glb", width=4, height=3, masks=True)

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def test_config(self):
        cfg = self.env.sim.cfg
        self.assertEqual(cfg.sim_cfg.scene_id, "/data/hm3d/val/x/x.basis.glb")
        self.assertFalse(cfg.sim_cfg.enable_physics)
        self.assertEqual(sorted(self.env.sim.specs), ["color", "depth", "semantic"])
        self.assertEqual(self.env.sim.specs["depth"].resolution, [3, 4])
        self.assertEqual(self.env.info()["sceneId"], "/data/hm3d/val/x/x.basis.glb")

    def test_actions(self):
        env = self.env
        self.assertEqual(env.reset(), {"position": [0.25, 0.0, 0.75], "yaw": 0.0, "pitch": 0.0})
        moved = env.act({"type": "move_forward"})
        self.assertTrue(moved["success"])
        self.assertAlmostEqual(moved["state"]["position"][2], 0.5, places=6)
        blocked = env.act({"type": "move_forward"})
        self.assertFalse(blocked["success"])
        self.assertEqual(blocked["state"], moved["state"])
        self.assertAlmostEqual(env.act({"type": "turn_left"})["state"]["yaw"], math.radians(30))
        for _ in range(4):
            self.assertTrue(env.act({"type": "look_down"})["success"])
        self.assertFalse(env.act({"type": "look_down"})["success"])
        bad = env.act({"type": "teleport", "state": {"position": [9.0, 0.0, 9.0], "yaw": 0.0, "pitch": 0.0}})
        self.assertFalse(bad["success"])
        ok = env.act({"type": "teleport", "state": {"position": [-1.25, 0.3, -1.25], "yaw": 1.0, "pitch": 0.2}})
        self.assertEqual(ok["state"], {"position": [-1.25, 0.0, -1.25], "yaw": 1.0, "pitch": 0.2})

    def test_sensor_pose_matches_the_wire_pose(self):
        env = self.env
        self.assertTrue(env.act({"type": "teleport", "state": {"position": [-1.25, 0.0, -1.25], "yaw": 2.0, "pitch": -0.5}})["success"])
        state = env.sim.agent.state
        self.assertEqual(env.sim.agent.calls[-1], (False, False))
        pose = agent_pose(env.state, env.camera_height)
        for uuid in ("color", "depth", "semantic"):
            sensor = state.sensor_states[uuid]
            r = rotation_matrix(sensor.rotation)
            for i in range(3):
                self.assertAlmostEqual(float(sensor.position[i]), pose[4 * i + 3], places=5)
                for j in range(3):
                    self.assertAlmostEqual(r[i][j], pose[4 * i + j], places=9)
        body = rotation_matrix(state.rotation)
        self.assertAlmostEqual(body[1][1], 1.0, places=12)  # the body only turns about +y

    def test_observe_pose_places_the_sensors_then_puts_them_back(self):
        env = self.env
        # a camera 1.3 m up, turned 0.7 rad about +y then tilted by 0.2 rad about x and 0.1 about z
        q = _quat_mul(_quat_mul(_quat_about_y(0.7), _quat_about_x(0.2)), (math.cos(0.05), 0.0, 0.0, math.sin(0.05)))
        r = rotation_matrix(types.SimpleNamespace(w=q[0], x=q[1], y=q[2], z=q[3]))
        pose = [r[0][0], r[0][1], r[0][2], 0.4, r[1][0], r[1][1], r[1][2], 1.3, r[2][0], r[2][1], r[2][2], -0.6, 0.0, 0.0, 0.0, 1.0]
        placed = []
        original = env.sim.get_sensor_observations

        def observe_here():
            placed.append(env.sim.agent.state.sensor_states["color"])
            return original()

        env.sim.get_sensor_observations = observe_here
        before = env._state()
        wire = env.observe_pose(pose).to_wire()
        sensor = placed[0]
        for i in range(3):
            self.assertAlmostEqual(float(sensor.position[i]), pose[4 * i + 3], places=5)
            for j in range(3):
                self.assertAlmostEqual(rotation_matrix(sensor.rotation)[i][j], pose[4 * i + j], places=9)
        self.assertEqual(wire["pose"], pose)
        self.assertEqual(wire["state"], before)
        back = env.sim.agent.state.sensor_states["color"]
        self.assertAlmostEqual(float(back.position[1]), before["position"][1] + env.camera_height, places=5)

    def test_queries_and_observation(self):
        env = self.env
        self.assertTrue(env.navigable([0.25, 5.0, 0.75]))
        self.assertFalse(env.navigable([0.25, 0.0, 0.25]))
        self.assertEqual(env.geodesic_distance([0.25, 0, 0.75], [9, 0, 9]), math.inf)
        self.assertAlmostEqual(env.geodesic_distance([0.25, 0, 0.75], [0.25, 0, 1.75]), 1.0, places=6)
        self.assertEqual(env.bounds(), {"min": [-2.0, 0.0, -2.0], "max": [2.0, 2.5, 2.0]})
        wire = env.observe().to_wire()
        import base64
        import struct
        self.assertEqual(base64.b64decode(wire["rgb"]), bytes([200]) * 36)
        depth = struct.unpack("<12f", base64.b64decode(wire["depth"]))
        self.assertEqual(depth[0], 0.0)
        self.assertEqual(depth[1], 1.25)
        ids = struct.unpack("<12I", base64.b64decode(wire["masks"]["ids"]))
        self.assertEqual(ids, (5,) * 4 + (0,) * 8)
        self.assertEqual(wire["masks"]["labels"], {"5": "chair"})
        env.close()
        self.assertIsNone(env.sim)


if __name__ == "__main__":
    unittest.main()
