/** The built-in simulator's scenes are its generated homes, named `home-<seed>` (`home-3`). */
const BUILTIN_SCENE = /^home-(\d+)$/;

/** The seed of the built-in home `scene` names, or undefined when it names none. */
export function builtinSceneSeed(scene: string): number | undefined {
  const match = BUILTIN_SCENE.exec(scene);
  const seed = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(seed) ? seed : undefined;
}

/** Why `scene` is not a scene of the built-in simulator, or undefined when it is one. */
export function builtinSceneProblem(scene: string): string | undefined {
  return builtinSceneSeed(scene) === undefined ? `scene "${scene}" is not a built-in home (they are named home-<seed>, e.g. home-3)` : undefined;
}
