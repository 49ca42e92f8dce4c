"""The Habitat environment: one HM3D scene in habitat-sim behind eqakit's environment protocol.

habitat-sim and numpy are imported when a HabitatEnvironment is made, never at module load,
so the protocol layer and its tests run without them. Written against habitat-sim's documented
Python API (0.3.x): Simulator, SimulatorConfiguration, AgentConfiguration, CameraSensorSpec,
AgentState/SixDOFPose, PathFinder (is_navigable, try_step, get_bounds, find_path with
ShortestPath) and the semantic scene.

Conventions: Habitat's world is eqakit's (metres, y up, the camera looks along -z with OpenGL
axes), so positions and poses pass through unchanged. The agent's body turns about +y (yaw);
the camera sensors are tilted by the pitch. Actions are done by setting the agent state
directly, after checking the move on the navmesh, rather than through habitat-sim's action
space, so that a blocked move changes nothing (habitat-sim's own move_forward slides along
walls):
- move_forward: 0.25 m along the heading; PathFinder.try_step(from, to) must reach `to`
  (within 1 mm horizontally) and `to` must be navigable, else it fails;
- turn_left / turn_right: 30 degrees; look_up / look_down: 15 degrees within +-60 degrees;
- teleport: to a navigable position, snapped to the navmesh's floor height.
observe_pose puts the camera sensors at a camera-to-world pose (no navmesh check: a recorded
camera may be anywhere), renders, and puts them back on the agent.
"""
import math
import sys

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

DEFAULT_CAMERA_HEIGHT_M = 1.5
DEFAULT_AGENT_RADIUS_M = 0.1
DEFAULT_AGENT_HEIGHT_M = 1.5


def _quat_about_y(angle):
    """(w, x, y, z) of a rotation by `angle` about +y."""
    return (math.cos(angle / 2.0), 0.0, math.sin(angle / 2.0), 0.0)


def _quat_about_x(angle):
    return (math.cos(angle / 2.0), math.sin(angle / 2.0), 0.0, 0.0)


