"""Unit tests of the Habitat bridge's protocol layer, stand-in grid world and scene remapping.
Run from this folder: python3 -m unittest -v"""
import base64
import io
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import protocol  # noqa: E402
from protocol import Observation, agent_pose, handle_line, serve  # noqa: E402
from scenes import parse_remap, remap_scene_path, start_from_state, yaw_from_quaternion  # noqa: E402
from standin import GridWorld  # noqa: E402


def request(method, params=None, rid=1):
    message = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


class Recorder(GridWorld):
    def __init__(self):
        super().__init__(width=4, height=3)
        self.calls = 0

    def bounds(self):
        self.calls += 1
        return super().bounds()


class EncodingTests(unittest.TestCase):
    def test_raw_encodings_are_little_endian_row_major(self):
        obs = Observation(2, 1, protocol.camera_intrinsics(2, 1, 90), [1.0] * 16, {"position": [0, 0, 0], "yaw": 0, "pitch": 0},
                          bytes([1, 2, 3, 4, 5, 6]), [1.5, 0.0], [7, 0], {7: "chair"})
        wire = obs.to_wire()
        self.assertEqual(base64.b64decode(wire["rgb"]), bytes([1, 2, 3, 4, 5, 6]))
        self.assertEqual(base64.b64decode(wire["depth"]), struct.pack("<ff", 1.5, 0.0))
        self.assertEqual(base64.b64decode(wire["masks"]["ids"]), b"\x07\x00\x00\x00\x00\x00\x00\x00")
        self.assertEqual(wire["masks"]["labels"], {"7": "chair"})
        self.assertEqual(protocol.decode_float32(wire["depth"], 2), [1.5, 0.0])
        self.assertEqual(protocol.decode_uint32(wire["masks"]["ids"], 2), [7, 0])

    def test_packed_bytes_are_accepted_and_sizes_checked(self):
        packed = struct.pack("<3f", 1.0, 2.0, 3.0)
        self.assertEqual(protocol.encode_float32(packed, 3), base64.b64encode(packed).decode())
        with self.assertRaises(ValueError):
            protocol.encode_float32(packed, 4)
        with self.assertRaises(ValueError):
            protocol.encode_rgb(b"\x00" * 5, 1, 2)

    def test_no_masks_key_without_masks(self):
        obs = Observation(1, 1, {}, [0.0] * 16, {}, b"\x00\x00\x00", [0.0])
        self.assertNotIn("masks", obs.to_wire())


class PoseTests(unittest.TestCase):
    def test_camera_to_world_row_major(self):
        pose = agent_pose({"position": [1.0, 0.5, -2.0], "yaw": math.pi / 2, "pitch": 0.0}, 1.5)
        self.assertEqual(len(pose), 16)
        self.assertEqual(pose[3], 1.0)
        self.assertEqual(pose[7], 2.0)
        self.assertEqual(pose[11], -2.0)
        self.assertEqual(pose[12:], [0.0, 0.0, 0.0, 1.0])
        # yaw +90 degrees (a left turn): the camera looks along -x = -(third column)
        forward = [-pose[2], -pose[6], -pose[10]]
        for got, want in zip(forward, [-1.0, 0.0, 0.0]):
            self.assertAlmostEqual(got, want, places=12)

    def test_pitch_looks_up_and_no_negative_zero(self):
        pose = agent_pose({"position": [0.0, 0.0, 0.0], "yaw": 0.0, "pitch": math.radians(30)}, 1.0)
        self.assertAlmostEqual(-pose[6], 0.5, places=12)
        for v in agent_pose({"position": [0.0, 0.0, 0.0], "yaw": 0.0, "pitch": 0.0}, 1.0):
            self.assertFalse(v == 0 and math.copysign(1, v) < 0)


