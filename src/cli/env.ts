import { Command, Option } from "commander";
import { sceneOpener, type EnvironmentKind } from "../agents/index.js";
import { UserError } from "../core/index.js";
import { builtinSceneProblem, checkEnvironment, type CommandLine, type Environment } from "../sim/index.js";
import { commandLine, oneOf, positiveInteger, positiveSeconds } from "./options.js";

type EnvKind = EnvironmentKind;

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

/** The environment `eqa env check` opens: one scene, opened as `eqa explore` opens it. */
function environmentOpener(flags: CheckFlags): { describe: string; open: () => Promise<Environment> } {
  if (flags.env === "habitat" && !flags.standin && flags.scenes && !flags.scene) {
    throw new UserError("--env habitat needs --scene SCENE (an HM3D scene folder such as val/00800-TEEsavR23oF, or a .glb path)", { field: "--scene" });
  }
  const scene = flags.scene ?? (flags.env === "builtin" ? "home-0" : "");
  const problem = flags.env === "builtin" ? builtinSceneProblem(scene) : undefined;
  if (problem) throw new UserError(problem, { field: "--scene" });
  const opener = sceneOpener({ env: flags.env, width: flags.width, height: flags.height, timeoutMs: flags.envTimeout * 1000, scenes: flags.scenes, standin: flags.standin, bridgePython: flags.bridgePython, envCommand: flags.envCommand });
  const describe = flags.env === "habitat" && flags.standin ? "habitat bridge, stand-in grid world" : flags.env === "stdio" ? `stdio, ${[flags.envCommand!.command, ...flags.envCommand!.args].map((w) => w.split("{scene}").join(scene)).join(" ")}` : `${flags.env}, scene ${scene}`;
  return { describe, open: async () => (await opener(scene)).env };
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
