"""OpenEQA's HM3D agent-state files, read with the standard library only.

OpenEQA's `open-eqa-hm3d-states-v0.tgz` holds, for each HM3D episode history
(`hm3d-v0/000-hm3d-BFRyYbPCCPE/`), one pickle per frame (`00000.pkl`, `00001.pkl`, ...), which its
`data/hm3d/extract-frames.py` reads as a dict:

    {"scene_id": "/datasets01/hm3d/090121/val/00853-5cdEh9F2hJL/5cdEh9F2hJL.basis.glb",
     "agent_state": habitat_sim.AgentState(position=np.ndarray(3), rotation=quaternion.quaternion,
                                           sensor_states={"rgb": SixDOFPose(...), ...}),
     "resolution": (height, width), "hfov": degrees}

Plain `pickle.load` needs habitat-sim, numpy and numpy-quaternion to rebuild these objects.
`StateUnpickler` needs none of them: it maps the few classes such a file names to plain Python
values (numpy arrays and scalars to lists and numbers, numpy-quaternion's quaternion to an
object with w, x, y, z, habitat-sim's attrs records to objects with their fields) and refuses
every other global, so a state file cannot run code.

Command line (used by `eqa data convert a-eqa`):

    python3 states.py FOLDER [FOLDER ...]

prints one JSON object: for each episode folder, its first state file (in sorted order, the
first frame of the episode history), the scene path, the agent's position (the feet, on the
navmesh), its rotation as [w, x, y, z], the yaw about +y in radians (eqakit's and Habitat's
convention), and the number of state files; or `{"error": ...}` for a folder that cannot be read.

    python3 states.py --all FOLDER [FOLDER ...]

(used by `eqa data prepare openeqa --hm3d`) prints, for each folder, `{"frames": [...]}`: every
state file in sorted order with its agent position and rotation ([w, x, y, z]), each sensor's
position and rotation (`sensors.rgb`, ...), its scene path, `resolution` ([height, width]) and
`hfov` (degrees); or `{"error": ...}` naming the first file that cannot be read.
"""
import json
import math
import os
import pickle
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from scenes import yaw_from_quaternion  # noqa: E402

# numpy's dtype character codes -> struct's
_STRUCT_CODES = {
    "f2": "e", "f4": "f", "f8": "d",
    "i1": "b", "i2": "h", "i4": "i", "i8": "q",
    "u1": "B", "u2": "H", "u4": "I", "u8": "Q",
    "b1": "?",
}


class DType:
    """Stands for `numpy.dtype`: keeps the type code and the byte order."""

    def __init__(self, name, align=False, copy=True):
        self.name = str(name)
        self.byteorder = "<"

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "|", "="):
            self.byteorder = state[1]

    def struct_format(self, count):
        name = self.name.lstrip("<>|=")
        code = _STRUCT_CODES.get(name)
        if code is None:
            raise pickle.UnpicklingError("unsupported numpy dtype %r" % self.name)
        order = ">" if self.byteorder == ">" else "<"
        return "%s%d%s" % (order, count, code)


