/**
 * How `eqa explore` and `eqa env check` open a scene: the built-in simulator's `home-<seed>`,
 * an HM3D scene through the Habitat bridge (or the bridge's stand-in world), or the user's own
 * environment process, whose command line may name the scene as `{scene}`.
 */
import { join } from "node:path";
import { UserError, packageRoot } from "../../core/index.js";
import { HouseholdEnvironment, StdioEnvironment, builtinSceneProblem, builtinSceneSeed, type CommandLine, type SceneBounds } from "../../sim/index.js";
import { habitatSceneFile, type SceneEnvironment } from "./run.js";

export type EnvironmentKind = "builtin" | "habitat" | "stdio";

export interface SceneOpenerOptions {
  env: EnvironmentKind;
  width: number;
  height: number;
  /** Per call to an environment process. */
  timeoutMs: number;
  /** habitat: the HM3D folder. */
  scenes?: string | undefined;
  /** habitat: the bridge's own grid world instead of habitat-sim (checks the bridge alone). */
  standin?: boolean;
  /** habitat: the Python that runs the bridge. */
  bridgePython: string;
  /** stdio: the environment's command line. */
  envCommand?: CommandLine | undefined;
}

/** A function opening each scene; flags that cannot work are a UserError naming them, before any scene is opened. */
export function sceneOpener(options: SceneOpenerOptions): (scene: string) => Promise<SceneEnvironment> {
  const { width, height, timeoutMs } = options;
  switch (options.env) {
    case "builtin":
      return async (scene) => {
        const seed = builtinSceneSeed(scene);
        if (seed === undefined) throw new UserError(builtinSceneProblem(scene) ?? `unknown scene ${scene}`, { field: "scene" });
        const env = HouseholdEnvironment.fromSeed(seed, { width, height });
        return { env, home: env.home };
      };
    case "habitat": {
      const bridge = join(packageRoot, "bridges", "habitat", "bridge.py");
      const size = ["--width", String(width), "--height", String(height)];
      if (options.standin) return async () => ({ env: new StdioEnvironment({ command: options.bridgePython, args: [bridge, "--standin", ...size], timeoutMs }) });
      if (!options.scenes) throw new UserError("--env habitat needs --scenes DIR (your HM3D folder)", { field: "--scenes" });
      const scenes = options.scenes;
      return async (scene) => ({ env: new StdioEnvironment({ command: options.bridgePython, args: [bridge, "--scene-root", scenes, "--scene", habitatSceneFile(scene), ...size], timeoutMs }) });
    }
    case "stdio": {
      if (!options.envCommand) throw new UserError("--env stdio needs --env-command", { field: "--env-command" }, 'e.g. --env-command "python3 my_env.py --scene {scene}"');
      const line = options.envCommand;
      return async (scene) => {
        const withScene = (word: string): string => word.split("{scene}").join(scene);
        return { env: new StdioEnvironment({ command: withScene(line.command), args: line.args.map(withScene), timeoutMs }) };
      };
    }
  }
}

/**
 * The bounds of a built-in home (`home-<seed>`) observed at `observation`'s size, known without
 * starting an environment (a dry run's Fine-EQA step budget comes from them); undefined for any
 * other scene.
 */
export function builtinSceneBounds(observation: { width: number; height: number }): (scene: string) => Promise<SceneBounds | undefined> {
  return async (scene) => {
    const seed = builtinSceneSeed(scene);
    return seed === undefined ? undefined : HouseholdEnvironment.fromSeed(seed, observation).bounds();
  };
}
