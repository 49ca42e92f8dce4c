"""eqakit's environment protocol, the Python side: JSON-RPC 2.0 over stdio.

The wire format is the one documented in eqakit's src/sim/protocol.ts: one JSON object per
line, UTF-8, "\\n"-terminated; requests on stdin, one response per request on stdout, logs on
stderr. Methods: info, reset, observe, act, navigable, geodesic_distance, bounds, close, and the
optional observe_pose (an environment without an `observe_pose` method answers it with
-32601 unknown method).
Error codes: -32700 parse error, -32600 invalid request, -32601 unknown method,
-32602 invalid params, -32000 the environment failed.

Conventions (eqakit's, which are also Habitat's): metres, y up, the camera looks along -z with
x right and y up (OpenGL axes). A pose is camera-to-world, 4x4, row-major. An agent state is
{"position": [x, y, z] (the feet, on the floor), "yaw": radians about +y (0 looks along -z,
positive turns left), "pitch": radians (positive looks up)}.

An environment object (see standin.py and habitat_env.py) has these methods, all plain Python:
    info() -> {"name", "sceneId", "cameraHeight"}
    reset(start=None) -> state
    observe() -> Observation
    observe_pose(pose) -> Observation (optional): what the camera sees when placed at `pose`
        (camera-to-world, 16 floats, row-major), the agent's state left unchanged
    act(action) -> {"success": bool, "reason"?: str, "state": state}
    navigable(point) -> bool
    geodesic_distance(a, b) -> float (math.inf when unreachable)
    bounds() -> {"min": [x, y, z], "max": [x, y, z]}
    close() -> None
Only the standard library is used here.
"""
import base64
import json
import math
import struct
import sys
import traceback

MOVE_STEP_M = 0.25
TURN_STEP_DEG = 30.0
LOOK_STEP_DEG = 15.0
MAX_PITCH_DEG = 60.0

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
ENVIRONMENT_ERROR = -32000

METHODS = ("info", "reset", "observe", "observe_pose", "act", "navigable", "geodesic_distance", "bounds", "close")
# how far a pose's rotation part may be from a rotation (orthonormal, determinant 1)
POSE_TOLERANCE = 1e-4
DISCRETE_ACTIONS = ("move_forward", "turn_left", "turn_right", "look_up", "look_down")


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------------------
# Geometry

def agent_pose(state, camera_height):
    """Camera-to-world 4x4 row-major (16 floats) of an agent state: R = Ry(yaw) . Rx(pitch),
    the camera `camera_height` above the feet. Same numbers as eqakit's agentPose()."""
    cy, sy = math.cos(state["yaw"]), math.sin(state["yaw"])
    cp, sp = math.cos(state["pitch"]), math.sin(state["pitch"])
    x, y, z = state["position"]
    pose = [
        cy, sy * sp, sy * cp, x,
        0.0, cp, -sp, y + camera_height,
        -sy, cy * sp, cy * cp, z,
        0.0, 0.0, 0.0, 1.0,
    ]
    return [float(v) + 0.0 for v in pose]  # no -0.0


