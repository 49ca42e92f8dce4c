import { join } from "node:path";
import { Command, Option } from "commander";
import { habitatSceneFile } from "../agents/index.js";
import { UserError, packageRoot } from "../core/index.js";
import { HouseholdEnvironment, StdioEnvironment, builtinSceneProblem, builtinSceneSeed, checkEnvironment, type CommandLine, type Environment } from "../sim/index.js";
import { commandLine, oneOf, positiveInteger, positiveSeconds } from "./options.js";

type EnvKind = "builtin" | "habitat" | "stdio";

interface CheckFlags {
  env: EnvKind;
  scene?: string;
  scenes?: string;
  standin: boolean;
  bridgePython: string;
  envCommand?: CommandLine;
  envTimeout: number;
  width: number;
  height: number;
  manipulation: boolean;
}

/** The environment `eqa env check` opens, as `eqa explore` opens it for one scene. */
function environmentOpener(flags: CheckFlags): { describe: string; open: () => Environment } {
  const timeoutMs = flags.envTimeout * 1000;
  switch (flags.env) {
    case "builtin": {
      const scene = flags.scene ?? "home-0";
      const seed = builtinSceneSeed(scene);
      if (seed === undefined) throw new UserError(builtinSceneProblem(scene) ?? `unknown scene ${scene}`, { field: "--scene" });
      return { describe: `builtin, scene ${scene}`, open: () => HouseholdEnvironment.fromSeed(seed, { width: flags.width, height: flags.height }) };
    }
    case "habitat": {
      const bridge = join(packageRoot, "bridges", "habitat", "bridge.py");
      const size = ["--width", String(flags.width), "--height", String(flags.height)];
      if (flags.standin) {
        return { describe: "habitat bridge, stand-in grid world", open: () => new StdioEnvironment({ command: flags.bridgePython, args: [bridge, "--standin", ...size], timeoutMs }) };
      }
      if (!flags.scenes) throw new UserError("--env habitat needs --scenes DIR (your HM3D folder)", { field: "--scenes" }, "or --standin to check the bridge without habitat-sim");
      if (!flags.scene) throw new UserError("--env habitat needs --scene SCENE (an HM3D scene folder such as val/00800-TEEsavR23oF, or a .glb path)", { field: "--scene" });
      const args = [bridge, "--scene-root", flags.scenes, "--scene", habitatSceneFile(flags.scene), ...size];
      return { describe: `habitat, scene ${flags.scene}`, open: () => new StdioEnvironment({ command: flags.bridgePython, args, timeoutMs }) };
    }
    case "stdio": {
      if (!flags.envCommand) throw new UserError("--env stdio needs --env-command", { field: "--env-command" }, 'e.g. --env-command "python3 my_env.py --scene {scene}"');
      const line = flags.envCommand;
      const scene = flags.scene ?? "";
      const withScene = (word: string): string => word.split("{scene}").join(scene);
      return { describe: `stdio, ${[line.command, ...line.args].map(withScene).join(" ")}`, open: () => new StdioEnvironment({ command: withScene(line.command), args: line.args.map(withScene), timeoutMs }) };
    }
  }
}

/** `eqa env check`: the environment conformance suite against the user's own installation. */
export function envCommand(): Command {
  const env = new Command("env").description("check an environment (the built-in simulator, the Habitat bridge, your own over stdio)");
  env
    .command("check")
    .description("run the environment conformance suite against your installation and print what passed (exit 0 when all pass, 1 when some fail)")
    .addOption(new Option("--env <env>", "builtin, habitat (bridges/habitat) or stdio (--env-command)").argParser(oneOf(["builtin", "habitat", "stdio"] as const)).default("builtin"))
    .option("--scene <scene>", "builtin: home-<seed> (default home-0); habitat: the scene under --scenes (an HM3D scene folder or a .glb path); stdio: replaces {scene} in --env-command")
    .option("--scenes <dir>", "habitat: your HM3D folder (holding train/, val/ …)")
    .option("--standin", "habitat: run the bridge's stand-in grid world instead of habitat-sim (checks Python and the protocol layer)", false)
    .option("--bridge-python <path>", "habitat: the Python that has habitat-sim", "python3")
    .option("--env-command <command>", "stdio: the environment's command line, split into words as a shell would but run without one; {scene} is replaced by --scene", commandLine)
    .option("--env-timeout <seconds>", "stdio and habitat: most time for one environment request", positiveSeconds, 120)
    .option("--width <pixels>", "observation width", positiveInteger, 320)
    .option("--height <pixels>", "observation height", positiveInteger, 240)
    .option("--manipulation", "also the manipulation checks (environments that pick up and put down objects)", false)
    .action(async (flags: CheckFlags) => {
      const opener = environmentOpener(flags);
      console.log(`eqa env check (${opener.describe})`);
      const started = performance.now();
      const check = await checkEnvironment(opener.open, { manipulation: flags.manipulation });
      if (check.info) console.log(`environment ${check.info.name}, scene ${check.info.sceneId}, camera ${check.info.cameraHeight} m above the feet`);
      for (const r of check.results) console.log(`${r.ok ? "ok    " : "FAILED"} ${r.check}${r.ok ? "" : `: ${r.message ?? ""}`}`);
      const passed = check.results.filter((r) => r.ok).length;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`${passed} of ${check.results.length} checks passed in ${seconds} s${check.ok ? "" : `; failed: ${check.results.filter((r) => !r.ok).map((r) => r.check).join(", ")}`}`);
      process.exitCode = check.ok ? 0 : 1;
    });
  return env;
}
