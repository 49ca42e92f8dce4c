/**
 * A Python "with habitat-sim" for tests of `--env habitat`: its imports succeed, and
 * `bridge.py --scene-root R --scene …/0000N-…` serves the built-in home N through the
 * environment protocol; `states.py` runs in the real python3. The HM3D folder holds an empty
 * scene file for each seed.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./paths.js";

export interface HabitatStandIn {
  /** The HM3D folder to pass as --scenes (scenes val/0000N-homeN). */
  scenes: string;
  /** The Python to pass as --bridge-python. */
  python: string;
  /** A JSON line per bridge started: the arguments it was given. */
  calls: string;
}

export function writeHabitatStandIn(dir: string, seeds: readonly number[]): HabitatStandIn {
  const scenes = join(dir, "hm3d");
  for (const seed of seeds) {
    mkdirSync(join(scenes, "val", `0000${seed}-home${seed}`), { recursive: true });
    writeFileSync(join(scenes, "val", `0000${seed}-home${seed}`, `home${seed}.basis.glb`), "");
  }
  const calls = join(dir, "bridge-calls.jsonl");
  const python = join(dir, "habitat-python");
  writeFileSync(
    python,
    `#!${process.execPath}
const { spawn } = require("node:child_process");
const { appendFileSync } = require("node:fs");
const args = process.argv.slice(2);
if (args[0] === "-c") process.exit(0);
if (args[0].endsWith("states.py")) {
  // reading state files needs only the standard library: the real Python does it
  const reader = spawn("python3", args, { stdio: "inherit" });
  reader.on("exit", (code) => process.exit(code ?? 1));
  return;
}
appendFileSync(${JSON.stringify(calls)}, JSON.stringify(args) + "\\n");
const value = (name) => args[args.indexOf(name) + 1];
const seed = /\\/0*(\\d+)-/.exec(value("--scene"))[1];
const child = spawn(process.execPath, ["--import", ${JSON.stringify(import.meta.resolve("tsx"))}, ${JSON.stringify(join(projectRoot, "src", "sim", "server-main.ts"))}, "--seed", seed, "--width", value("--width"), "--height", value("--height")], { stdio: "inherit" });
child.on("exit", (code) => process.exit(code ?? 1));
`,
  );
  chmodSync(python, 0o755);
  return { scenes, python, calls };
}
