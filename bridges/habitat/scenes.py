"""Scene paths and start states for HM3D episodes, standard library only.

OpenEQA's HM3D agent-state files carry the scene path of the machine they were made on, e.g.
`/datasets01/hm3d/090121/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb` (open-eqa issues #13 and
#26). `remap_scene_path` turns such a path into one under your own HM3D folder:

1. explicit `--remap FROM=TO` rules, tried in order: a path starting with FROM gets FROM
   replaced by TO (the first rule that yields an existing file wins, or the first that matches
   when none exists);
2. otherwise, with `--scene-root DIR`: the part of the path from the split folder on
   (`train|val|minival|test|example/NNNNN-<id>/<file>`) is joined to DIR; if that does not
   exist, `DIR/NNNNN-<id>/<file>` and then a search of DIR's split folders for `NNNNN-<id>`
   are tried;
3. otherwise the path is returned unchanged.
"""
import math
import os
import re

SPLITS = ("train", "val", "minival", "test", "example")
SCENE_FOLDER = re.compile(r"^\d{5}-[A-Za-z0-9]+$")


def parse_remap(rule):
    """`FROM=TO` -> (FROM, TO)."""
    if "=" not in rule:
        raise ValueError("a remap rule is FROM=TO, got %r" % rule)
    source, target = rule.split("=", 1)
    if not source:
        raise ValueError("a remap rule needs a non-empty FROM: %r" % rule)
    return source, target


def remap_scene_path(path, scene_root=None, rules=(), exists=os.path.exists):
    path = str(path)
    matched = []
    for source, target in rules:
        if path.startswith(source):
            candidate = target + path[len(source):]
            if exists(candidate):
                return candidate
            matched.append(candidate)
    if matched:
        return matched[0]
    if scene_root:
        parts = [p for p in re.split(r"[\\/]+", path) if p]
        for k, part in enumerate(parts):
            if SCENE_FOLDER.match(part):
                tail = parts[k:]
                candidates = []
                if k > 0 and parts[k - 1] in SPLITS:
                    candidates.append(os.path.join(scene_root, parts[k - 1], *tail))
                candidates.append(os.path.join(scene_root, *tail))
                candidates.extend(os.path.join(scene_root, split, *tail) for split in SPLITS)
                for candidate in candidates:
                    if exists(candidate):
                        return candidate
                return candidates[0]
    return path


def _get(obj, key):
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def yaw_from_quaternion(q):
    """Yaw (radians about +y) of a rotation given as a quaternion: an object with w, x, y, z
    (numpy-quaternion, Magnum), or a list [x, y, z, w] (habitat's `quat_to_coeffs` order).
    The pitch/roll part, if any, is dropped: the agent's body only turns about +y."""
    if isinstance(q, (list, tuple)):
        x, y, z, w = (float(v) for v in q)
    else:
        w, x, y, z = (float(_get(q, k)) for k in ("w", "x", "y", "z"))
    # forward = R . (0, 0, -1); yaw = atan2(-forward.x, -forward.z)
    fx = -(2 * (x * z + w * y))
    fz = -(1 - 2 * (x * x + y * y))
    return math.atan2(-fx, -fz) + 0.0


def start_from_state(obj):
    """The scene path and start state from an agent-state record (a dict, or an unpickled
    object with attributes): `scene_id` (or `scene`), `position` [x, y, z] and `rotation` (a
    quaternion). Returns (scene_path or None, state or None)."""
    scene = _get(obj, "scene_id") or _get(obj, "scene")
    if _get(obj, "agent_state") is not None:  # OpenEQA's files nest the state
        obj = _get(obj, "agent_state")
    position = _get(obj, "position")
    state = None
    if position is not None:
        rotation = _get(obj, "rotation")
        yaw = yaw_from_quaternion(rotation) if rotation is not None else 0.0
        state = {"position": [float(v) for v in list(position)[:3]], "yaw": yaw, "pitch": 0.0}
    return (str(scene) if scene is not None else None), state


def load_state_file(path):
    """Reads an OpenEQA HM3D agent-state file: JSON, or a pickle (OpenEQA's `.pkl` files, read
    by `states.py` without habitat-sim or numpy)."""
    if path.endswith(".json"):
        import json
        with open(path, "r", encoding="utf-8") as f:
            return start_from_state(json.load(f))
    from states import load_state
    return start_from_state(load_state(path))