def camera_intrinsics(width, height, hfov_deg):
    """Pinhole intrinsics for a horizontal field of view, square pixels, centre at the middle."""
    fx = (width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    return {"width": width, "height": height, "fx": fx, "fy": fx, "cx": width / 2.0, "cy": height / 2.0}


def wrap_angle(a):
    """An angle in (-pi, pi]."""
    w = math.atan2(math.sin(a), math.cos(a))
    return w + 0.0


# ---------------------------------------------------------------------------------------------
# Raw encodings (little-endian, row-major, top row first)

def encode_rgb(rgb, width, height):
    """rgb: bytes/bytearray of width*height*3 RGB8 values."""
    data = bytes(rgb)
    if len(data) != width * height * 3:
        raise ValueError("rgb: expected %d bytes, got %d" % (width * height * 3, len(data)))
    return base64.b64encode(data).decode("ascii")


def encode_float32(values, count):
    """values: a sequence of floats (metres) or already-packed little-endian float32 bytes."""
    if isinstance(values, (bytes, bytearray, memoryview)):
        data = bytes(values)
    else:
        data = struct.pack("<%df" % len(values), *values)
    if len(data) != count * 4:
        raise ValueError("depth: expected %d bytes, got %d" % (count * 4, len(data)))
    return base64.b64encode(data).decode("ascii")


def encode_uint32(values, count):
    if isinstance(values, (bytes, bytearray, memoryview)):
        data = bytes(values)
    else:
        data = struct.pack("<%dI" % len(values), *values)
    if len(data) != count * 4:
        raise ValueError("masks.ids: expected %d bytes, got %d" % (count * 4, len(data)))
    return base64.b64encode(data).decode("ascii")


def decode_rgb(text, width, height):
    data = base64.b64decode(text)
    if len(data) != width * height * 3:
        raise ValueError("rgb: wrong size")
    return data


def decode_float32(text, count):
    data = base64.b64decode(text)
    if len(data) != count * 4:
        raise ValueError("float32: wrong size")
    return list(struct.unpack("<%df" % count, data))


def decode_uint32(text, count):
    data = base64.b64decode(text)
    if len(data) != count * 4:
        raise ValueError("uint32: wrong size")
    return list(struct.unpack("<%dI" % count, data))


class Observation:
    """What an environment's observe() returns; encoded on the wire by `to_wire`.

    rgb: width*height*3 bytes; depth: width*height floats (or packed little-endian float32
    bytes), metres along -z, 0 = unknown; mask_ids: width*height uint32 (or packed bytes),
    0 = none, with mask_labels {id: label}; pose: 16 floats, camera-to-world row-major."""

    def __init__(self, width, height, camera, pose, state, rgb, depth, mask_ids=None, mask_labels=None):
        self.width = width
        self.height = height
        self.camera = camera
        self.pose = pose
        self.state = state
        self.rgb = rgb
        self.depth = depth
        self.mask_ids = mask_ids
        self.mask_labels = mask_labels

    def to_wire(self):
        n = self.width * self.height
        wire = {
            "width": self.width,
            "height": self.height,
            "camera": self.camera,
            "pose": [float(v) + 0.0 for v in self.pose],
            "state": self.state,
            "rgb": encode_rgb(self.rgb, self.width, self.height),
            "depth": encode_float32(self.depth, n),
        }
        if self.mask_ids is not None:
            wire["masks"] = {
                "ids": encode_uint32(self.mask_ids, n),
                "labels": {str(k): str(v) for k, v in (self.mask_labels or {}).items()},
            }
        return wire


# ---------------------------------------------------------------------------------------------
# Parameter validation (the same shapes as eqakit's zod schemas)

def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _vec3(v, where):
    if not (isinstance(v, list) and len(v) == 3 and all(_is_number(x) for x in v)):
        raise RpcError(INVALID_PARAMS, "invalid params: %s: expected [x, y, z] of finite numbers" % where)
    return [float(x) for x in v]


def _state(v, where):
    if not isinstance(v, dict):
        raise RpcError(INVALID_PARAMS, "invalid params: %s: expected an agent state object" % where)
    position = _vec3(v.get("position"), where + ".position")
    for key in ("yaw", "pitch"):
        if not _is_number(v.get(key)):
            raise RpcError(INVALID_PARAMS, "invalid params: %s.%s: expected a finite number" % (where, key))
    return {"position": position, "yaw": float(v["yaw"]), "pitch": float(v["pitch"])}


def _pose(v, where):
    """A camera-to-world pose: 16 finite numbers, row-major, whose rotation part is a rotation
    and whose last row is 0 0 0 1."""
    if not (isinstance(v, list) and len(v) == 16 and all(_is_number(x) for x in v)):
        raise RpcError(INVALID_PARAMS, "invalid params: %s: expected 16 finite numbers (a camera-to-world 4x4, row-major)" % where)
    m = [float(x) for x in v]
    if any(abs(m[12 + k] - (1.0 if k == 3 else 0.0)) > POSE_TOLERANCE for k in range(4)):
        raise RpcError(INVALID_PARAMS, "invalid params: %s: the last row is not 0 0 0 1" % where)
    for a in range(3):
        for b in range(3):
            dot = sum(m[r * 4 + a] * m[r * 4 + b] for r in range(3))
            if abs(dot - (1.0 if a == b else 0.0)) > POSE_TOLERANCE:
                raise RpcError(INVALID_PARAMS, "invalid params: %s: the rotation part is not orthonormal" % where)
    det = (m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) + m[2] * (m[4] * m[9] - m[5] * m[8]))
    if det < 0:
        raise RpcError(INVALID_PARAMS, "invalid params: %s: the rotation part is a reflection" % where)
    return m