class DispatchTests(unittest.TestCase):
    def setUp(self):
        self.env = GridWorld(width=4, height=3)

    def error(self, line):
        response, _ = handle_line(self.env, line)
        self.assertIn("error", response, response)
        return response

    def test_parse_error(self):
        r = self.error("{not json")
        self.assertEqual((r["id"], r["error"]["code"]), (None, -32700))

    def test_invalid_requests(self):
        for line in ('{"id": 1, "method": "info"}', '[1, 2]', '{"jsonrpc": "2.0", "id": 1}',
                     '{"jsonrpc": "2.0", "id": 1, "method": "info", "params": [1]}',
                     '{"jsonrpc": "2.0", "id": true, "method": "info"}'):
            r = self.error(line)
            self.assertEqual((r["id"], r["error"]["code"]), (None, -32600), line)

    def test_unknown_method(self):
        r = self.error(request("fly", rid=7))
        self.assertEqual((r["id"], r["error"]["code"]), (7, -32601))

    def test_invalid_params(self):
        for method, params in (("navigable", {"point": [1, 2]}), ("navigable", {}),
                               ("geodesic_distance", {"from": [0, 0, 0], "to": [0, "a", 0]}),
                               ("act", {"action": {"type": "jump"}}), ("act", {}),
                               ("act", {"action": {"type": "teleport", "state": {"position": [0, 0, 0], "yaw": 0}}}),
                               ("reset", {"start": {"position": [0, 0, 0], "yaw": True, "pitch": 0}})):
            r = self.error(request(method, params))
            self.assertEqual(r["error"]["code"], -32602, (method, params))
        # Python's json accepts NaN; the protocol does not
        r = self.error('{"jsonrpc": "2.0", "id": 1, "method": "navigable", "params": {"point": [NaN, 0, 0]}}')
        self.assertEqual(r["error"]["code"], -32602)

    def test_environment_failure(self):
        r = self.error(request("reset", {"start": {"position": [50, 0, 50], "yaw": 0, "pitch": 0}}, rid="s"))
        self.assertEqual((r["id"], r["error"]["code"]), ("s", -32000))
        self.assertIn("not navigable", r["error"]["message"])

    def test_results(self):
        response, stop = handle_line(self.env, request("geodesic_distance", {"from": [0.25, 0, 0.75], "to": [50, 0, 50]}))
        self.assertEqual(response, {"jsonrpc": "2.0", "id": 1, "result": None})
        self.assertFalse(stop)
        response, _ = handle_line(self.env, request("navigable", {"point": [0.25, 7, 0.75]}))
        self.assertIs(response["result"], True)
        response, _ = handle_line(self.env, request("act", {"action": {"type": "look_up"}}))
        self.assertTrue(response["result"]["success"])
        self.assertAlmostEqual(response["result"]["state"]["pitch"], math.radians(15))

    def test_notification_gets_no_reply(self):
        response, _ = handle_line(self.env, '{"jsonrpc": "2.0", "method": "act", "params": {"action": {"type": "turn_left"}}}')
        self.assertIsNone(response)
        self.assertAlmostEqual(self.env.state["yaw"], math.radians(30))


