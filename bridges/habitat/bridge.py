#!/usr/bin/env python3
"""eqakit's Habitat bridge: serves one scene over stdio with eqakit's environment protocol
(JSON-RPC 2.0, one JSON object per line; see protocol.py and README.md).

    python3 bridges/habitat/bridge.py --scene-root DATA/hm3d --state EPISODE/00000.pkl
    python3 bridges/habitat/bridge.py --scene DATA/hm3d/val/00862-LT9Jq6dN3Ea/LT9Jq6dN3Ea.basis.glb
    python3 bridges/habitat/bridge.py --standin     # a grid world, no habitat-sim needed

Logs go to stderr; stdout carries only protocol responses.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol import serve  # noqa: E402
from scenes import load_state_file, parse_remap, remap_scene_path  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bridge.py", description="eqakit's environment protocol over stdio for habitat-sim")
    p.add_argument("--standin", action="store_true", help="serve the stand-in grid world instead of habitat-sim")
    p.add_argument("--scene", help="the scene file (.glb); remapped like a state file's path")
    p.add_argument("--state", help="an agent-state file (OpenEQA's HM3D .pkl, or .json) giving the scene and start")
    p.add_argument("--scene-root", help="your HM3D folder (holding train/, val/, minival/ ...)")
    p.add_argument("--remap", action="append", default=[], metavar="FROM=TO", help="replace the prefix FROM of scene paths by TO (repeatable)")
    p.add_argument("--scene-dataset-config", help="e.g. HM3D's hm3d_annotated_basis.scene_dataset_config.json (needed for --masks)")
    p.add_argument("--start", help="start state x,y,z,yaw (yaw in radians); overrides the state file's")
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--hfov", type=float, default=90.0, help="horizontal field of view, degrees")
    p.add_argument("--camera-height", type=float, default=1.5, help="metres above the agent's feet")
    p.add_argument("--masks", action="store_true", help="also send instance masks (needs HM3D's semantic annotations)")
    p.add_argument("--no-masks", action="store_true", help="stand-in only: leave instance masks out")
    p.add_argument("--gpu", type=int, default=0, help="habitat-sim's gpu_device_id")
    p.add_argument("--print-scene", action="store_true", help="print the remapped scene path and start, then exit")
    return p.parse_args(argv)


def parse_start(text):
    parts = [float(v) for v in text.split(",")]
    if len(parts) != 4:
        raise ValueError("--start is x,y,z,yaw")
    return {"position": parts[:3], "yaw": parts[3], "pitch": 0.0}


def resolve_episode(args):
    """(scene path after remapping, start state or None)."""
    scene, start = args.scene, None
    if args.state:
        state_scene, start = load_state_file(args.state)
        scene = scene or state_scene
    if args.start:
        start = parse_start(args.start)
    if scene:
        rules = [parse_remap(r) for r in args.remap]
        scene = remap_scene_path(scene, scene_root=args.scene_root, rules=rules)
    return scene, start


def make_environment(args):
    if args.standin:
        from standin import GridWorld
        start = parse_start(args.start) if args.start else None
        return GridWorld(width=args.width, height=args.height, hfov_deg=args.hfov, masks=not args.no_masks, start=start)
    scene, start = resolve_episode(args)
    if not scene:
        raise SystemExit("bridge.py: give --scene or --state (or --standin)")
    if not os.path.exists(scene):
        raise SystemExit("bridge.py: the scene %s does not exist; set --scene-root to your HM3D folder or add a --remap FROM=TO rule" % scene)
    from habitat_env import HabitatEnvironment
    print("habitat bridge: scene %s" % scene, file=sys.stderr)
    return HabitatEnvironment(scene, scene_dataset_config=args.scene_dataset_config, width=args.width, height=args.height,
                              hfov_deg=args.hfov, camera_height=args.camera_height, masks=args.masks, start=start, gpu_device_id=args.gpu)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.print_scene:
        scene, start = resolve_episode(args)
        import json
        print(json.dumps({"scene": scene, "start": start}))
        return 0
    env = make_environment(args)
    serve(env, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
