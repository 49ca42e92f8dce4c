import { createHash } from "node:crypto";
import { cpSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { runDemo } from "../../src/generate/index.js";
import { recordTask, type RecordOptions } from "../../src/sim/index.js";
import { madeOnce } from "./once.js";
import { projectRoot } from "./paths.js";

/** What a recording is made of besides its options: every source file (a recording made by other code is another recording). */
let sourcesHash: string | undefined;
function hashOfSources(): string {
  if (sourcesHash) return sourcesHash;
  const hash = createHash("sha256");
  const src = join(projectRoot, "src");
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else hash.update(relative(src, path)).update("\0").update(readFileSync(path)).update("\0");
    }
  };
  visit(src);
  return (sourcesHash = hash.digest("hex"));
}

export type RecordingSpec = Omit<RecordOptions, "out">;

/**
 * A simulator recording (`recordTask` with `spec`), made once per machine under a lock in the
 * temporary folder, keyed by the hash of the spec and of the sources; several test files use the
 * same recordings, and recording is a good part of their time. Read-only: copy it (copyRecording)
 * into a test's own folder before anything is written beside it.
 */
export async function sharedRecording(spec: RecordingSpec): Promise<string> {
  const key = createHash("sha256").update(JSON.stringify(spec)).update(hashOfSources()).digest("hex").slice(0, 16);
  const home = await madeOnce(join(tmpdir(), `eqakit-recording-${key}`), async (staging) => {
    await recordTask({ ...spec, out: join(staging, "recording") });
  });
  return join(home, "recording");
}

/** The shared recording of `spec`, copied to `out` (trajectory.json, home.json, plan.png, frames/), as `recordTask` would write it there. */
export async function copyRecording(spec: RecordingSpec, out: string): Promise<string> {
  cpSync(await sharedRecording(spec), out, { recursive: true });
  return out;
}

/** The recording `eqa demo` makes of home `seed` (two random tasks, 160×120), as `eqa demo` would write it under OUT/recordings/home-SEED. */
export async function copyDemoHome(seed: number, demoOut: string): Promise<string> {
  return copyRecording({ seed, tasks: ["random", "random"], width: 160, height: 120 }, join(demoOut, "recordings", `home-${seed}`));
}

/**
 * What `eqa demo --seeds SEEDS --per-trajectory N` leaves before any language model: the homes'
 * recordings, the question set and the program agent's scored run, made once per machine (as
 * sharedRecording). Read-only: copy it (copyDemo) into a test's own folder.
 */
export async function sharedDemo(spec: { seeds: number[]; perTrajectory: number }): Promise<string> {
  const key = createHash("sha256").update(JSON.stringify(spec)).update(hashOfSources()).digest("hex").slice(0, 16);
  const home = await madeOnce(join(tmpdir(), `eqakit-demo-${key}`), async (staging) => {
    const out = join(staging, "demo");
    for (const seed of spec.seeds) await copyDemoHome(seed, out);
    await runDemo({ out, seeds: spec.seeds, perTrajectory: spec.perTrajectory });
  });
  return join(home, "demo");
}

/**
 * The shared demo of `spec` copied to `out`: a demo stopped after its program agent, which
 * `eqa demo` with the same seeds and questions goes on from (agents of the user's own, language-model agents).
 */
export async function copyDemo(spec: { seeds: number[]; perTrajectory: number }, out: string): Promise<string> {
  cpSync(await sharedDemo(spec), out, { recursive: true });
  return out;
}