def _shape_list(flat, shape):
    if len(shape) == 0:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [_shape_list(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _decode(raw, dtype, shape):
    count = 1
    for n in shape:
        count *= n
    if isinstance(raw, (list, tuple)):  # an object array pickles its items
        return _shape_list(list(raw), shape)
    values = struct.unpack(dtype.struct_format(count), bytes(raw))
    return _shape_list(list(values), shape)


class Array:
    """Stands for a `numpy.ndarray` while it is rebuilt; `value` is the nested list."""

    def __init__(self):
        self.value = []

    def __setstate__(self, state):
        # numpy's ndarray.__reduce__: (version, shape, dtype, is_fortran, raw data)
        _version, shape, dtype, _fortran, raw = state
        self.value = _decode(raw, dtype, tuple(shape))


def _reconstruct(_subtype, _shape, _typecode):
    return Array()


def _frombuffer(buffer, dtype, shape, _order):
    array = Array()
    array.value = _decode(buffer, dtype, tuple(shape))
    return array


def _scalar(dtype, raw=None):
    if raw is None:
        return None
    return _decode(raw, dtype, ())


class Quaternion:
    """Stands for numpy-quaternion's `quaternion` (pickled as `quaternion(w, x, y, z)`)."""

    def __init__(self, w=0.0, x=0.0, y=0.0, z=0.0):
        self.w, self.x, self.y, self.z = float(w), float(x), float(y), float(z)

    def __setstate__(self, state):
        self.w, self.x, self.y, self.z = (float(v) for v in state)


class Record:
    """Stands for an attrs record of habitat-sim. attrs pickles a slotted class's fields as a
    dict (attrs 22.2 and later) or as a tuple in field order (earlier versions)."""

    FIELDS = ()

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and all(s is None or isinstance(s, dict) for s in state):
            for part in state:  # (__dict__, slots) of a plain class
                if part:
                    self.__dict__.update(part)
        elif isinstance(state, dict):
            self.__dict__.update(state)
        else:
            for name, value in zip(self.FIELDS, state):
                setattr(self, name, value)


class AgentState(Record):
    # habitat-sim 0.1's AgentState had velocity, angular_velocity, force and torque between
    # rotation and sensor_states; position and rotation come first in every version
    FIELDS = ("position", "rotation", "sensor_states")


class SixDOFPose(Record):
    FIELDS = ("position", "rotation")


_NUMPY_MODULES = ("numpy.core.multiarray", "numpy._core.multiarray", "numpy.core.numeric", "numpy._core.numeric", "numpy")
_ALLOWED = {
    ("numpy", "ndarray"): Array,
    ("numpy", "dtype"): DType,
    ("quaternion", "quaternion"): Quaternion,
    ("quaternion.numpy_quaternion", "quaternion"): Quaternion,
    ("habitat_sim.agent.agent", "AgentState"): AgentState,
    ("habitat_sim.agent", "AgentState"): AgentState,
    ("habitat_sim.agent.agent", "SixDOFPose"): SixDOFPose,
    ("habitat_sim.agent", "SixDOFPose"): SixDOFPose,
    ("collections", "OrderedDict"): dict,
    ("builtins", "dict"): dict,
    ("builtins", "list"): list,
    ("builtins", "tuple"): tuple,
    ("builtins", "set"): set,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "object"): object,
    ("copyreg", "_reconstructor"): None,  # filled below
}
_NUMPY_FUNCTIONS = {"_reconstruct": _reconstruct, "scalar": _scalar, "_frombuffer": _frombuffer}


def _encode(text, encoding="utf-8"):
    # protocols 0-2 write bytes as _codecs.encode(str, "latin1")
    return str(text).encode(encoding)


def _copyreg_reconstructor(cls, base, state):
    obj = cls.__new__(cls)
    return obj


_ALLOWED[("copyreg", "_reconstructor")] = _copyreg_reconstructor
_ALLOWED[("_codecs", "encode")] = _encode


class StateUnpickler(pickle.Unpickler):
    """Reads an agent-state pickle without habitat-sim or numpy; any other global is refused."""

    def find_class(self, module, name):
        # protocols 0-2 spell some modules as Python 2 did
        module = {"copy_reg": "copyreg", "__builtin__": "builtins"}.get(module, module)
        if module in _NUMPY_MODULES and name in _NUMPY_FUNCTIONS:
            return _NUMPY_FUNCTIONS[name]
        target = _ALLOWED.get((module, name))
        if target is None:
            raise pickle.UnpicklingError("a state file may not name %s.%s" % (module, name))
        return target


def plain(value):
    """The unpickled value with the stand-ins turned into JSON-ready values."""
    if isinstance(value, Array):
        return plain(value.value)
    if isinstance(value, Quaternion):
        return {"w": value.w, "x": value.x, "y": value.y, "z": value.z}
    if isinstance(value, Record):
        return {k: plain(v) for k, v in value.__dict__.items()}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load_state(path):
    """The contents of an agent-state pickle, as plain values."""
    with open(path, "rb") as f:
        return plain(StateUnpickler(f).load())


def start_of(data):
    """(scene path, position, rotation [w, x, y, z], yaw) of an OpenEQA state record; the agent
    state may be nested under `agent_state` (OpenEQA's files) or be the record itself."""
    state = data.get("agent_state", data) if isinstance(data, dict) else None
    if not isinstance(state, dict) or state.get("position") is None:
        raise ValueError("no agent_state with a position")
    position = [float(v) for v in list(state["position"])[:3]]
    if len(position) != 3:
        raise ValueError("the agent's position is not [x, y, z]")
    rotation = state.get("rotation")
    if isinstance(rotation, dict):
        q = [float(rotation[k]) for k in ("w", "x", "y", "z")]
        yaw = yaw_from_quaternion(rotation)
    elif isinstance(rotation, (list, tuple)) and len(rotation) == 4:
        # habitat's coefficient order [x, y, z, w]
        x, y, z, w = (float(v) for v in rotation)
        q = [w, x, y, z]
        yaw = yaw_from_quaternion(list(rotation))
    else:
        q, yaw = [1.0, 0.0, 0.0, 0.0], 0.0
    scene = data.get("scene_id") or data.get("scene")
    return (str(scene) if scene is not None else None), position, q, yaw


def describe_folder(folder):
    files = sorted(name for name in os.listdir(folder) if name.endswith(".pkl"))
    if not files:
        return {"error": "no agent-state files (*.pkl) in the folder"}
    first = os.path.join(folder, files[0])
    try:
        scene, position, rotation, yaw = start_of(load_state(first))
    except (pickle.UnpicklingError, ValueError, EOFError, struct.error, TypeError, KeyError) as error:
        return {"error": "%s: %s" % (files[0], error), "file": first}
    return {"file": first, "scene_id": scene, "position": position, "rotation": rotation, "yaw": yaw, "states": len(files)}


def _quaternion(value, what):
    """[w, x, y, z] of a rotation as a state file holds it: numpy-quaternion (read as w, x, y, z)
    or habitat's coefficient list [x, y, z, w]."""
    if isinstance(value, dict):
        return [float(value[k]) for k in ("w", "x", "y", "z")]
    if isinstance(value, (list, tuple)) and len(value) == 4:
        x, y, z, w = (float(v) for v in value)
        return [w, x, y, z]
    raise ValueError("%s is not a quaternion" % what)


def _vector(value, what):
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ValueError("%s is not [x, y, z]" % what)
    return [float(v) for v in value]


def frame_of(name, data):
    """One state file as `eqa data prepare openeqa --hm3d` reads it: the agent's position and
    rotation, each sensor's position and rotation, the scene, and the resolution and hfov the
    file records (what OpenEQA's extract-frames.py writes its intrinsics from)."""
    if not isinstance(data, dict) or not isinstance(data.get("agent_state"), dict):
        raise ValueError("no agent_state")
    state = data["agent_state"]
    frame = {
        "file": name,
        "scene_id": data.get("scene_id"),
        "position": _vector(state.get("position"), "agent_state.position"),
        "rotation": _quaternion(state.get("rotation"), "agent_state.rotation"),
        "sensors": {},
    }
    for uuid, sensor in (state.get("sensor_states") or {}).items():
        if isinstance(sensor, dict):
            frame["sensors"][uuid] = {
                "position": _vector(sensor.get("position"), "agent_state.sensor_states.%s.position" % uuid),
                "rotation": _quaternion(sensor.get("rotation"), "agent_state.sensor_states.%s.rotation" % uuid),
            }
    resolution = data.get("resolution")
    if isinstance(resolution, (list, tuple)) and len(resolution) == 2:
        frame["resolution"] = [int(v) for v in resolution]
    if isinstance(data.get("hfov"), (int, float)):
        frame["hfov"] = float(data["hfov"])
    return frame


def read_folder(folder):
    """Every state file of an episode folder, in sorted order (extract-frames.py's order)."""
    files = sorted(name for name in os.listdir(folder) if name.endswith(".pkl"))
    if not files:
        return {"error": "no agent-state files (*.pkl) in the folder"}
    frames = []
    for name in files:
        path = os.path.join(folder, name)
        try:
            frames.append(frame_of(name, load_state(path)))
        except (pickle.UnpicklingError, ValueError, EOFError, struct.error, TypeError, KeyError, AttributeError) as error:
            return {"error": "%s: %s" % (name, error), "file": path}
    return {"frames": frames}


def main(argv):
    every = bool(argv) and argv[0] == "--all"
    if every:
        argv = argv[1:]
    result = {}
    for folder in argv:
        if not os.path.isdir(folder):
            result[folder] = {"error": "no such folder"}
            continue
        try:
            result[folder] = read_folder(folder) if every else describe_folder(folder)
        except OSError as error:
            result[folder] = {"error": str(error)}
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