def _quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def _quat_from_matrix(m):
    """(w, x, y, z) of the rotation part of a row-major 4x4 (16 floats), by Shepperd's method."""
    r = [[m[0], m[1], m[2]], [m[4], m[5], m[6]], [m[8], m[9], m[10]]]
    trace = r[0][0] + r[1][1] + r[2][2]
    if trace > 0:
        s = math.sqrt(trace + 1.0) * 2.0
        q = (0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s)
    elif r[0][0] > r[1][1] and r[0][0] > r[2][2]:
        s = math.sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2.0
        q = ((r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s)
    elif r[1][1] > r[2][2]:
        s = math.sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2.0
        q = ((r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s)
    else:
        s = math.sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2.0
        q = ((r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s)
    norm = math.sqrt(sum(v * v for v in q))
    return tuple(v / norm for v in q)


class HabitatEnvironment:
    def __init__(self, scene_path, scene_dataset_config=None, width=320, height=240, hfov_deg=90.0,
                 camera_height=DEFAULT_CAMERA_HEIGHT_M, masks=False, start=None, gpu_device_id=0):
        try:
            import numpy as np
            import habitat_sim
        except ImportError as error:
            raise RuntimeError("habitat-sim is not installed (%s); see bridges/habitat/README.md" % error)
        self.np = np
        self.hs = habitat_sim
        self.scene_path = scene_path
        self.width = width
        self.height = height
        self.hfov_deg = hfov_deg
        self.camera = camera_intrinsics(width, height, hfov_deg)
        self.camera_height = camera_height
        self.masks = masks

        sim_cfg = habitat_sim.SimulatorConfiguration()
        sim_cfg.scene_id = scene_path
        if scene_dataset_config:
            sim_cfg.scene_dataset_config_file = scene_dataset_config
        sim_cfg.enable_physics = False
        sim_cfg.gpu_device_id = gpu_device_id
        sensors = []
        kinds = [("color", habitat_sim.SensorType.COLOR), ("depth", habitat_sim.SensorType.DEPTH)]
        if masks:
            kinds.append(("semantic", habitat_sim.SensorType.SEMANTIC))
        for uuid, kind in kinds:
            spec = habitat_sim.CameraSensorSpec()
            spec.uuid = uuid
            spec.sensor_type = kind
            spec.sensor_subtype = habitat_sim.SensorSubType.PINHOLE
            spec.resolution = [height, width]
            spec.position = [0.0, camera_height, 0.0]
            spec.hfov = hfov_deg
            sensors.append(spec)
        agent_cfg = habitat_sim.agent.AgentConfiguration()
        agent_cfg.height = DEFAULT_AGENT_HEIGHT_M
        agent_cfg.radius = DEFAULT_AGENT_RADIUS_M
        agent_cfg.sensor_specifications = sensors
        self.sim = habitat_sim.Simulator(habitat_sim.Configuration(sim_cfg, [agent_cfg]))
        self.pathfinder = self.sim.pathfinder
        if not self.pathfinder.is_loaded:
            raise RuntimeError("no navmesh for %s (HM3D ships <scene>.basis.navmesh beside the .glb)" % scene_path)
        self.agent = self.sim.get_agent(0)
        self.labels = self._semantic_labels() if masks else {}
        if start is None:
            position = self._snap(self.pathfinder.get_random_navigable_point())
            start = {"position": position, "yaw": 0.0, "pitch": 0.0}
        elif not self.navigable(start["position"]):
            raise ValueError("the episode's start %r is not navigable" % (start["position"],))
        self.start = self._on_floor(start)
        self.state = dict(self.start)
        self._apply()

    # -- helpers ----------------------------------------------------------------------------------
    def _semantic_labels(self):
        labels = {}
        scene = self.sim.semantic_scene
        for obj in getattr(scene, "objects", []) or []:
            if obj is None or obj.category is None:
                continue
            labels[int(obj.semantic_id)] = obj.category.name()
        return labels

    def _snap(self, point):
        p = self.pathfinder.snap_point(self.np.array(point, dtype=self.np.float32))
        return [float(p[0]), float(p[1]), float(p[2])]

    def _on_floor(self, state):
        position = self._snap(state["position"])
        if any(math.isnan(v) for v in position):
            position = list(state["position"])
        return {"position": position, "yaw": state["yaw"], "pitch": state["pitch"]}

    def _apply(self, camera_pose=None):
        """Puts the agent (body yaw) and its sensors (yaw then pitch) where self.state says; with
        `camera_pose` (camera-to-world, 16 floats) the sensors go there instead, the body staying."""
        hs, np = self.hs, self.np
        import quaternion as npq  # numpy-quaternion, a dependency of habitat-sim
        s = self.state
        body = _quat_about_y(s["yaw"])
        if camera_pose is None:
            camera = _quat_mul(body, _quat_about_x(s["pitch"]))
            eye = np.array([s["position"][0], s["position"][1] + self.camera_height, s["position"][2]], dtype=np.float32)
        else:
            camera = _quat_from_matrix(camera_pose)
            eye = np.array([camera_pose[3], camera_pose[7], camera_pose[11]], dtype=np.float32)
        agent_state = hs.agent.AgentState()
        agent_state.position = np.array(s["position"], dtype=np.float32)
        agent_state.rotation = npq.quaternion(*body)
        for uuid in ("color", "depth", "semantic") if self.masks else ("color", "depth"):
            agent_state.sensor_states[uuid] = hs.agent.SixDOFPose(position=eye, rotation=npq.quaternion(*camera))
        self.agent.set_state(agent_state, reset_sensors=False, infer_sensor_states=False)

    def _result(self, success, reason=None):
        out = {"success": success, "state": self._state()}
        if reason:
            out["reason"] = reason
        return out

    def _state(self):
        return {"position": list(self.state["position"]), "yaw": self.state["yaw"], "pitch": self.state["pitch"]}

    # -- protocol ---------------------------------------------------------------------------------
    def info(self):
        return {"name": "habitat-sim", "sceneId": self.scene_path, "cameraHeight": self.camera_height}

    def reset(self, start=None):
        if start is not None:
            if not self.navigable(start["position"]):
                raise ValueError("the start %r is not navigable" % (start["position"],))
            self.start = self._on_floor(start)
        self.state = dict(self.start)
        self._apply()
        return self._state()

    def act(self, action):
        kind = action["type"]
        s = self.state
        if kind in ("turn_left", "turn_right"):
            s["yaw"] = wrap_angle(s["yaw"] + math.radians(TURN_STEP_DEG) * (1 if kind == "turn_left" else -1))
        elif kind in ("look_up", "look_down"):
            pitch = s["pitch"] + math.radians(LOOK_STEP_DEG) * (1 if kind == "look_up" else -1)
            if abs(pitch) > math.radians(MAX_PITCH_DEG) + 1e-9:
                return self._result(False, "the pitch would go beyond %g degrees" % MAX_PITCH_DEG)
            s["pitch"] = pitch
        elif kind == "move_forward":
            x, y, z = s["position"]
            target = [x - math.sin(s["yaw"]) * MOVE_STEP_M, y, z - math.cos(s["yaw"]) * MOVE_STEP_M]
            np = self.np
            reached = self.pathfinder.try_step(np.array(s["position"], dtype=np.float32), np.array(target, dtype=np.float32))
            if math.hypot(float(reached[0]) - target[0], float(reached[2]) - target[2]) > 1e-3 or not self.navigable(target):
                return self._result(False, "blocked: the way forward leaves the navmesh")
            s["position"] = [target[0], float(reached[1]), target[2]]
        elif kind == "teleport":
            t = action["state"]
            if not self.navigable(t["position"]):
                return self._result(False, "teleport: the target is not navigable")
            if abs(t["pitch"]) > math.radians(MAX_PITCH_DEG) + 1e-9:
                return self._result(False, "teleport: the pitch is beyond %g degrees" % MAX_PITCH_DEG)
            self.state = self._on_floor(t)
        else:
            return self._result(False, "unknown action %s" % kind)
        self._apply()
        return self._result(True)

    def observe_pose(self, pose):
        """What the camera sees from `pose` (camera-to-world, 16 floats); the agent stays put and
        its sensors go back on it afterwards."""
        self._apply(camera_pose=pose)
        try:
            return self.observe(pose=[float(v) + 0.0 for v in pose])
        finally:
            self._apply()

    def observe(self, pose=None):
        np = self.np
        obs = self.sim.get_sensor_observations()
        rgb = np.ascontiguousarray(obs["color"][:, :, :3], dtype=np.uint8)
        depth = np.array(obs["depth"], dtype="<f4", copy=True)  # not the simulator's buffer
        depth[~np.isfinite(depth)] = 0.0
        ids = None
        if self.masks:
            ids = np.array(obs["semantic"], dtype="<u4", copy=True)
            unlabelled = (ids != 0) & ~np.isin(ids, np.array(sorted(self.labels), dtype="<u4"))
            ids[unlabelled] = 0  # every non-zero id on the wire has a label
        return Observation(
            self.width, self.height, dict(self.camera), pose if pose is not None else agent_pose(self.state, self.camera_height), self._state(),
            rgb.tobytes(), depth.tobytes(), ids.tobytes() if ids is not None else None,
            {k: v for k, v in self.labels.items()} if self.masks else None,
        )

    def navigable(self, point):
        np = self.np
        x, _, z = point
        snapped = self.pathfinder.snap_point(np.array(point, dtype=np.float32))
        if any(math.isnan(float(v)) for v in snapped):
            return False
        # the y of `point` is ignored: test at the floor found below/near it
        if math.hypot(float(snapped[0]) - x, float(snapped[2]) - z) > 1e-3:
            return False
        return bool(self.pathfinder.is_navigable(np.array([x, float(snapped[1]), z], dtype=np.float32)))

    def geodesic_distance(self, a, b):
        if not (self.navigable(a) and self.navigable(b)):
            return math.inf
        path = self.hs.ShortestPath()
        path.requested_start = self._snap(a)
        path.requested_end = self._snap(b)
        if not self.pathfinder.find_path(path):
            return math.inf
        d = float(path.geodesic_distance)
        return d if math.isfinite(d) else math.inf

    def bounds(self):
        lower, upper = self.pathfinder.get_bounds()
        return {"min": [float(v) for v in lower], "max": [float(v) for v in upper]}

    def close(self):
        sim = getattr(self, "sim", None)
        if sim is not None:
            sim.close()
            self.sim = None
        print("habitat bridge: closed", file=sys.stderr)