class ObservePoseTests(unittest.TestCase):
    def test_the_stand_in_renders_from_a_pose_and_keeps_its_state(self):
        world = GridWorld(width=8, height=6)
        state = world.reset()
        pose = agent_pose({"position": [0.25, 0.0, 0.75], "yaw": 0.4, "pitch": -0.2}, 1.2)
        response, _ = handle_line(world, request("observe_pose", {"pose": pose}))
        wire = response["result"]
        self.assertEqual(wire["pose"], pose)
        self.assertEqual(wire["state"], state)
        self.assertEqual(wire, world._render(pose).to_wire())
        self.assertNotEqual(wire["depth"], world.observe().to_wire()["depth"])

    def test_a_pose_that_is_not_rigid_is_invalid_params(self):
        world = GridWorld(width=2, height=2)
        for bad in ([1.0] * 15, [2.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], [-1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
                    [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1]):
            response, _ = handle_line(world, request("observe_pose", {"pose": bad}))
            self.assertEqual(response["error"]["code"], protocol.INVALID_PARAMS, bad)

    def test_an_environment_without_observe_pose_says_unknown_method(self):
        class NoPose:
            pass

        env = NoPose()
        identity = [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
        response, _ = handle_line(env, request("observe_pose", {"pose": identity}))
        self.assertEqual(response["error"]["code"], protocol.METHOD_NOT_FOUND)


class ServeTests(unittest.TestCase):
    def test_serves_in_order_until_close(self):
        env = Recorder()
        lines = "\n".join([request("bounds", rid=1), "", request("info", rid=2), request("close", rid=3), request("bounds", rid=4)]) + "\n"
        out = io.StringIO()
        serve(env, io.StringIO(lines), out)
        replies = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual([r["id"] for r in replies], [1, 2, 3])
        self.assertIsNone(replies[2]["result"])
        self.assertEqual(env.calls, 1)
        self.assertTrue(env.closed)

    def test_end_of_input_closes(self):
        env = GridWorld(width=4, height=3)
        serve(env, io.StringIO(request("info") + "\n"), io.StringIO())
        self.assertTrue(env.closed)

    def test_a_result_json_cannot_carry_is_an_environment_error(self):
        class Broken(GridWorld):
            def bounds(self):
                return {"min": [float("nan"), 0, 0], "max": [1, 1, 1]}

        out = io.StringIO()
        serve(Broken(width=4, height=3), io.StringIO(request("bounds", rid=9) + "\n"), out)
        reply = json.loads(out.getvalue())
        self.assertEqual((reply["id"], reply["error"]["code"]), (9, -32000))


class StandinTests(unittest.TestCase):
    def setUp(self):
        self.env = GridWorld(width=8, height=6)
        self.env.reset()

    def test_blocked_move_changes_nothing(self):
        first = self.env.act({"type": "move_forward"})
        self.assertTrue(first["success"])
        self.assertAlmostEqual(first["state"]["position"][2], 0.5)
        second = self.env.act({"type": "move_forward"})  # a pillar at z in [0, 0.5)
        self.assertFalse(second["success"])
        self.assertEqual(second["state"], first["state"])
        self.assertIn("blocked", second["reason"])

    def test_geodesic_goes_around_a_pillar_and_is_symmetric(self):
        a, b = [0.25, 0.0, 0.75], [0.25, 0.0, -0.25]
        d = self.env.geodesic_distance(a, b)
        self.assertGreater(d, 1.0 + 0.05)
        self.assertLess(d, 2.0)
        self.assertAlmostEqual(d, self.env.geodesic_distance(b, a), places=9)
        self.assertEqual(self.env.geodesic_distance(a, [0.25, 0, 0.25]), math.inf)  # inside the pillar

    def test_observation_is_deterministic_and_sees_the_pillar(self):
        a = self.env.observe().to_wire()
        b = self.env.observe().to_wire()
        self.assertEqual(a, b)
        ids = protocol.decode_uint32(a["masks"]["ids"], 48)
        self.assertIn(4, ids)
        depth = protocol.decode_float32(a["depth"], 48)
        self.assertTrue(all(math.isfinite(v) and v >= 0 for v in depth))


class SceneTests(unittest.TestCase):
    OPENEQA = "/datasets01/hm3d/090121/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb"

    def test_scene_root_keeps_the_split(self):
        got = remap_scene_path(self.OPENEQA, scene_root="/data/hm3d", exists=lambda p: False)
        self.assertEqual(got, "/data/hm3d/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb")

    def test_scene_root_finds_a_flat_layout_or_another_split(self):
        flat = "/data/hm3d/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb"
        self.assertEqual(remap_scene_path(self.OPENEQA, scene_root="/data/hm3d", exists=lambda p: p == flat), flat)
        minival = "/data/hm3d/minival/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb"
        self.assertEqual(remap_scene_path(self.OPENEQA, scene_root="/data/hm3d", exists=lambda p: p == minival), minival)
        # the path without a leading slash, as some state files spell it
        self.assertEqual(remap_scene_path(self.OPENEQA[1:], scene_root="/d", exists=lambda p: False), "/d/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb")

    def test_a_bare_scene_folder_is_found_in_its_split(self):
        train = "/data/hm3d/train/00001-UVdNNRcVyV1/UVdNNRcVyV1.basis.glb"
        got = remap_scene_path("00001-UVdNNRcVyV1/UVdNNRcVyV1.basis.glb", scene_root="/data/hm3d", exists=lambda p: p == train)
        self.assertEqual(got, train)

    def test_rules_come_first(self):
        rule = parse_remap("/datasets01/hm3d/090121=/mnt/hm3d")
        got = remap_scene_path(self.OPENEQA, scene_root="/elsewhere", rules=[rule], exists=lambda p: False)
        self.assertEqual(got, "/mnt/hm3d/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb")
        with self.assertRaises(ValueError):
            parse_remap("no-equals-sign")

    def test_unmatched_paths_are_unchanged(self):
        self.assertEqual(remap_scene_path("/my/scene.glb", scene_root="/data"), "/my/scene.glb")
        self.assertEqual(remap_scene_path(self.OPENEQA), self.OPENEQA)

    def test_start_from_a_state_record(self):
        half = math.radians(60) / 2
        scene, state = start_from_state({"scene_id": self.OPENEQA, "position": [1.0, 0.1, -2.0], "rotation": [0.0, math.sin(half), 0.0, math.cos(half)]})
        self.assertEqual(scene, self.OPENEQA)
        self.assertEqual(state["position"], [1.0, 0.1, -2.0])
        self.assertAlmostEqual(state["yaw"], math.radians(60), places=12)

        class Quat:
            w, x, y, z = math.cos(-0.4), 0.0, math.sin(-0.4), 0.0

        self.assertAlmostEqual(yaw_from_quaternion(Quat()), -0.8, places=12)

    def test_print_scene_from_a_json_state_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "00000.json")
            with open(path, "w") as f:
                json.dump({"scene_id": self.OPENEQA, "position": [0, 0, 0], "rotation": [0, 0, 0, 1]}, f)
            run = subprocess.run([sys.executable, os.path.join(HERE, "bridge.py"), "--state", path, "--scene-root", tmp, "--print-scene"],
                                 capture_output=True, text=True, timeout=30)
            self.assertEqual(run.returncode, 0, run.stderr)
            out = json.loads(run.stdout)
            self.assertEqual(out["scene"], os.path.join(tmp, "val", "00862-LT9Jq6dN3Ea", "LT9Jq6dN3Ea.basis.glb"))
            self.assertEqual(out["start"], {"position": [0.0, 0.0, 0.0], "yaw": 0.0, "pitch": 0.0})

    def test_a_missing_scene_is_a_clear_error(self):
        run = subprocess.run([sys.executable, os.path.join(HERE, "bridge.py"), "--scene", self.OPENEQA, "--scene-root", "/nonexistent"],
                             capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("/nonexistent/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb does not exist", run.stderr)
        self.assertEqual(run.stdout, "")


class HabitatModuleTests(unittest.TestCase):
    def test_imports_without_habitat_sim_and_says_how_to_install(self):
        import habitat_env
        try:
            import habitat_sim  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(RuntimeError, "habitat-sim is not installed.*README"):
                habitat_env.HabitatEnvironment("/nonexistent.glb")
        else:
            self.skipTest("habitat-sim is installed here")

    def test_quaternions_compose_yaw_then_pitch(self):
        from habitat_env import _quat_about_x, _quat_about_y, _quat_mul
        from scenes import yaw_from_quaternion
        q = _quat_mul(_quat_about_y(0.7), _quat_about_x(0.0))
        self.assertAlmostEqual(yaw_from_quaternion([q[1], q[2], q[3], q[0]]), 0.7, places=12)


if __name__ == "__main__":
    unittest.main()