def _action(v):
    if not isinstance(v, dict) or not isinstance(v.get("type"), str):
        raise RpcError(INVALID_PARAMS, "invalid params: action: expected { type: ... }")
    kind = v["type"]
    if kind in DISCRETE_ACTIONS:
        return {"type": kind}
    if kind == "teleport":
        return {"type": "teleport", "state": _state(v.get("state"), "action.state")}
    raise RpcError(INVALID_PARAMS, "invalid params: action.type: unknown action %r" % kind)


def dispatch(env, method, params):
    """Runs one method on `env`; returns its JSON result or raises RpcError."""
    if method not in METHODS:
        raise RpcError(METHOD_NOT_FOUND, "unknown method %s" % method)
    if params is None:
        params = {}
    try:
        if method == "info":
            return env.info()
        if method == "reset":
            start = params.get("start")
            return env.reset(None if start is None else _state(start, "start"))
        if method == "observe":
            return env.observe().to_wire()
        if method == "observe_pose":
            pose = _pose(params.get("pose"), "pose")
            if not hasattr(env, "observe_pose"):
                raise RpcError(METHOD_NOT_FOUND, "unknown method observe_pose: this environment cannot place its camera at a pose")
            return env.observe_pose(pose).to_wire()
        if method == "act":
            return env.act(_action(params.get("action")))
        if method == "navigable":
            return bool(env.navigable(_vec3(params.get("point"), "point")))
        if method == "geodesic_distance":
            d = env.geodesic_distance(_vec3(params.get("from"), "from"), _vec3(params.get("to"), "to"))
            return float(d) if d is not None and math.isfinite(d) else None
        if method == "bounds":
            return env.bounds()
        if method == "close":
            env.close()
            return None
    except RpcError:
        raise
    except Exception as error:  # the environment failed
        traceback.print_exc(file=sys.stderr)
        raise RpcError(ENVIRONMENT_ERROR, "%s: %s" % (type(error).__name__, error))
    raise RpcError(METHOD_NOT_FOUND, "unknown method %s" % method)


def handle_line(env, line):
    """One request line -> (response dict or None for a notification, whether to stop)."""
    try:
        request = json.loads(line)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "parse error: not JSON"}}, False
    rid = request.get("id") if isinstance(request, dict) else None
    valid = (
        isinstance(request, dict)
        and request.get("jsonrpc") == "2.0"
        and isinstance(request.get("method"), str)
        and (rid is None or (isinstance(rid, (int, float, str)) and not isinstance(rid, bool)))
        and (request.get("params") is None and "params" not in request or isinstance(request.get("params"), dict))
    )
    if not valid:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "invalid request: not a JSON-RPC 2.0 request"}}, False
    method = request["method"]
    notification = "id" not in request
    try:
        result = dispatch(env, method, request.get("params"))
        response = None if notification else {"jsonrpc": "2.0", "id": rid, "result": result}
    except RpcError as error:
        response = None if notification else {"jsonrpc": "2.0", "id": rid, "error": {"code": error.code, "message": error.message}}
    return response, method == "close"


def serve(env, input_stream=None, output_stream=None):
    """Serves `env` until `close` or the end of input, one request at a time, in order."""
    input_stream = input_stream or sys.stdin
    output_stream = output_stream or sys.stdout
    closed = False
    for line in input_stream:
        if not line.strip():
            continue
        response, stop = handle_line(env, line)
        if response is not None:
            try:
                text = json.dumps(response, allow_nan=False, separators=(",", ":"))
            except (TypeError, ValueError) as error:  # NaN, or an object JSON cannot carry
                text = json.dumps({"jsonrpc": "2.0", "id": response.get("id"), "error": {"code": ENVIRONMENT_ERROR, "message": "the environment returned a value JSON cannot carry: %s" % error}})
            output_stream.write(text + "\n")
            output_stream.flush()
        if stop:
            closed = True
            break
    if not closed:
        env.close()
